"""The old name of :mod:`training.sb3`, the Stable-Baselines3 trainer: ``python -m training.train_ppo`` and
``from training import train_ppo`` still work for one minor version, with a ``FutureWarning``."""

import warnings

from training.sb3 import Args, describe_run, evaluate_policy, main, parse_args

__all__ = ["Args", "describe_run", "evaluate_policy", "main", "parse_args"]

warnings.warn("training.train_ppo is deprecated and will be removed; use training.sb3 (python -m training.sb3)",
              FutureWarning, stacklevel=2)

if __name__ == "__main__":
    main()
