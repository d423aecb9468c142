"""``python -m training.sb3``: train a MaskablePPO policy (see ``training.sb3``)."""

from training.sb3.trainer import main

if __name__ == "__main__":  # the API reference imports this module
    import sys

    from agents.errors import run_command

    sys.exit(run_command(main, "python -m training.sb3"))
