"""The optimised observation encoder agrees with a plain re-implementation of the documented layout."""

from __future__ import annotations

import random

import numpy as np

import agents
import envs.dojo_v0 as dojo
from envs.dojo.board import KINDS
from envs.dojo.cards import CARD_COUNTS, TECNICA
from envs.dojo.rules import KUMITE_KINDS, PHASES, SEAT_CORNERS, TARGET_PURPOSES


def reference(game, state, me):
    n = game.num_players
    b = game.board
    planes = np.zeros((25, 256), dtype=np.float32)
    for s in range(256):
        if b.room[s] >= 0:
            planes[7, s] = 1
            planes[14, s] = b.room[s] == SEAT_CORNERS[n][me]
        elif b.dojo[s]:
            planes[8, s] = 1
        else:
            planes[KINDS.index(KINDS[b.kind[s]]), s] = 1
        for d in range(4):
            planes[9 + d, s] = b.step[s][d] >= 0
        planes[13, s] = b.entry[s] >= 0
    rel = [(me + i) % n for i in range(n)]
    for i, q in enumerate(rel):
        if state.pos[q] >= 0:
            planes[15 + i, state.pos[q]] = 1
    if state.main_phase != "setup" and state.mv_start >= 0:
        for s in range(256):
            planes[23, s] = state.mv_visited >> s & 1
        planes[24, state.mv_start] = 1
    seats = np.zeros((8, 16), dtype=np.float32)
    roles = (state.turn_player, state.current_player(), state.k_att, state.k_def, state.first_player)
    for i, q in enumerate(rel):
        t = state.track[q]
        seats[i, 0] = 1
        seats[i, 1] = t / 17
        seats[i, 2 + t // 3] = 1
        seats[i, 8] = bool(state.hands[q])
        seats[i, 9] = state.med_guard[q]
        seats[i, 10] = state.med_skip[q]
        for j, who in enumerate(roles):
            seats[i, 11 + j] = who == q
    g = []
    g += [state.hands[me].count(k) / 2 for k in TECNICA]
    g += [float(state.phase == p) for p in PHASES]
    g += [float(state.purpose == p) for p in TARGET_PURPOSES]
    in_kumite = bool(state.k_kind)
    g += [min(state.mv_steps, 12) / 12, state.roll / 12, float(state.mv_extra), float(state.first_round),
          len(state.deck) / 22, state.k_dice[0] / 6 * in_kumite, state.k_dice[1] / 6 * in_kumite]
    for role in (0, 1):
        g += [float(state.k_played[role] == k) for k in TECNICA]
    g += [float(state.k_kind == k) for k in KUMITE_KINDS]
    g += [state.k_wins[0] / 2 * in_kumite, state.k_wins[1] / 2 * in_kumite]
    seen = [0] * 13
    hidden = 0
    for c, o in zip(state.discard, state.discard_owner):
        if o in (-1, me):
            seen[c] += 1
        else:
            hidden += 1
    g += [seen[k] / CARD_COUNTS[k] for k in range(13)] + [hidden / 7]
    g += [float(state.last_card == k) for k in range(13)] + [float(state.last_card == -2)]
    return np.concatenate([planes.ravel(), seats.ravel(), np.array(g, dtype=np.float32)])


def test_observation_matches_reference_encoder():
    for n, kind in ((4, "random-v0"), (8, "random-v0"), (3, "heuristic-v1")):
        game = dojo.Game(num_players=n)
        seats = [agents.make(f"dojo_v0/{kind}", seed=i) for i in range(n)]
        for i, a in enumerate(seats):
            a.reset(i, game)
        state = game.new_initial_state(n)
        rng = random.Random(n)
        for step in range(1500):
            if state.is_terminal():
                break
            if step % 7 == 0:
                me = rng.randrange(n)
                assert np.allclose(game.observe(state, me), reference(game, state, me)), (step, state.phase)
            p = state.current_player()
            obs = {"observation": game.observe(state, p), "action_mask": state.legal_mask()}
            state.apply_action(seats[p].act(obs, state.player_view(p)))
