"""Commands for people that play games but train nothing.

* ``python -m tools.simulate`` — the designer simulator: any game's rule variants (its config
  keywords) against the default, with game length, seat win rates and the first-player advantage.
* ``python -m tools.tournament`` — a Wizard Arena tournament between named bots, with scoreboards.

Every command plays its games through :class:`agents.runner.Runner`; ``--help`` shows every option
with its meaning and default.
"""
