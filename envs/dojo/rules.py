"""Il Labirinto del Dojo: the rules as a pure state machine (no environment, no rendering).

A :class:`DojoState` advances by actions of whichever seat must decide (see ``envs/dojo_v0.py``
for the action table). Everything that needs no decision (dice, card draws, square effects,
track changes) happens inside :meth:`DojoState._apply`, which runs the flow until the next
decision. Two kinds of out-of-turn interruption queue up in ``pending`` and are answered before
the main flow resumes (``resume`` names the step to continue with):

* ``["place", p]``: seat p was sent to Start and picks a square of its Safe Room;
* ``["settle", p, visited]``: seat p's pawn was moved without walking onto a square holding
  another pawn and takes the Meditazione extra step (no Kumite, no square effect).

Imports: standard library, numpy and ``envs.core`` only (plus the sibling rules modules).
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np

from envs.core import TERMINAL, State
from envs.core.fields import MAX_COUNT, BitSet, Bool, Choice, Field, Int, List, Record, Rng, Tagged, Tuple
from envs.dojo.board import FATICA, NEBBIA, PASSO_FALSO, SFIDA, TUNNEL, ALLENAMENTO, Board
from envs.dojo.cards import (
    CARD_COUNTS, COLPO, DECK_SIZE, INTENSIVO, IRIMI, IS_TECNICA, KAESHI, KIAI, MEDITAZIONE,
    NUM_KINDS, PASSO_FALSO_CARD, PESO, SENSEI, SFIDA_CARD, TECNICA, TSUGI_ASHI, TUNNEL_SEGRETO, UKE,
)

TRACK_MAX = 17
BROWN = 15
BLACK_BELT = 6

# ---- action ids -------------------------------------------------------------------------------
A_STEP = 0  # 0..3: step N, E, S, W (also into the Dojo through an entrance)
A_ROOM = 4  # 4..12: square 0..8 of one's Safe Room (reading order)
A_PASS = 13  # decline: play no Tecnica / do not take the Tunnel
A_PLAY = 14  # play the held Tecnica in a Kumite window
A_TUNNEL = 15  # take the Tunnel
A_KEEP = 16  # 16..18: keep Kiai / Uke / Kaeshi (discard the other face down)
A_TARGET = 19  # 19..25: choose the opponent 1..7 seats after oneself
A_SEGRETO = 26  # 26..: Tunnel Segreto to tunnel i (reading order)
NUM_FIXED_ACTIONS = 26

#: Corner Safe Room of each seat, by player count (corner-mates never consecutive).
SEAT_CORNERS = {
    2: (0, 2), 3: (0, 1, 2), 4: (0, 1, 2, 3), 5: (0, 1, 0, 2, 3), 6: (0, 1, 2, 3, 0, 1),
    7: (0, 1, 2, 3, 0, 1, 2), 8: (0, 1, 2, 3, 0, 1, 2, 3),
}

# main-flow phases where the actor decides (pending interruptions take precedence)
PHASES = ("setup", "move", "tecnica", "keep", "tunnel", "target", "segreto", "place", "settle", "over")
PHASE_INDEX = {p: i for i, p in enumerate(PHASES)}
KUMITE_KINDS = ("move", "tunnel", "sfida", "exam")
TARGET_PURPOSES = ("sfida", "irimi", "exam")
#: Steps that continue the main flow once the pending interruptions are answered.
RESUME_STEPS = ("", "_end_turn", "_after_fight_on_square", "_after_teleport_fight")
MAX_DICE_SCRIPT = 64
MAX_ROLL = 12


def belt_of(track: int) -> int:
    return track // 3


def dojo_reach(track: int, fatica_on_stop_only: bool = False) -> int:
    """For how long the Dojo stays open to a walk that starts on ``track`` (the walk oracle's
    ``dojo``): 0 when closed (below Brown), else the number of Fatica squares after which it
    closes (the one whose stripe takes the pawn below 15 included). With ``fatica_on_stop_only``
    walking costs nothing, so it stays open for the whole walk."""
    if track < BROWN:
        return 0
    if fatica_on_stop_only:
        return TRACK_MAX + 1  # more than any walk's length
    return track - BROWN + 1


class WalkOracle:
    """Answers "is there a non-revisiting walk of exactly k steps from s?" with a shared cache.

    A walk that reaches a square next to a Dojo entrance with steps left counts as complete when
    the Dojo is open there (entering needs no exact count). This is the hot spot of the move mask.

    ``dojo`` (see :meth:`DojoState.dojo_reach`) says for how long the Dojo stays open during the
    walk: 0 = closed; d > 0 = open until the walk has stepped onto d Fatica squares (each costs a
    stripe, and a Brown pawn falling below 15 finds the Dojo closed for the rest of the move).
    ``True``/``False`` read as 1/0: open until the first Fatica, or closed.

    The answer only depends on the visited squares that a walk of k steps from s could reach, so
    the cache key keeps only those (``visited`` masked by the ball of radius k around s): the same
    neighbourhood seen in another turn, with other squares visited far away, is a cache hit.
    """

    def __init__(self, board: Board, limit: int = 100_000):
        self.board = board
        self.neighbours = board.neighbours
        self.bit = board.bit
        self.entry = board.entry
        #: squares whose step costs a stripe (Fatica outside the Safe Rooms)
        self.fatica = [k == FATICA and r < 0 for k, r in zip(board.kind, board.room)]
        self.cache: dict[tuple, bool] = {}
        #: step_dirs answers, keyed like ``cache`` (see ``step_dirs``)
        self.dirs_cache: dict[tuple, tuple[int, ...] | None] = {}
        self.limit = limit
        #: balls[s][k]: bit set of the squares at most k steps from s (radius 0 = s itself), up
        #: to the radius where it stops growing; built on first use. Depends on the board only.
        self.balls: list[list[int] | None] = [None] * len(board.neighbours)

    def _balls_of(self, s: int) -> list[int]:
        bit, neighbours = self.bit, self.neighbours
        reached = bit[s]
        frontier = [s]
        balls = [reached]
        while frontier:
            nxt = []
            for u in frontier:
                for t in neighbours[u]:
                    if not reached & bit[t]:
                        reached |= bit[t]
                        nxt.append(t)
            frontier = nxt
            if nxt:
                balls.append(reached)
        self.balls[s] = balls
        return balls

    def within(self, s: int, k: int, visited: int) -> int:
        """The squares of ``visited`` at most ``k`` steps from s: the only ones a walk of ``k`` steps
        from s can meet, so answers about such walks depend on these alone (cache keys use them)."""
        balls = self.balls[s] or self._balls_of(s)
        return visited & (balls[k] if k < len(balls) else balls[-1])

    def after(self, t: int, dojo: int) -> int:
        """``dojo`` once the walk has stepped onto square t."""
        return dojo - 1 if dojo and self.fatica[t] else dojo

    def walk(self, s: int, k: int, visited: int, dojo: int) -> bool:
        if k == 0 or (dojo and self.entry[s] >= 0):
            return True
        dojo = min(int(dojo), k)  # more Fatica than steps left: the same as "open all walk"
        balls = self.balls[s] or self._balls_of(s)  # ``within``, inlined: this is the hottest call
        visited &= balls[k] if k < len(balls) else balls[-1]  # squares out of reach do not matter
        key = (s, k, visited, dojo)
        hit = self.cache.get(key)
        if hit is not None:
            return hit
        ok = False
        bit, fatica = self.bit, self.fatica
        for t in self.neighbours[s]:
            b = bit[t]
            if not visited & b and self.walk(t, k - 1, visited | b, dojo - 1 if dojo and fatica[t] else dojo):
                ok = True
                break
        if len(self.cache) >= self.limit:
            self.cache.clear()
        self.cache[key] = ok
        return ok

    def longest(self, s: int, k: int, visited: int, dojo: int) -> int:
        while k > 0 and not self.walk(s, k, visited, dojo):
            k -= 1
        return k

    def step_dirs(self, s: int, k: int, visited: int, dojo: int) -> tuple[int, ...] | None:
        """The directions (0-3, in order) of the steps from s that begin a walk of the longest
        length possible with up to k steps (the move mask's steps), or None when no step at
        all can be taken. Like ``walk`` it depends only on the visited squares within k steps
        of s, and is cached by them."""
        dojo = min(int(dojo), k)
        key = (s, k, self.within(s, k, visited), dojo)
        hit = self.dirs_cache.get(key, False)
        if hit is not False:
            return hit
        left = self.longest(s, k, visited, dojo)
        if left == 0:
            dirs = None
        else:
            left -= 1
            bit, walk = self.bit, self.walk
            dirs = tuple(d for d, t in enumerate(self.board.step[s])
                         if t >= 0 and not visited & bit[t] and walk(t, left, visited | bit[t], self.after(t, dojo)))
        if len(self.dirs_cache) >= self.limit:
            self.dirs_cache.clear()
        self.dirs_cache[key] = dirs
        return dirs


class DojoState(State):
    """One position of Il Labirinto del Dojo."""

    __slots__ = (
        "rng", "n", "corners", "pos", "track", "hands", "deck", "discard", "discard_owner",
        "med_skip", "med_guard", "first_player", "turn_player", "turn_index", "main_phase", "actor",
        "setup_count", "roll", "mv_start", "mv_visited", "mv_squares", "mv_steps", "mv_prev", "mv_extra", "mv_queue",
        "k_att", "k_def", "k_kind", "k_dice", "k_played", "k_stage", "k_from", "k_wins", "k_uke",
        "exam_from", "purpose", "pending", "resume", "winner", "last_card", "k_last", "stats",
        "dice_script", "obs_cache",
    )

    # ------------------------------------------------------------------------------------------
    # construction
    def __init__(self, game, rng: random.Random | None = None) -> None:
        super().__init__(game)
        self.rng = rng
        self.n = game.num_players
        self.corners = SEAT_CORNERS[self.n]
        #: Scratch space of the observation encoder (derived data only; never saved or compared).
        self.obs_cache: Any = None

    @classmethod
    def deal(cls, game, rng: random.Random) -> DojoState:
        """A fresh game: shuffled deck, random first player, everyone still to place a pawn."""
        state = cls(game)
        state._setup(rng)
        return state

    def _setup(self, rng: random.Random) -> None:
        cfg = self.game.config
        n = self.n
        self.rng = rng
        start = 3 if (cfg["short_game"] or n >= 6) else 0
        self.pos = [-1] * n
        self.track = [start] * n
        self.hands = [[] for _ in range(n)]
        self.deck = [k for k, c in enumerate(CARD_COUNTS) for _ in range(c)]
        rng.shuffle(self.deck)
        self.discard = []
        self.discard_owner = []
        self.med_skip = [False] * n
        self.med_guard = [False] * n
        self.first_player = rng.randrange(n)
        if cfg["first_player_extra_stripe"]:
            self.track[self.first_player] += 1
        self.turn_player = self.first_player
        self.turn_index = -1
        self.main_phase = "setup"
        self.actor = self.first_player
        self.setup_count = 0
        self.roll = 0
        self.mv_start = -1
        self.mv_visited = 0
        self.mv_squares = []
        self.mv_steps = 0
        self.mv_prev = -1
        self.mv_extra = False
        self.mv_queue = []
        self._clear_kumite()
        self.exam_from = -1
        self.purpose = ""
        self.pending = []
        self.resume = ""
        self.winner = -1
        self.last_card = -1
        #: the Kumite bouts settled by the latest action, [attacker, defender, their dice, their totals]:
        #: the dice are rolled openly at the table, but a bout settled inside one move leaves no trace
        #: in k_dice (cleared with the Kumite), so the log could not tell them otherwise
        self.k_last: list[list[int]] = []
        self.stats = {"exam_attempts": 0, "kumite": 0, "cards": 0, "turns": 0}
        self.dice_script = []

    def _clear_kumite(self) -> None:
        self.k_att = -1
        self.k_def = -1
        self.k_kind = ""
        self.k_dice = [0, 0]
        self.k_played = [-1, -1]
        self.k_stage = 0
        self.k_from = -1
        self.k_wins = [0, 0]
        self.k_uke = False

    # ------------------------------------------------------------------------------------------
    # contract
    def current_player(self) -> int:
        if self.winner >= 0:
            return TERMINAL
        if self.pending:
            return self.pending[0][1]
        return self.actor

    def is_terminal(self) -> bool:
        return self.winner >= 0

    def returns(self) -> list[float]:
        if self.winner < 0:
            return [0.0] * self.n
        lose = -1.0 / (self.n - 1)
        return [1.0 if p == self.winner else lose for p in range(self.n)]

    @property
    def phase(self) -> str:
        if self.winner >= 0:
            return "over"
        if self.pending:
            return self.pending[0][0]
        return self.main_phase

    @property
    def first_round(self) -> bool:
        return self.turn_index < self.n and not self.game.config["kumite_first_round"]

    # ------------------------------------------------------------------------------------------
    # randomness (a test may script dice; the script is part of the saved state)
    def d6(self) -> int:
        if self.dice_script:
            return self.dice_script.pop(0)
        return self.rng.randint(1, 6)

    # ------------------------------------------------------------------------------------------
    # queries
    def opponents_after(self, p: int) -> list[int]:
        n = self.n
        return [(p + i) % n for i in range(1, n)]

    def can_fight(self, q: int) -> bool:
        """Whether the turn player may fight seat q (wherever q stands outside a Safe Room)."""
        return not self.med_guard[q] and not self.first_round

    def dojo_reach(self, p: int) -> int:
        """For how long the Dojo stays open to p's walk (see :func:`dojo_reach`)."""
        return dojo_reach(self.track[p], self.game.config["fatica_on_stop_only"])

    def move_dirs(self) -> list[int]:
        """Directions of the legal steps of the turn player's walk (Dojo entry included)."""
        board = self.game.board
        p = self.turn_player
        s = self.pos[p]
        vis = self.mv_visited
        dojo = self.dojo_reach(p)
        step = board.step[s]
        bit = board.bit
        out = []
        if self.mv_extra:
            for d in range(4):
                t = step[d]
                if t >= 0 and not vis & bit[t]:
                    out.append(d)
        else:
            dirs = self.game.oracle.step_dirs(s, self.mv_steps, vis, dojo)
            if dirs is None:
                return out
            out += dirs
        if dojo and board.entry[s] >= 0:
            out.append(board.entry[s])
        return out

    def settle_dirs(self, p: int, visited: int) -> list[int]:
        board = self.game.board
        step = board.step[self.pos[p]]
        bit = board.bit
        return [d for d in range(4) if step[d] >= 0 and not visited & bit[step[d]]]

    def shares_square(self, p: int) -> bool:
        s = self.pos[p]
        if self.game.board.room[s] >= 0:
            return False
        pos = self.pos
        return any(pos[q] == s for q in range(self.n) if q != p)

    def tunnel_usable(self, exit_sq: int, p: int) -> bool:
        """An exit holding a pawn that cannot be fought cannot be used."""
        pos = self.pos
        for q in range(self.n):
            if q != p and pos[q] == exit_sq and not self.can_fight(q):
                return False
        return True

    def segreto_options(self, p: int) -> list[int]:
        board = self.game.board
        return [i for i, t in enumerate(board.tunnels) if t != self.pos[p] and self.tunnel_usable(t, p)]

    def targets(self, p: int, purpose: str) -> list[int]:
        """Seats p may choose for Sfida / Irimi (opponents outside safe areas, not meditating)."""
        room = self.game.board.room
        if purpose == "sfida" and self.first_round:
            return []
        out = []
        for q in self.opponents_after(p):
            s = self.pos[q]
            if s >= 0 and room[s] < 0 and not self.med_guard[q]:
                out.append(q)
        return out

    def exam_candidates(self, p: int) -> list[int]:
        able = [q for q in self.opponents_after(p) if not self.med_guard[q]]
        if not able:
            return []
        top = max(self.track[q] for q in able)
        return [q for q in able if self.track[q] == top]

    # ------------------------------------------------------------------------------------------
    # legal mask
    def _legal_mask(self) -> np.ndarray:
        mask = np.zeros(self.game.num_actions, dtype=np.int8)
        if self.winner >= 0:
            return mask
        if self.pending:
            item = self.pending[0]
            if item[0] == "place":
                mask[A_ROOM:A_ROOM + 9] = 1
            else:
                for d in self.settle_dirs(item[1], item[2]):
                    mask[A_STEP + d] = 1
            return mask
        ph = self.main_phase
        if ph == "move":
            for d in self.move_dirs():
                mask[A_STEP + d] = 1
        elif ph == "setup":
            mask[A_ROOM:A_ROOM + 9] = 1
        elif ph == "tecnica":
            mask[A_PASS] = 1
            mask[A_PLAY] = 1
        elif ph == "tunnel":
            mask[A_PASS] = 1
            mask[A_TUNNEL] = 1
        elif ph == "keep":
            for c in self.hands[self.actor]:
                mask[A_KEEP + TECNICA.index(c)] = 1
        elif ph == "target":
            p = self.actor
            seats = self.exam_candidates(p) if self.purpose == "exam" else self.targets(p, self.purpose)
            for q in seats:
                mask[A_TARGET + (q - p) % self.n - 1] = 1
        elif ph == "segreto":
            for i in self.segreto_options(self.actor):
                mask[A_SEGRETO + i] = 1
        return mask

    # ------------------------------------------------------------------------------------------
    # applying actions
    def _apply(self, action: int) -> None:
        self.k_last = []
        if self.pending:
            item = self.pending[0]
            if item[0] == "place":
                p = item[1]
                self.pos[p] = self.game.board.rooms[self.corners[p]][action - A_ROOM]
                self.pending.pop(0)
            else:
                p = item[1]
                t = self.game.board.step[self.pos[p]][action - A_STEP]
                self.pos[p] = t
                item[2] |= self.game.board.bit[t]
                if not (self.shares_square(p) and self.settle_dirs(p, item[2])):
                    self.pending.pop(0)
            if not self.pending:
                self._resume()
            return
        ph = self.main_phase
        if ph == "move":
            self._step(action - A_STEP)
        elif ph == "tecnica":
            if action == A_PLAY:
                role = self.k_stage
                seat = self.k_att if role == 0 else self.k_def
                card = self.hands[seat].pop()
                self.k_played[role] = card
                self.discard.append(card)
                self.discard_owner.append(-1)
                if card == KAESHI:
                    self.k_dice[role] = self.d6()
                if card == UKE and role == 0 and self.k_kind == "exam":
                    self.k_uke = True
            self.k_stage += 1
            self._kumite_window()
        elif ph == "setup":
            p = self.actor
            self.pos[p] = self.game.board.rooms[self.corners[p]][action - A_ROOM]
            self.setup_count += 1
            if self.setup_count < self.n:
                self.actor = (p + 1) % self.n
            else:
                self._begin_turn()
        elif ph == "tunnel":
            if action == A_TUNNEL:
                p = self.turn_player
                s = self.pos[p]
                self._teleport(p, self.game.board.partner[s], s)
            else:
                self._end_turn()
        elif ph == "keep":
            p = self.actor
            kept = TECNICA[action - A_KEEP]
            hand = self.hands[p]
            hand.remove(kept)
            self.discard.append(hand.pop())
            self.discard_owner.append(p)
            hand.append(kept)
            self._end_turn()
        elif ph == "target":
            p = self.actor
            q = (p + action - A_TARGET + 1) % self.n
            purpose, self.purpose = self.purpose, ""
            if purpose == "exam":
                self._start_exam(q)
            elif purpose == "sfida":
                self._start_kumite(p, q, "sfida", self.pos[p])
            else:
                a, b = self.pos[p], self.pos[q]
                self.pos[p], self.pos[q] = b, a
                self._displaced(p)
                self._displaced(q)
                self._then("_end_turn")
        elif ph == "segreto":
            p = self.actor
            s = self.pos[p]
            self._teleport(p, self.game.board.tunnels[action - A_SEGRETO], s)

    # ------------------------------------------------------------------------------------------
    # flow helpers
    def _then(self, name: str) -> None:
        """Continue with ``name`` now, or after the pending interruptions are answered."""
        if self.pending:
            self.resume = name
        else:
            getattr(self, name)()

    def _resume(self) -> None:
        name, self.resume = self.resume, ""
        if name:
            getattr(self, name)()

    def _send_to_start(self, q: int) -> None:
        self.pos[q] = -1
        self.pending.append(["place", q])

    def _displaced(self, p: int) -> None:
        """p was moved without walking: the Meditazione extra step if it shares a square."""
        if self.shares_square(p):
            visited = self.game.board.bit[self.pos[p]]
            if self.settle_dirs(p, visited):
                self.pending.append(["settle", p, visited])

    def _gain(self, p: int, amount: int) -> None:
        t = self.track[p] + amount
        self.track[p] = 0 if t < 0 else TRACK_MAX if t > TRACK_MAX else t

    # ---- turns -----------------------------------------------------------------------------
    def begin_turn(self) -> None:
        """Start the turn of ``turn_player`` (tools and tests that build positions by hand)."""
        self.set_legal_mask(None)
        self._begin_turn()

    def _begin_turn(self) -> None:
        while True:
            self.turn_index += 1
            self.stats["turns"] += 1
            p = self.turn_player
            if self.med_skip[p]:
                self.med_skip[p] = False
                self.med_guard[p] = False
                self.turn_player = (p + 1) % self.n
                continue
            break
        self.actor = p
        self._start_move(self.d6() + self.d6())

    def _end_turn(self) -> None:
        if self.winner >= 0:
            return
        self._clear_kumite()
        self.mv_queue = []
        self.mv_steps = 0
        self.mv_extra = False
        self.turn_player = (self.turn_player + 1) % self.n
        self._begin_turn()

    # ---- movement ---------------------------------------------------------------------------
    def _start_move(self, roll: int) -> None:
        p = self.turn_player
        s = self.pos[p]
        self.roll = roll
        self.mv_start = s
        self.mv_visited = self.game.board.bit[s]
        self.mv_squares = [s]
        self.mv_steps = roll
        self.mv_prev = -1
        self.mv_extra = False
        self.mv_queue = []
        self._continue_move()

    def _continue_move(self) -> None:
        if self.mv_steps > 0:
            dirs = self.move_dirs()
            if dirs:
                self.main_phase = "move"
                self.actor = self.turn_player
                # the mask is known now: hand it to the base class's cache
                code = 0
                for d in dirs:
                    code |= 1 << d
                self.set_legal_mask(self.game.step_masks[code].copy())
                return
        self._end_walk()

    def _step(self, d: int) -> None:
        board = self.game.board
        p = self.turn_player
        s = self.pos[p]
        t = board.step[s][d]
        if t < 0:  # through a Dojo entrance
            self._enter_dojo(s)
            return
        self.mv_prev = s
        self.pos[p] = t
        self.mv_visited |= board.bit[t]
        self.mv_squares.append(t)
        self.mv_steps -= 1
        self.mv_extra = False
        if board.room[t] >= 0:
            self._continue_move()
            return
        if board.kind[t] == FATICA and not self.game.config["fatica_on_stop_only"]:
            self._gain(p, -1)
        pos = self.pos
        if pos.count(t) > 1:
            self.mv_queue = [q for q in self.opponents_after(p) if pos[q] == t and self.can_fight(q)]
            self._after_fight_on_square()
        else:
            self._continue_move()

    def _after_fight_on_square(self) -> None:
        p = self.turn_player
        t = self.pos[p]
        while self.mv_queue:
            q = self.mv_queue.pop(0)
            if self.pos[q] == t and self.can_fight(q):
                self._start_kumite(p, q, "move", self.mv_prev)
                return
        self._continue_move()

    def _end_walk(self) -> None:
        p = self.turn_player
        if self.shares_square(p):
            self.mv_extra = True
            self.mv_steps = 1
            if self.move_dirs():
                self.main_phase = "move"
                self.actor = p
                return
            self.mv_extra = False
            self.mv_steps = 0
        self._resolve_square()

    def _resolve_square(self) -> None:
        board = self.game.board
        p = self.turn_player
        s = self.pos[p]
        self.mv_steps = 0
        self.mv_extra = False
        if board.room[s] >= 0:
            self._end_turn()
            return
        kind = board.kind[s]
        if kind == ALLENAMENTO:
            self._gain(p, 1)
        elif kind == FATICA:
            if self.game.config["fatica_on_stop_only"]:
                self._gain(p, -1)
        elif kind == NEBBIA:
            self._draw_card()
            return
        elif kind == TUNNEL:
            if self.tunnel_usable(board.partner[s], p):
                self.main_phase = "tunnel"
                self.actor = p
                return
        elif kind == PASSO_FALSO:
            self.pos[p] = self.mv_start
            self._displaced(p)
            self._then("_end_turn")
            return
        elif kind == SFIDA:
            if self.targets(p, "sfida"):
                self.main_phase = "target"
                self.purpose = "sfida"
                self.actor = p
                return
        self._end_turn()

    def _teleport(self, p: int, target: int, came_from: int) -> None:
        self.pos[p] = target
        pos = self.pos
        self.mv_prev = came_from
        self.mv_queue = [q for q in self.opponents_after(p) if pos[q] == target]
        self._after_teleport_fight()

    def _after_teleport_fight(self) -> None:
        p = self.turn_player
        t = self.pos[p]
        while self.mv_queue:
            q = self.mv_queue.pop(0)
            if self.pos[q] == t and self.can_fight(q):
                self._start_kumite(p, q, "tunnel", self.mv_prev)
                return
        self._displaced(p)
        self._then("_end_turn")

    # ---- Kumite ----------------------------------------------------------------------------
    def _start_kumite(self, att: int, dfd: int, kind: str, came_from: int) -> None:
        self.stats["kumite"] += 1
        self.k_att = att
        self.k_def = dfd
        self.k_kind = kind
        self.k_from = came_from
        self.k_dice = [self.d6(), self.d6()]
        self.k_played = [-1, -1]
        self.k_stage = 0
        self._kumite_window()

    def _kumite_window(self) -> None:
        if self.k_stage == 0:
            if self.hands[self.k_att]:
                self.main_phase = "tecnica"
                self.actor = self.k_att
                return
            self.k_stage = 1
        if self.k_stage == 1:
            if self.hands[self.k_def]:
                self.main_phase = "tecnica"
                self.actor = self.k_def
                return
            self.k_stage = 2
        self._resolve_kumite()

    def kumite_totals(self) -> tuple[int, int]:
        cfg = self.game.config
        ba = belt_of(self.track[self.k_att])
        if self.k_kind == "exam" and not cfg["exam_defender_own_belt"]:
            bd = BLACK_BELT
        else:
            bd = belt_of(self.track[self.k_def])
        ta, td = self.k_dice
        if ba > bd:
            ta += min(2, ba - bd)
        elif bd > ba:
            td += min(2, bd - ba)
        kiai = cfg["kiai_bonus"]
        if self.k_played[0] == KIAI:
            ta += kiai
        if self.k_played[1] == KIAI:
            td += kiai
        return ta, td

    def _resolve_kumite(self) -> None:
        ta, td = self.kumite_totals()
        att, dfd = self.k_att, self.k_def
        self.k_last.append([att, dfd, *self.k_dice, ta, td])
        kind = self.k_kind
        if kind == "exam" and self.game.config["exam_ties_to_defender"]:
            att_wins = ta > td
        else:
            att_wins = ta >= td  # Senshu
        if kind == "exam":
            self._resolve_exam(att_wins)
            return
        winner, loser = (att, dfd) if att_wins else (dfd, att)
        if belt_of(self.track[winner]) <= belt_of(self.track[loser]):
            self._gain(winner, 3)
            self._gain(loser, -3)
        loser_uke = self.k_played[1 if att_wins else 0] == UKE
        if att_wins:
            if not loser_uke:
                self._send_to_start(dfd)
            nxt = {"move": "_after_fight_on_square", "tunnel": "_after_teleport_fight"}.get(kind, "_end_turn")
        else:
            if loser_uke:
                if kind != "sfida":
                    self.pos[att] = self.k_from
                    self._displaced(att)
            else:
                self._send_to_start(att)
            nxt = "_end_turn"
        self._clear_kumite()
        self._then(nxt)

    # ---- Dojo and Final Exam ----------------------------------------------------------------
    def _enter_dojo(self, from_sq: int) -> None:
        p = self.turn_player
        self.exam_from = from_sq
        self.mv_steps = 0
        cands = self.exam_candidates(p)
        if not cands:
            # back to the entry square (p never left it): the extra step, as after an Exam-Uke return
            self.exam_from = -1
            self._displaced(p)
            self._then("_end_turn")
            return
        if len(cands) > 1:
            self.main_phase = "target"
            self.purpose = "exam"
            self.actor = p
            return
        self._start_exam(cands[0])

    def _start_exam(self, q: int) -> None:
        self.stats["exam_attempts"] += 1
        self.k_wins = [0, 0]
        self.k_uke = False
        self._start_kumite(self.turn_player, q, "exam", self.exam_from)

    def _resolve_exam(self, att_wins: bool) -> None:
        cfg = self.game.config
        att = self.k_att
        if cfg["exam_best_of_three"]:
            self.k_wins[0 if att_wins else 1] += 1
            if max(self.k_wins) < 2:
                self.k_dice = [self.d6(), self.d6()]
                self.k_played = [-1, -1]
                self.k_stage = 0
                self.stats["kumite"] += 1
                self._kumite_window()
                return
            att_wins = self.k_wins[0] >= 2
        if att_wins:
            self.winner = att
            self.main_phase = "over"
            self.actor = TERMINAL
            return
        uke = self.k_uke or self.k_played[0] == UKE
        self._gain(att, -cfg["failed_exam_cost"])
        if uke:
            self.pos[att] = self.exam_from
            self._displaced(att)
        else:
            self._send_to_start(att)
        self.exam_from = -1
        self._clear_kumite()
        self._then("_end_turn")

    # ---- Nebbia del Dojo -------------------------------------------------------------------
    def _draw_card(self) -> None:
        p = self.turn_player
        if not self.deck:
            self.deck = self.discard
            self.discard = []
            self.discard_owner = []
            self.rng.shuffle(self.deck)
        card = self.deck.pop()
        self.stats["cards"] += 1
        hand = self.hands[p]
        if IS_TECNICA[card]:
            self.last_card = -2  # "a Tecnica" (which one is secret)
            hand.append(card)
            if len(hand) > 1:
                self.main_phase = "keep"
                self.actor = p
                return
            self._end_turn()
            return
        self.last_card = card
        self.discard.append(card)
        self.discard_owner.append(-1)
        if card == TSUGI_ASHI:
            self._start_move(self.d6() + self.d6())
        elif card == TUNNEL_SEGRETO:
            if self.segreto_options(p):
                self.main_phase = "segreto"
                self.actor = p
            else:
                self._end_turn()
        elif card == IRIMI or card == SFIDA_CARD:
            purpose = "irimi" if card == IRIMI else "sfida"
            if self.targets(p, purpose):
                self.main_phase = "target"
                self.purpose = purpose
                self.actor = p
            else:
                self._end_turn()
        elif card == SENSEI:
            low = min(self.track)
            for q in range(self.n):
                if self.track[q] == low:
                    self._gain(q, 2)
            self._end_turn()
        elif card == PESO:
            high = max(self.track)
            for q in range(self.n):
                if self.track[q] == high:
                    self._gain(q, -1)
            self._end_turn()
        elif card == INTENSIVO:
            self._gain(p, 1)
            self._end_turn()
        elif card == COLPO:
            self._gain(p, -1)
            self._end_turn()
        elif card == PASSO_FALSO_CARD:
            self.pos[p] = self.mv_start
            self._displaced(p)
            self._then("_end_turn")
        elif card == MEDITAZIONE:
            self.med_skip[p] = True
            self.med_guard[p] = True
            self._end_turn()

    # ------------------------------------------------------------------------------------------
    # saving, copying, checking
    _LIST_FIELDS = ("pos", "track", "deck", "discard", "discard_owner", "med_skip", "med_guard",
                    "mv_queue", "k_dice", "k_played", "k_wins", "dice_script")
    _SCALAR_FIELDS = ("first_player", "turn_player", "turn_index", "main_phase", "actor", "setup_count",
                      "roll", "mv_start", "mv_visited", "mv_steps", "mv_prev", "mv_extra", "k_att", "k_def",
                      "k_kind", "k_stage", "k_from", "k_uke", "exam_from", "purpose", "resume", "winner",
                      "last_card")

    def clone(self) -> "DojoState":
        other = DojoState.__new__(DojoState)
        other.game = self.game
        other.set_legal_mask(self.cached_legal_mask())
        other.n = self.n
        other.corners = self.corners
        other.rng = random.Random.__new__(random.Random)  # skip seeding from the OS
        other.rng.setstate(self.rng.getstate())
        for f in self._LIST_FIELDS:
            setattr(other, f, list(getattr(self, f)))
        for f in self._SCALAR_FIELDS:
            setattr(other, f, getattr(self, f))
        other.hands = [list(h) for h in self.hands]
        other.mv_squares = list(self.mv_squares)  # derived from mv_visited; not saved
        other.pending = [list(x) for x in self.pending]
        other.k_last = [list(x) for x in self.k_last]
        other.stats = dict(self.stats)
        other.obs_cache = self.obs_cache  # keyed by copies of what it was built from: safe to share
        return other

    @classmethod
    def saved_fields(cls, game) -> Record:
        n, squares = game.num_players, len(game.board.dojo)
        seat, seat_or_none = Int(0, n - 1), Int(-1, n - 1)
        square_or_none = Int(-1, squares - 1)
        card = Int(0, NUM_KINDS - 1)
        pile = List(card, max_len=DECK_SIZE)
        count = Int(0, MAX_COUNT)
        total = Int(1, 6 + 2 + game.config["kiai_bonus"])  # a die, the belt bonus and a Kiai
        return Record(
            Field("pos", List(square_or_none, size=n), doc="pawn squares, -1 off the board"),
            Field("track", List(Int(0, TRACK_MAX), size=n)),
            Field("deck", pile, doc="the Nebbia deck, top card last"),
            Field("discard", pile),
            Field("discard_owner", List(seat_or_none, max_len=DECK_SIZE),
                  doc="per discard, the seat that discarded it face down, -1 face up"),
            Field("med_skip", List(Bool(), size=n)),
            Field("med_guard", List(Bool(), size=n)),
            Field("mv_queue", List(seat, max_len=n - 1), doc="seats still to fight on this square"),
            Field("k_dice", List(Int(0, 6), size=2)),
            Field("k_played", List(Int(-1, NUM_KINDS - 1), size=2)),
            Field("k_wins", List(Int(0, 2), size=2)),
            Field("dice_script", List(Int(1, 6), max_len=MAX_DICE_SCRIPT), doc="scripted dice (tests)"),
            Field("first_player", seat),
            Field("turn_player", seat),
            Field("turn_index", Int(-1, MAX_COUNT)),
            Field("main_phase", Choice(PHASES)),
            Field("actor", seat_or_none),
            Field("setup_count", Int(0, n)),
            Field("roll", Int(0, MAX_ROLL)),
            Field("mv_start", square_or_none),
            Field("mv_visited", BitSet(squares), doc="squares walked this move"),
            Field("mv_steps", Int(0, MAX_ROLL)),
            Field("mv_prev", square_or_none),
            Field("mv_extra", Bool()),
            Field("k_att", seat_or_none),
            Field("k_def", seat_or_none),
            Field("k_kind", Choice(("",) + KUMITE_KINDS)),
            Field("k_stage", Int(0, 2)),
            Field("k_from", square_or_none),
            Field("k_uke", Bool()),
            Field("exam_from", square_or_none),
            Field("purpose", Choice(("",) + TARGET_PURPOSES)),
            Field("resume", Choice(RESUME_STEPS)),
            Field("winner", seat_or_none),
            Field("last_card", Int(-2, NUM_KINDS - 1), doc="-1 none, -2 a Tecnica (which one is secret)"),
            # one action settles at most a bout per opponent on the square, a Sfida and a best-of-three Exam
            Field("k_last", List(Tuple(seat, seat, Int(1, 6), Int(1, 6), total, total),
                                 max_len=n + 3),
                  doc="the Kumite bouts settled by the latest action: attacker, defender, their dice, their totals"),
            Field("hands", List(List(card, max_len=2), size=n)),
            Field("pending", List(Tagged({"place": Tuple(seat), "settle": Tuple(seat, BitSet(squares))}),
                                  max_len=2 * n + 2)),
            Field("stats", Record(*(Field(k, count) for k in ("exam_attempts", "kumite", "cards", "turns")))),
            Field("rng", Rng()),
        )

    def after_load(self) -> None:
        self.mv_squares = [x for x in range(len(self.game.board.dojo)) if self.mv_visited >> x & 1]

    def _public_dict(self) -> dict[str, Any]:
        return self.game.saved_fields.dump(self, skip=("rng",))

    def player_view(self, player: int) -> dict[str, Any]:
        """Everything seat ``player`` may know: the save dict with hidden parts masked.

        Hidden: the deck order (only its size is shown), other seats' Tecnica (only how many they
        hold), face-down discards made by other seats (shown as ``None``), the RNG and any dice
        script.
        """
        d = self._public_dict()
        del d["dice_script"]
        d["deck"] = len(self.deck)
        d["hands"] = [list(h) if q == player else len(h) for q, h in enumerate(self.hands)]
        d["discard"] = [c if o in (-1, player) else None for c, o in zip(self.discard, self.discard_owner)]
        d["seat"] = player
        return d

    def check_invariants(self) -> list[str]:
        problems = []
        n = self.n
        counts = [0] * NUM_KINDS
        for c in self.deck + self.discard + [c for h in self.hands for c in h]:
            if not 0 <= c < NUM_KINDS:
                problems.append(f"unknown card kind {c}")
                continue
            counts[c] += 1
        if tuple(counts) != CARD_COUNTS:
            problems.append(f"cards not conserved across deck, discard and hands: counts by kind {counts}, "
                            f"expected {list(CARD_COUNTS)}")
        if len(self.discard) != len(self.discard_owner):
            problems.append("discard and discard_owner differ in length")
        keeping = self.main_phase == "keep" and not self.pending and self.winner < 0
        for p in range(n):
            hand = self.hands[p]
            limit = 2 if keeping and p == self.actor else 1
            if len(hand) > limit:
                problems.append(f"player {p} holds {len(hand)} Tecnica cards")
            if any(not IS_TECNICA[c] for c in hand if 0 <= c < NUM_KINDS):
                problems.append(f"player {p} holds a card that is not a Tecnica")
            if not 0 <= self.track[p] <= TRACK_MAX:
                problems.append(f"player {p}'s track {self.track[p]} outside 0..{TRACK_MAX}")
        board = self.game.board
        placing = {x[1] for x in self.pending if x[0] == "place"}
        for p in range(n):
            s = self.pos[p]
            if s == -1:
                if p not in placing and not (self.main_phase == "setup" and self.winner < 0):
                    problems.append(f"player {p}'s pawn is off the board without a pending placement")
            elif not 0 <= s < len(board.dojo):
                problems.append(f"player {p}'s pawn on square {s} outside the board")
            elif board.dojo[s]:
                problems.append(f"player {p}'s pawn remains in the Dojo")
        for name in ("turn_player", "first_player"):
            if not 0 <= getattr(self, name) < n:
                problems.append(f"{name} {getattr(self, name)} out of range")
        if not -1 <= self.mv_start < len(board.dojo):
            problems.append(f"move start square {self.mv_start} outside the board")
        for item in self.pending:
            if not 0 <= item[1] < n:
                problems.append(f"pending {item[0]} for seat {item[1]} out of range")
        if self.main_phase not in PHASES:
            problems.append(f"unknown phase {self.main_phase!r}")
        if self.winner < 0 and not (0 <= self.current_player() < n):
            problems.append(f"current player {self.current_player()} out of range")
        if len(self.deck) + len(self.discard) + sum(len(h) for h in self.hands) != DECK_SIZE:
            problems.append("card total is not 22")
        if not problems:
            problems += self._phase_problems()
        return problems

    def _phase_problems(self) -> list[str]:
        """What each phase requires of the other fields (checked when a state is loaded and by the
        fuzz tests): the winner, the pawn walking, the Kumite in progress, the interruptions."""
        problems: list[str] = []
        n, board = self.n, self.game.board
        ph, p, tp = self.main_phase, self.actor, self.turn_player
        if (self.winner >= 0) != (ph == "over"):
            problems.append(f"winner: {self.winner} in phase {ph!r} (the game is over exactly when someone won)")
            return problems
        if self.winner >= 0:
            if self.track[self.winner] < BROWN:
                problems.append(f"winner: seat {self.winner} won the Final Exam without an open Dojo "
                                f"(track {self.track[self.winner]})")
            return problems
        if p < 0:
            problems.append("actor: nobody is to act in a game that goes on")
            return problems
        if self.med_skip != self.med_guard:
            problems.append("med_guard: Meditazione protects exactly the seats that skip their next turn")
        if self.resume and not self.pending:
            problems.append(f"resume: {self.resume!r} waits for interruptions but none is pending")
        placing = [x[1] for x in self.pending if x[0] == "place"]
        if len(set(placing)) != len(placing):
            problems.append(f"pending: a seat places its pawn twice ({placing})")
        for item in self.pending:
            q = item[1]
            if item[0] == "place" and self.pos[q] != -1:
                problems.append(f"pending: seat {q} places a pawn that is on the board")
            if item[0] == "settle" and (self.pos[q] < 0 or not item[2] >> self.pos[q] & 1):
                problems.append(f"pending: seat {q} settles from a square it is not on")
        if self.pending and not self.resume:
            problems.append("resume: interruptions are pending but nothing resumes after them")
        fighting = ph == "tecnica" and not self.pending
        if not fighting and (self.k_kind or self.k_att != -1 or self.k_def != -1 or self.k_stage
                             or self.k_dice != [0, 0] or self.k_played != [-1, -1] or self.k_wins != [0, 0]
                             or self.k_from != -1 or self.k_uke):
            problems.append(f"k_kind: a Kumite in progress ({self.k_kind!r}) outside the Tecnica window")
        examining = (ph == "target" and self.purpose == "exam") or (fighting and self.k_kind == "exam")
        if self.exam_from != -1 and not examining:
            problems.append("exam_from: a Final Exam entry square outside the Exam")
        if ph != "setup" and self.setup_count != n:
            problems.append(f"setup_count: {self.setup_count} pawns placed after the setup")
        if self.pending and ph != "setup":
            return problems
        if ph == "setup":
            if self.turn_index != -1 or self.setup_count >= n or p != (self.first_player + self.setup_count) % n:
                problems.append(f"setup_count: {self.setup_count} pawns placed with seat {p} to place")
            return problems
        if ph not in ("tecnica", "keep") and p != tp and not self.pending:
            problems.append(f"actor: seat {p} acts in seat {tp}'s turn in phase {ph!r}")
        if self.pos[tp] < 0 and not any(x[0] == "place" and x[1] == tp for x in self.pending):
            problems.append(f"pos: seat {tp} takes a turn without a pawn on the board")
        if ph == "move":
            s = self.pos[tp]
            if s < 0 or not self.mv_visited >> s & 1 or self.mv_start < 0 \
                    or not self.mv_visited >> self.mv_start & 1:
                problems.append("mv_visited: the walk does not hold the pawn's square and its start")
            if self.mv_extra and self.mv_steps != 1:
                problems.append("mv_extra: the Meditazione extra step is a single step")
            walked = self.mv_visited.bit_count() - 1
            if walked + self.mv_steps > self.roll + 1:
                problems.append(f"mv_steps: {walked} steps walked and {self.mv_steps} left from a roll of {self.roll}")
        elif fighting:
            att, dfd = self.k_att, self.k_def
            if not self.k_kind or att < 0 or dfd < 0 or att == dfd or self.k_stage > 1:
                problems.append(f"k_att: a Kumite of {att} against {dfd} ({self.k_kind!r}, stage {self.k_stage})")
            elif p != (att if self.k_stage == 0 else dfd) or not self.hands[p]:
                problems.append(f"actor: seat {p} cannot play a Tecnica in Kumite stage {self.k_stage}")
            if self.k_kind != "exam" and any(self.k_wins):
                problems.append("k_wins: Final Exam bouts counted outside an Exam")
            if 0 in self.k_dice:
                problems.append("k_dice: a Kumite without its dice")
        elif ph == "keep":
            if p != tp or len(self.hands[p]) != 2:
                problems.append(f"hands: seat {p} keeps one of {len(self.hands[p])} Tecnica cards")
        elif ph == "tunnel":
            if board.kind[self.pos[tp]] != TUNNEL:
                problems.append("main_phase: the Tunnel choice off a Tunnel square")
        elif ph == "target":
            if not self.purpose:
                problems.append("purpose: a target is chosen for no purpose")
        if ph != "target" and self.purpose:
            problems.append(f"purpose: {self.purpose!r} outside the target choice")
        return problems



def from_position(
    game,
    pawns: dict[int, int],
    tracks: list[int] | None = None,
    hands: dict[int, list[int]] | None = None,
    turn: int = 0,
    dice: tuple[int, ...] | list[int] = (),
    deck_top: tuple[int, ...] | list[int] = (),
    first_round: bool = False,
    meditating: tuple[int, ...] = (),
    begin: bool = True,
) -> DojoState:
    """A position for tests and tools: pawns on given squares, then ``turn`` begins its turn.

    Seats not in ``pawns`` stand on the centre of their own Safe Room. ``dice`` are the next die
    results (the move's two dice first, then Kumite dice, ...). ``deck_top`` are the next cards
    drawn, in order. ``first_round`` makes the turn the first one of the game (no Kumite yet).
    ``meditating`` seats are protected and will skip their next turn.
    """
    state = game.new_initial_state(0)
    n = state.n
    board = game.board
    for p in range(n):
        state.pos[p] = pawns.get(p, board.rooms[state.corners[p]][4])
    if tracks is not None:
        state.track = list(tracks)
    for p, cards in (hands or {}).items():
        for c in cards:
            state.deck.remove(c)
            state.hands[p].append(c)
    for c in deck_top:
        state.deck.remove(c)
    state.deck.extend(reversed(list(deck_top)))
    for p in meditating:
        state.med_skip[p] = True
        state.med_guard[p] = True
    state.setup_count = n
    state.first_player = turn
    state.turn_player = turn
    state.actor = turn
    state.turn_index = -1 if first_round else n - 1
    state.main_phase = "move"
    state.dice_script = list(dice)
    state.set_legal_mask(None)
    if begin:
        state._begin_turn()
    return state
