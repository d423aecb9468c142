"""Sequence (``sequence_v0``): 2 or 3 teams of 1–4 players on the 10x10 board, two decks, jacks.

The facts table (``envs.facts.facts("sequence_v0")``, at the top of the game's page) has the
spaces, agents and versions. ``num_teams × players_per_team`` seats (2–12); seat ``i`` plays for
team ``i % num_teams``, so team-mates never sit side by side. Rewards, at the end only: +1 each seat
of the winning team, −1 every other seat, 0 for all on a draw or truncation. The state is
``Box(0, 1, (867 + 53·n,), float32)`` for n seats.

Usage
-----
A whole game of random legal moves (PettingZoo's AEC loop; a policy would read
``observation["observation"]`` and choose among the actions the mask allows):

.. code-block:: python

    from envs import sequence_v0

    env = sequence_v0.env()
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

    env = sequence_v0.parallel_env()
    observations, infos = env.reset(seed=42)
    while env.agents:
        actions = {agent: env.action_space(agent).sample(obs["action_mask"]) if obs["action_mask"].any() else 0
                   for agent, obs in observations.items()}
        observations, rewards, terminations, truncations, infos = env.step(actions)
    env.close()

Observation layout (710 float32 values, from the acting seat's point of view)
------------------------------------------------------------------------------
================  ===========================================================================
index             content
================  ===========================================================================
0–99              chips of the seat's own team
100–199           chips of the next team in seat order
200–299           chips of the team after that (all zero with two teams)
300–399           the four free corners
400–499           locked chips (part of a completed sequence, any team)
500–599           empty squares
600–651           own hand: copies held of each card kind ``suit * 13 + rank`` (÷ 2)
652–703           cards played since the last reshuffle (the face-up discard pile), per kind (÷ 2)
704–706           completed sequences of own / next / following team (÷ target, capped at 1)
707               a dead card was already exchanged this turn
708               draw pile size ÷ 104
709               consecutive passes ÷ players
================  ===========================================================================

No other seat's hand and no deck order appear anywhere. ``env.unwrapped.player_view(agent)``
gives the same knowledge as a JSON-compatible dict (board, locked squares, sequences, own hand,
hand sizes, discard pile, counters).

Action encoding
---------------
Semantic, not hand-slot based: a policy learns squares and card kinds. ``s = row * 10 + col`` with
row 0 at the top of the printed board.

=========  ==================================================================================
action     meaning
=========  ==================================================================================
0–99       ``place s``: play the natural card printed on square ``s``, chip on ``s``
100–199    ``wild s``: play a two-eyed jack (♦ or ♣), chip on empty square ``s``
200–299    ``remove s``: play a one-eyed jack (♥ or ♠), remove the opposing unlocked chip on ``s``
300–347    ``dead k``: discard a dead card of the ``k``-th non-jack kind (kinds ordered ♠ ♥ ♦ ♣,
           A 2 … 10 Q K) and draw a replacement; the turn goes on (at most once per turn)
348        ``pass``: legal only when nothing else is
=========  ==================================================================================

``env.unwrapped.action_to_string(a)`` names any action (``"place 5D r2c5"``, ``"wild r4c4"``,
``"remove r7c1"``, ``"dead QH"``, ``"pass"``).

Rewards
-------
Only when the game ends: +1 to every seat of the winning team, −1 to every other seat; 0 to everyone
on a draw (a completely blocked table) or when ``max_cycles`` cuts the game. Every other step gives 0,
and team-mates always share their reward.

Config keywords
---------------
=====================  ===========  =====================================================================
keyword                default      meaning
=====================  ===========  =====================================================================
``num_teams``          2            2 or 3
``players_per_team``   1            1–4
``sequences_to_win``   None         None = 2 for two teams, 1 for three; or 1–4
``dead_cards``         True         allow exchanging a dead card once per turn
``layout``             "printed"    "printed" (the commercial board) or "generated" (seeded, see RULES.md)
``layout_seed``        0            seed of the generated layout (an integer >= 0); the same every episode
``max_cycles``         500          truncation cap (cycles of n actions)
``render_mode``        None         "ansi", "rgb_array" or "human" (text to stdout)
=====================  ===========  =====================================================================

State layout (``state()``)
--------------------------
``env.state()`` is the whole position as the referee sees it (every hand and the deck included: for a
centralised critic, never for a seat's policy), ``Box(0, 1, (867 + 53·n,), float32)``: 973 values with
two seats, 1079 for 2x2, 1026 for three teams. A pure function of the position (``Game.encode_state``);
the random generator is not part of it.

=====================  ============================================================================
values                 content
=====================  ============================================================================
``[0, 710)``           player_0's observation (the table above, from team 0's side)
next n + 1             the seat to act, one-hot; the last value is set once the game is over
next 52·n              every seat's hand, seat after seat: copies held of each card kind ÷ 2
next 52                the draw pile's contents: copies of each card kind ÷ 2
next 104               the draw pile's order: slot k is the k-th card from the top as (kind + 1) / 52,
                       0 beyond the end of the pile
=====================  ============================================================================

Parallel API
------------
``sequence_v0.parallel_env(**config)`` (``pettingzoo.make("parallel", "tabletop/sequence-v0")``) is
``env()`` through PettingZoo's ``turn_based_aec_to_parallel``: ``step`` reads only the acting seat's action.

Version history
---------------
* v0: the current version.
"""

from envs.core.env import make_env_factories, make_parallel_env
from envs.sequence.game import SequenceGame as Game

env, raw_env = make_env_factories(Game)
parallel_env = make_parallel_env(env, Game)

__all__ = ["Game", "env", "parallel_env", "raw_env"]
