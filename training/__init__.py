"""Learning and measuring: three trainers on one shared core, evaluation and the league.

* ``python -m training.ppo`` — our PPO (the ``training.ppo`` package); ``python -m training.sb3`` —
  SB3 MaskablePPO (the ``training.sb3`` package, with its single-agent view and its converter);
  ``python -m training.rllib`` — RLlib PPO (the ``training.rllib`` package). All three evaluate with
  :mod:`training.evaluation` and write the report and curve of :mod:`training.report`.
* The core beside them: :mod:`training.settings` (the settings every trainer shares and their one
  validation), :mod:`training.cli` (a command line from an ``Args`` dataclass),
  :mod:`training.evaluation` (one trained policy against fixed agent kinds, as every trainer evaluates
  during and after training), :mod:`training.report`, :mod:`training.vector_env` (the tables a batch
  of learner-against-opponents games is stepped on) and :mod:`training.teachers` (a teacher's labels
  for kickstarting).
* :class:`training.sb3.selfplay.SelfPlayEnv` — a Gymnasium ``Env`` for one learning seat of any game;
  the other seats are played by opponent agents inside ``step()``. Exported here as
  ``training.SelfPlayEnv``.
* ``python -m training.league`` — the league: agents against each other in seeded, seat-rotated
  games with Wilson intervals and Elo ratings (:mod:`training.league`; its ``matches`` plays and
  scores, its ``output`` prints, plots and writes).
"""

from training.sb3.selfplay import SelfPlayEnv

__all__ = ["SelfPlayEnv"]
