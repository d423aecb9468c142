"""A vectorised Sequence engine: N tables of one configuration stepped together with numpy.

:class:`SequenceNumpyBackend` is the ``backend="numpy"`` of ``envs.vector`` for ``sequence_v0``. It plays
exactly the rules of :mod:`envs.sequence.rules` (the reference engine), proved by the differential test
``tests/sequence/test_sequence_vector.py``: the same masks, observations, rewards and ends for the same
states, with tables handed back and forth through :meth:`save_state` / :meth:`load_state`.

What is stepped with array operations, for all tables at once: the legal masks (from the hand counts,
per-seat placeable squares and the board), playing the card, placing and removing chips, finding runs of
five through the changed square (per-team bit masks of every board line, shifted through precomputed
window tables), deciding which windows count (the reference rule ``SequenceState.new_sequences``, from
per-line bit masks of where the team's sequences start), the discard pile, drawing, dead-card exchanges, turn
order, truncation, rewards and the 710 observation values, written into preallocated buffers. After a
pass, which tables look blocked is decided in arrays too.

Completed sequences are kept as arrays (squares per team and index) and become lists only when a table
is saved. ``step(actions, active)`` moves only the tables where ``active`` is True.

What stays per table, in Python, because it is rare: the shuffle of a new deal (the reference's, so the
deck order is the reference engine's for the same seed; :func:`shuffle` is ``random.Random.shuffle``
with its method calls inlined), a reshuffle of the discards (each table keeps its own
``random.Random``, shuffled exactly as the reference does), confirming a blocked table with
``SequenceState.table_blocked``, and saving or loading a table.

Hands are kept as counts per card kind; the reference keeps them as lists, whose order never changes
play, so :meth:`save_state` writes each hand sorted.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np

from envs.core import IllegalActionError, StateError
from envs.core.fields import MAX_COUNT
from envs.core.rng import make_rng
from envs.sequence.board import CORNER_SQUARES, NON_JACK_KINDS, ONE_EYED_JACKS, SIZE, TWO_EYED_JACKS
from envs.sequence.game import OBS_DISCARDS, OBS_HAND, OBS_SCALARS, OBS_SIZE, SequenceGame
from envs.sequence.rules import (
    CORNER,
    DEAD,
    DIRECTIONS,
    EMPTY,
    LINES,
    MAX_SEQUENCES,
    NUM_ACTIONS,
    NUM_SQUARES,
    PASS,
    REMOVE,
    WILD,
    WINDOW,
    SequenceState,
)
from envs.vector import Backend

_SINK = 52  # hand / discard column that absorbs the writes of actions that move no card
_OFF = NUM_SQUARES  # board column that is never a chip: pads the window index table
_DECK = 104
_FRESH_DECK = tuple(k for k in range(52) for _ in range(2))  # the reference's unshuffled two decks


def _windows_through() -> np.ndarray:
    """(100, 4, 5, 5): for each square, direction (``rules.DIRECTIONS``) and slot, the five squares of a
    run through the square, in the reference's order (slot ``j`` starts ``j`` squares after the first run
    that fits on the board); slots that do not fit hold the off-board column."""
    table = np.full((NUM_SQUARES, 4, WINDOW, WINDOW), _OFF, dtype=np.intp)
    for sq in range(NUM_SQUARES):
        for d, (line, k) in enumerate(LINES[sq]):
            first = max(0, k - 4)
            for start in range(first, min(k, len(line) - WINDOW) + 1):
                table[sq, d, start - first] = line[start:start + WINDOW]
    return table


WINDOWS_THROUGH = _windows_through()


def _lines() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The board's whole lines in the four directions, for run detection by bit masks: per square and
    direction the line's id and the square's place in it; per square, direction and slot of
    :data:`WINDOWS_THROUGH` the shift of that window's first square and whether the slot exists."""
    line_of = np.zeros((NUM_SQUARES, 4), dtype=np.intp)
    pos = np.zeros((NUM_SQUARES, 4), dtype=np.intp)
    length = []
    for d, (dr, dc) in enumerate(DIRECTIONS):
        for sq in range(NUM_SQUARES):
            r, c = divmod(sq, SIZE)
            if 0 <= r - dr < SIZE and 0 <= c - dc < SIZE:
                continue  # not the first square of its line
            p = 0
            while 0 <= r < SIZE and 0 <= c < SIZE:
                line_of[r * SIZE + c, d], pos[r * SIZE + c, d] = len(length), p
                r, c, p = r + dr, c + dc, p + 1
            length.append(p)
    shift = np.maximum(pos - 4, 0)[:, :, None] + np.arange(WINDOW)
    valid = (shift <= pos[:, :, None]) & (shift + WINDOW <= np.array(length)[line_of][:, :, None])
    return line_of, pos, shift.astype(np.int16), valid


LINE_OF, LINE_POS, WINDOW_SHIFT, WINDOW_VALID = _lines()
LINE_BIT = (1 << LINE_POS).astype(np.int16)
#: Per square and direction, the bits of the first squares (in the line) of the runs through the square.
WINDOW_STARTS = np.bitwise_or.reduce(np.where(WINDOW_VALID, 1 << WINDOW_SHIFT, 0), axis=2).astype(np.int16)
NUM_LINES = int(LINE_OF.max()) + 1
_JD, _JC = TWO_EYED_JACKS
_JH, _JS = ONE_EYED_JACKS
#: Per card column, the index of its dead-card action after DEAD (jacks and the sink: 0, never used).
_DEAD_ACTION = np.zeros(53, dtype=np.intp)
_DEAD_ACTION[list(NON_JACK_KINDS)] = np.arange(len(NON_JACK_KINDS))
#: Per card kind, whether it is a natural card (not a jack).
_NATURAL = np.zeros(52, dtype=bool)
_NATURAL[list(NON_JACK_KINDS)] = True


def _any_last(x: np.ndarray) -> np.ndarray:
    """``x.any(axis=-1)`` for a C-contiguous bool array, as one ``reduceat`` over the flat array: a
    reduction along an axis pays a fixed cost per row, several times the work for rows of tens of cells."""
    return np.logical_or.reduceat(x.reshape(-1), np.arange(0, x.size, x.shape[-1])).reshape(x.shape[:-1])


def _action_cards(layout: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """Per action id, the card it plays first and the card it plays when the hand lacks the first."""
    first = np.full(NUM_ACTIONS, _SINK, dtype=np.intp)
    first[:NUM_SQUARES] = [k if k >= 0 else _SINK for k in layout]
    first[WILD:REMOVE] = _JD
    first[REMOVE:DEAD] = _JH
    first[DEAD:PASS] = NON_JACK_KINDS
    second = first.copy()
    second[WILD:REMOVE] = _JC
    second[REMOVE:DEAD] = _JS
    return first, second


#: The reference's shuffle (``random.Random.shuffle``: Fisher-Yates from the last slot down, slot ``i``
#: swapped with ``_randbelow(i + 1)``, itself ``getrandbits(k)`` redrawn until below ``i + 1``), as
#: (i, k) pairs for a 104-card pile; a pile of ``m`` cards uses the last ``m - 1`` pairs.
_DRAWS = tuple((i, (i + 1).bit_length()) for i in range(_DECK - 1, 0, -1))


def _shuffle_inline(rng: random.Random, cards: list[int]) -> None:
    getrandbits = rng.getrandbits
    for i, k in _DRAWS[_DECK - len(cards):]:
        j = getrandbits(k)
        while j > i:
            j = getrandbits(k)
        cards[i], cards[j] = cards[j], cards[i]


def _inline_matches() -> bool:
    """Whether :func:`_shuffle_inline` is this Python's ``random.Random.shuffle`` (checked once, at import:
    same cards and the same generator state after, for a few seeds and pile sizes)."""
    for seed, size in ((0, 104), (1, 104), (7, 57), (12345, 2), (3, 1), (4, 0)):
        ours, theirs = random.Random(seed), random.Random(seed)
        a, b = list(range(size)), list(range(size))
        _shuffle_inline(ours, a)
        theirs.shuffle(b)
        if a != b or ours.getstate() != theirs.getstate():
            return False
    return True


_INLINE_SHUFFLE = _inline_matches()


def shuffle(rng: Any, cards: list[int]) -> None:
    """``rng.shuffle(cards)``, exactly: the same order and the same generator state after. For a plain
    :class:`random.Random` the method calls of CPython's shuffle are inlined (about 1.6x faster; the
    deal of every new game is one shuffle of 104 cards, in Python, at each table)."""
    if _INLINE_SHUFFLE and type(rng) is random.Random:
        _shuffle_inline(rng, cards)
    else:
        rng.shuffle(cards)


class SequenceNumpyBackend(Backend):
    """``num_envs`` tables of ``game`` (a configured :class:`SequenceGame`) stepped together.

    Buffers, written in place after every :meth:`reset_tables`, :meth:`step` and :meth:`load_state`:
    ``observation`` float32 (N, 710), ``action_mask`` int8 (N, 349) and ``current_seat`` int64 (N,), for
    the seat to act at each table (a finished or truncated table keeps its seat and gets an all-zero mask,
    as ``raw_env`` gives a finished agent).
    ``max_cycles`` is the environment's truncation cap (``max_cycles`` x seats actions per game; default
    the game's, 500); ``max_steps``, where given, sets the cap in actions instead.

    The observation's seat-independent parts (free corners, locked chips, empty squares, discard counts)
    are kept up to date cell by cell as chips and cards move; the parts seen from the seat to act (the
    three team planes, the hand and the scalars) and the mask are rewritten for every table that moved.
    Those observation parts and the other structures kept up to date (:data:`DERIVED`, each commented
    where it is made) are, after every step, what :meth:`_derived` computes from scratch from the board,
    hands, discards and sequences; :meth:`stale_structures` checks it for a table.
    """

    name = "numpy"
    steps_subsets = True

    def __init__(self, game: SequenceGame, num_envs: int, *, max_cycles: int | None = None,
                 max_steps: int | None = None) -> None:
        if not isinstance(game, SequenceGame):
            raise TypeError(f"SequenceNumpyBackend steps sequence_v0 games only, got {game!r}")
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ValueError(f"num_envs must be an integer >= 1, got {num_envs!r}")
        super().__init__(game, int(num_envs), max_cycles=max_cycles, max_steps=max_steps)  # the cap, buffers
        n = self.num_envs
        seats = self.num_seats = game.num_players
        teams = self.num_teams = game.num_teams
        self.target = game.sequences_to_win
        self.dead_cards = game.config["dead_cards"]
        self.team_of_seat = np.arange(seats) % teams
        self.team8 = self.team_of_seat.astype(np.int8)
        self.next8 = ((self.team_of_seat + 1) % teams).astype(np.int8)
        self.after8 = ((self.team_of_seat + 2) % teams).astype(np.int8)
        self.next_seat = (np.arange(seats) + 1) % seats
        # rewards by winning team: +1 for its seats, -1 for the others
        self.team_rewards = np.where(self.team_of_seat[None, :] == np.arange(3)[:, None], 1.0, -1.0).astype(np.float32)
        layout = game.layout
        self.first_card, self.second_card = _action_cards(layout)
        self.square_card = self.first_card[:NUM_SQUARES]  # corners read the sink column (never empty)
        twins = np.array([game.squares_of[k] for k in NON_JACK_KINDS], dtype=np.intp)
        self.twin_a, self.twin_b = twins[:, 0], twins[:, 1]
        self.non_jack = np.array(NON_JACK_KINDS, dtype=np.intp)
        # Per card column (52 is the sink), its two squares; jacks and the sink name the off-board column.
        self.card_square = np.full((53, 2), _OFF, dtype=np.intp)
        self.card_square[self.non_jack] = twins
        self.card_square_a, self.card_square_b = self.card_square[:, 0].copy(), self.card_square[:, 1].copy()
        # Per square, the other square of its card (corners: the off-board column, always empty).
        self.twin_square = np.full(NUM_SQUARES, _OFF, dtype=np.intp)
        self.twin_square[twins[:, 0]], self.twin_square[twins[:, 1]] = twins[:, 1], twins[:, 0]
        self.square_card_all = np.append(self.square_card, _SINK)
        self.rows = np.arange(n)
        self.not_corner = np.ones(NUM_SQUARES, dtype=bool)
        self.not_corner[list(CORNER_SQUARES)] = False
        # Scalars as the reference computes them (in float64, then stored as float32), by count.
        self.deck_fraction = (np.arange(_DECK + 1) / 104.0).astype(np.float32)
        self.pass_fraction = np.minimum(1.0, np.arange(seats + 1) / seats).astype(np.float32)
        self.seq_fraction = np.minimum(1.0, np.arange(MAX_SEQUENCES + 1) / self.target).astype(np.float32)

        # The tables. Column 100 of the board and column 52 of hands and discard counts are sinks.
        self.board = np.full((n, NUM_SQUARES + 1), EMPTY, dtype=np.int8)
        self.locked = np.zeros((n, NUM_SQUARES), dtype=bool)
        self.hands = np.zeros((n, seats, 53), dtype=np.int8)
        # placeable[i, seat, sq]: the seat holds the card printed on sq (kept in step with the hands).
        self.placeable = np.zeros((n, seats, NUM_SQUARES + 1), dtype=bool)
        # removable[i, team, sq]: sq holds a chip of another team, not locked (a one-eyed jack's target).
        self.removable = np.zeros((n, 3, NUM_SQUARES), dtype=bool)
        # covered[i, card]: both squares of the card hold a chip (jacks and the sink: False).
        self.covered = np.zeros((n, 53), dtype=bool)
        self.deck = np.zeros((n, _DECK), dtype=np.int8)
        self.deck_len = np.zeros(n, dtype=np.intp)
        self.discards = np.zeros((n, _DECK + 1), dtype=np.int8)
        self.discard_len = np.zeros(n, dtype=np.intp)
        self.discard_counts = np.zeros((n, 53), dtype=np.int8)
        self.seq_count = np.zeros((n, 3), dtype=np.int64)
        # seq_squares[i, team, j]: the squares of the team's j-th sequence, in the reference's order.
        self.seq_squares = np.zeros((n, 3, MAX_SEQUENCES, WINDOW), dtype=np.int8)
        # Bit p of seq_starts[i, team, line]: one of the team's sequences lies on the line, from its p-th
        # square (what decides whether a new run shares two squares with a sequence; see _complete).
        self.seq_starts = np.zeros((n, 3, NUM_LINES), dtype=np.int16)
        # Bit p of lines[i, team, line]: the line's p-th square holds the team's chip or a free corner.
        self.lines = np.zeros((n, 3, NUM_LINES), dtype=np.int16)
        self.rngs: list[Any] = [None] * n
        self.player = np.zeros(n, dtype=np.int64)
        self.dead_used = np.zeros(n, dtype=bool)
        self.passes = np.zeros(n, dtype=np.int64)
        self.winner = np.full(n, -1, dtype=np.int64)
        self.drawn = np.zeros(n, dtype=bool)
        self.placed = np.zeros(n, dtype=np.int64)
        self.removed = np.zeros(n, dtype=np.int64)
        self.steps = np.zeros(n, dtype=np.int64)

        self.observation[:, 300 + np.array(CORNER_SQUARES)] = 1.0  # the free-corner plane never changes
        self._fresh_board = np.full(NUM_SQUARES + 1, EMPTY, dtype=np.int8)
        self._fresh_board[list(CORNER_SQUARES)] = CORNER
        self._fresh_empty = (self._fresh_board[:NUM_SQUARES] == EMPTY).astype(np.float32)
        # A just-dealt table's observation, but for the hand: free corners, empty squares, a full pile.
        self._fresh_observation = self.observation[0].copy()
        self._fresh_observation[500:600] = self._fresh_empty
        self._fresh_observation[OBS_SCALARS + 4] = self.deck_fraction[_DECK - game.hand_size * seats]
        corners = np.zeros(NUM_LINES, dtype=np.int16)
        np.bitwise_or.at(corners, LINE_OF[list(CORNER_SQUARES)].ravel(), LINE_BIT[list(CORNER_SQUARES)].ravel())
        self._fresh_lines = np.zeros((3, NUM_LINES), dtype=np.int16)
        self._fresh_lines[:teams] = corners
        self._rewards = np.zeros((n, seats), dtype=np.float32)
        self._removable_at = (self.rows[:, None] * 3 + np.arange(teams)) * NUM_SQUARES  # (table, team) rows, flat
        # Per (row, card) cell of an (N, 53) array, the flat index of the card's dead-card action in an
        # (N, A) mask (jacks and the sink: never dead, any index).
        self._dead_cell = (self.rows[:, None] * NUM_ACTIONS + DEAD + _DEAD_ACTION).ravel()
        self._dealt = np.zeros(n, dtype=bool)

    @property
    def sequences(self) -> list[list[list[list[int]]]]:
        """Per table and team, its completed sequences as square lists (as the reference keeps them)."""
        return [self._sequences(i) for i in range(self.num_envs)]

    def _sequences(self, i: int) -> list[list[list[int]]]:
        return [self.seq_squares[i, t, :self.seq_count[i, t]].tolist() for t in range(self.num_teams)]

    # ------------------------------------------------------------------------------------------
    # Dealing, saving, loading
    def reset_tables(self, rows: Any, seeds: Any) -> None:
        """Deal a fresh game at each table of ``rows``, the one at ``rows[j]`` from ``seeds[j]`` (an
        integer >= 0, or None for a seed from the operating system), exactly as the reference engine
        deals ``Game.new_initial_state(seed)``."""
        rows = self._rows(rows)
        seeds = list(seeds)
        if len(seeds) != len(rows):
            raise ValueError(f"reset_tables: {len(rows)} rows but {len(seeds)} seeds")
        if len(set(rows)) != len(rows):
            raise ValueError(f"reset_tables: a table is listed twice in {rows}")
        if not rows:
            return
        players, size = self.num_seats, self.game.hand_size
        dealt = _DECK - size * players
        decks = []
        for i, seed in zip(rows, seeds):  # the reference deal: shuffle, then pop round the table
            rng = make_rng(seed)
            deck = list(_FRESH_DECK)
            shuffle(rng, deck)
            decks.append(bytes(deck))
            self.rngs[i] = rng
        decks = np.frombuffer(b"".join(decks), dtype=np.int8).reshape(len(rows), _DECK)
        at = np.array(rows, dtype=np.intp)
        self.deck[at] = decks
        self.deck_len[at] = dealt
        popped = decks[:, dealt:][:, ::-1]  # the top card (last) goes to seat 0, the next to seat 1, ...
        seat = np.arange(size * players) % players
        cells = (np.arange(len(rows))[:, None] * players + seat) * 53 + popped  # (table, seat, card) cells
        hands = np.bincount(cells.ravel(), minlength=len(rows) * players * 53).astype(np.int8)
        hands = hands.reshape(len(rows), players, 53)
        self.hands[at] = hands
        self.placeable[at] = hands[:, :, self.square_card_all] > 0
        self.removable[at] = False
        self.board[at] = self._fresh_board
        self.covered[at] = False
        self.lines[at] = self._fresh_lines
        self.discard_len[at] = 0
        self.discard_counts[at] = 0
        self.seq_count[at] = 0
        self.seq_starts[at] = 0
        self.locked[at] = False
        for name in ("player", "passes", "placed", "removed", "steps"):
            getattr(self, name)[at] = 0
        self.dead_used[at] = False
        self.drawn[at] = False
        self.winner[at] = -1
        self._dealt[at] = True
        self._write_fresh(at, hands[:, 0])

    def _write_fresh(self, at: np.ndarray, hand: np.ndarray) -> None:
        """:meth:`_write` for tables ``at`` just dealt (seat 0's ``hand`` as counts per card), where most of
        it is known: no chips on the board (so no chip to remove, no dead card and zero team planes), no
        discards, no sequences, seat 0 to act."""
        mask = np.zeros((len(at), NUM_ACTIONS), dtype=np.int8)
        legal = mask.view(np.bool_)
        legal[:, :WILD] = self.placeable[at, 0, :NUM_SQUARES]
        wild = (hand[:, _JD] > 0) | (hand[:, _JC] > 0)
        np.logical_and(self._fresh_board[:NUM_SQUARES] == EMPTY, wild[:, None], out=legal[:, WILD:REMOVE])
        legal[:, PASS] = ~legal[:, :REMOVE].any(axis=1)
        self.action_mask[at] = mask
        self.observation[at] = self._fresh_observation
        self.observation[at, OBS_HAND:OBS_DISCARDS] = hand[:, :52] * np.float32(0.5)
        self.current_seat[at] = 0

    def save_state(self, i: int) -> dict[str, Any]:
        """Table ``i`` as ``Game.save`` writes it (plus the environment's ``env`` part: steps taken and
        ``max_cycles``, as ``raw_env().save_state()`` writes it), so ``Game.load`` and
        ``raw_env().reset(options={"state": ...})`` continue it exactly."""
        i = self._row(i)
        data = self.game.save(self._reference_state(i, self.rngs[i]))
        data["env"] = {"steps": int(self.steps[i]), "max_cycles": self.max_cycles}
        return data

    def load_state(self, i: int, data: Any) -> None:
        """Put a saved state (``Game.save``'s dict, validated by ``Game.load``; an ``env`` part's step
        count is kept, as ``raw_env`` does) at table ``i``."""
        i = self._row(i)
        state = self.game.load(data)
        steps = 0
        if isinstance(data.get("env"), dict):
            steps = data["env"].get("steps", 0)
            if type(steps) is not int or not 0 <= steps <= MAX_COUNT:
                raise StateError(f"saved state's env.steps must be an integer in [0, {MAX_COUNT}], got {steps!r}")
        saved = data["state"]
        hands = self.hands[i]
        hands[:] = 0
        for seat, hand in enumerate(saved["hands"]):
            hands[seat] = np.bincount(np.asarray(hand, dtype=np.intp), minlength=53)
        self._set_table(i, state.rng, saved["deck"], saved["discards"], saved["sequences"],
                        board=saved["board"], player=saved["player"], dead_used=saved["dead_used"],
                        passes=saved["passes_in_row"], winner=-1 if saved["winner"] is None else saved["winner"],
                        drawn=saved["drawn_game"], placed=saved["placed"], removed=saved["removed"], steps=steps)
        self._write(np.array([i], dtype=np.intp))

    def _rows(self, rows: Any) -> list[int]:
        """``rows`` (table indices) as a list of ints; an IndexError names the first that is not one."""
        if type(rows) is list and all(type(r) is int and 0 <= r < self.num_envs for r in rows):
            return rows  # as envs.vector deals: checked without numpy (several calls a step)
        at = np.atleast_1d(np.asarray(rows))
        if at.ndim == 1 and at.dtype.kind in "iu" and (not len(at) or (at.min() >= 0 and at.max() < self.num_envs)) \
                and not (isinstance(rows, (list, tuple)) and any(isinstance(r, (bool, np.bool_)) for r in rows)):
            return at.tolist()
        return [self._row(r) for r in at.tolist()]  # raises for the first bad one

    def _row(self, i: Any) -> int:
        if isinstance(i, (bool, np.bool_)) or not isinstance(i, (int, np.integer)) or not 0 <= i < self.num_envs:
            raise IndexError(f"table index {i!r} is not an integer in [0, {self.num_envs})")
        return int(i)

    def _set_table(self, i: int, rng: Any, deck: list[int], discards: list[int], sequences: list,
                   *, board: list[int] | None, player: int, dead_used: bool, passes: int, winner: int,
                   drawn: bool, placed: int, removed: int, steps: int) -> None:
        self.rngs[i] = rng
        self.hands[i, :, _SINK] = 0
        if board is None:
            self.board[i, :NUM_SQUARES] = EMPTY
            self.board[i, list(CORNER_SQUARES)] = CORNER
        else:
            self.board[i, :NUM_SQUARES] = board
        self.board[i, _OFF] = EMPTY
        self.deck[i, :len(deck)] = deck
        self.deck_len[i] = len(deck)
        self.discards[i, :len(discards)] = discards
        self.discard_len[i] = len(discards)
        self.seq_count[i] = 0
        self.seq_count[i, :self.num_teams] = [len(team) for team in sequences]
        self.seq_squares[i] = 0
        for t, team in enumerate(sequences):
            for j, s in enumerate(team):
                self.seq_squares[i, t, j] = s
        self.player[i] = player
        self.dead_used[i] = dead_used
        self.passes[i] = passes
        self.winner[i] = winner
        self.drawn[i] = drawn
        self.placed[i] = placed
        self.removed[i] = removed
        self.steps[i] = steps
        self._dealt[i] = True
        for name, value in self._derived(i).items():
            self._derived_view(name)[i] = value

    # ------------------------------------------------------------------------------------------
    # The structures kept up to date as play goes (from scratch, for loading and for checking)
    #: The structures play keeps up to date cell by cell, by the names :meth:`stale_structures` reports.
    DERIVED = ("placeable", "covered", "removable", "lines", "locked", "seq_starts", "discard_counts",
               "observation[300:600]", "observation[discards]")

    def _derived_view(self, name: str) -> np.ndarray:
        """The (N, ...) array holding the incremental structure ``name`` of :data:`DERIVED` (a view)."""
        if name == "observation[300:600]":
            return self.observation[:, 300:600]
        if name == "observation[discards]":
            return self.observation[:, OBS_DISCARDS:OBS_SCALARS]
        if name == "placeable":  # its off-board column takes the writes for jacks: scratch
            return self.placeable[:, :, :NUM_SQUARES]
        if name in ("removable", "lines", "seq_starts"):  # per team: the teams in play
            return getattr(self, name)[:, :self.num_teams]
        return getattr(self, name)

    def _derived(self, i: int) -> dict[str, np.ndarray]:
        """Table ``i``'s incremental structures (:data:`DERIVED`) computed from scratch from its board,
        hands, discards and sequences. Play keeps them up to date cell by cell; :meth:`stale_structures` compares."""
        cells = self.board[i, :NUM_SQUARES]
        locked = np.zeros(NUM_SQUARES, dtype=bool)
        seq_starts = np.zeros((self.num_teams, NUM_LINES), dtype=np.int16)
        for t, team in enumerate(self._sequences(i)):
            for s in team:
                locked[s] = True
                d = int(np.flatnonzero(LINE_OF[s[0]] == LINE_OF[s[1]])[0])  # the sequence's direction
                seq_starts[t, LINE_OF[s[0], d]] |= 1 << int(LINE_POS[s, d].min())
        locked[list(CORNER_SQUARES)] = False  # free corners are never locked
        lines = np.zeros((self.num_teams, NUM_LINES), dtype=np.int16)
        for t in range(self.num_teams):  # a line's bits are distinct, so their sum is their union
            on = ((cells == t) | (cells == CORNER))[:, None] * LINE_BIT
            lines[t] = np.bincount(LINE_OF.ravel(), weights=on.ravel(), minlength=NUM_LINES)
        chip = (cells >= 0) & (cells < 3) & ~locked
        discard_counts = np.bincount(self.discards[i, :self.discard_len[i]].astype(np.intp), minlength=53)
        planes = np.zeros((3, NUM_SQUARES), dtype=np.float32)
        planes[0, list(CORNER_SQUARES)] = 1.0
        planes[1], planes[2] = locked, cells == EMPTY
        board = self.board[i]
        return {
            "placeable": self.hands[i][:, self.square_card] > 0,
            "covered": (board[self.card_square[:, 0]] != EMPTY) & (board[self.card_square[:, 1]] != EMPTY),
            "removable": chip & (cells != np.arange(self.num_teams)[:, None]),
            "lines": lines,
            "locked": locked,
            "seq_starts": seq_starts,
            "discard_counts": discard_counts,
            "observation[300:600]": planes.ravel(),
            "observation[discards]": discard_counts[:52] * np.float32(0.5),
        }

    def stale_structures(self, i: int) -> list[str]:
        """The incremental structures of table ``i`` (:data:`DERIVED`) that differ from a from-scratch
        recomputation: empty while the engine is sound (an invariant checker, for tests)."""
        i = self._row(i)
        return [name for name, value in self._derived(i).items()
                if not np.array_equal(self._derived_view(name)[i], value)]

    def _reference_state(self, i: int, rng: Any) -> SequenceState:
        """Table ``i`` as a reference :class:`SequenceState` (sharing ``rng``; nothing validated)."""
        hands = self.hands[i, :, :52]
        values = {
            "rng": rng,
            "board": self.board[i, :NUM_SQUARES].tolist(),
            "hands": [np.repeat(np.arange(52), hands[s]).tolist() for s in range(self.num_seats)],
            "deck": self.deck[i, :self.deck_len[i]].tolist(),
            "discards": self.discards[i, :self.discard_len[i]].tolist(),
            "sequences": self._sequences(i),
            "player": int(self.player[i]),
            "dead_used": bool(self.dead_used[i]),
            "passes_in_row": int(self.passes[i]),
            "winner": None if self.winner[i] < 0 else int(self.winner[i]),
            "drawn_game": bool(self.drawn[i]),
            "placed": int(self.placed[i]),
            "removed": int(self.removed[i]),
        }
        return SequenceState.from_fields(self.game, values)

    # ------------------------------------------------------------------------------------------
    # Stepping
    def step(self, actions: Any, active: Any = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Each table plays its action for its seat to act (with ``active``, a bool (N,) array, only the
        tables where it is True: the others' actions are ignored, their state and buffers untouched and
        their rewards and ends zero). Returns ``rewards`` float32 (N, seats), ``terminations`` and
        ``truncations`` bool (N,); the buffers then hold the new positions. Any illegal action (or a
        finished table given one) raises IllegalActionError naming the table, before any table moves."""
        a = np.asarray(actions)
        n = self.num_envs
        if a.shape != (n,) or a.dtype.kind not in "iu":
            raise IllegalActionError(
                f"sequence_v0: step needs {n} integer actions (shape ({n},)), got shape {a.shape} of dtype {a.dtype}")
        if active is None:
            rows = self.rows
            r: Any = slice(None)  # the moving tables, for reading and writing per-table arrays in place
        else:
            active = np.asarray(active)
            if active.shape != (n,) or active.dtype != bool:
                raise ValueError(f"sequence_v0: active must be a bool array of shape ({n},), "
                                 f"got shape {active.shape} of dtype {active.dtype}")
            rows = r = np.flatnonzero(active)
            a = a[rows]
        if not self._dealt[rows].all():
            raise RuntimeError(f"sequence_v0: tables {rows[~self._dealt[rows]][:10].tolist()} were never dealt; "
                               f"call reset_tables first")
        if ((a < 0) | (a >= NUM_ACTIONS)).any():
            bad = int(np.flatnonzero((a < 0) | (a >= NUM_ACTIONS))[0])
            raise IllegalActionError(f"sequence_v0: table {int(rows[bad])}: action {int(a[bad])} is outside "
                                     f"[0, {NUM_ACTIONS})")
        a = a.astype(np.intp, copy=False)
        legal = self.action_mask[rows, a]
        if not legal.all():
            bad = int(np.flatnonzero(legal == 0)[0])
            raise self._illegal(int(rows[bad]), int(a[bad]))
        rewards = self._rewards
        rewards[:] = 0.0
        terminations = np.zeros(n, dtype=bool)
        truncations = np.zeros(n, dtype=bool)
        if not len(rows):
            return rewards.copy(), terminations, truncations

        player = self.player[rows]  # a copy (rows is an index array)
        team = self.team8[player]
        is_pass = a == PASS
        is_dead = (a >= DEAD) & ~is_pass
        is_remove = (a >= REMOVE) & (a < DEAD)
        puts = a < REMOVE  # place or wild: a chip goes on the board
        moves = ~is_pass  # every action but a pass plays a card and draws one
        sq = a % NUM_SQUARES  # dead cards and passes name a square too, whose cell is rewritten unchanged
        # Per-table cells are reached through flat views and flat indices (a third of the cost of
        # indexing with (rows, ...) pairs): ``seat_at`` is the (table, seat) row of hands and placeable.
        seat_at = rows * self.num_seats + player
        obs_at = rows * OBS_SIZE
        hands, obs = self.hands.reshape(-1), self.observation.reshape(-1)

        # Play the card: off the hand, onto the discard pile.
        card = self.first_card[a]
        card = np.where(hands[seat_at * 53 + card] > 0, card, self.second_card[a])
        hands[seat_at * 53 + card] -= moves
        discard_len = self.discard_len[rows]
        self.discards.reshape(-1)[rows * (_DECK + 1) + discard_len] = card
        self.discard_len[r] = discard_len + moves
        discard_at = rows * 53 + card
        counts = self.discard_counts.reshape(-1)[discard_at] + moves
        self.discard_counts.reshape(-1)[discard_at] = counts
        obs[obs_at + (OBS_DISCARDS + card)] = counts * np.float32(0.5)  # the sink's count lands on a scalar, rewritten below

        # The board, and what it shows: the empty plane, the covered cards and the one-eyed jacks' targets.
        board = self.board.reshape(-1)
        board_at = rows * (NUM_SQUARES + 1)
        old = board[board_at + sq]
        new = np.where(puts, team, np.where(is_remove, EMPTY, old))
        board[board_at + sq] = new
        obs[obs_at + (500 + sq)] = new == EMPTY
        self.covered.reshape(-1)[rows * 53 + self.square_card_all[sq]] = (new != EMPTY) & \
            (board[board_at + self.twin_square[sq]] != EMPTY)
        chip = (new >= 0) & (new < 3) & ~self.locked.reshape(-1)[rows * NUM_SQUARES + sq]
        teams = np.arange(self.num_teams)  # the new chip is not locked yet (a completed run locks it below)
        self.removable.reshape(-1)[self._removable_at[r] + sq[:, None]] = chip[:, None] & (new[:, None] != teams)
        self.placed[r] += puts
        self.removed[r] += is_remove
        lines, line, bit = self.lines.reshape(-1), np.take(LINE_OF, sq, axis=0), np.take(LINE_BIT, sq, axis=0)
        gone = np.flatnonzero(is_remove)
        if len(gone):
            lines[(rows[gone] * 3 + old[gone])[:, None] * NUM_LINES + line[gone]] &= ~bit[gone]
        at = (rows * 3 + team)[:, None] * NUM_LINES + line  # (tables, 4): the mover's four lines
        bits = lines[at] | bit * puts[:, None]  # (a table's four lines are distinct: a plain write)
        lines[at] = bits

        # Runs of five through the new chip, from the bits of its four lines: bit s of ``starts`` is set
        # when the line's squares s .. s+4 all are; a run holds the chip if it starts at most four before.
        starts = bits & (bits >> 1)
        starts &= starts >> 2
        starts &= bits >> 4
        starts &= np.take(WINDOW_STARTS, sq, axis=0)
        hit = np.flatnonzero(((starts[:, 0] | starts[:, 1] | starts[:, 2] | starts[:, 3]) != 0) & puts)
        if len(hit):
            sq_hit, bits = sq[hit], bits[hit]
            shift = WINDOW_SHIFT[sq_hit]
            full = ((bits[:, :, None] >> shift) & 31 == 31) & WINDOW_VALID[sq_hit]
            self._complete(rows[hit], team[hit].astype(np.intp), at[hit], WINDOWS_THROUGH[sq_hit], shift, full)

        # Draw (a reshuffle first where the pile ran out).
        deck_len = self.deck_len[rows]
        ran_out = np.flatnonzero(moves & (deck_len == 0) & (self.discard_len[rows] > 0))
        if len(ran_out):
            deck_len[ran_out] = self._reshuffle(rows[ran_out])
        draws = moves & (deck_len > 0)
        top = np.maximum(deck_len - 1, 0)
        drawn_card = np.where(draws, self.deck.reshape(-1)[rows * _DECK + top], _SINK)
        hands[seat_at * 53 + drawn_card] += draws
        self._track(np.concatenate([seat_at, seat_at]), np.concatenate([card, drawn_card]))  # the cards that moved
        self.deck_len[r] = deck_len - draws

        # Passes and the blocked table.
        passes = self.passes[rows]
        self.passes[r] = np.where(is_pass, passes + 1, np.where(is_dead, passes, 0))
        passed = rows[is_pass]
        if len(passed):
            for i in passed[self._nobody_can_play(passed)].tolist():
                if self._reference_state(i, self.rngs[i]).table_blocked():
                    self.drawn[i] = True

        # The turn.
        winner = self.winner[rows]
        ends_turn = ~is_dead & (is_pass | (winner < 0))
        self.dead_used[r] = ~ends_turn & (self.dead_used[rows] | is_dead)
        self.player[r] = np.where(ends_turn, self.next_seat[player], player)
        steps = self.steps[rows] + 1
        self.steps[r] = steps

        won = winner >= 0
        ended_here = won | self.drawn[rows]
        terminations[rows] = ended_here
        truncations[rows] = ~ended_here & (steps >= self.max_steps)
        if won.any():
            rewards[rows[won]] = self.team_rewards[winner[won]]
        over = ended_here | (steps >= self.max_steps)
        self._write(None if active is None else rows, over)
        return rewards.copy(), terminations, truncations

    def _track(self, seat_at: np.ndarray, card: np.ndarray) -> None:
        """Bring ``placeable`` in step after ``card`` changed in the hand of each (table, seat) row
        ``seat_at`` (``table * seats + seat``)."""
        held = self.hands.reshape(-1)[seat_at * 53 + card] > 0
        placeable = self.placeable.reshape(-1)
        at = seat_at * (NUM_SQUARES + 1)
        placeable[at + self.card_square_a[card]] = held
        placeable[at + self.card_square_b[card]] = held

    def _illegal(self, i: int, action: int) -> IllegalActionError:
        if self.winner[i] >= 0 or self.drawn[i]:
            return IllegalActionError(f"sequence_v0: table {i}: action {action} was given but the game is over")
        legal = np.flatnonzero(self.action_mask[i])
        shown = ", ".join(f"{x} ({self.game.action_to_string(int(x))})" for x in legal[:12])
        return IllegalActionError(
            f"sequence_v0: table {i}: action {action} ({self.game.action_to_string(action)}) is illegal for "
            f"player {int(self.player[i])}; legal actions: {shown}{' ...' if len(legal) > 12 else ''}")

    def _complete(self, rows: np.ndarray, team: np.ndarray, lines: np.ndarray, through: np.ndarray,
                  shift: np.ndarray, full: np.ndarray) -> None:
        """Tables ``rows`` have a run of five of ``team`` through the new chip: per direction, ``lines`` is
        the flat (table, team, line) index of its line, and per direction and slot, ``through`` the window's
        squares, ``shift`` its first square's place in the line and ``full`` whether it is a run.

        The reference rule (``SequenceState.new_sequences``), in arrays: a window counts if it shares at
        most one square with each of the team's sequences; per direction the first such window counts,
        and also the one four squares on if there is one (nine or more in a row). New sequences are
        appended per table in the reference's order: by direction, the first window before its pair."""
        # Two lines meet in one square at most, so a window shares two or more squares with a sequence
        # only if the sequence lies on its line and starts at most three squares from it: bits
        # shift - 3 .. shift + 3 of the line's ``seq_starts``.
        starts = self.seq_starts.reshape(-1)
        near = (((starts[lines] << 3)[:, :, None] >> shift) & 0b1111111) != 0
        counts = full & ~near
        has = counts.any(axis=2)
        if not has.any():
            return
        first = counts.argmax(axis=2)
        pair = has & (first == 0) & counts[:, :, WINDOW - 1]
        hj, hd = np.nonzero(has)  # by table, then direction: the reference's order
        begin = shift[hj, hd, first[hj, hd]]
        starts[lines[hj, hd]] |= (np.int16(1) << begin) | (pair[hj, hd].astype(np.int16) << (begin + 4))
        # One entry per new sequence, grouped by table: per direction the first window, then its pair.
        two = 1 + pair[hj, hd]
        j, slot = np.repeat(hj, two), np.repeat(first[hj, hd], two)
        slot[np.cumsum(two)[two == 2] - 1] = WINDOW - 1
        windows = through[j, np.repeat(hd, two), slot]  # (new sequences, 5)
        tables, teams = rows[j], team[j]
        index = self.seq_count[tables, teams] + np.arange(len(j)) - np.searchsorted(j, j)
        self.seq_squares[tables, teams, index] = windows
        self.seq_count[rows, team] += np.bincount(j, minlength=len(rows))
        keep = self.not_corner[windows]  # free corners are never locked
        self.locked.reshape(-1)[tables[:, None] * NUM_SQUARES + windows] = keep
        self.observation.reshape(-1)[tables[:, None] * OBS_SIZE + 400 + windows] = keep
        self.removable[tables[:, None], :, windows] = False
        won = self.seq_count[rows, team] >= self.target
        self.winner[rows[won]] = team[won]

    def _nobody_can_play(self, rows: np.ndarray) -> np.ndarray:
        """Which of ``rows`` look blocked: ``SequenceState.table_blocked`` in arrays (no seat holds a
        card playable now, and no seat that can still draw, holding a dead card with exchanges on, could
        draw one from the pile or the discards: the cards in no hand). Only those go to the reference.

        Every test runs on every row, in a few operations on (rows, seats, cards) arrays: with three
        teams a fifth of the tables or more pass at a time (full boards, dead hands), and picking out
        the rows each cheaper test left open cost more than the tests. A natural card is playable
        where one of its squares is empty, that is where it is not ``covered`` (on a full board, none)."""
        seats = self.num_seats
        hands = np.take(self.hands, rows, axis=0)[:, :, :52]  # (rows, seat, card)
        in_hands = hands[:, 0].copy()  # (rows, card): copies in some hand (adding seat by seat is the fastest sum)
        for seat in range(1, seats):
            in_hands += hands[:, seat]
        live = ~np.take(self.covered, rows, axis=0)[:, :52] & _NATURAL  # natural cards with an empty square
        room = self.placed[rows] - self.removed[rows] < NUM_SQUARES - len(CORNER_SQUARES)  # an empty square
        targets = _any_last(np.take(self.removable, rows, axis=0))[:, self.team_of_seat]  # (rows, seat): a chip to remove
        one_eyed = (hands[:, :, _JH] | hands[:, :, _JS]) > 0  # (rows, seat)
        holds = _any_last((in_hands > 0) & live) | (((in_hands[:, _JD] | in_hands[:, _JC]) > 0) & room) | \
            _any_last(one_eyed & targets)
        if not self.dead_cards:
            return ~holds
        # A seat that can exchange a (dead) card could draw one it can play: a card with a copy in no hand.
        pool_for_all = _any_last((in_hands < 2) & live) | (((in_hands[:, _JD] < 2) | (in_hands[:, _JC] < 2)) & room)
        pool_one_eyed = (in_hands[:, _JH] < 2) | (in_hands[:, _JS] < 2)
        playable = pool_for_all[:, None] | (pool_one_eyed[:, None] & targets)  # (rows, seat)
        # Holding no playable card, a seat can exchange any natural card it holds (all are dead).
        can_draw = _any_last((hands > 0) & _NATURAL)  # (rows, seat)
        return ~holds & ~_any_last(can_draw & playable)

    def _reshuffle(self, tables: np.ndarray) -> np.ndarray:
        """At each of ``tables`` the discards become the draw pile, shuffled by the table's generator as
        the reference does; returns the new piles' sizes. The shuffles are Python, one table at a time;
        the arrays are written for all the tables at once (with three teams several tables a step
        reshuffle)."""
        sizes = self.discard_len[tables]
        piles = []
        for i, pile, size in zip(tables.tolist(), self.discards[tables].tolist(), sizes.tolist()):
            pile = pile[:size]
            shuffle(self.rngs[i], pile)
            piles.append(bytes(pile) + bytes(_DECK - size))  # padded to a whole row: cards >= size are unused
        self.deck[tables] = np.frombuffer(b"".join(piles), dtype=np.int8).reshape(len(piles), _DECK)
        self.deck_len[tables] = sizes
        self.discard_len[tables] = 0
        self.discard_counts[tables] = 0
        self.observation[tables, OBS_DISCARDS:OBS_SCALARS] = 0.0
        return sizes

    # ------------------------------------------------------------------------------------------
    # Masks and observations
    def _write(self, rows: np.ndarray | None, over: np.ndarray | None = None) -> None:
        """Write the mask, seat and the seat-dependent observation parts of ``rows`` (None: every table)
        into the buffers; ``over`` (per row, if known) says which games are over (their mask is zero).
        The other observation parts are kept up to date where they change."""
        whole = rows is None
        if whole:
            at, r = self.rows, slice(None)
            mask, obs = self.action_mask, self.observation
        else:
            at = r = rows
            mask = np.empty((len(rows), NUM_ACTIONS), dtype=np.int8)
            obs = self.observation[rows]  # a copy holding the parts kept up to date; written back below
        player = self.player[r]
        team = self.team8[player]
        board = self.board[r, :NUM_SQUARES]
        # Rows of the (table, seat) and (table, team) arrays, taken whole with np.take (about 3x faster
        # than indexing with (table, seat) pairs).
        seat_at = at * self.num_seats + player
        team_at = at * 3 + team
        hand = np.take(self.hands.reshape(-1, 53), seat_at, axis=0)
        held = hand > 0
        empty = board == EMPTY
        legal = mask.view(np.bool_)

        np.logical_and(np.take(self.placeable.reshape(-1, NUM_SQUARES + 1), seat_at, axis=0)[:, :NUM_SQUARES], empty,
                       out=legal[:, :WILD])
        # The jacks' sections are empty but for the rows holding one (a minority): cleared, then filled.
        legal[:, WILD:PASS] = False
        chips = self.placed[r] - self.removed[r]
        wild = np.flatnonzero((held[:, _JD] | held[:, _JC]) & (chips < NUM_SQUARES - len(CORNER_SQUARES)))
        legal[wild, WILD:REMOVE] = empty[wild]
        remove = np.flatnonzero(held[:, _JH] | held[:, _JS])
        legal[remove, REMOVE:DEAD] = np.take(self.removable.reshape(-1, NUM_SQUARES), team_at[remove], axis=0)
        if self.dead_cards:
            # Dead cards (held, both squares covered; one exchange a turn) are few: found in one pass
            # and set one by one, through a table from (row, card) cells to their mask cells.
            dead = np.flatnonzero(held & self.covered[r] & ~self.dead_used[r][:, None])
            legal.reshape(-1)[self._dead_cell[dead]] = True
        # A pass is legal when nothing else is (the pass entry cleared, then each row reduced).
        legal[:, PASS] = False
        np.logical_not(_any_last(legal), out=legal[:, PASS])
        if over is None:
            over = (self.winner[r] >= 0) | self.drawn[r] | (self.steps[r] >= self.max_steps)
        if over.any():
            mask[over] = 0

        np.equal(board, team[:, None], out=obs[:, 0:100])
        np.equal(board, self.next8[player][:, None], out=obs[:, 100:200])
        if self.num_teams == 3:  # with two teams the plane stays zero
            np.equal(board, self.after8[player][:, None], out=obs[:, 200:300])
        np.multiply(hand[:, :52], np.float32(0.5), out=obs[:, OBS_HAND:OBS_DISCARDS])
        scalars = np.zeros((len(player), 6), dtype=np.float32)  # built whole, then written in one copy
        fraction, seq_count = self.seq_fraction, self.seq_count.reshape(-1)
        scalars[:, 0] = fraction[seq_count[team_at]]
        scalars[:, 1] = fraction[seq_count[at * 3 + self.next8[player]]]
        if self.num_teams == 3:  # with two teams it stays zero
            scalars[:, 2] = fraction[seq_count[at * 3 + self.after8[player]]]
        scalars[:, 3] = self.dead_used[r]
        scalars[:, 4] = self.deck_fraction[self.deck_len[r]]
        scalars[:, 5] = self.pass_fraction[np.minimum(self.passes[r], self.num_seats)]
        obs[:, OBS_SCALARS:] = scalars
        if not whole:
            self.action_mask[rows] = mask
            self.observation[rows] = obs
        self.current_seat[r] = player


__all__ = ["SequenceNumpyBackend", "WINDOWS_THROUGH", "shuffle"]
