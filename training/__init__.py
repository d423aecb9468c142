"""Learning and measuring: the single-agent self-play view, evaluation, PPO training.

* :class:`training.selfplay.SelfPlayEnv` — a Gymnasium ``Env`` for one learning seat of any game;
  the other seats are played by opponent agents inside ``step()``. Exported here as
  ``training.SelfPlayEnv``.
* ``python -m training.evaluate`` — seeded, seat-rotated evaluation with Wilson intervals and
  Elo ratings (:mod:`training.matches` plays and scores, :mod:`training.reporting` reports).
* ``python -m training.train_ppo`` — MaskablePPO self-play training.
"""

from training.selfplay import SelfPlayEnv

__all__ = ["SelfPlayEnv"]
