"""Wizard Arena (``wizard_arena_v0``): 2–16 bots roam a seeded map of mountains and forests, ally into
single-file parties, battle with D20 bouts, challenge Gary the Wizard, die into gravestones, and are
ranked by score (then strength) on a final scoreboard.

The facts table (``envs.facts.facts("wizard_arena_v0")``, at the top of the game's page) has the
spaces, agents and versions. ``num_bots`` seats (2–16, default 6); seat i is bot i. Only living
solo bots and party leaders act (round-robin in seat order); a solo asked to ally decides out of
turn; followers and the dead are never selected. The observation has 6·S² + 294 + 21 + n·(16 + n)
values (S = ``map_size``; 1983 for the defaults; ``observation_version=1``: n·(14 + n), 1971;
``observation_version=3``: n·(26 + n) + 10, 2053). Rewards, at the end only, for every seat, dead or
alive: 1 − 2·(rank − 1)/(n − 1) from the ranking by score then strength (equal bots share their
places); they lie in [−1, 1] and sum to zero, and truncation hands out the same ranking reward. The
game ends when one side is left (or none alive), or after 8·S rounds without an alliance, join,
battle or death (the no-progress rule). ``python -m tools.tournament --bot NAME=AGENT_ID … -H 10
--games 20`` runs a tournament (``-H`` is every bot's starting health).

Usage
-----
A whole game of random legal moves (PettingZoo's AEC loop; a policy would read
``observation["observation"]`` and choose among the actions the mask allows):

.. code-block:: python

    from envs import wizard_arena_v0

    env = wizard_arena_v0.env()
    env.reset(seed=42)
    for agent in env.agent_iter():
        observation, reward, termination, truncation, info = env.last()
        if termination or truncation:
            action = None
        else:
            action = env.action_space(agent).sample(observation["action_mask"])
        env.step(action)
    env.close()

The same game through the parallel API, one dict of actions a step (one seat acts at a time: the
others' masks are empty and their actions are ignored):

.. code-block:: python

    env = wizard_arena_v0.parallel_env()
    observations, infos = env.reset(seed=42)
    while env.agents:
        actions = {agent: env.action_space(agent).sample(obs["action_mask"]) if obs["action_mask"].any() else 0
                   for agent, obs in observations.items()}
        observations, rewards, terminations, truncations, infos = env.step(actions)
    env.close()

Observation layout (from the observing seat's point of view; all values in [0, 1])
-------------------------------------------------------------------------------------
=========================  ========================================================================
values                     content
=========================  ========================================================================
``[0, 6·S²)``              global map planes, channel-major, row-major cells: terrain (1 = mountain or
                           forest), self, own party's other members, other living bots, gravestones,
                           Gary
next ``6·7·7``             the same six planes in the 7×7 window centred on the seat's bot (cells
                           beyond the edge read as terrain)
next 21                    own stats: alive, HP/(2·health), max HP/(2·health), strength/10,
                           score (0.5 + s/(2·(abs(s) + 20)), never capped), solo, leader, follower, party
                           size/n, row, col, Gary row, Gary col, Gary within 1, own side's total
                           strength/40, phase one-hot (move, ally, gary, reward), time left (share of
                           the env's step cap still to go), quiet time left (share of the no-progress
                           rounds still to go)
next ``n·(16 + n)``        every bot, starting with the seat itself then seat order: alive, HP, max HP,
                           strength, score, acts (solo or leader), in a party, same side as me, party
                           size/n, row, col, is asking me to ally now, its side's total strength,
                           place in its line/(n−1), its seat comes before mine (ties of leadership
                           go to the lower seat by default, the order of battles always does), it
                           and I are a declined pair (not asked to ally again until we have stood
                           apart); then n values:
                           one-hot of the table row of its leader (a living solo or leader: its own
                           row; the dead: none). With ``observation_version=1`` rows have ``14 + n``
                           values (neither the seat nor the declined feature)
version 3 only             each table row has 10 more values before the leader one-hot (``26 + n`` in
                           all): the walking distance from the seat's bot to that bot round the
                           terrain (8 neighbours, bots ignored) over 2·S, capped at 1 (1 = cannot be
                           reached), then for each move choice in action order (N … NW, stay) 1 if it
                           leaves the bot nearer, 0.5 as near, 0 farther or blocked (obstacle, off the
                           map, unreachable); all 10 are 0 on the seat's own row, for the dead, and
                           when the seat's bot is dead. After the table, 10 more: the same block for Gary.
=========================  ========================================================================

Strength and HP above their scale are capped at 1. Nothing is hidden but the random generator:
``env.unwrapped.player_view(agent)`` is the full state (positions, HP, strength in tenths, scores,
parties in line order, Gary, gravestones, phase) without the RNG, plus ``"seat"``.

Action encoding
---------------
=====  =====================  =============================================================
id     name                   meaning
=====  =====================  =============================================================
0–7    ``move N`` … ``NW``    step to a neighbour: N, NE, E, SE, S, SW, W, NW (a party's
                              leader steps and the line follows; it may step onto its tail
                              or, to turn round, its first follower); squeezes allowed (cost)
8      ``stay``               always legal in the move phase
9      ``ally accept``        a solo meeting a solo: agree to form a party
10     ``ally decline``       refuse (that pair is not asked again until they separate)
11     ``challenge Gary``     after the turn's step, when within distance 1 of Gary
12     ``leave Gary``         do not challenge
13     ``reward score``       after beating Gary: +2 score
14     ``reward strength``    … +2.0 strength (own)
15     ``reward health``      … +2 HP, max HP rising with it (masked out when ``health=0``)
=====  =====================  =============================================================

Rewards
-------
Only when the game ends, to every seat, dead or alive: 1 − 2·(rank − 1)/(n − 1), from the final
ranking by score, then strength (equal bots share the mean of their ranks). The rewards lie in [−1, 1]
and sum to zero; a game cut by ``max_cycles`` hands out the same ranking reward. Every other step
gives 0.

Config keywords
---------------
========================  ============  ====================================================================
keyword                   default       meaning
========================  ============  ====================================================================
``num_bots``              6             2–16 bots (seats)
``health``                10            starting HP (0–1000); 0 switches health off: nobody dies and a lost
                                        challenge of Gary costs 2 score instead of 2 HP
``map_size``              16            the map is S×S (6–64), large enough for the bots
``terrain_density``       0.15          share of cells covered by mountains and forests (0–0.5)
``initial_strength``      1.0           every bot's starting strength (multiple of 0.1)
``gary_strength``         3.0           Gary's strength (multiple of 0.1)
``gary_roams``            False         True: Gary takes one random step each round
``alliance_tie_break``    "lower-seat"  who leads two solos equal in strength and score: "lower-seat",
                                        "higher-seat", "random" (the game's seeded RNG), "more-hp" (then the
                                        lower seat) or "mover" (the bot whose turn it is); see RULES.md
``observation_version``   2             1: the bots table without the seat and declined features
                                        (``wizard_arena_v0/ppo-v1`` was trained on it); 2: with them;
                                        3: version 2 plus the walking blocks (above).
                                        An observation key (``Game.observation_keys``): a policy trained on
                                        one version plays at tables of another, re-encoding from its view
``max_cycles``            400           (env keyword) truncation cap in cycles of n actions
``render_mode``           None          "ansi", "rgb_array" or "human"
========================  ============  ====================================================================

State layout (``state()``)
--------------------------
``env.state()`` is the whole position as the referee sees it, for a centralised critic:
``Box(0, 1, (L + n² + 4·n + 2,), float32)`` (2045 for the defaults), a pure function of the position
(``Game.encode_state``); the random generator is not part of it. Nothing in it is secret, but seat 0's
observation shows some relations only from seat 0's side, so they follow in full.

===================  ===============================================================================
values               content
===================  ===============================================================================
``[0, L)``           player_0's observation (the table above, with ``observation_version``'s layout)
next n + 1           the seat to act, one-hot; the last value is set once the game is over
next n²              declined pairs: value ``a·n + b`` is 1 when bots a and b declined each other
next n               the alliance question under way: the moving bot, one-hot
next n               … the solo it met, one-hot (who answers now is the seat to act)
next n               the bots already met on this step
next 1               a respawn happened on this step
===================  ===============================================================================

Parallel API
------------
``wizard_arena_v0.parallel_env(**config)`` (``pettingzoo.make("parallel",
"tabletop/wizard_arena-v0")``) is ``env()`` through PettingZoo's ``turn_based_aec_to_parallel``.

Version history
---------------
* v0: the current version.
"""

from envs.core.env import make_env_factories, make_parallel_env
from envs.wizard_arena.game import WizardArenaGame as Game

env, raw_env = make_env_factories(Game)
parallel_env = make_parallel_env(env, Game)

__all__ = ["Game", "env", "parallel_env", "raw_env"]
