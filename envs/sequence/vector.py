"""A vectorised Sequence engine: N tables of one configuration stepped together with numpy.

:class:`SequenceNumpyBackend` is the ``backend="numpy"`` of ``envs.vector`` for ``sequence_v0``. It plays
exactly the rules of :mod:`envs.sequence.rules` (the reference engine), proved by the differential test
``tests/sequence/test_sequence_vector.py``: the same masks, observations, rewards and ends for the same
states, with tables handed back and forth through :meth:`save_state` / :meth:`load_state`.

What is stepped with array operations, for all tables at once: the legal masks (from the hand counts,
per-seat placeable squares and the board), playing the card, placing and removing chips, finding runs of
five through the changed square (per-team bit masks of every board line, shifted through precomputed
window tables), deciding which windows count (the reference rule ``SequenceState.new_sequences``, from
per-square bit masks of sequence membership), the discard pile, drawing, dead-card exchanges, turn
order, truncation, rewards and the 710 observation values, written into preallocated buffers. After a
pass, which tables look blocked is decided in arrays too.

What stays per table, in Python, because it is rare: the shuffle of a new deal (the reference's, so the
deck order is the reference engine's for the same seed), a reshuffle of the discards (each table keeps
its own ``random.Random``, shuffled exactly as the reference does), confirming a blocked table with
``SequenceState.table_blocked``, appending completed sequences to the table's list, and saving or
loading a table.

Hands are kept as counts per card kind; the reference keeps them as lists, whose order never changes
play, so :meth:`save_state` writes each hand sorted.
"""

from __future__ import annotations

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
    direction the line's id and the bit of the square in it; per square, direction and slot of
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
    return line_of, (1 << pos).astype(np.int16), shift.astype(np.int16), valid


LINE_OF, LINE_BIT, WINDOW_SHIFT, WINDOW_VALID = _lines()
NUM_LINES = int(LINE_OF.max()) + 1
_JD, _JC = TWO_EYED_JACKS
_JH, _JS = ONE_EYED_JACKS


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


class SequenceNumpyBackend(Backend):
    """``num_envs`` tables of ``game`` (a configured :class:`SequenceGame`) stepped together.

    Buffers, written in place after every :meth:`reset_tables`, :meth:`step` and :meth:`load_state`:
    ``observation`` float32 (N, 710), ``action_mask`` int8 (N, 349) and ``current_seat`` int64 (N,), for
    the seat to act at each table (a finished or truncated table keeps its seat and gets an all-zero mask,
    as ``raw_env`` gives a finished agent).
    ``max_cycles`` is the environment's truncation cap (``max_cycles`` x seats actions per game; default
    the game's, 500).
    """

    name = "numpy"

    def __init__(self, game: SequenceGame, num_envs: int, *, max_cycles: int | None = None) -> None:
        if not isinstance(game, SequenceGame):
            raise TypeError(f"SequenceNumpyBackend steps sequence_v0 games only, got {game!r}")
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ValueError(f"num_envs must be an integer >= 1, got {num_envs!r}")
        super().__init__(game, int(num_envs), max_cycles=max_cycles)  # max_cycles, max_steps and the buffers
        n = self.num_envs
        seats = self.num_seats = game.num_players
        teams = self.num_teams = game.num_teams
        self.target = game.sequences_to_win
        self.dead_cards = game.config["dead_cards"]
        self.team_of_seat = np.arange(seats) % teams
        self.team8 = self.team_of_seat.astype(np.int8)
        self.next8 = ((self.team_of_seat + 1) % teams).astype(np.int8)
        self.after8 = ((self.team_of_seat + 2) % teams).astype(np.int8)
        layout = game.layout
        self.first_card, self.second_card = _action_cards(layout)
        self.square_card = self.first_card[:NUM_SQUARES]  # corners read the sink column (never empty)
        twins = np.array([game.squares_of[k] for k in NON_JACK_KINDS], dtype=np.intp)
        self.twin_a, self.twin_b = twins[:, 0], twins[:, 1]
        self.non_jack = np.array(NON_JACK_KINDS, dtype=np.intp)
        # Per card column (52 is the sink), its two squares; jacks and the sink name the off-board column.
        self.card_square = np.full((53, 2), _OFF, dtype=np.intp)
        self.card_square[self.non_jack] = twins
        self.square_card_all = np.append(self.square_card, _SINK)
        self.rows = np.arange(n)

        # The tables. Column 100 of the board and column 52 of hands and discard counts are sinks.
        self.board = np.full((n, NUM_SQUARES + 1), EMPTY, dtype=np.int8)
        self.locked = np.zeros((n, NUM_SQUARES), dtype=bool)
        self.hands = np.zeros((n, seats, 53), dtype=np.int8)
        # placeable[i, seat, sq]: the seat holds the card printed on sq (kept in step with the hands).
        self.placeable = np.zeros((n, seats, NUM_SQUARES + 1), dtype=bool)
        # covered[i, card]: both squares of the card hold a chip (jacks and the sink: False).
        self.covered = np.zeros((n, 53), dtype=bool)
        self.deck = np.zeros((n, _DECK), dtype=np.int8)
        self.deck_len = np.zeros(n, dtype=np.intp)
        self.discards = np.zeros((n, _DECK + 1), dtype=np.int8)
        self.discard_len = np.zeros(n, dtype=np.intp)
        self.discard_counts = np.zeros((n, 53), dtype=np.int8)
        self.seq_count = np.zeros((n, 3), dtype=np.int64)
        # Bit j of member[i, team, sq]: square sq is in the team's j-th sequence (at most 24 of them).
        self.member = np.zeros((n, 3, NUM_SQUARES + 1), dtype=np.int32)
        # Bit p of lines[i, team, line]: the line's p-th square holds the team's chip or a free corner.
        self.lines = np.zeros((n, 3, NUM_LINES), dtype=np.int16)
        self.sequences: list[list[list[list[int]]]] = [[[] for _ in range(teams)] for _ in range(n)]
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
        corners = np.zeros(NUM_LINES, dtype=np.int16)
        np.bitwise_or.at(corners, LINE_OF[list(CORNER_SQUARES)].ravel(), LINE_BIT[list(CORNER_SQUARES)].ravel())
        self._fresh_lines = np.zeros((3, NUM_LINES), dtype=np.int16)
        self._fresh_lines[:teams] = corners
        self._rewards = np.zeros((n, seats), dtype=np.float32)
        self._dealt = np.zeros(n, dtype=bool)

    # ------------------------------------------------------------------------------------------
    # Dealing, saving, loading
    def reset_tables(self, rows: Any, seeds: Any) -> None:
        """Deal a fresh game at each table of ``rows``, the one at ``rows[j]`` from ``seeds[j]`` (an
        integer >= 0, or None for a seed from the operating system), exactly as the reference engine
        deals ``Game.new_initial_state(seed)``."""
        rows = [self._row(r) for r in np.atleast_1d(np.asarray(rows)).tolist()]
        seeds = list(seeds)
        if len(seeds) != len(rows):
            raise ValueError(f"reset_tables: {len(rows)} rows but {len(seeds)} seeds")
        if len(set(rows)) != len(rows):
            raise ValueError(f"reset_tables: a table is listed twice in {rows}")
        players, size = self.num_seats, self.game.hand_size
        dealt = _DECK - size * players
        decks = np.empty((len(rows), _DECK), dtype=np.int8)
        for j, seed in enumerate(seeds):  # the reference deal: shuffle, then pop round the table
            rng = make_rng(seed)
            deck = list(_FRESH_DECK)
            rng.shuffle(deck)
            decks[j] = deck
            self.rngs[rows[j]] = rng
        at = np.array(rows, dtype=np.intp)
        self.deck[at] = decks
        self.deck_len[at] = dealt
        popped = decks[:, dealt:][:, ::-1]  # the top card (last) goes to seat 0, the next to seat 1, ...
        hands = np.zeros((len(rows), players, 53), dtype=np.int8)
        seat = np.arange(size * players) % players
        np.add.at(hands, (np.arange(len(rows))[:, None], seat[None, :], popped.astype(np.intp)), 1)
        self.hands[at] = hands
        self.placeable[at] = hands[:, :, self.square_card_all] > 0
        self.board[at] = self._fresh_board
        self.covered[at] = False
        self.lines[at] = self._fresh_lines
        self.discard_len[at] = 0
        self.discard_counts[at] = 0
        for i in rows:
            self.sequences[i] = [[] for _ in range(self.num_teams)]
        self.seq_count[at] = 0
        self.member[at] = 0
        self.locked[at] = False
        for name in ("player", "passes", "placed", "removed", "steps"):
            getattr(self, name)[at] = 0
        self.dead_used[at] = False
        self.drawn[at] = False
        self.winner[at] = -1
        self._dealt[at] = True
        self._refresh(at)

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
        self._refresh(np.array([i], dtype=np.intp))

    def _row(self, i: Any) -> int:
        if isinstance(i, (bool, np.bool_)) or not isinstance(i, (int, np.integer)) or not 0 <= i < self.num_envs:
            raise IndexError(f"table index {i!r} is not an integer in [0, {self.num_envs})")
        return int(i)

    def _set_table(self, i: int, rng: Any, deck: list[int], discards: list[int], sequences: list,
                   *, board: list[int] | None, player: int, dead_used: bool, passes: int, winner: int,
                   drawn: bool, placed: int, removed: int, steps: int) -> None:
        self.rngs[i] = rng
        self.hands[i, :, _SINK] = 0
        self.placeable[i] = self.hands[i][:, self.square_card_all] > 0
        if board is None:
            self.board[i, :NUM_SQUARES] = EMPTY
            self.board[i, list(CORNER_SQUARES)] = CORNER
        else:
            self.board[i, :NUM_SQUARES] = board
        self.board[i, _OFF] = EMPTY
        cells = self.board[i]
        self.covered[i] = (cells[self.card_square[:, 0]] != EMPTY) & (cells[self.card_square[:, 1]] != EMPTY)
        cells = self.board[i, :NUM_SQUARES]
        for t in range(self.num_teams):  # a line's bits are distinct, so their sum is their union
            on = ((cells == t) | (cells == CORNER))[:, None] * LINE_BIT
            self.lines[i, t] = np.bincount(LINE_OF.ravel(), weights=on.ravel(), minlength=NUM_LINES)
        self.deck[i, :len(deck)] = deck
        self.deck_len[i] = len(deck)
        self.discards[i, :len(discards)] = discards
        self.discard_len[i] = len(discards)
        self.discard_counts[i] = np.bincount(np.asarray(discards, dtype=np.intp), minlength=53)
        self.sequences[i] = [[list(s) for s in team] for team in sequences]
        self.seq_count[i] = 0
        self.seq_count[i, :self.num_teams] = [len(team) for team in sequences]
        self.locked[i] = False
        self.member[i] = 0
        for t, team in enumerate(sequences):
            for j, s in enumerate(team):
                self.locked[i, s] = True
                self.member[i, t, s] |= 1 << j
        self.locked[i, list(CORNER_SQUARES)] = False
        self.player[i] = player
        self.dead_used[i] = dead_used
        self.passes[i] = passes
        self.winner[i] = winner
        self.drawn[i] = drawn
        self.placed[i] = placed
        self.removed[i] = removed
        self.steps[i] = steps
        self._dealt[i] = True

    def _reference_state(self, i: int, rng: Any) -> SequenceState:
        """Table ``i`` as a reference :class:`SequenceState` (sharing ``rng``; nothing validated)."""
        hands = self.hands[i, :, :52]
        values = {
            "rng": rng,
            "board": self.board[i, :NUM_SQUARES].tolist(),
            "hands": [np.repeat(np.arange(52), hands[s]).tolist() for s in range(self.num_seats)],
            "deck": self.deck[i, :self.deck_len[i]].tolist(),
            "discards": self.discards[i, :self.discard_len[i]].tolist(),
            "sequences": [[list(s) for s in team] for team in self.sequences[i]],
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
    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Each table plays its action for its seat to act. Returns ``rewards`` float32 (N, seats),
        ``terminations`` and ``truncations`` bool (N,); the buffers then hold the new positions.
        Any illegal action (or a finished table given one) raises IllegalActionError naming the table."""
        a = np.asarray(actions)
        n = self.num_envs
        if a.shape != (n,) or a.dtype.kind not in "iu":
            raise IllegalActionError(
                f"sequence_v0: step needs {n} integer actions (shape ({n},)), got shape {a.shape} of dtype {a.dtype}")
        if not self._dealt.all():
            raise RuntimeError(f"sequence_v0: tables {np.flatnonzero(~self._dealt)[:10].tolist()} were never dealt; "
                               f"call reset_tables first")
        if ((a < 0) | (a >= NUM_ACTIONS)).any():
            bad = int(np.flatnonzero((a < 0) | (a >= NUM_ACTIONS))[0])
            raise IllegalActionError(f"sequence_v0: table {bad}: action {int(a[bad])} is outside [0, {NUM_ACTIONS})")
        a = a.astype(np.intp)
        rows = self.rows
        legal = self.action_mask[rows, a]
        if not legal.all():
            bad = int(np.flatnonzero(legal == 0)[0])
            raise self._illegal(bad, int(a[bad]))

        player = self.player
        team = self.team8[player]
        is_pass = a == PASS
        is_dead = (a >= DEAD) & ~is_pass
        is_remove = (a >= REMOVE) & (a < DEAD)
        puts = a < REMOVE  # place or wild: a chip goes on the board
        moves = ~is_pass  # every action but a pass plays a card and draws one
        sq = a % NUM_SQUARES

        # Play the card: off the hand, onto the discard pile.
        card = self.first_card[a]
        hands = self.hands
        card = np.where(hands[rows, player, card] > 0, card, self.second_card[a])
        hands[rows, player, card] -= moves
        self._track(player, card)
        self.discards[rows, self.discard_len] = card
        self.discard_len += moves
        self.discard_counts[rows, card] += moves
        self.observation[rows, OBS_DISCARDS + card] += 0.5 * moves  # the sink lands on a scalar, rewritten below

        # The board.
        board = self.board
        old = board[rows, sq]
        board[rows, sq] = np.where(puts, team, np.where(is_remove, EMPTY, old))
        printed = self.square_card_all[sq]
        twins = self.card_square[printed]
        self.covered[rows, printed] = (board[rows, twins[:, 0]] != EMPTY) & (board[rows, twins[:, 1]] != EMPTY)
        self.placed += puts
        self.removed += is_remove
        lines, line, bit = self.lines, LINE_OF[sq], LINE_BIT[sq]
        column = rows[:, None]
        lines[column, np.where(is_remove, old, 0)[:, None], line] &= ~(bit * is_remove[:, None])
        lines[column, team[:, None], line] |= bit * puts[:, None]

        # Runs of five through the new chip, from the bits of its four lines.
        bits = lines[column, team[:, None], line]
        full = ((bits[:, :, None] >> WINDOW_SHIFT[sq]) & 31 == 31) & WINDOW_VALID[sq]
        hit = np.flatnonzero(full.any(axis=(1, 2)) & puts)
        if len(hit):
            self._complete(hit, WINDOWS_THROUGH[sq[hit]], full[hit], team[hit].astype(np.intp))

        # Draw (a reshuffle first where the pile ran out).
        empty_deck = moves & (self.deck_len == 0)
        for i in np.flatnonzero(empty_deck & (self.discard_len > 0)).tolist():
            self._reshuffle(i)
        draws = moves & (self.deck_len > 0)
        top = np.maximum(self.deck_len - 1, 0)
        drawn_card = np.where(draws, self.deck[rows, top], _SINK)
        hands[rows, player, drawn_card] += draws
        self._track(player, drawn_card)
        self.deck_len -= draws

        # Passes and the blocked table.
        self.passes = np.where(is_pass, self.passes + 1, np.where(is_dead, self.passes, 0))
        passed = np.flatnonzero(is_pass)
        if len(passed):
            for i in passed[self._nobody_can_play(passed)].tolist():
                if self._reference_state(i, self.rngs[i]).table_blocked():
                    self.drawn[i] = True

        # The turn.
        ends_turn = ~is_dead & (is_pass | (self.winner < 0))
        self.dead_used = ~ends_turn & (self.dead_used | is_dead)
        self.player = np.where(ends_turn, (player + 1) % self.num_seats, player)
        self.steps += 1

        won = self.winner >= 0
        terminations = won | self.drawn
        truncations = ~terminations & (self.steps >= self.max_steps)
        rewards = self._rewards
        rewards[:] = 0.0
        if won.any():
            rewards[won] = np.where(self.team_of_seat[None, :] == self.winner[won, None], 1.0, -1.0)
        self._refresh(None)
        return rewards.copy(), terminations, truncations

    def _track(self, player: np.ndarray, card: np.ndarray) -> None:
        """Bring ``placeable`` in step after each table's ``card`` changed in ``player``'s hand."""
        held = self.hands[self.rows, player, card] > 0
        squares = self.card_square[card]
        self.placeable[self.rows, player, squares[:, 0]] = held
        self.placeable[self.rows, player, squares[:, 1]] = held

    def _illegal(self, i: int, action: int) -> IllegalActionError:
        if self.winner[i] >= 0 or self.drawn[i]:
            return IllegalActionError(f"sequence_v0: table {i}: action {action} was given but the game is over")
        legal = np.flatnonzero(self.action_mask[i])
        shown = ", ".join(f"{x} ({self.game.action_to_string(int(x))})" for x in legal[:12])
        return IllegalActionError(
            f"sequence_v0: table {i}: action {action} ({self.game.action_to_string(action)}) is illegal for "
            f"player {int(self.player[i])}; legal actions: {shown}{' ...' if len(legal) > 12 else ''}")

    def _complete(self, rows: np.ndarray, through: np.ndarray, full: np.ndarray, team: np.ndarray) -> None:
        """Tables ``rows`` have a run of five of ``team`` through the new chip (``full``: which windows of
        ``through``, per direction and slot). The reference rule (``SequenceState.new_sequences``), in
        arrays: a window counts if it shares at most one square with each of the team's sequences; per
        direction the first such window counts, and also the one four squares on if there is one (nine
        or more in a row)."""
        member = self.member[rows[:, None, None, None], team[:, None, None, None], through]
        shared = np.zeros(full.shape, dtype=bool)
        for x in range(WINDOW):
            for y in range(x + 1, WINDOW):
                shared |= (member[..., x] & member[..., y]) != 0
        counts = full & ~shared
        has = counts.any(axis=2)
        if not has.any():
            return
        first = counts.argmax(axis=2)
        pair = has & (first == 0) & counts[:, :, WINDOW - 1]
        for j, d in zip(*np.nonzero(has)):
            i, t = int(rows[j]), int(team[j])
            for slot in (first[j, d], WINDOW - 1) if pair[j, d] else (first[j, d],):
                window = through[j, d, slot]
                self.member[i, t, window] |= 1 << int(self.seq_count[i, t])
                self.seq_count[i, t] += 1
                self.sequences[i][t].append(window.tolist())
                self.locked[i, window] = True
        self.locked[np.ix_(rows, CORNER_SQUARES)] = False
        won = self.seq_count[rows, team] >= self.target
        self.winner[rows[won]] = team[won]

    def _nobody_can_play(self, rows: np.ndarray) -> np.ndarray:
        """Which of ``rows`` look blocked: ``SequenceState.table_blocked`` in arrays (no seat holds a
        card playable now, and no seat that can still draw, holding a dead card with exchanges on, could
        draw one from the pile or the discards: the cards in no hand). Only those go to the reference."""
        board = self.board[rows, :NUM_SQUARES]
        empty = board == EMPTY
        live = empty[:, self.twin_a] | empty[:, self.twin_b]
        hands = self.hands[rows, :, :52]
        chips = self.placed[rows] - self.removed[rows]
        unlocked = np.stack([((board == t) & ~self.locked[rows]).any(axis=1) for t in range(self.num_teams)], axis=1)
        targets = (unlocked.sum(axis=1, keepdims=True) - unlocked > 0)[:, self.team_of_seat]  # (rows, seat)
        wild_ok = (chips < NUM_SQUARES - len(CORNER_SQUARES))[:, None]

        def playable(cards: np.ndarray) -> np.ndarray:  # (rows, seat, 52) held -> (rows, seat) any playable
            natural = (cards[:, :, self.non_jack] & live[:, None, :]).any(axis=2)
            return natural | ((cards[:, :, _JD] | cards[:, :, _JC]) & wild_ok) | \
                ((cards[:, :, _JH] | cards[:, :, _JS]) & targets)

        held = hands > 0
        can_play = playable(held)
        if self.dead_cards:
            pool = np.broadcast_to((2 - hands.sum(axis=1, dtype=np.int64) > 0)[:, None, :], held.shape)
            can_draw = held[:, :, self.non_jack].any(axis=2)
            can_play |= can_draw & playable(pool)
        return ~can_play.any(axis=1)

    def _reshuffle(self, i: int) -> None:
        """The discards become the draw pile, shuffled by the table's generator as the reference does."""
        pile = self.discards[i, :self.discard_len[i]].tolist()
        self.rngs[i].shuffle(pile)
        self.deck[i, :len(pile)] = pile
        self.deck_len[i] = len(pile)
        self.discard_len[i] = 0
        self.discard_counts[i] = 0
        self.observation[i, OBS_DISCARDS:OBS_SCALARS] = 0.0

    # ------------------------------------------------------------------------------------------
    # Masks and observations
    def _refresh(self, rows: np.ndarray | None) -> None:
        """Write the mask, seat and observation of ``rows`` (None: every table) into the buffers."""
        whole = rows is None
        if whole:
            rows = self.rows
            board = self.board[:, :NUM_SQUARES]
            locked = self.locked
            mask, obs = self.action_mask, self.observation
        else:
            board = self.board[rows, :NUM_SQUARES]
            locked = self.locked[rows]
            mask = np.empty((len(rows), NUM_ACTIONS), dtype=np.int8)
            obs = np.empty((len(rows), OBS_SIZE), dtype=np.float32)
            obs[:, 300:400] = self.observation[0, 300:400]
        player = self.player[rows]
        team = self.team8[player]
        hand = self.hands[rows, player]
        held = hand > 0
        empty = board == EMPTY
        legal = mask.view(np.bool_)

        np.logical_and(self.placeable[rows, player, :NUM_SQUARES], empty, out=legal[:, :WILD])
        chips = self.placed[rows] - self.removed[rows]
        wild = (held[:, _JD] | held[:, _JC]) & (chips < NUM_SQUARES - len(CORNER_SQUARES))
        np.logical_and(empty, wild[:, None], out=legal[:, WILD:REMOVE])
        targets = legal[:, REMOVE:DEAD]
        np.less(board.view(np.uint8), 3, out=targets)  # a chip (empty is 255 as unsigned, a corner 3)
        targets &= board != team[:, None]
        targets &= ~locked
        targets &= (held[:, _JH] | held[:, _JS])[:, None]
        dead = legal[:, DEAD:PASS]
        if self.dead_cards:
            dead[:] = (held & self.covered[rows])[:, self.non_jack]
            dead &= ~self.dead_used[rows, None]
        else:
            dead[:] = False
        np.logical_not(legal[:, :PASS].any(axis=1), out=legal[:, PASS])
        over = (self.winner[rows] >= 0) | self.drawn[rows] | (self.steps[rows] >= self.max_steps)
        if over.any():
            mask[over] = 0

        obs[:, 0:100] = board == team[:, None]
        obs[:, 100:200] = board == self.next8[player][:, None]
        if self.num_teams == 3:
            obs[:, 200:300] = board == self.after8[player][:, None]
        else:
            obs[:, 200:300] = 0.0
        obs[:, 400:500] = locked
        obs[:, 500:600] = empty
        part = obs[:, OBS_HAND:OBS_DISCARDS]
        part[:] = hand[:, :52]
        part *= 0.5
        if not whole:  # a step updates the discard counts where they change
            part = obs[:, OBS_DISCARDS:OBS_SCALARS]
            part[:] = self.discard_counts[rows, :52]
            part *= 0.5
        counts = self.seq_count[rows]
        target = np.float32(self.target)
        at = np.arange(len(rows))
        scalars = obs[:, OBS_SCALARS:]
        scalars[:, 0] = np.minimum(1.0, counts[at, team] / target)
        scalars[:, 1] = np.minimum(1.0, counts[at, self.next8[player]] / target)
        scalars[:, 2] = np.minimum(1.0, counts[at, self.after8[player]] / target) if self.num_teams == 3 else 0.0
        scalars[:, 3] = self.dead_used[rows]
        scalars[:, 4] = self.deck_len[rows] / np.float32(_DECK)
        scalars[:, 5] = np.minimum(1.0, self.passes[rows] / np.float32(self.num_seats))
        if not whole:
            self.action_mask[rows] = mask
            self.observation[rows] = obs
        self.current_seat[rows] = player


__all__ = ["SequenceNumpyBackend", "WINDOWS_THROUGH"]
