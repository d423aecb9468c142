"""Pan's Trial — a two-player duel in a shifting 6x6 labyrinth of playing cards.

Players move around a wrap-around board of cards whose suits currently play one of four roles
(Walls, Traps, Ballista, Weapons). They pick up weapons, fall into traps, fly by ballista, strike
each other in combat, and between Traversing phases "appease Pan" with a hand card to win requests
that rewrite the rules (swap suit roles, swap damage cards, shift a row or column). A player whose
damage pile reaches the threshold (25) loses. Full rules: ``envs/pans_trial/RULES.md``.

The facts table (``envs.facts.facts("pans_trial_v0")``, at the top of the game's page) has the
spaces, agents and versions. ``player_1`` is the original's "Player 2" and begins Traversing.
Rewards: +1 win, −1 loss, 0 on a draw (stalemate) or truncation.

Every decision is an action of the acting seat. Out-of-turn decisions (the defender's strike, the
second Appeasing card, the loser's request and placement) simply make that seat the current agent.

Usage
-----
A whole game of random legal moves (PettingZoo's AEC loop; a policy would read
``observation["observation"]`` and choose among the actions the mask allows):

.. code-block:: python

    from envs import pans_trial_v0

    env = pans_trial_v0.env()
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

    env = pans_trial_v0.parallel_env()
    observations, infos = env.reset(seed=42)
    while env.agents:
        actions = {agent: env.action_space(agent).sample(obs["action_mask"]) if obs["action_mask"].any() else 0
                   for agent, obs in observations.items()}
        observations, rewards, terminations, truncations, infos = env.step(actions)
    env.close()

Observation layout
------------------
A flat ``float32`` vector of 987 values in [0, 1], "my" meaning the observing seat:

=======  ======================  ==========================================================================
index    block                   content
=======  ======================  ==========================================================================
0–467    board                   36 squares × 13: card present, suit (4), role (4, zero before the Omen
                                 reveal), value/12, I am here, opponent is here, hole
468–483  suit roles              suit s has role r at 468 + 4s + r (zero before the reveal)
484      omens revealed
485–536  my hand                 one per card
537–588  opponent's hand         one per card (hands are public: every card entering a hand is seen)
589–640  my damage pile
641–692  opponent's damage pile
693–694  damage totals           mine, opponent's: min(1, total / damage_threshold)
695–746  draft pool
747–760  phase                   draft, traverse, ballista_target, combat, appease_first, appease_second,
                                 request_first, request_second, restructure, steal_mine, steal_theirs,
                                 plane_shift, place, over
761–768  flags                   my turn to act, my Traversing turn, turns left/6, my forced passes/3,
                                 opponent's forced passes/3, only no-choice passes so far this phase, I am
                                 player_0, I took the last Traversing turn
769–820  my Appeasing card       while Appeasing, once chosen
821–822  Appeasing submitted     me, opponent (whether — never which card)
823–824  Appeasing result        I won, I lost (during requests and placement)
825–828  winner's request        one-hot once chosen
829–880  Steal Life card         my damage card chosen to give
881–932  pending loser card      played card of the Appeasing loser awaiting placement
933–984  pending winner card     played card of the Appeasing winner awaiting placement
985–986  strikers                combat: I still strike, the opponent still strikes
=======  ======================  ==========================================================================

Hidden: the Omen order before its reveal (after the draft) and the opponent's Appeasing card until
both have chosen; the RNG. ``player_view(seat)`` gives the same knowledge as a JSON dict.

Action encoding
---------------
Cards are ``suit * 13 + rank`` (suits C D H S, ranks A 2 … 10 J Q K → 0…12); squares are
``row * 6 + col``.

=======  ===================================================  ==============================================
ids      meaning                                              legal when
=======  ===================================================  ==============================================
0–3      move up / right / down / left (wrapping)             Traversing, target square not a Wall
4        interact with the card under you                     Traversing, card is a Trap, Weapon, or Ballista
                                                              with a target
5        pass                                                 forced passes owed (then the only action), or
                                                              nothing else is legal
6–9      request Restructure / Steal Life / Ignore Us /       requests; Steal Life needs both damage piles
         Plane Shift                                          non-empty; Ignore Us only for the Appeasing
                                                              winner; the loser's must differ from the
                                                              winner's
10–15    Restructure: swap the roles of suit pair CD, CH,     after requesting Restructure
         CS, DH, DS, HS
16–27    Plane Shift row r: ``16 + 2r`` left, ``17 + 2r``     after requesting Plane Shift
         right
28–39    Plane Shift column c: ``28 + 2c`` up (row r → r−1),  after requesting Plane Shift
         ``29 + 2c`` down
40–75    ballista: land on square ``a − 40``                  after stepping on / interacting with a Ballista
76–111   place the loser's own played card in hole            placement (loser), hole not under a player
         ``a − 76``
112–147  place the winner's played card in hole ``a − 112``   placement (loser)
148–199  draft card ``a − 148``                               draft, card in the pool, at most 2 Kings drafted
200–251  strike with card ``a − 200``                         combat, card of the current Weapons suit in hand
252–303  appease Pan with card ``a − 252``                    Appeasing, card in hand
304–355  Steal Life: give card ``a − 304`` from my damage     after requesting Steal Life
         pile
356–407  Steal Life: take card ``a − 356`` from the           right after the previous one
         opponent's pile
=======  ===================================================  ==============================================

Rewards
-------
Only when the game ends: +1 to the winner (its opponent's damage pile reached ``damage_threshold``)
and −1 to the loser; 0 to both on a stalemate draw or when ``max_cycles`` cuts the game. Every other
step gives 0.

Config keywords
---------------
====================  =============================================  ===================================================
keyword               default                                        meaning
====================  =============================================  ===================================================
``damage_threshold``  25                                             damage total at which a player loses, 1–60 (above,
                                                                     random games stop ending)
``first_player``      1                                              seat that begins Traversing, 0 or 1 (the original:
                                                                     Player 2)
``draft``             True                                           draft the 10/Q/K cards; False deals the same cards
                                                                     at random
``trump_order``       ``["walls", "traps", "ballista", "weapons"]``  Appeasing trump, strongest first
``max_cycles``        500                                            (environment) truncation cap, in cycles of two
                                                                     actions
====================  =============================================  ===================================================

State layout (``state()``)
--------------------------
``env.state()`` is the whole position as the referee sees it (the Omen order and both Appeasing cards
included: for a centralised critic, never for a seat's policy), ``Box(0, 1, (1181,), float32)``, a pure
function of the position (``Game.encode_state``); the random generator is not part of it.

=========  ======================  ===========================================================
index      block                   content
=========  ======================  ===========================================================
0–986      player_0's observation  the table above, from player_0's side
987–989    seat to act             player_0, player_1, game over
990–1005   Omen order              the k-th jack revealed is of suit s: 990 + 4k + s
1006–1021  suit roles              suit s has role r: 1006 + 4s + r (walls, traps, ballista,
                                   weapons), before the reveal too
1022–1125  Appeasing cards         seat p chose card c: 1022 + 52p + c
1126–1177  undrafted kings         one per card
1178–1180  winner                  player_0, player_1, draw
=========  ======================  ===========================================================

Parallel API
------------
``pans_trial_v0.parallel_env(**config)`` (``pettingzoo.make("parallel", "tabletop/pans_trial-v0")``)
wraps ``env()`` in PettingZoo's ``turn_based_aec_to_parallel``; the agent to act is the one with a mask.

Version history
---------------
* v0: the current version.
"""

from envs.core.env import make_env_factories, make_parallel_env
from envs.pans_trial.game import PansTrialGame as Game

env, raw_env = make_env_factories(Game)
parallel_env = make_parallel_env(env, Game)

__all__ = ["Game", "env", "parallel_env", "raw_env"]
