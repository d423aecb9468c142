"""Build Pan's Trial positions from readable text for the scenario tests.

A board is six lines of six tokens. ``.`` is a hole; otherwise a token is a role letter and a value:
``W`` wall, ``T`` trap, ``B`` ballista, ``X`` weapon, value 1..12 (1 = Ace, 10, 11 = Queen,
12 = King). With the default roles (``suit_role=(0, 1, 2, 3)``) clubs are walls, diamonds traps,
hearts ballista and spades weapons, so ``T5`` is the 5 of diamonds. Hands and damage piles use the
same tokens. Every card not named goes to the (otherwise unused) draft pool, so all 52 cards stay
accounted for.
"""

from __future__ import annotations

import random

from envs.core import rng_to_json
from envs.pans_trial import rules as R

LETTERS = "WTBX"


def card(token: str, suit_role=(0, 1, 2, 3)) -> int:
    role = LETTERS.index(token[0])
    value = int(token[1:])
    suit = list(suit_role).index(role)
    rank = value - 1 if value <= 10 else value
    c = suit * 13 + rank
    assert R.VALUE[c] == value, token
    return c


def sq(r: int, c: int) -> int:
    return r * R.SIZE + c


def build(game, board: str, pos=((5, 3), (0, 2)), hands=("", ""), damage=("", ""), active=0,
          turns_left=6, forced=(0, 0), suit_role=(0, 1, 2, 3), stage="traverse", actor=None,
          seed=0, pending=None, **extra):
    rows = [line.split() for line in board.strip().splitlines()]
    assert len(rows) == 6 and all(len(r) == 6 for r in rows), "board must be 6 lines of 6 tokens"
    cells = [-1 if t == "." else card(t, suit_role) for row in rows for t in row]
    hand_lists = [[card(t, suit_role) for t in h.split()] for h in hands]
    dmg_lists = [[card(t, suit_role) for t in d.split()] for d in damage]
    pending_cards = [-1, -1] if pending is None else [card(t, suit_role) for t in pending]
    used = [c for c in cells if c >= 0] + sum(hand_lists, []) + sum(dmg_lists, []) \
        + [c for c in pending_cards if c >= 0]
    assert len(used) == len(set(used)), "a card is named twice"
    assert not set(used) & set(R.JACKS)
    pool = [c for c in range(R.NUM_CARDS) if c not in used and c not in R.JACKS]
    omens = [0] * 4
    for s, role in enumerate(suit_role):
        omens[role] = R.JACKS[s]
    data = {
        "board": cells,
        "pos": [sq(*pos[0]), sq(*pos[1])],
        "hands": hand_lists,
        "damage": dmg_lists,
        "pool": pool,
        "revealed": True,
        "identity": [],
        "stage": stage,
        "actor": active if actor is None else actor,
        "active": active,
        "turns_left": turns_left,
        "forced": list(forced),
        "only_passes": True,
        "last_turn": 1 - active,
        "strikers": [],
        "first_submitter": 0,
        "appease_winner": -1,
        "req_stage": 0,
        "first_request": -1,
        "steal_card": -1,
        "pending": pending_cards,
        "winner": None,
        "rng": rng_to_json(random.Random(seed)),
        "omens": omens,
        "suit_role": list(suit_role),
        "appease_card": [-1, -1],
    }
    data.update(extra)
    state = game.load_state(data)
    assert not state.check_invariants(), state.check_invariants()
    return state


