"""Rule-based Sequence players (``sequence_v0/heuristic-v1`` and a noisy, weaker variant).

The heuristic looks at the board only through the seat's ``view`` (board, locked chips, completed
sequences, own hand) and the legal-action mask; it never touches hidden cards or the deck.

How a move is chosen
--------------------
The board has 192 *windows*: runs of five squares in a row, column or diagonal. For a team, a
window is *live* when no other team has a chip in it and it shares at most one square with each
sequence the team has already completed (the rule that lets two sequences share one chip). A live
window's *count* is the number of the team's chips in it plus free corners.

* **Placing** a chip on an empty square (natural card or two-eyed jack) is worth

  - for every own live window through the square: the gain of moving it from ``c`` to ``c + 1``
    chips (``Weights.own_gain``), or a completed sequence when ``c == 4`` (``complete``; ``win``
    when that sequence reaches the target);
  - for every live window of an opposing team through the square: what it loses by being blocked
    (``block``; a window holding four is an immediate threat worth ``block_four``).

* **Removing** an opposing chip (one-eyed jack) is worth what its owner's live windows through it
  lose (``remove``; breaking a four is worth ``block_four``) plus the own windows it reopens
  (``reopen``).
* Jacks are scarce: a two-eyed jack costs ``wild_cost`` and a one-eyed jack ``remove_cost``, so
  they are spent only when the move beats the best natural placement by that much: a completed
  sequence, a blocked or broken four, or two fresh fours of its own.
* A dead card is always exchanged first when the rules allow it (the turn goes on afterwards).

The hand is never read: the legal-action mask already says which squares the seat's cards reach.
Ties are broken by the agent's seeded RNG, so a given seed always plays the same way. A decision
takes about 0.1–0.3 ms (numpy over the 192 windows).

``sequence_v0/heuristic-noisy-v1`` plays a uniformly random legal move one time in five: a weaker
opponent between random and the heuristic, useful in leagues.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from agents.base import Agent
from agents.registry import register
from envs.sequence.board import SIZE
from envs.sequence.game import SequenceGame as Game
from envs.sequence.rules import CORNER, DEAD, NUM_ACTIONS, NUM_SQUARES, PASS, PLACE, WILD
from envs.sequence.rules import REMOVE as REMOVE_BASE


@dataclass(frozen=True)
class Weights:
    """The heuristic's scoring constants (see the module docstring)."""

    #: Value of one more own chip in a live window holding c chips (c = 0..3).
    own_gain: tuple[float, ...] = (1.0, 3.0, 9.0, 27.0, 0.0)
    #: What an opposing live window holding c chips (c = 0..3) loses when blocked.
    block: tuple[float, ...] = (0.0, 0.8, 3.0, 10.0, 0.0)
    #: What an opposing live window holding c chips (the removed one included) loses on removal.
    remove: tuple[float, ...] = (0.0, 0.3, 1.5, 6.0, 0.0)
    #: Reopening an own window whose only foreign chip is removed, by own count c.
    reopen: tuple[float, ...] = (0.2, 0.5, 2.0, 6.0, 20.0)
    complete: float = 1000.0
    win: float = 1.0e6
    block_four: float = 300.0
    wild_cost: float = 45.0
    remove_cost: float = 40.0


DEFAULT = Weights()


def _windows() -> tuple[np.ndarray, np.ndarray]:
    cells, dirs = [], []
    for d, (dr, dc) in enumerate(((0, 1), (1, 0), (1, 1), (1, -1))):
        for r in range(SIZE):
            for c in range(SIZE):
                end_r, end_c = r + 4 * dr, c + 4 * dc
                if 0 <= end_r < SIZE and 0 <= end_c < SIZE:
                    cells.append([(r + t * dr) * SIZE + c + t * dc for t in range(5)])
                    dirs.append(d)
    return np.array(cells, dtype=np.int64), np.array(dirs, dtype=np.int64)


WINDOWS, WINDOW_DIR = _windows()  # (192, 5) squares, (192,) direction 0..3
NUM_WINDOWS = len(WINDOWS)
INCIDENCE = np.zeros((NUM_SQUARES, NUM_WINDOWS), dtype=np.float64)  # square x window
INCIDENCE[WINDOWS, np.arange(NUM_WINDOWS)[:, None]] = 1.0
# Square x direction x window: completions are counted once per direction (the engine takes one
# window per direction, two only for a nine-in-a-row, which this undercounts harmlessly).
DIR_INCIDENCE = np.stack([INCIDENCE * (WINDOW_DIR == d) for d in range(4)], axis=1)


class TeamLines:
    """One team's view of the 192 windows: chips (+ corners), foreign chips, and which are live."""

    __slots__ = ("counts", "foreign", "share_ok", "live")

    def __init__(self, board: np.ndarray, team: int, sequences: list[list[int]]) -> None:
        on_board = board[WINDOWS]
        self.counts = ((on_board == team) | (on_board == CORNER)).sum(axis=1)
        self.foreign = ((on_board >= 0) & (on_board < 3) & (on_board != team)).sum(axis=1)
        # A new sequence may share at most one square with each of the team's sequences.
        self.share_ok = np.ones(NUM_WINDOWS, dtype=bool)
        for seq in sequences:
            in_seq = np.zeros(NUM_SQUARES, dtype=bool)
            in_seq[seq] = True
            self.share_ok &= in_seq[WINDOWS].sum(axis=1) <= 1
        self.live = (self.foreign == 0) & self.share_ok & (self.counts < 5)


def evaluate_moves(view: dict[str, Any], target: int, weights: Weights = DEFAULT) -> dict[str, Any]:
    """Per-square values of placing and of removing, from the viewing seat's side.

    Returns ``place`` (value of an own chip on each square, legality ignored), ``complete``
    (sequences a chip there completes), ``threat`` (opposing fours it blocks), ``remove`` (value of
    taking the chip off each square).
    """
    w = weights
    board = np.asarray(view["board"], dtype=np.int8)
    team = view["team"]
    num_teams = view["num_teams"]
    sequences = view["sequences"]
    own_gain, block, remove_loss, reopen_gain = (np.asarray(x) for x in (w.own_gain, w.block, w.remove, w.reopen))
    mine = TeamLines(board, team, sequences[team])
    own_live = mine.live.astype(np.float64)
    counts = mine.counts.clip(0, 4)
    place = INCIDENCE @ (own_gain[counts] * own_live)
    fours = own_live * (mine.counts == 4)
    complete = (np.einsum("sdw,w->sd", DIR_INCIDENCE, fours) > 0).sum(axis=1).astype(np.float64)
    threat = np.zeros(NUM_SQUARES)
    remove = np.zeros(NUM_SQUARES)
    for other in range(num_teams):
        if other == team:
            continue
        theirs = TeamLines(board, other, sequences[other])
        their_live = theirs.live.astype(np.float64)
        their_counts = theirs.counts.clip(0, 4)
        their_fours = their_live * (theirs.counts == 4)
        place += INCIDENCE @ (block[their_counts] * their_live)
        threat += INCIDENCE @ their_fours
        loss = INCIDENCE @ (remove_loss[their_counts] * their_live + w.block_four * their_fours)
        remove += loss * (board == other)
    # Own windows blocked only by the chip that would be removed come back to life.
    reopen = (mine.foreign == 1) & mine.share_ok
    remove += (INCIDENCE @ (reopen_gain[counts] * reopen)) * ((board >= 0) & (board < 3))
    place += w.block_four * threat
    winning = len(sequences[team]) + complete >= target
    place += np.where(winning, w.win, w.complete) * (complete > 0) + w.complete * np.maximum(complete - 1, 0)
    return {"place": place, "complete": complete, "threat": threat, "remove": remove}


class SequenceHeuristic(Agent):
    """Window-counting Sequence player; see the module docstring. ``epsilon`` adds random moves."""

    epsilon = 0.0
    weights = DEFAULT

    def reset(self, seat: int, game: Game) -> None:
        super().reset(seat, game)
        self.target = game.sequences_to_win

    def act(self, observation: dict[str, np.ndarray], view: dict[str, Any]) -> int:
        mask = np.asarray(observation["action_mask"])
        legal = np.flatnonzero(mask)
        if len(legal) == 0:
            raise ValueError(f"{self.agent_id}: asked to act with an empty action mask")
        if self.epsilon and self.rng.random() < self.epsilon:
            return int(legal[self.rng.randrange(len(legal))])
        dead = legal[(legal >= DEAD) & (legal < PASS)]
        if len(dead):
            return int(dead[0])  # always swap a dead card first: the turn goes on
        if len(legal) == 1:
            return int(legal[0])
        w = self.weights
        values = evaluate_moves(view, self.target, w)
        jitter = np.array([self.rng.random() * 1e-3 for _ in range(NUM_SQUARES)])
        place = values["place"] + jitter
        scores = np.full(NUM_ACTIONS, -np.inf)
        scores[PLACE:WILD] = np.where(mask[PLACE:WILD] > 0, place, -np.inf)
        scores[WILD:REMOVE_BASE] = np.where(mask[WILD:REMOVE_BASE] > 0, place - w.wild_cost, -np.inf)
        scores[REMOVE_BASE:DEAD] = np.where(
            mask[REMOVE_BASE:DEAD] > 0, values["remove"] + jitter - w.remove_cost, -np.inf
        )
        if mask[PASS]:
            scores[PASS] = -1e9
        return int(np.argmax(scores))


class NoisySequenceHeuristic(SequenceHeuristic):
    """The heuristic, but one move in five is uniformly random among the legal ones."""

    epsilon = 0.2


register(
    "sequence_v0/heuristic-v1",
    SequenceHeuristic,
    "window-counting placements, opponent blocking, sparing jacks, dead cards swapped first",
)
register(
    "sequence_v0/heuristic-noisy-v1",
    NoisySequenceHeuristic,
    "heuristic-v1 with 20% uniformly random legal moves (a weaker league opponent)",
)
