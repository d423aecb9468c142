"""``python -m training.ppo``: train, resume or evaluate (see ``training.ppo``)."""

from training.ppo.loop import main

if __name__ == "__main__":  # the API reference imports this module
    import sys

    from agents.errors import run_command

    sys.exit(run_command(main, "python -m training.ppo"))
