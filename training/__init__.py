"""Learning and measuring: the single-agent self-play view, evaluation, PPO training.

* :class:`training.selfplay.SelfPlayEnv` — a Gymnasium ``Env`` for one learning seat of any game;
  the other seats are played by opponent agents inside ``step()``. Exported here as
  ``training.SelfPlayEnv``.
* ``python -m training.league`` — the league: agents against each other in seeded, seat-rotated
  games with Wilson intervals and Elo ratings (:mod:`training.league`; its ``matches`` plays and
  scores, its ``output`` prints, plots and writes). ``python -m training.evaluate`` is its old name.
* :mod:`training.evaluation` — one trained policy against fixed agent kinds, as every trainer
  evaluates during and after training.
* ``python -m training.ppo`` — our PPO (the ``training.ppo`` package); ``python -m training.sb3`` —
  SB3 MaskablePPO; ``python -m training.rllib_train`` — RLlib PPO. All three evaluate with
  :mod:`training.evaluation` and write the report and curve of :mod:`training.report`.
"""

from training.selfplay import SelfPlayEnv

__all__ = ["SelfPlayEnv"]
