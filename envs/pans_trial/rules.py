"""Pan's Trial: the pure rules (cards, board geometry, the state machine and its actions).

Everything random comes from ``state.rng``. This module imports only the standard library, numpy and
``envs.core``. The observation encoder, renderers and config handling live in ``game.py``.

Cards are identified by ``id = suit * 13 + rank`` with ranks ``A 2 .. 9 10 J Q K`` (0..12) and suits
``C D H S`` (0..3). Squares are ``row * 6 + col`` on the 6x6 torus.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np

from envs.core import TERMINAL, State
from envs.core.fields import Bool, Choice, Field, Int, List, Optional, Record, Rng

# ------------------------------------------------------------------------------------------------
# Cards
SUITS = "CDHS"
RANKS = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
NUM_CARDS = 52
SIZE = 6
NUM_SQUARES = SIZE * SIZE

#: Value of every card: A=1, 2..9 face value, 10=10, J=0 (never in play), Q=11, K=12.
VALUE = [0] * NUM_CARDS
for _c in range(NUM_CARDS):
    _r = _c % 13
    VALUE[_c] = _r + 1 if _r <= 9 else (0 if _r == 10 else _r)
SUIT_OF = [c // 13 for c in range(NUM_CARDS)]

JACKS = [s * 13 + 10 for s in range(4)]
KINGS = [s * 13 + 12 for s in range(4)]
HIGH_CARDS = sorted(s * 13 + r for s in range(4) for r in (9, 11, 12))  # 10, Q, K
LABYRINTH_CARDS = [s * 13 + r for s in range(4) for r in range(9)]  # A..9
IS_KING = [c in KINGS for c in range(NUM_CARDS)]

ROLE_NAMES = ("walls", "traps", "ballista", "weapons")
WALLS, TRAPS, BALLISTA, WEAPONS = 0, 1, 2, 3

REQUEST_NAMES = ("restructure", "steal_life", "ignore_us", "plane_shift")
RESTRUCTURE, STEAL_LIFE, IGNORE_US, PLANE_SHIFT = 0, 1, 2, 3
SUIT_PAIRS = [(a, b) for a in range(4) for b in range(a + 1, 4)]

START_SQUARES = (5 * SIZE + 3, 0 * SIZE + 2)  # player_0 on (5,3), player_1 on (0,2)
TURNS_PER_PHASE = 6
FORCED_PASSES = 3
DRAFT_PICKS = 10
MAX_KINGS = 2


def card_name(c: int) -> str:
    return RANKS[c % 13] + SUITS[c // 13]


def square_name(s: int) -> str:
    return f"r{s // SIZE}c{s % SIZE}"


# ------------------------------------------------------------------------------------------------
# Board geometry (precomputed)
DIRECTION_NAMES = ("up", "right", "down", "left")
_DR = (-1, 0, 1, 0)
_DC = (0, 1, 0, -1)
NEIGH = [
    [((s // SIZE + _DR[d]) % SIZE) * SIZE + (s % SIZE + _DC[d]) % SIZE for d in range(4)]
    for s in range(NUM_SQUARES)
]
#: For each square and direction, the 5 squares met when walking away from it (never itself).
LINES = [
    [
        [((s // SIZE + _DR[d] * k) % SIZE) * SIZE + (s % SIZE + _DC[d] * k) % SIZE for k in range(1, SIZE)]
        for d in range(4)
    ]
    for s in range(NUM_SQUARES)
]

# ------------------------------------------------------------------------------------------------
# Action space (fixed, 408 ids)
A_MOVE = 0  # + direction (up, right, down, left)
A_INTERACT = 4
A_PASS = 5
A_REQUEST = 6  # + request (restructure, steal_life, ignore_us, plane_shift)
A_RESTRUCTURE = 10  # + index into SUIT_PAIRS (6)
A_SHIFT = 16  # + 2*row + (0 left, 1 right) for rows; A_SHIFT + 12 + 2*col + (0 up, 1 down) for columns
A_TARGET = 40  # + square (36): ballista landing square
A_PLACE = 76  # + 36*k + square; k=0: the loser's own played card, k=1: the winner's played card
A_DRAFT = 148  # + card
A_STRIKE = 200  # + card
A_APPEASE = 252  # + card
A_STEAL_MINE = 304  # + card (from the requester's own damage pile)
A_STEAL_THEIRS = 356  # + card (from the opponent's damage pile)
NUM_ACTIONS = 408


def action_name(a: int) -> str:
    if a < 0 or a >= NUM_ACTIONS:
        raise ValueError(f"action {a} outside [0, {NUM_ACTIONS})")
    if a < A_INTERACT:
        return f"move {DIRECTION_NAMES[a]}"
    if a == A_INTERACT:
        return "interact"
    if a == A_PASS:
        return "pass"
    if a < A_RESTRUCTURE:
        return f"request {REQUEST_NAMES[a - A_REQUEST]}"
    if a < A_SHIFT:
        x, y = SUIT_PAIRS[a - A_RESTRUCTURE]
        return f"restructure {SUITS[x]}<->{SUITS[y]}"
    if a < A_TARGET:
        i = a - A_SHIFT
        if i < 12:
            return f"shift row {i // 2} {'left' if i % 2 == 0 else 'right'}"
        i -= 12
        return f"shift col {i // 2} {'up' if i % 2 == 0 else 'down'}"
    if a < A_PLACE:
        return f"launch to {square_name(a - A_TARGET)}"
    if a < A_DRAFT:
        i = a - A_PLACE
        return f"place {'loser' if i < 36 else 'winner'} card at {square_name(i % 36)}"
    group, base = (
        ("draft", A_DRAFT) if a < A_STRIKE else
        ("strike with", A_STRIKE) if a < A_APPEASE else
        ("appease with", A_APPEASE) if a < A_STEAL_MINE else
        ("steal: give my", A_STEAL_MINE) if a < A_STEAL_THEIRS else
        ("steal: take their", A_STEAL_THEIRS)
    )
    return f"{group} {card_name(a - base)}"


# ------------------------------------------------------------------------------------------------
# Phases
DRAFT, TRAVERSE, TARGET, COMBAT, APPEASE, REQUEST, RESTRUCTURE_PICK, STEAL_MINE, STEAL_THEIRS, \
    SHIFT_PICK, PLACE, OVER = range(12)
PHASE_NAMES = (
    "draft", "traverse", "ballista_target", "combat", "appease", "request", "restructure",
    "steal_mine", "steal_theirs", "plane_shift", "place", "over",
)
#: Phases as shown in observations (appease and request are split by first/second chooser).
OBS_PHASES = (
    "draft", "traverse", "ballista_target", "combat", "appease_first", "appease_second",
    "request_first", "request_second", "restructure", "steal_mine", "steal_theirs", "plane_shift",
    "place", "over",
)
DRAW = 2  # value of ``winner`` for a drawn game
#: Saved fields that a player's view leaves out (or shows only in part).
SECRET_FIELDS = ("rng", "omens", "suit_role", "appease_card")


class PansTrialState(State):
    """One position of Pan's Trial. Fields are plain ints and lists (fast clone, easy save)."""

    __slots__ = (
        "rng", "board", "pos", "hands", "damage", "dmg_total", "pool", "omens", "revealed",
        "suit_role", "identity", "stage", "actor", "active", "turns_left", "forced", "only_passes",
        "last_turn", "strikers", "first_submitter", "appease_card", "appease_winner", "req_stage",
        "first_request", "steal_card", "pending", "winner", "obs_cache",
    )


    def __init__(self, game) -> None:
        super().__init__(game)
        self.rng = random.Random(0)
        self.board: list[int] = [-1] * NUM_SQUARES
        self.pos = list(START_SQUARES)
        self.hands: list[list[int]] = [[], []]
        self.damage: list[list[int]] = [[], []]
        self.dmg_total = [0, 0]
        self.pool: list[int] = []
        self.omens: list[int] = list(JACKS)  # jacks in reveal order: roles walls, traps, ballista, weapons
        self.revealed = False
        self.suit_role = [0, 1, 2, 3]  # meaningful only once revealed
        self.identity: list[int] = []  # identity card of each player once the draft is over
        self.stage = DRAFT
        self.actor = 0
        self.active = 0  # whose Traversing turn it is
        self.turns_left = TURNS_PER_PHASE
        self.forced = [0, 0]
        #: every turn so far in this Traversing phase was a pass made because nothing else was legal
        self.only_passes = True
        self.last_turn = -1  # who took the last Traversing turn
        self.strikers: list[int] = []  # combat: seats still to strike, in order
        self.first_submitter = 0
        self.appease_card = [-1, -1]  # submitted Appeasing cards (still in hand until both chose)
        self.appease_winner = -1
        self.req_stage = 0  # 0: the Appeasing winner's request, 1: the loser's
        self.first_request = -1
        self.steal_card = -1  # requester's own damage card chosen for Steal Life
        self.pending = [-1, -1]  # played cards awaiting placement: [loser's, winner's]
        self.winner: int | None = None  # 0, 1, DRAW, or None while playing
        #: The observation encoder's cache of everything that depends only on where the cards are
        #: and on the roles (``None`` until the encoder builds it). The rules keep it up to date for
        #: the frequent small changes (pickups, strikes, draft picks) through its methods
        #: ``hole``, ``board_set``, ``hand_add``, ``hand_remove``, ``damage_add`` and ``pool_remove``, and drop it
        #: (``_touch``) on any other change to cards or roles.
        self.obs_cache: Any = None

    def _touch(self) -> None:
        self.obs_cache = None

    # ------------------------------------------------------------------------------------------
    # Contract
    def current_player(self) -> int:
        return TERMINAL if self.winner is not None else self.actor

    def is_terminal(self) -> bool:
        return self.winner is not None

    def end_reason(self) -> str | None:
        """``"damage"`` once a player's damage reached the threshold, ``"only-passes"`` for the draw of a
        phase of nothing but passes that would repeat forever; None while the game goes on."""
        if self.winner is None:
            return None
        return "only-passes" if self.winner == DRAW else "damage"

    def returns(self) -> list[float]:
        w = self.winner
        if w is None or w == DRAW:
            return [0.0, 0.0]
        return [1.0, -1.0] if w == 0 else [-1.0, 1.0]

    @property
    def phase(self) -> str:
        return OBS_PHASES[self.obs_phase()]

    def obs_phase(self) -> int:
        st = self.stage
        if st <= COMBAT:
            return st
        if st == APPEASE:
            return 4 if self.actor == self.first_submitter else 5
        if st == REQUEST:
            return 6 + self.req_stage
        return st + 2

    def clone(self, share_rng: bool = False) -> PansTrialState:
        """An independent copy. ``share_rng=True`` is for search: the copy draws from this state's own
        generator and starts without caches, which is much cheaper but means the copy no longer
        continues exactly as the original would."""
        o = PansTrialState.__new__(PansTrialState)
        o.game = self.game
        if share_rng:
            o.set_legal_mask(None)
            o.rng = self.rng
        else:
            o.set_legal_mask(self.cached_legal_mask())
            o.rng = random.Random()
            o.rng.setstate(self.rng.getstate())
        o.board = self.board[:]
        o.pos = self.pos[:]
        o.hands = [self.hands[0][:], self.hands[1][:]]
        o.damage = [self.damage[0][:], self.damage[1][:]]
        o.dmg_total = self.dmg_total[:]
        o.pool = self.pool[:]
        o.omens = self.omens[:]
        o.revealed = self.revealed
        o.suit_role = self.suit_role[:]
        o.identity = self.identity[:]
        o.stage = self.stage
        o.actor = self.actor
        o.active = self.active
        o.turns_left = self.turns_left
        o.forced = self.forced[:]
        o.only_passes = self.only_passes
        o.last_turn = self.last_turn
        o.strikers = self.strikers[:]
        o.first_submitter = self.first_submitter
        o.appease_card = self.appease_card[:]
        o.appease_winner = self.appease_winner
        o.req_stage = self.req_stage
        o.first_request = self.first_request
        o.steal_card = self.steal_card
        o.pending = self.pending[:]
        o.winner = self.winner
        o.obs_cache = None if share_rng or self.obs_cache is None else self.obs_cache.copy()
        return o

    # ------------------------------------------------------------------------------------------
    # The two ways to make a state: deal a fresh game, or load a saved one
    @classmethod
    def deal(cls, game, rng: random.Random) -> PansTrialState:
        """A fresh game: shuffled labyrinth and Omens, then the draft (or a random deal)."""
        s = cls(game)
        s.rng = rng
        board = LABYRINTH_CARDS[:]
        rng.shuffle(board)
        s.board = board
        omens = JACKS[:]
        rng.shuffle(omens)
        s.omens = omens
        s.suit_role = suit_roles_from_omens(omens)
        if game.config["draft"]:
            s.pool = HIGH_CARDS[:]
            s.stage = DRAFT
            s.actor = rng.randrange(2)  # coin flip: who drafts first
        else:
            kings = KINGS[:]
            rng.shuffle(kings)
            s.identity = sorted(kings[2:])
            dealt = [c for c in HIGH_CARDS if not IS_KING[c]] + kings[:2]
            rng.shuffle(dealt)
            s.hands = [dealt[:5], dealt[5:]]
            s._reveal_and_start()
        return s

    @classmethod
    def saved_fields(cls, game) -> Record:
        card = Int(0, NUM_CARDS - 1)
        card_or_none = Int(-1, NUM_CARDS - 1)
        seat = Int(0, 1)
        pile = List(card, max_len=NUM_CARDS)
        return Record(
            Field("board", List(card_or_none, size=NUM_SQUARES), doc="card id per square, -1 a hole"),
            Field("pos", List(Int(0, NUM_SQUARES - 1), size=2)),
            Field("hands", List(pile, size=2)),
            Field("damage", List(pile, size=2)),
            Field("pool", pile, doc="the draft pool (scenario positions park unused cards here)"),
            Field("revealed", Bool()),
            Field("identity", List(card, max_len=2), doc="the two undrafted kings, after the draft"),
            Field("stage", Choice(PHASE_NAMES, index=True)),
            Field("actor", seat),
            Field("active", seat, doc="whose Traversing turn it is"),
            Field("turns_left", Int(1, TURNS_PER_PHASE)),
            Field("forced", List(Int(0, FORCED_PASSES), size=2)),
            Field("only_passes", Bool()),
            Field("last_turn", Int(-1, 1)),
            Field("strikers", List(seat, max_len=2)),
            Field("first_submitter", seat),
            Field("appease_winner", Int(-1, 1)),
            Field("req_stage", Int(0, 1)),
            Field("first_request", Int(-1, len(REQUEST_NAMES) - 1)),
            Field("steal_card", card_or_none),
            Field("pending", List(card_or_none, size=2), doc="[loser's, winner's] played card"),
            Field("winner", Optional(Int(0, DRAW)), doc=f"0, 1, {DRAW} for a draw"),
            # secret until revealed or resolved (left out of player_view):
            Field("rng", Rng()),
            Field("omens", List(card, size=4), doc="the jacks in reveal order"),
            Field("suit_role", List(Int(0, 3), size=4)),
            Field("appease_card", List(card_or_none, size=2)),
        )

    def after_load(self) -> None:
        self.dmg_total = [sum(VALUE[c] for c in pile) for pile in self.damage]
        self.set_legal_mask(None)
        self._touch()

    def _public_dict(self) -> dict[str, Any]:
        return self.game.saved_fields.dump(self, skip=SECRET_FIELDS)

    def player_view(self, player: int) -> dict[str, Any]:
        d = self._public_dict()
        d["seat"] = player
        # The Omen order is secret until it is revealed after the draft.
        d["omens"] = self.omens[:] if self.revealed else None
        d["suit_role"] = self.suit_role[:] if self.revealed else None
        # The opponent's Appeasing card stays secret until both have chosen (then it is pending).
        d["appease_submitted"] = [self.appease_card[0] >= 0, self.appease_card[1] >= 0]
        d["my_appease_card"] = self.appease_card[player]
        return d

    def check_invariants(self) -> list[str]:
        problems = []
        seen = self.board + self.hands[0] + self.hands[1] + self.damage[0] + self.damage[1] + self.pool \
            + self.omens + self.identity + self.pending
        cards = sorted(c for c in seen if c >= 0)
        if cards != list(range(NUM_CARDS)):
            missing = sorted(set(range(NUM_CARDS)) - set(cards))
            dup = sorted({c for c in cards if cards.count(c) > 1})
            problems.append(f"cards not conserved across board, hands, damage, pool, omens, identity and pending: "
                            f"missing {missing}, duplicated {dup}")
        for p in (0, 1):
            total = sum(VALUE[c] for c in self.damage[p])
            if total != self.dmg_total[p]:
                problems.append(f"player {p} damage total {self.dmg_total[p]} != pile sum {total}")
            if self.winner is None and total >= self.game.config["damage_threshold"]:
                problems.append(f"player {p} has {total} damage but the game goes on")
            if not 0 <= self.pos[p] < NUM_SQUARES:
                problems.append(f"player {p} off the board")
            if self.forced[p] < 0 or self.forced[p] > FORCED_PASSES:
                problems.append(f"player {p} owes {self.forced[p]} forced passes")
            card = self.appease_card[p]
            if card >= 0 and card not in self.hands[p]:
                problems.append(f"player {p}'s Appeasing card {card} is not in their hand")
        if any(c in JACKS for c in seen if c >= 0 and c not in self.omens):
            problems.append("a jack left the omens")
        if self.revealed and self.stage == DRAFT:
            problems.append("omens revealed during the draft")
        if not 1 <= self.turns_left <= TURNS_PER_PHASE and self.winner is None:
            problems.append(f"turns_left {self.turns_left} out of range")
        drafted = sum(1 for h in self.hands for c in h if IS_KING[c])
        if self.stage == DRAFT and drafted > MAX_KINGS:
            problems.append("more than two kings drafted")
        if self.winner is None and self.stage in (APPEASE, REQUEST) and self.actor not in (0, 1):
            problems.append("bad actor")
        if not problems:
            problems += self._phase_problems()
        return problems

    def _phase_problems(self) -> list[str]:
        """What each stage requires of the other fields (checked when a state is loaded and by the
        fuzz tests): the winner agrees with the damage, the draft happens before anything moves,
        each step of Appeasing, the requests and placement has its cards and its chooser."""
        problems = []
        st, w, p = self.stage, self.winner, self.actor
        thr = self.game.config["damage_threshold"]
        if (st == OVER) != (w is not None):
            problems.append(f"stage: {PHASE_NAMES[st]!r} with winner {w!r} (the game is over exactly when "
                            "there is a winner or a draw)")
            return problems
        if w in (0, 1) and self.dmg_total[1 - w] < thr:
            problems.append(f"winner: player {w} wins but player {1 - w} has only {self.dmg_total[1 - w]} damage")
        if w == DRAW and max(self.dmg_total) >= thr:
            problems.append("winner: a draw, but a player has reached the damage threshold")
        if self.revealed != (st != DRAFT):
            problems.append("revealed: the Omens are revealed exactly when the draft is over")
        if st == OVER:
            return problems
        if st != APPEASE and self.appease_card != [-1, -1]:
            problems.append("appease_card: a submitted Appeasing card outside Appeasing")
        if st != COMBAT and self.strikers:
            problems.append("strikers: strikers outside combat")
        if st != STEAL_THEIRS and self.steal_card != -1:
            problems.append("steal_card: a Steal Life card chosen outside Steal Life")
        requesting = st in (REQUEST, RESTRUCTURE_PICK, STEAL_MINE, STEAL_THEIRS, SHIFT_PICK, PLACE)
        if not requesting:
            if self.appease_winner != -1 or self.pending != [-1, -1] or self.req_stage or self.first_request != -1:
                problems.append("appease_winner: an Appeasing result or pending cards outside the requests")
        if st == DRAFT:
            if self.pos != list(START_SQUARES):
                problems.append(f"pos: players stand on {self.pos} during the draft, not on their start squares")
            if sorted(self.board) != LABYRINTH_CARDS:
                problems.append("board: the labyrinth is not the 36 cards A-9 during the draft")
            if sorted(self.pool + self.hands[0] + self.hands[1]) != HIGH_CARDS:
                problems.append("pool: the draft pool and the hands are not the twelve 10s, Queens and Kings")
            if self.damage != [[], []] or self.identity:
                problems.append("damage: damage or identity cards during the draft")
            if self.forced != [0, 0] or self.turns_left != TURNS_PER_PHASE:
                problems.append("forced: forced passes or a Traversing turn count during the draft")
            a, b = len(self.hands[p]), len(self.hands[1 - p])
            if not (a == b or a + 1 == b):
                problems.append(f"actor: player {p} drafts with {a} cards against {b}")
            if self.suit_role != suit_roles_from_omens(self.omens):
                problems.append("suit_role: roles differ from the Omen order before the reveal")
        if st in (TRAVERSE, TARGET) and p != self.active:
            problems.append(f"actor: player {p} acts in player {self.active}'s Traversing turn")
        if st == COMBAT:
            if self.pos[0] != self.pos[1]:
                problems.append("stage: combat, but the players stand on different squares")
            if not self.strikers or p != self.strikers[0] or len(set(self.strikers)) != len(self.strikers):
                problems.append(f"strikers: {self.strikers} with player {p} to strike")
            elif not all(self.armed(q) for q in self.strikers):
                problems.append("strikers: a striker holds no Weapon")
        elif st == APPEASE:
            if not (self.hands[0] and self.hands[1]):
                problems.append("stage: Appeasing with an empty hand")
            first = self.first_submitter
            if self.appease_card[p] != -1 or (p != first and self.appease_card[first] < 0) \
                    or (p == first and self.appease_card[1 - first] != -1):
                problems.append(f"appease_card: {self.appease_card} with player {p} to choose")
        elif requesting:
            win = self.appease_winner
            if win == -1 or -1 in self.pending and st != PLACE or self.pending == [-1, -1]:
                problems.append("pending: the requests need an Appeasing winner and the played cards")
            elif st == PLACE:
                if p != 1 - win:
                    problems.append("actor: placement is the Appeasing loser's")
            else:
                if p != (win if self.req_stage == 0 else 1 - win):
                    problems.append(f"actor: player {p} chooses request {self.req_stage + 1}, "
                                    f"but player {win} won Appeasing")
                picking = {RESTRUCTURE_PICK: RESTRUCTURE, STEAL_MINE: STEAL_LIFE, STEAL_THEIRS: STEAL_LIFE,
                           SHIFT_PICK: PLANE_SHIFT}.get(st)
                first = self.first_request
                if self.req_stage == 0 and first != (-1 if st == REQUEST else picking):
                    problems.append(f"first_request: {first} in stage {PHASE_NAMES[st]!r} of the first request")
                if self.req_stage == 1 and (first in (-1, IGNORE_US) or first == picking):
                    problems.append(f"first_request: {first} in stage {PHASE_NAMES[st]!r} of the second request")
                if st in (STEAL_MINE, STEAL_THEIRS) and not (self.damage[0] and self.damage[1]):
                    problems.append("damage: Steal Life needs a damage card on both sides")
                if st == STEAL_THEIRS and self.steal_card not in self.damage[p]:
                    problems.append("steal_card: the card to give is not in the requester's damage pile")
        return problems

    # ------------------------------------------------------------------------------------------
    # Queries
    def is_wall(self, sq: int) -> bool:
        c = self.board[sq]
        return c >= 0 and self.suit_role[SUIT_OF[c]] == WALLS

    def role_of(self, c: int) -> int:
        return self.suit_role[SUIT_OF[c]]

    def can_move(self, p: int) -> bool:
        board, role = self.board, self.suit_role
        for n in NEIGH[self.pos[p]]:
            c = board[n]
            if c < 0 or role[SUIT_OF[c]] != WALLS:
                return True
        return False

    def ballista_targets(self, sq: int) -> list[int]:
        """Squares a launch from ``sq`` may land on: up to 5 per direction, stopping before a Wall."""
        board, role = self.board, self.suit_role
        out = []
        for line in LINES[sq]:
            for t in line:
                c = board[t]
                if c >= 0 and role[SUIT_OF[c]] == WALLS:
                    break
                if t not in out:
                    out.append(t)
        return out

    def armed(self, p: int) -> bool:
        role = self.suit_role
        return any(role[SUIT_OF[c]] == WEAPONS for c in self.hands[p])

    def open_holes(self) -> list[int]:
        pos = self.pos
        return [s for s, c in enumerate(self.board) if c < 0 and s != pos[0] and s != pos[1]]

    def request_available(self, r: int) -> bool:
        if self.req_stage == 1 and (r == self.first_request or r == IGNORE_US):
            return False
        if r == STEAL_LIFE:
            return bool(self.damage[0]) and bool(self.damage[1])
        return True

    # ------------------------------------------------------------------------------------------
    # Move generator (plain Python, for search agents) and legal mask
    def legal_actions(self) -> list[int]:
        """The legal actions (the same set as the mask), generated without building the mask; hand
        and pile decisions are listed in hand or pile order."""
        if self.winner is not None:
            return []
        st, p = self.stage, self.actor
        role, board = self.suit_role, self.board
        if st == TRAVERSE:
            if self.forced[p] > 0:
                return [A_PASS]
            out = []
            here = self.pos[p]
            for d, n in enumerate(NEIGH[here]):
                c = board[n]
                if c < 0 or role[SUIT_OF[c]] != WALLS:
                    out.append(d)
            c = board[here]
            if c >= 0:
                r = role[SUIT_OF[c]]
                if r == TRAPS or r == WEAPONS or (r == BALLISTA and self.ballista_targets(here)):
                    out.append(A_INTERACT)
            return out or [A_PASS]
        if st == TARGET:
            return [A_TARGET + t for t in self.ballista_targets(self.pos[p])]
        if st == COMBAT:
            return [A_STRIKE + c for c in self.hands[p] if role[SUIT_OF[c]] == WEAPONS]
        if st == APPEASE:
            return [A_APPEASE + c for c in self.hands[p]]
        if st == REQUEST:
            return [A_REQUEST + r for r in range(4) if self.request_available(r)]
        if st == RESTRUCTURE_PICK:
            return list(range(A_RESTRUCTURE, A_SHIFT))
        if st == SHIFT_PICK:
            return list(range(A_SHIFT, A_TARGET))
        if st == STEAL_MINE:
            return [A_STEAL_MINE + c for c in self.damage[p]]
        if st == STEAL_THEIRS:
            return [A_STEAL_THEIRS + c for c in self.damage[1 - p]]
        if st == PLACE:
            holes = self.open_holes()
            return [A_PLACE + 36 * k + h for k in (0, 1) if self.pending[k] >= 0 for h in holes]
        if st == DRAFT:
            kings_left = MAX_KINGS - sum(1 for h in self.hands for c in h if IS_KING[c])
            return [A_DRAFT + c for c in self.pool if kings_left > 0 or not IS_KING[c]]
        return []

    def _legal_mask(self) -> np.ndarray:
        mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
        if self.winner is not None:
            return mask
        st = self.stage
        p = self.actor
        if st == TRAVERSE:
            if self.forced[p] > 0:
                mask[A_PASS] = 1
                return mask
            board, role = self.board, self.suit_role
            here = self.pos[p]
            any_legal = False
            for d, n in enumerate(NEIGH[here]):
                c = board[n]
                if c < 0 or role[SUIT_OF[c]] != WALLS:
                    mask[d] = 1
                    any_legal = True
            c = board[here]
            if c >= 0:
                r = role[SUIT_OF[c]]
                if r == TRAPS or r == WEAPONS or (r == BALLISTA and self.ballista_targets(here)):
                    mask[A_INTERACT] = 1
                    any_legal = True
            if not any_legal:
                mask[A_PASS] = 1
        elif st == DRAFT:
            kings_left = MAX_KINGS - sum(1 for h in self.hands for c in h if IS_KING[c])
            for c in self.pool:
                if kings_left > 0 or not IS_KING[c]:
                    mask[A_DRAFT + c] = 1
        elif st == TARGET:
            for t in self.ballista_targets(self.pos[p]):
                mask[A_TARGET + t] = 1
        elif st == COMBAT:
            role = self.suit_role
            for c in self.hands[p]:
                if role[SUIT_OF[c]] == WEAPONS:
                    mask[A_STRIKE + c] = 1
        elif st == APPEASE:
            for c in self.hands[p]:
                mask[A_APPEASE + c] = 1
        elif st == REQUEST:
            for r in range(4):
                if self.request_available(r):
                    mask[A_REQUEST + r] = 1
        elif st == RESTRUCTURE_PICK:
            mask[A_RESTRUCTURE:A_SHIFT] = 1
        elif st == SHIFT_PICK:
            self._touch()
            mask[A_SHIFT:A_TARGET] = 1
        elif st == STEAL_MINE:
            for c in self.damage[p]:
                mask[A_STEAL_MINE + c] = 1
        elif st == STEAL_THEIRS:
            for c in self.damage[1 - p]:
                mask[A_STEAL_THEIRS + c] = 1
        elif st == PLACE:
            holes = self.open_holes()
            for k in (0, 1):
                if self.pending[k] >= 0:
                    for s in holes:
                        mask[A_PLACE + 36 * k + s] = 1
        return mask

    # ------------------------------------------------------------------------------------------
    # Transitions
    def _apply(self, a: int) -> None:
        st = self.stage
        p = self.actor
        if st == TRAVERSE:
            if a == A_PASS:
                if self.forced[p] > 0:
                    self.forced[p] -= 1
                    self.only_passes = False  # a forced pass is not "nothing else to do"
                self._end_turn()
                return
            self.only_passes = False
            if a < A_INTERACT:
                self._move(p, NEIGH[self.pos[p]][a])
            else:
                self._interact(p)
        elif st == DRAFT:
            c = a - A_DRAFT
            self.pool.remove(c)
            self.hands[p].append(c)
            enc = self.obs_cache
            if enc is not None:
                enc.pool_remove(c)
                enc.hand_add(p, c)
            if len(self.hands[0]) + len(self.hands[1]) == DRAFT_PICKS:
                self.identity = sorted(self.pool)  # the two undrafted kings
                self.pool = []
                self._reveal_and_start()
            else:
                self.actor = 1 - p
        elif st == TARGET:
            t = a - A_TARGET
            self.pos[p] = t
            if self.pos[1 - p] == t:
                self._start_combat(p)
            else:
                self._end_turn()
        elif st == COMBAT:
            c = a - A_STRIKE
            self.hands[p].remove(c)
            if self.obs_cache is not None:
                self.obs_cache.hand_remove(p, c)
            self._add_damage(1 - p, c)
            if self.winner is not None:
                return
            self.strikers.pop(0)
            if self.strikers:
                self.actor = self.strikers[0]
            else:
                self._end_turn()
        elif st == APPEASE:
            self.appease_card[p] = a - A_APPEASE
            if self.appease_card[1 - p] < 0:
                self.actor = 1 - p
            else:
                self._resolve_appease()
        elif st == REQUEST:
            r = a - A_REQUEST
            if self.req_stage == 0:
                self.first_request = r
            if r == RESTRUCTURE:
                self.stage = RESTRUCTURE_PICK
            elif r == STEAL_LIFE:
                self.stage = STEAL_MINE
            elif r == PLANE_SHIFT:
                self.stage = SHIFT_PICK
            else:
                self._start_placement()
        elif st == RESTRUCTURE_PICK:
            self._touch()
            x, y = SUIT_PAIRS[a - A_RESTRUCTURE]
            sr = self.suit_role
            sr[x], sr[y] = sr[y], sr[x]
            self._trapped_check()
            self._request_done()
        elif st == SHIFT_PICK:
            self._touch()
            self._plane_shift(a - A_SHIFT)
            self._trapped_check()
            self._request_done()
        elif st == STEAL_MINE:
            self.steal_card = a - A_STEAL_MINE
            self.stage = STEAL_THEIRS
        elif st == STEAL_THEIRS:
            self._touch()
            mine, theirs = self.steal_card, a - A_STEAL_THEIRS
            self.steal_card = -1
            o = 1 - p
            self.damage[p].remove(mine)
            self.damage[o].remove(theirs)
            self.damage[p].append(theirs)
            self.damage[o].append(mine)
            self.dmg_total[p] += VALUE[theirs] - VALUE[mine]
            self.dmg_total[o] += VALUE[mine] - VALUE[theirs]
            self._check_defeat()
            if self.winner is None:
                self._request_done()
        elif st == PLACE:
            k, s = divmod(a - A_PLACE, 36)
            self.board[s] = self.pending[k]
            if self.obs_cache is not None:
                self.obs_cache.board_set(s, self.pending[k])
            self.pending[k] = -1
            self._continue_placement()
        else:  # pragma: no cover - the mask forbids everything else
            raise AssertionError(f"no action possible in stage {st}")

    # -- Traversing -----------------------------------------------------------------------------
    def _move(self, p: int, sq: int) -> None:
        self.pos[p] = sq
        if self.pos[1 - p] == sq:
            self._start_combat(p)
            return
        self._square_effect(p, sq)

    def _interact(self, p: int) -> None:
        self._square_effect(p, self.pos[p])

    def _square_effect(self, p: int, sq: int) -> None:
        """Apply the card on ``sq`` to player ``p`` (after a move or an interaction)."""
        c = self.board[sq]
        if c < 0:
            self._end_turn()
            return
        r = self.suit_role[SUIT_OF[c]]
        if r == TRAPS:
            self.board[sq] = -1
            if self.obs_cache is not None:
                self.obs_cache.hole(sq)
            self._add_damage(p, c)
            if self.winner is None:
                self._end_turn()
        elif r == WEAPONS:
            self.board[sq] = -1
            self.hands[p].append(c)
            enc = self.obs_cache
            if enc is not None:
                enc.hole(sq)
                enc.hand_add(p, c)
            self._end_turn()
        elif r == BALLISTA:
            if self.ballista_targets(sq):
                self.stage = TARGET
                self.actor = p
            else:
                self._end_turn()
        else:  # standing on a wall (only reachable by interacting, which the mask forbids)
            self._end_turn()

    def _start_combat(self, mover: int) -> None:
        strikers = [q for q in (mover, 1 - mover) if self.armed(q)]
        if not strikers:
            self._end_turn()
            return
        self.strikers = strikers
        self.stage = COMBAT
        self.actor = strikers[0]

    def _add_damage(self, p: int, c: int) -> None:
        self.damage[p].append(c)
        self.dmg_total[p] += VALUE[c]
        if self.obs_cache is not None:
            self.obs_cache.damage_add(p, c, self.dmg_total[p])
        self._check_defeat()

    def _check_defeat(self) -> None:
        thr = self.game.config["damage_threshold"]
        for q in (0, 1):
            if self.dmg_total[q] >= thr:
                self.winner = 1 - q
                self.stage = OVER
                self.strikers = []
                return

    def _end_turn(self) -> None:
        self.stage = TRAVERSE
        self.strikers = []
        self.last_turn = self.active
        self.active = 1 - self.active
        self.turns_left -= 1
        if self.turns_left > 0:
            self.actor = self.active
            return
        # End of a Traversing phase.
        if self.hands[0] and self.hands[1]:
            self.stage = APPEASE
            self.first_submitter = 1 - self.last_turn
            self.actor = self.first_submitter
            self.turns_left = TURNS_PER_PHASE
            return
        if self.only_passes and self.forced[0] == 0 and self.forced[1] == 0:
            # Nothing but passes, nobody owes a pass and Appeasing is skipped: the next phase would
            # repeat this one exactly, forever. The game ends as a draw.
            self.winner = DRAW
            self.stage = OVER
            self.turns_left = TURNS_PER_PHASE
            return
        self._start_traverse(self.active)

    def _start_traverse(self, first: int) -> None:
        self.stage = TRAVERSE
        self.active = first
        self.actor = first
        self.turns_left = TURNS_PER_PHASE
        self.only_passes = True

    # -- Appeasing Pan ----------------------------------------------------------------------------
    def _resolve_appease(self) -> None:
        c0, c1 = self.appease_card
        self.hands[0].remove(c0)
        self.hands[1].remove(c1)
        if self.obs_cache is not None:
            self.obs_cache.hand_remove(0, c0)
            self.obs_cache.hand_remove(1, c1)
        self.appease_card = [-1, -1]
        strength = self.game.trump_strength  # role -> strength (higher beats lower)
        s0, s1 = SUIT_OF[c0], SUIT_OF[c1]
        if s0 == s1:
            w = 0 if VALUE[c0] > VALUE[c1] else 1
        else:
            w = 0 if strength[self.suit_role[s0]] > strength[self.suit_role[s1]] else 1
        self.appease_winner = w
        self.pending = [c1, c0] if w == 0 else [c0, c1]  # [loser's card, winner's card]
        self.req_stage = 0
        self.first_request = -1
        self.stage = REQUEST
        self.actor = w

    def _request_done(self) -> None:
        if self.req_stage == 0:
            self.req_stage = 1
            self.stage = REQUEST
            self.actor = 1 - self.appease_winner
        else:
            self._start_placement()

    def _plane_shift(self, i: int) -> None:
        board, pos = self.board, self.pos
        if i < 12:
            r, d = divmod(i, 2)
            step = -1 if d == 0 else 1
            line = [r * SIZE + c for c in range(SIZE)]
        else:
            c, d = divmod(i - 12, 2)
            step = -1 if d == 0 else 1
            line = [r * SIZE + c for r in range(SIZE)]
        old = [board[s] for s in line]
        dest = {line[k]: line[(k + step) % SIZE] for k in range(SIZE)}
        for k in range(SIZE):
            board[line[(k + step) % SIZE]] = old[k]
        for q in (0, 1):
            if pos[q] in dest:
                pos[q] = dest[pos[q]]

    def _trapped_check(self) -> None:
        for q in (0, 1):
            if not self.can_move(q):
                self.forced[q] = max(self.forced[q], FORCED_PASSES)

    def _start_placement(self) -> None:
        self.stage = PLACE
        self.actor = 1 - self.appease_winner
        self._continue_placement()

    def _continue_placement(self) -> None:
        loser = 1 - self.appease_winner
        if self.pending[0] < 0 and self.pending[1] < 0:
            self._finish_placement(loser)
            return
        if not self.open_holes():
            for k in (0, 1):
                if self.pending[k] >= 0:
                    self.hands[loser].append(self.pending[k])
                    if self.obs_cache is not None:
                        self.obs_cache.hand_add(loser, self.pending[k])
                    self.pending[k] = -1
            self._finish_placement(loser)

    def _finish_placement(self, loser: int) -> None:
        self.appease_winner = -1
        self.req_stage = 0
        self.first_request = -1
        self._trapped_check()
        self._start_traverse(loser)

    # -- Setup --------------------------------------------------------------------------------------
    def _reveal_and_start(self) -> None:
        """Reveal the Omens, reshuffle the labyrinth while a player is walled in, start Traversing."""
        self._touch()
        self.revealed = True
        self.suit_role = suit_roles_from_omens(self.omens)
        while not (self.can_move(0) and self.can_move(1)):
            self.rng.shuffle(self.board)
        self._start_traverse(self.game.config["first_player"])


def suit_roles_from_omens(omens: list[int]) -> list[int]:
    """The role of each suit given the Jacks in reveal order (walls, traps, ballista, weapons)."""
    roles = [0] * 4
    for role, jack in enumerate(omens):
        roles[SUIT_OF[jack]] = role
    return roles
