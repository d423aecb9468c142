"""The league: agents against each other in seeded games with rotated seats, Wilson intervals and
Elo ratings.

Run ``python -m training.league --help``. Typical uses::

    # heuristic vs random, 400 two-player Sequence games (200 deals x both seat orders)
    python -m training.league --game sequence_v0 --agents heuristic-v1 random-v0 --games 400

    # 2 teams of 2; 3 teams with one heuristic team against two random teams
    python -m training.league --game sequence_v0 --config players_per_team=2 \\
        --agents heuristic-v1 random-v0 --games 400
    python -m training.league --game sequence_v0 --config num_teams=3 \\
        --lineup heuristic-v1 random-v0 random-v0 --games 400   # rounded up to 402 = 134 x 3 sides

    # every game in envs.NAMES: a round robin of every registered agent (random included)
    python -m training.league --all --quick      # a few minutes on two cores
    python -m training.league --all --full       # >= 400 games per pairing (CI half-width < 5 pts)

How games are scheduled
-----------------------
* A *lineup* gives one agent id per team (``--lineup``), or ``--agents`` builds a round robin of
  lineups: every pair ``(a, b)`` with two teams; with three or more teams, each ordered pair
  ``(a, b)`` gives ``a`` against a field of ``b`` teams (``a b b``).
* Seats belong to the teams the game declares (``Game.team_of(seat)``; Sequence: ``seat %
  num_teams``, the other games: one seat per team). Every seat of a team is played by a separate
  instance of the team's agent id.
* Seat rotation: the distinct orderings of a lineup over the teams are cycled game by game, and
  consecutive games of one cycle share one deal seed (duplicate style), so every agent plays every
  team side equally often — on the same deals — when ``--games`` is a multiple of the number of
  orderings (2 for a pair, 3 for ``a b b``, 6 for three distinct agents). Other counts are rounded
  up to such a multiple.
* Game ``g`` of a lineup uses deal seed ``seed + g // orderings``; the agent in seat ``s`` is made
  afresh with ``agents.make(id, seed=deal_seed * 1000 + s)``. A game's result therefore depends
  only on its task, never on the worker that played it or on earlier games, and ``--workers``
  (local processes) or ``--ray-address`` (a Ray cluster, through :mod:`agents.pool`) only change
  the speed. (A fresh agent per game also means a checkpoint policy is loaded once
  per game and seat unless its loader caches models.)
* ``--all`` plays every game at its default config, leaving out, with a warning, any registered
  agent that cannot sit there. A shipped checkpoint trained for another config (Sequence's team
  policies, ``players_per_team=2``) gets a second table of that config, shared with every agent
  that can sit at it; its output folder and summary key name the keywords
  (``sequence_v0-players_per_team=2``). A checkpoint whose config differs only in the game's
  ``observation_keys`` plays the default table (it re-encodes its observations).
* ``--all --quick`` (the default of ``--all``) plays only the newest version of each family of
  shipped checkpoints (``ppo-search-v4`` but not ``ppo-search-v1`` to ``-v3``), and leaves out the
  checkpoints that search at play time (their index entry has a ``search`` block): one takes
  seconds a game where the others take a fraction of one (in Pan's Trial, nine tenths of the whole
  table's time), so the quick league could not give every table its floor of games in a few
  minutes with them. The summary lists what it left out, and why, under ``left_out``.
  ``--all --full`` (or ``--games N``) plays every version and every agent.
* ``--quick`` plays fixed counts, the same on every machine: ``QUICK_GAMES`` games (24, rounded up to whole
  rotation cycles) a lineup among the current agents that do not search at play time, and, where a
  table's ladder top searches, that agent against ``heuristic-v1`` in ``QUICK_TOP_GAMES`` games (12).
  No time budget decides what is measured; ``--budget-s`` stops starting games after that many seconds
  a table only when it is given, and the report then says how many games each lineup played out of
  how many were scheduled. A lineup with fewer than ``training.league.output.FEW_GAMES`` games gets a
  warning saying how little the numbers hold.

How games are scored (:mod:`agents.scoring`, shared with training and tournaments)
-----------------------------------------------------------------------------------
* Two teams (two players, or two teams of several): a team whose return is > 0 wins; a game with
  no such team (a drawn or truncated game) is a draw.
* Three or more teams: the winners are the teams with the highest return, unless every team
  ties (then nobody wins); a truncated game is a game nobody wins. Ranks are fractional
  (tied teams share the mean of the places they span); truncated games give everyone the middle
  rank.
* An agent *wins* a game when one of its teams is a winner. Win rates carry a 95% Wilson
  interval. ``fair_share`` is the win rate it would have among equals: the mean over its games
  of its teams / all teams (0.5 in a two-team game; with three or more teams it is printed too).
  A first place shared by teams of different agents is a win for each, so the wins of a lineup
  can add up to more than its games; the printed table says so where it happens.
* Seats are rotated, so every agent plays from every team side; ``win_rate_by_side`` (with
  ``games_by_side`` and ``wins_by_side``) says how it did from each one, side 0 moving first. An
  agent holding several sides of a game counts that game once for each side and wins it from the
  side that won. Where the table's seat order decides much (Wizard Arena), this is the first thing
  to look at; the printed table shows it up to eight sides. An agent holding several teams of a
  lineup is printed ``3× heuristic-v1``: its win rate counts a game it won with any of its teams
  (compare it with its fair share, 3/4), while each by-side rate is one team's (compare it with
  1/4), and a note under the table says so.
* League ratings (``elo``) are a Bradley–Terry maximum-likelihood fit (Hunter's MM iteration; see
  :func:`agents.stats.bradley_terry`) on pairwise comparisons: in every game each pair of teams
  of different agents is a win for the higher return, a draw when equal or when the game was
  truncated. They are on the Elo scale with mean 1500, with one virtual drawn game per pair as a
  prior so that an unbeaten agent keeps a finite rating.
* Each rating has a 95% interval (``league.elo_ci95``), a percentile bootstrap over games:
  the games of each lineup are resampled with replacement (``ELO_RESAMPLES`` times, a fixed seed,
  so the same games give the same interval) and the ratings refitted
  (:func:`agents.stats.bootstrap_elo_interval`). An agent that never lost a comparison (a 20–0
  record) has no finite upper bound: it is ``null`` in the JSON and ``≥ 1420`` (its lower bound
  only) in the table, one that never scored ``≤ 1143``; the footnote says so when the table shows
  one, and the games column says how many games sit behind it. The league heat map prints the number of
  comparisons ``n`` in every cell, and fewer than ``FEW_GAMES`` games per lineup get a warning.
* Every report counts how its games ended (``end_reasons``) and says what each reason means
  (``end_reason_texts``: the game's own words, as the front ends show them, or the move limit for
  ``truncated``).

The code: :mod:`training.league.matches` schedules, plays and scores; :mod:`training.league.output`
prints the tables, draws the plots and writes the files; ``training/league/__main__.py`` is the
command line. (:mod:`training.evaluation` is the other kind of evaluation: one trained policy against
fixed agent kinds, as the trainers use it.)

Outputs, under ``--out DIR`` (default ``runs/league/<game>``): ``results.json`` (settings,
per-lineup and per-agent statistics, ratings, every game's outcome), ``winrates.png`` (win rates
with their intervals) and, with three or more agents, ``league.png`` (a heat map of pairwise
scores). ``--all`` writes one sub-folder per game and ``summary.json``.

``--records DIR`` also writes every game of the report as a JSON game record
(``DIR/<game>-lineup<L>-game<G>.json``; :mod:`agents.records`; each game's entry in
``results.json`` names its file). ``python -m play replay FILE --gif game.gif`` replays one exactly.
"""
