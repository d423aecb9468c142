"""Sequence rules: a pure engine over :class:`SequenceState` (no environment, no observation code).

Action ids (fixed, 349 in all; ``s`` is a square ``row * 10 + col``, row 0 at the top):

=========  ==========================================================================
0–99       ``place s``: play the natural card printed on square ``s`` and put a chip there
100–199    ``wild s``: play a two-eyed jack (♦/♣) and put a chip on empty square ``s``
200–299    ``remove s``: play a one-eyed jack (♥/♠) and take the opposing chip off ``s``
300–347    ``dead k``: discard a dead card of non-jack kind number ``k`` and draw (turn goes on)
348        ``pass``: only when nothing else is legal
=========  ==========================================================================
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np

from envs.core import TERMINAL, State
from envs.core.fields import MAX_COUNT, Bool, Choice, Field, Int, List, Optional, Record, Rng
from envs.sequence.board import (
    CORNER_SQUARES,
    NON_JACK_KINDS,
    ONE_EYED_JACKS,
    SIZE,
    TWO_EYED_JACKS,
    kind,
    label,
)

NUM_SQUARES = SIZE * SIZE
PLACE, WILD, REMOVE, DEAD = 0, 100, 200, 300
PASS = DEAD + len(NON_JACK_KINDS)
NUM_ACTIONS = PASS + 1
EMPTY, CORNER = -1, 3  # board values besides team ids 0..2
WINDOW = 5
DIRECTIONS = ((0, 1), (1, 0), (1, 1), (1, -1))
NON_JACK_INDEX = {k: i for i, k in enumerate(NON_JACK_KINDS)}


def hand_size(num_players: int) -> int:
    """Cards per hand by table size (the original rules' table)."""
    if num_players <= 2:
        return 7
    if num_players <= 4:
        return 6
    if num_players <= 6:
        return 5
    if num_players <= 9:
        return 4
    return 3


def square_name(sq: int) -> str:
    return f"r{sq // SIZE}c{sq % SIZE}"


def action_name(action: int, layout: list[int]) -> str:
    if PLACE <= action < WILD:
        k = layout[action]
        return f"place {label(k) if k >= 0 else 'free'} {square_name(action)}"
    if WILD <= action < REMOVE:
        return f"wild {square_name(action - WILD)}"
    if REMOVE <= action < DEAD:
        return f"remove {square_name(action - REMOVE)}"
    if DEAD <= action < PASS:
        return f"dead {label(NON_JACK_KINDS[action - DEAD])}"
    if action == PASS:
        return "pass"
    raise ValueError(f"sequence action id {action} is outside [0, {NUM_ACTIONS})")


def _line(sq: int, dr: int, dc: int) -> list[int]:
    """Squares from 4 before ``sq`` to 4 after it along (dr, dc), clipped at the board edge."""
    r, c = divmod(sq, SIZE)
    cells = []
    for t in range(-4, 5):
        rr, cc = r + t * dr, c + t * dc
        if 0 <= rr < SIZE and 0 <= cc < SIZE:
            cells.append(rr * SIZE + cc)
    return cells


#: Every run of five squares in a row, column or diagonal (a completed sequence is one of them).
WINDOWS = frozenset(
    frozenset(line[i:i + WINDOW]) for sq in range(NUM_SQUARES) for line in (_line(sq, dr, dc) for dr, dc in DIRECTIONS)
    for i in range(len(line) - WINDOW + 1)
)
#: Bound on the sequences one team can hold (each new chip completes at most two per direction).
MAX_SEQUENCES = 24

# For each square, its four lines as (squares, index of the square within them).
LINES = [
    [(line, line.index(sq)) for line in (_line(sq, dr, dc) for dr, dc in DIRECTIONS)] for sq in range(NUM_SQUARES)
]


class SequenceState(State):
    """A Sequence position. Hands and piles are lists of card kinds, the board a list of 100 ints.

    ``planes`` (float32, 4 x 100: chips of team 0, 1, 2 and empty squares) and ``locked`` (bool)
    are numpy mirrors of the board kept in step with every change, so that masks and observations
    are a few vector operations.
    """

    def __init__(self, game) -> None:
        super().__init__(game)
        cfg = game.config
        self.layout: list[int] = game.layout
        self.num_teams: int = cfg["num_teams"]
        self.num_players: int = game.num_players
        self.target: int = game.sequences_to_win
        self.dead_cards_allowed: bool = cfg["dead_cards"]
        self.rng = random.Random(0)
        self.board: list[int] = [EMPTY] * NUM_SQUARES
        for sq in CORNER_SQUARES:
            self.board[sq] = CORNER
        self.planes = np.zeros((4, NUM_SQUARES), dtype=np.float32)
        self.planes[3] = 1.0
        self.planes[3, list(CORNER_SQUARES)] = 0.0
        self.discard_counts = np.zeros(52, dtype=np.float32)  # mirror of the discard pile (0.5 a card)
        self.hands: list[list[int]] = [[] for _ in range(self.num_players)]
        self.deck: list[int] = []
        self.discards: list[int] = []
        self.sequences: list[list[list[int]]] = [[] for _ in range(self.num_teams)]
        self.locked = np.zeros(NUM_SQUARES, dtype=np.float32)  # 1.0 on chips of completed sequences
        self.hand_counts = np.zeros((self.num_players, 52), dtype=np.float32)  # mirror of hands (0.5 a card)
        self.player = 0
        self.dead_used = False
        self.passes_in_row = 0
        self.winner: int | None = None  # team id
        self.drawn_game = False
        self.placed = 0
        self.removed = 0

    # ------------------------------------------------------------------------------------------
    # Contract
    def current_player(self) -> int:
        return TERMINAL if self.winner is not None or self.drawn_game else self.player

    def is_terminal(self) -> bool:
        return self.winner is not None or self.drawn_game

    def end_reason(self) -> str | None:
        """``"rules"`` once a team has its sequences, ``"blocked"`` when the table was blocked (a draw)."""
        if self.drawn_game:
            return "blocked"
        return "rules" if self.winner is not None else None

    def returns(self) -> list[float]:
        if self.winner is None:
            return [0.0] * self.num_players
        return [1.0 if self.team_of(p) == self.winner else -1.0 for p in range(self.num_players)]

    @property
    def phase(self) -> str:
        if self.winner is not None:
            return f"won by team {self.winner}"
        if self.drawn_game:
            return "drawn"
        return "turn (dead card used)" if self.dead_used else "turn"

    def team_of(self, player: int) -> int:
        return player % self.num_teams

    def _legal_mask(self) -> np.ndarray:
        mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
        if self.is_terminal():
            return mask
        team = self.team_of(self.player)
        hand = self.hands[self.player]
        board = self.board
        any_play = False
        has_wild = has_remove = False
        for k in hand:
            if k in TWO_EYED_JACKS:
                has_wild = True
            elif k in ONE_EYED_JACKS:
                has_remove = True
            else:
                a, b = self.game.squares_of[k]
                dead = True
                if board[a] == EMPTY:
                    mask[PLACE + a] = 1
                    dead = False
                if board[b] == EMPTY:
                    mask[PLACE + b] = 1
                    dead = False
                if dead:
                    if self.dead_cards_allowed and not self.dead_used:
                        mask[DEAD + NON_JACK_INDEX[k]] = 1
                else:
                    any_play = True
        if has_wild and self.placed - self.removed < NUM_SQUARES - 4:
            mask[WILD:REMOVE] = self.planes[3]
            any_play = True
        if has_remove:
            others = self.planes[: self.num_teams].sum(axis=0) - self.planes[team]
            targets = (others > self.locked)
            if targets.any():
                mask[REMOVE:DEAD] = targets
                any_play = True
        if not any_play and not mask[DEAD:PASS].any():
            mask[PASS] = 1
        return mask

    def _apply(self, action: int) -> None:
        player = self.player
        hand = self.hands[player]
        if action == PASS:
            self.passes_in_row += 1
            if self.table_blocked():
                self.drawn_game = True
            self._end_turn()
            return
        if action >= DEAD:
            k = NON_JACK_KINDS[action - DEAD]
            self._take(player, k)
            self._discard(k)
            self._draw(player)
            self.dead_used = True
            return
        self.passes_in_row = 0
        if action < WILD:
            sq = action
            self._take(player, self.layout[sq])
            self._discard(self.layout[sq])
            self._place(sq, self.team_of(player))
        elif action < REMOVE:
            sq = action - WILD
            jack = TWO_EYED_JACKS[0] if TWO_EYED_JACKS[0] in hand else TWO_EYED_JACKS[1]
            self._take(player, jack)
            self._discard(jack)
            self._place(sq, self.team_of(player))
        else:
            sq = action - REMOVE
            jack = ONE_EYED_JACKS[0] if ONE_EYED_JACKS[0] in hand else ONE_EYED_JACKS[1]
            self._take(player, jack)
            self._discard(jack)
            self._set(sq, EMPTY)
            self.removed += 1
        self._draw(player)
        if self.winner is None:
            self._end_turn()

    # ------------------------------------------------------------------------------------------
    # The blocked table
    def playable(self, card: int, team: int) -> bool:
        """Whether a seat of ``team`` could play ``card`` (place, wild or remove) on the board now."""
        if card in TWO_EYED_JACKS:
            return self.placed - self.removed < NUM_SQUARES - len(CORNER_SQUARES)
        if card in ONE_EYED_JACKS:
            others = self.planes[: self.num_teams].sum(axis=0) - self.planes[team]
            return bool((others > self.locked).any())
        a, b = self.game.squares_of[card]
        return self.board[a] == EMPTY or self.board[b] == EMPTY

    def table_blocked(self) -> bool:
        """True when no chip can ever again be placed or removed: the original rules' "completely blocked table".

        The referee sees every hand and both piles. Only a play changes the board, so while no
        seat plays, a card that cannot be played now never can. A seat still has a play to come
        if it holds a playable card, or if it can still draw (it holds a dead card and dead-card
        exchanges are on) and some card in the draw or discard pile would be playable by it (the
        discards are reshuffled into the draw pile when it runs out). Dead cards are unplayable by
        every team and jacks are never exchanged, so no other card can reach a hand. When no seat
        has a play to come, the table is blocked.
        """
        pool = self.deck + self.discards
        for seat, hand in enumerate(self.hands):
            team = self.team_of(seat)
            if any(self.playable(k, team) for k in hand):
                return False
            can_draw = self.dead_cards_allowed and any(
                k not in TWO_EYED_JACKS and k not in ONE_EYED_JACKS for k in hand
            )  # no card in the hand is playable, so every natural card in it is dead
            if can_draw and any(self.playable(k, team) for k in set(pool)):
                return False
        return True

    def _end_turn(self) -> None:
        self.dead_used = False
        self.player = (self.player + 1) % self.num_players

    def _draw(self, player: int) -> None:
        if not self.deck:
            if not self.discards:
                return
            self.deck = self.discards
            self.discards = []
            self.discard_counts[:] = 0.0
            self.rng.shuffle(self.deck)
        card = self.deck.pop()
        self.hands[player].append(card)
        self.hand_counts[player, card] += 0.5

    # ------------------------------------------------------------------------------------------
    # Sequences
    def _place(self, sq: int, team: int) -> None:
        self._set(sq, team)
        self.placed += 1
        for window in self.new_sequences(sq, team):
            self.sequences[team].append(window)
            for cell in window:
                if self.board[cell] != CORNER:
                    self.locked[cell] = 1.0
        if len(self.sequences[team]) >= self.target:
            self.winner = team

    def set_hand(self, player: int, cards: list[int]) -> None:
        """Replace a hand (for tools and tests; the caller keeps the card counts conserved)."""
        self.hands[player] = list(cards)
        self.hand_counts[player] = np.bincount(cards, minlength=52) * 0.5 if cards else 0.0
        self.set_legal_mask(None)

    def _take(self, player: int, card: int) -> None:
        self.hands[player].remove(card)
        self.hand_counts[player, card] -= 0.5

    def _discard(self, card: int) -> None:
        self.discards.append(card)
        self.discard_counts[card] += 0.5

    def _set(self, sq: int, value: int) -> None:
        """Change one square and its numpy mirror."""
        old = self.board[sq]
        planes = self.planes
        if old == EMPTY:
            planes[3, sq] = 0.0
        elif 0 <= old < 3:
            planes[old, sq] = 0.0
        if value == EMPTY:
            planes[3, sq] = 1.0
        elif 0 <= value < 3:
            planes[value, sq] = 1.0
        self.board[sq] = value

    def rebuild_mirrors(self) -> None:
        """Recompute the board planes and hand counts mirrored from the board and hands (after dealing
        or loading; moves keep them up to date)."""
        self.planes = np.zeros((4, NUM_SQUARES), dtype=np.float32)
        for sq, v in enumerate(self.board):
            if v == EMPTY:
                self.planes[3, sq] = 1.0
            elif 0 <= v < 3:
                self.planes[v, sq] = 1.0
        self.discard_counts = np.zeros(52, dtype=np.float32)
        for k in self.discards:
            self.discard_counts[k] += 0.5
        self.hand_counts = np.zeros((self.num_players, 52), dtype=np.float32)
        for p, hand in enumerate(self.hands):
            for k in hand:
                self.hand_counts[p, k] += 0.5
        self.locked = np.zeros(NUM_SQUARES, dtype=np.float32)
        for team in self.sequences:
            for s in team:
                for c in s:
                    if c not in CORNER_SQUARES:
                        self.locked[c] = 1.0

    def new_sequences(self, sq: int, team: int) -> list[list[int]]:
        """The sequences that a chip of ``team`` just placed on ``sq`` completes.

        Official rule: two sequences of one team share at most one square. In each of the four
        directions the candidate windows are the runs of five through ``sq`` made of the team's
        chips and free corners that share at most one square with every sequence the team already
        has. Two candidates that meet only at ``sq`` (nine or more in a row through ``sq``) both
        count; otherwise the first candidate in reading order (top-to-bottom, left-to-right) counts.
        """
        board = self.board
        found: list[list[int]] = []
        existing = [set(s) for s in self.sequences[team]]
        for line, k in LINES[sq]:
            lo = k
            while lo > 0 and (board[line[lo - 1]] == team or board[line[lo - 1]] == CORNER):
                lo -= 1
            hi = k
            last = len(line) - 1
            while hi < last and (board[line[hi + 1]] == team or board[line[hi + 1]] == CORNER):
                hi += 1
            if hi - lo + 1 < WINDOW:
                continue
            candidates = []
            for start in range(max(lo, k - 4), min(k, hi - 4) + 1):
                window = line[start : start + WINDOW]
                if all(len(e.intersection(window)) <= 1 for e in existing):
                    candidates.append((start, window))
            if not candidates:
                continue
            first_start, first = candidates[0]
            pair = [w for s, w in candidates if s == first_start + 4]
            found.append(first)
            if pair:
                found.append(pair[0])
        return found

    # ------------------------------------------------------------------------------------------
    # Views, copies, saving
    def player_view(self, player: int) -> dict[str, Any]:
        return {
            "seat": player,
            "team": self.team_of(player),
            "num_teams": self.num_teams,
            "board": list(self.board),
            "locked": np.flatnonzero(self.locked).tolist(),
            "sequences": [[list(s) for s in team] for team in self.sequences],
            "hand": sorted(self.hands[player]),
            "hand_sizes": [len(h) for h in self.hands],
            "deck_size": len(self.deck),
            "discards": list(self.discards),
            "current_player": self.current_player(),
            "dead_used": self.dead_used,
            "passes_in_row": self.passes_in_row,
            "winner": self.winner,
            "drawn_game": self.drawn_game,
            "placed": self.placed,
            "removed": self.removed,
        }

    def clone(self) -> SequenceState:
        other = SequenceState.__new__(SequenceState)
        other.game = self.game
        other.set_legal_mask(self.cached_legal_mask())
        other.layout = self.layout
        other.num_teams = self.num_teams
        other.num_players = self.num_players
        other.target = self.target
        other.dead_cards_allowed = self.dead_cards_allowed
        other.rng = random.Random()
        other.rng.setstate(self.rng.getstate())
        other.board = list(self.board)
        other.planes = self.planes.copy()
        other.discard_counts = self.discard_counts.copy()
        other.hands = [list(h) for h in self.hands]
        other.deck = list(self.deck)
        other.discards = list(self.discards)
        other.sequences = [[list(s) for s in team] for team in self.sequences]
        other.locked = self.locked.copy()
        other.hand_counts = self.hand_counts.copy()
        for attr in ("player", "dead_used", "passes_in_row", "winner", "drawn_game", "placed", "removed"):
            setattr(other, attr, getattr(self, attr))
        return other

    # ------------------------------------------------------------------------------------------
    # The two ways to make a state: deal a fresh game, or load a saved one
    @classmethod
    def deal(cls, game, rng: random.Random) -> SequenceState:
        state = cls(game)
        state.rng = rng
        deck = [k for k in range(52) for _ in range(2)]
        rng.shuffle(deck)
        state.deck = deck
        for _ in range(game.hand_size):
            for p in range(game.num_players):
                state.hands[p].append(deck.pop())
        state.rebuild_mirrors()
        return state

    @classmethod
    def saved_fields(cls, game) -> Record:
        n, teams = game.num_players, game.num_teams
        card = Int(0, 51)
        pile = List(card, max_len=104)
        return Record(
            Field("rng", Rng()),
            Field("board", List(Choice((EMPTY, CORNER, *range(teams))), size=NUM_SQUARES),
                  doc="-1 empty, 3 free corner, else the team whose chip is there"),
            Field("hands", List(pile, size=n)),
            Field("deck", pile, doc="the draw pile, top card last"),
            Field("discards", pile),
            Field("sequences", List(List(List(Int(0, NUM_SQUARES - 1), size=WINDOW), max_len=MAX_SEQUENCES),
                                    size=teams), doc="per team, its completed sequences as square lists"),
            Field("player", Int(0, n - 1)),
            Field("dead_used", Bool()),
            Field("passes_in_row", Int(0, MAX_COUNT),
                  doc="passes since the last play; no longer bounded by the seats (a pass ends the game "
                      "only on a blocked table), random play reaches 64"),
            Field("winner", Optional(Int(0, teams - 1)), doc="a team id once won"),
            Field("drawn_game", Bool()),
            Field("placed", Int(0, MAX_COUNT)),
            Field("removed", Int(0, MAX_COUNT)),
        )

    def after_load(self) -> None:
        self.rebuild_mirrors()

    def check_invariants(self) -> list[str]:
        problems = []
        if self.winner is not None and self.drawn_game:
            problems.append("winner and drawn_game: the game is both won and drawn")
        if self.winner is not None and len(self.sequences[self.winner]) < self.target:
            problems.append(f"winner: team {self.winner} has {len(self.sequences[self.winner])} sequences, "
                            f"{self.target} win")
        if self.winner is None:
            done = [t for t, seqs in enumerate(self.sequences) if len(seqs) >= self.target]
            if done:
                problems.append(f"winner: team {done[0]} has {self.target} sequences but no winner is set")
        if self.dead_used and not self.dead_cards_allowed:
            problems.append("dead_used: dead cards are switched off in this config")
        if self.removed > self.placed:
            problems.append(f"removed: {self.removed} chips removed but only {self.placed} placed")
        for team, seqs in enumerate(self.sequences):
            for i, s in enumerate(seqs):
                if frozenset(s) not in WINDOWS:
                    problems.append(f"sequences[{team}][{i}]: {s} is not five squares in a row")
                for other in seqs[:i]:
                    if len(set(s) & set(other)) > 1:
                        problems.append(f"sequences[{team}][{i}]: shares more than one square with another")
        counts = [0] * 52
        for pile in (self.deck, self.discards, *self.hands):
            for k in pile:
                if not 0 <= k < 52:
                    problems.append(f"card kind {k} out of range")
                    continue
                counts[k] += 1
        bad = [label(k) for k in range(52) if counts[k] != 2]
        if bad:
            problems.append(f"cards not conserved (each kind twice across deck, hands, discards): {bad}")
        for p, hand in enumerate(self.hands):
            if not np.array_equal(np.bincount(hand, minlength=52) * 0.5 if hand else np.zeros(52), self.hand_counts[p]):
                problems.append(f"hand counts of seat {p} disagree with the hand")
        expected = np.bincount(self.discards, minlength=52) * 0.5 if self.discards else np.zeros(52)
        if not np.array_equal(expected, self.discard_counts):
            problems.append("discard counts disagree with the discard pile")
        board = self.board
        if any(board[sq] != CORNER for sq in CORNER_SQUARES):
            problems.append("board: a corner lost its free marker")
        if sum(1 for v in board if v == CORNER) != len(CORNER_SQUARES):
            problems.append("board: a free-corner marker stands on a square that is not a corner")
        chips = sum(1 for v in board if 0 <= v < self.num_teams)
        if chips != self.placed - self.removed:
            problems.append(f"{chips} chips on board but {self.placed} placed - {self.removed} removed")
        if any(v not in (EMPTY, CORNER) and not 0 <= v < self.num_teams for v in board):
            problems.append("board holds an unknown value")
        mirror = self.planes[: self.num_teams].argmax(axis=0)
        if any(
            (v == EMPTY) != bool(self.planes[3, sq]) or (0 <= v < 3 and mirror[sq] != v)
            for sq, v in enumerate(board)
        ):
            problems.append("numpy board planes disagree with the board")
        for team, seqs in enumerate(self.sequences):
            for s in seqs:
                if any(board[c] not in (team, CORNER) for c in s):
                    problems.append(f"team {team} sequence {s} lost a chip")
        if not self.is_terminal():
            limit = self.game.hand_size
            if any(len(h) > limit for h in self.hands):
                problems.append(f"a hand holds more than {limit} cards")
        return problems


def from_text(game, rows: list[str], hands: dict[int, list[str]] | None = None, player: int = 0,
              sequences: dict[int, list[list[int]]] | None = None, seed: int = 0) -> SequenceState:
    """Build a position for tests and tools from a readable board.

    ``rows`` are ten strings of ten characters: ``.`` empty, ``A``/``B``/``C`` a chip of team
    0/1/2, ``X`` a free corner (only at the corners, where ``.`` is also accepted). ``hands`` maps a
    seat to card labels (``"5D"``, ``"JH"``); other seats get nothing. ``sequences`` gives each
    team's already-completed sequences as square lists (their chips become locked). The remaining
    cards form the deck, shuffled with ``seed``.
    """
    state = SequenceState(game)
    letters = {".": EMPTY, "A": 0, "B": 1, "C": 2, "X": CORNER}
    if len(rows) != SIZE or any(len(r.replace(" ", "")) != SIZE for r in rows):
        raise ValueError("from_text needs 10 rows of 10 squares")
    for r, row in enumerate(rows):
        for c, ch in enumerate(row.replace(" ", "")):
            sq = r * SIZE + c
            state.board[sq] = CORNER if sq in CORNER_SQUARES else letters[ch]
    state.placed = sum(1 for v in state.board if 0 <= v < 3)
    for seat, cards in (hands or {}).items():
        state.hands[seat] = [kind(c) for c in cards]
    for team, seqs in (sequences or {}).items():
        for s in seqs:
            state.sequences[team].append(list(s))
    state.rebuild_mirrors()
    pool = [k for k in range(52) for _ in range(2)]
    for h in state.hands:
        for k in h:
            pool.remove(k)
    state.rng = random.Random(seed)
    state.rng.shuffle(pool)
    state.deck = pool
    state.player = player
    return state
