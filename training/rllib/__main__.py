"""``python -m training.rllib``: train one policy on Ray RLlib (see ``training.rllib``)."""

from training.rllib.trainer import main

if __name__ == "__main__":  # the API reference imports this module
    import sys

    from agents.errors import run_command

    sys.exit(run_command(main, "python -m training.rllib"))
