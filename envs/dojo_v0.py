"""Il Labirinto del Dojo — climb from White to Brown belt in a walled maze, then pass the Final Exam.

2–8 players walk a 16x16 maze with dice, fight Kumite for stripes, draw Nebbia del Dojo cards and
race to the Central Dojo; the first to win the Final Exam wears the Black Belt. The full rules as
implemented, and every interpretation, are in ``envs/dojo/RULES.md``; the board is the text map
``envs/dojo/board.txt``.

The facts table (``envs.facts.facts("dojo_v0")``, at the top of the game's page) has the spaces,
agents and versions. ``num_players`` seats (2–8); the action space is ``Discrete(26 + tunnels)``,
30 on the standard board, and the state ``Box(0, 1, (6640 + 5·n,), float32)``. Rewards: +1 to the
Black Belt winner, −1/(n−1) to every other seat (zero-sum); 0 for everyone when truncated. Random
players almost never pass the Final Exam, so their games run to the cap (the facts table's
"Episode end" row has the measured numbers). The parallel API goes
through ``turn_based_aec_to_parallel``: each step reads only the action of the seat to act
(out-of-turn deciders come next, as in the AEC API).

Usage
-----
A whole game of random legal moves (PettingZoo's AEC loop; a policy would read
``observation["observation"]`` and choose among the actions the mask allows):

.. code-block:: python

    from envs import dojo_v0

    env = dojo_v0.env()
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

    env = dojo_v0.parallel_env()
    observations, infos = env.reset(seed=42)
    while env.agents:
        actions = {agent: env.action_space(agent).sample(obs["action_mask"]) if obs["action_mask"].any() else 0
                   for agent, obs in observations.items()}
        observations, rewards, terminations, truncations, infos = env.step(actions)
    env.close()

Observation
-----------
A flat float32 vector in [0, 1], from the acting seat's point of view (relative seat 0 = me,
1 = the next seat clockwise, ...). Squares are indexed ``16 * row + column``.

* 25 planes of 256 squares: square kinds ``. A F ? T P K`` (7), Safe Room, Dojo, open edge
  N/E/S/W (4), next to a Dojo entrance, my own Safe Room, pawn of relative seat 0..7 (8),
  squares visited by the current move, start square of the current move.
* 8 x 16 seat features (relative seats; zeros for absent seats): present, track/17, belt one-hot
  White..Brown (6), holds a Tecnica, meditating (cannot be fought/targeted), skips next turn,
  is the turn player, is to act, is the Kumite attacker, is the defender, is the first player.
* 63 globals: my Tecnica counts Kiai/Uke/Kaeshi (/2), phase one-hot (setup, move, tecnica, keep,
  tunnel, target, segreto, place, settle, over), target purpose (sfida, irimi, exam), steps
  left/12, roll/12, extra step, first round, deck size/22, attacker die/6, defender die/6,
  Tecnica played by attacker (3) and defender (3), Kumite kind (move, tunnel, sfida, exam), Exam
  bouts won by challenger/defender (/2), face-up discards by kind (/copies, 13) and hidden
  face-down discards (/7), last card drawn (13 kinds + "a Tecnica", which stays secret).

Other seats' Tecnica cards, face-down discards of others, the deck order and the RNG are never
in a seat's observation or ``player_view``.

Action
------
One action per decision; the mask (``observation["action_mask"]``) allows only legal ones.

=======  ============================  ====================================================
id       name                          used when
=======  ============================  ====================================================
0–3      ``step N/E/S/W``              moving one step of the roll (masked to steps on a
                                       longest possible walk: the full roll whenever it can
                                       be completed); the Meditazione extra step; stepping
                                       through a Dojo entrance (Brown only) enters the Dojo;
                                       ``settle``: the quiet extra step of a pawn moved onto
                                       an occupied square
4–12     ``room square r,c``           setup, and when sent to Start: the square (r, c) of
                                       one's own 3x3 Safe Room (reading order)
13       ``pass``                      play no Tecnica in a Kumite window; decline a Tunnel
14       ``play Tecnica``              play the held Tecnica (attacker first, then defender)
15       ``take Tunnel``               teleport to the paired Tunnel
16–18    ``keep Kiai/Uke/Kaeshi``      holding two Tecnica: keep one, discard the other
                                       face down
19–25    ``target seat+k``             Sfida / Irimi target, or the Exam defender when tied:
                                       the opponent k seats after oneself (k = 1..7)
26..     ``Tunnel Segreto to r,c``     the tunnel chosen for Tunnel Segreto (tunnels in
                                       reading order: (3,3), (3,12), (12,3), (12,12))
=======  ============================  ====================================================

Rewards
-------
Only when the game ends: +1 to the player who wins the Final Exam (the Black Belt) and −1/(n−1) to
every other seat, so the rewards sum to zero; 0 to everyone when ``max_cycles`` cuts the game. Every
other step gives 0.

Config keywords (``env(**config)``, ``raw_env(**config)``)
------------------------------------------------------------
=============================  =======  ==========================================================
keyword                        default  meaning
=============================  =======  ==========================================================
``num_players``                4        2–8
``board_file``                 None     path of a board map (format: see ``envs/dojo/board.txt``),
                                        validated on load; None = the standard board. It must be a
                                        regular file of UTF-8 text, at most 64 KiB (a FIFO, a device,
                                        a folder or binary data is refused with a ConfigError)
``short_game``                 False    everyone starts on 3 (Yellow); with 6+ players always
``exam_ties_to_defender``      False    a tied Final Exam goes to the defender (no Senshu)
``exam_best_of_three``         False    the Exam is best of three full Kumite bouts
``exam_defender_own_belt``     False    the Exam defender fights with its own belt, not Black
``kiai_bonus``                 2        Kiai adds 2 (or 1): the integer 1 or 2
``failed_exam_cost``           3        stripes lost by a failed challenger: the integer 3, 1 or 0
``fatica_on_stop_only``        False    a Fatica costs a stripe only when stopping on it
``kumite_first_round``         False    Kumite allowed from the first turn
``first_player_extra_stripe``  False    the first player starts one stripe up
=============================  =======  ==========================================================

Also the generic ``render_mode`` (``human``, ``ansi``, ``rgb_array``), ``max_cycles`` and, for
``raw_env`` only, ``illegal_action`` ("raise" or "penalize").

State layout (``state()``)
--------------------------
``env.state()`` is the whole position as the referee sees it (every seat's Tecnica, face-down discards
and the deck's order included: for a centralised critic, never for a seat's policy),
``Box(0, 1, (6640 + 5·n,), float32)`` on the standard board (6660 for four players), a pure function of
the position (``Game.encode_state``); the random generator is not part of it.

==================  ================================================================================
values              content
==================  ================================================================================
``[0, 6591)``       player_0's observation (above, relative seat 0 = player_0)
next n + 1          the seat to act, one-hot; the last value is set once the game is over
next 3·n            every seat's Tecnica, seat after seat: Kiai, Uke, Kaeshi held ÷ 2
next 13             every discard by kind, face down too (÷ copies of the kind)
next 13             the deck's contents by kind (÷ copies of the kind)
next 22             the deck's order: slot k is the k-th card from the top as (kind + 1) / 13, 0 beyond
                    the end of the deck
next n              the Black Belt winner's seat, one-hot
==================  ================================================================================

Version history
---------------
* v0: the current version (standard board v0, 22-card deck, all switches of the original rules off).
"""

from envs.core.env import make_env_factories, make_parallel_env
from envs.dojo.game import DojoGame as Game

env, raw_env = make_env_factories(Game)
parallel_env = make_parallel_env(env, Game)

__all__ = ["Game", "env", "parallel_env", "raw_env"]
