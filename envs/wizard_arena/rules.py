"""Wizard Arena rules: bots roam a map, ally into single-file parties, battle, challenge Gary the
Wizard, die into gravestones; ranked by score, then strength.

Everything here is pure game logic over plain Python lists; ``envs/wizard_arena/game.py`` adds the
configuration, observations and rendering. See ``RULES.md`` beside this file for the rules as
implemented and every interpretation made.

Strength is kept in integer tenths (``10`` means 1.0) so that comparisons and ties are exact.
"""

from __future__ import annotations

import random
from itertools import filterfalse
from typing import Any

import numpy as np

from envs.core import TERMINAL, State, StateError
from envs.core.fields import MAX_COUNT, Bool, Choice, Convert, Field, Int, List, Optional, Record, Rng, Str
from envs.wizard_arena.map import DIRECTION_NAMES, TERRAIN_CHARS, ArenaMap, chebyshev, generate_terrain

# ---------------------------------------------------------------------------------------------
# Actions
STAY = 8
ALLY_ACCEPT, ALLY_DECLINE = 9, 10
CHALLENGE, NO_CHALLENGE = 11, 12
REWARD_SCORE, REWARD_STRENGTH, REWARD_HEALTH = 13, 14, 15
NUM_ACTIONS = 16
ACTION_NAMES = tuple(f"move {d}" for d in DIRECTION_NAMES) + (
    "stay", "ally accept", "ally decline", "challenge Gary", "leave Gary",
    "reward score", "reward strength", "reward health",
)

# Phases
MOVE, ALLY, GARY, REWARD, OVER = "move", "ally", "gary", "reward", "over"
PHASES = (MOVE, ALLY, GARY, REWARD, OVER)

# Per-bot event counters (the score and HP invariants are checked against them).
C_WON_LED, C_WON_MEMBER, C_LOST_LED, C_LOST_MEMBER = 0, 1, 2, 3
C_GARY_WON, C_GARY_LOST, C_REWARD_SCORE, C_REWARD_STRENGTH, C_REWARD_HEALTH = 4, 5, 6, 7, 8
C_SQUEEZES, C_HP_LOST, C_JOINED, C_START_SCORE, C_START_HP = 9, 10, 11, 12, 13
COUNTER_NAMES = (
    "battles_won_as_leader", "battles_won_as_member", "battles_lost_as_leader", "battles_lost_as_member",
    "gary_won", "gary_lost", "reward_score", "reward_strength", "reward_health",
    "squeezes", "hp_lost", "alliances_and_joins", "start_score", "start_hp",
)
NUM_COUNTERS = len(COUNTER_NAMES)

PLACEMENT_BUDGET = 4000  # node budget of the unbounded line re-forming search
BOUNDED_BUDGET = 50  # node budget of each re-forming search with a bound on the moves
TURN_BUDGET = 60  # node budget of the search behind a leader's step onto its own line
#: The game ends by the no-progress rule after this many rounds (times the map's side length)
#: without an alliance, a join, a battle or a death.
NO_PROGRESS_ROUNDS_PER_SIDE = 8

#: Who leads a new alliance of two solos equal in strength and score (config ``alliance_tie_break``;
#: the rules say only "greater strength, or higher score if tied"): the lower seat (the default), the
#: higher seat, one of the two at random (from the game's seeded RNG), the one with more HP (then the
#: lower seat), or the bot whose turn it is (the one that walked into the other).
TIE_BREAKS = ("lower-seat", "higher-seat", "random", "more-hp", "mover")
DEFAULT_TIE_BREAK = "lower-seat"

# Why a finished game ended (``ArenaState.end_reason``).
END_RULES, END_NO_PROGRESS = "rules", "no-progress"


def _mask_of(actions: tuple[int, ...] | list[int]) -> np.ndarray:
    mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
    mask[list(actions)] = 1
    mask.flags.writeable = False
    return mask


# Legal masks are these tables' entries rather than built element by element. Masks are never
# written in place (``State.set_legal_mask``; the environment hands each seat a copy), so the
# entries are shared, read-only: nobody can scribble on one.
#: Move phase: by the bit set of open directions (bit d: direction d is free), "stay" always legal.
_MOVE_MASKS = tuple(_mask_of([d for d in range(8) if code >> d & 1] + [STAY]) for code in range(256))
_ALLY_MASK = _mask_of((ALLY_ACCEPT, ALLY_DECLINE))
_GARY_MASK = _mask_of((CHALLENGE, NO_CHALLENGE))
_REWARD_MASK = _mask_of((REWARD_SCORE, REWARD_STRENGTH, REWARD_HEALTH))
_REWARD_MASK_NO_HEALTH = _mask_of((REWARD_SCORE, REWARD_STRENGTH))
_NO_MASK = np.zeros(NUM_ACTIONS, dtype=np.int8)
#: The legal actions, ascending, of every mask above (keyed by the mask's bytes).
_ACTIONS_OF_MASK = {
    m.tobytes(): tuple(int(a) for a in np.flatnonzero(m))
    for m in (*_MOVE_MASKS, _ALLY_MASK, _GARY_MASK, _REWARD_MASK, _REWARD_MASK_NO_HEALTH, _NO_MASK)
}


def single_file(count: int, first: int, options: Any, budget: int) -> list[int] | None:
    """Cells for a line of ``count`` members standing single file, the first on ``first``:
    member k tries, in order, the cells ``options(k, cell of member k − 1, cells taken)`` returns;
    a depth-first search that backs up when a member finds no cell and gives up (None) after
    ``budget`` nodes."""
    path = [first]
    used = {first}
    left = [budget]

    def search(k: int) -> bool:
        if k == count:
            return True
        left[0] -= 1
        if left[0] < 0:
            return False
        for c in options(k, path[-1], used):
            path.append(c)
            used.add(c)
            if search(k + 1):
                return True
            path.pop()
            used.discard(c)
        return False

    return path if search(1) else None


def rank_rewards(score: list[int], strength: list[int]) -> list[float]:
    """Reward 1 − 2(rank − 1)/(n − 1) by (score, strength), equal bots sharing their mean rank."""
    n = len(score)
    keys = [(score[i], strength[i]) for i in range(n)]
    order = sorted(range(n), key=lambda i: keys[i], reverse=True)
    ranks = [0.0] * n
    k = 0
    while k < n:
        j = k
        while j + 1 < n and keys[order[j + 1]] == keys[order[k]]:
            j += 1
        mean_rank = (k + 1 + j + 1) / 2.0
        for m in range(k, j + 1):
            ranks[order[m]] = mean_rank
        k = j + 1
    if n == 1:
        return [0.0]
    return [1.0 - 2.0 * (r - 1.0) / (n - 1) for r in ranks]


def final_ranks(score: list[int], strength: list[int]) -> list[float]:
    """The (possibly shared, fractional) rank of every bot, 1 = best."""
    n = len(score)
    if n == 1:
        return [1.0]
    return [1.0 + (1.0 - r) * (n - 1) / 2.0 for r in rank_rewards(score, strength)]


class ArenaState(State):
    """One position of Wizard Arena."""

    __slots__ = (
        "map", "n", "health", "gary_strength", "gary_roams", "rng",
        "pos", "hp", "max_hp", "strength", "score", "alive", "counters",
        "leader_of", "parties", "occ", "gary",
        "turn", "round", "_phase", "actor", "ally", "ally_stage", "met", "declined", "respawned",
        "quiet_rounds", "no_progress_limit", "actions_taken", "step_limit", "obs_cache",
    )

    def __init__(self, game: Any, arena: ArenaMap, rng: random.Random) -> None:
        super().__init__(game)
        cfg = game.config
        self.map = arena
        self.n = cfg["num_bots"]
        self.health = cfg["health"]
        self.gary_strength = int(round(cfg["gary_strength"] * 10))
        self.gary_roams = cfg["gary_roams"]
        self.rng = rng
        n = self.n
        start = int(round(cfg["initial_strength"] * 10))
        self.pos = [0] * n
        self.hp = [self.health] * n
        self.max_hp = [self.health] * n
        self.strength = [start] * n
        self.score = [0] * n
        self.alive = [True] * n
        self.counters = [[0] * NUM_COUNTERS for _ in range(n)]
        for c in self.counters:
            c[C_START_HP] = self.health
        self.leader_of = list(range(n))
        self.parties: dict[int, list[int]] = {}
        self.occ = [-1] * (arena.size * arena.size)
        self.gary = 0
        self.turn = 0
        self.round = 0
        self.phase = MOVE
        self.actor = 0
        self.ally: list[int] | None = None
        self.ally_stage = 0
        self.met: list[int] = []
        self.declined: list[tuple[int, int]] = []
        self.respawned = False
        #: Rounds completed since the last alliance, join, battle or death (the no-progress rule).
        self.quiet_rounds = 0
        self.no_progress_limit = NO_PROGRESS_ROUNDS_PER_SIDE * arena.size
        #: Actions applied since the start (the observation's time-left feature).
        self.actions_taken = 0
        #: The cap on actions the time-left feature counts down to: the environment's (see
        #: ``set_step_limit``), else the game's default.
        self.step_limit = game.step_limit
        #: Scratch space of the observation encoder (derived data only; never saved or compared).
        self.obs_cache: Any = None

    # -----------------------------------------------------------------------------------------
    # Small helpers
    def cheb(self, a: int, b: int) -> int:
        return chebyshev(self.map.size, a, b)

    def line(self, leader: int) -> list[int]:
        """The members of the side led by ``leader``, leader first (a solo is a side of one)."""
        return self.parties.get(leader) or [leader]

    def side_strength(self, leader: int) -> int:
        st = self.strength
        return sum(st[m] for m in self.line(leader))

    def is_acting(self, bot: int) -> bool:
        """Living solo bots and party leaders act; followers and the dead never do."""
        return self.alive[bot] and self.leader_of[bot] == bot

    def living_sides(self) -> list[int]:
        lo, alive = self.leader_of, self.alive
        return sorted({lo[i] for i in range(self.n) if alive[i]})

    def free_cells(self, avoid_crowd: bool) -> list[int]:
        """Unoccupied passable cells in cell order; with ``avoid_crowd``, only those with no
        occupied neighbour (when there are any)."""
        occ = self.occ
        if not avoid_crowd:
            return [c for c in self.map.free_cells if occ[c] < 0]
        # Neighbourhood is symmetric between passable cells, so a free cell is crowded exactly
        # when it is a neighbour of an occupied cell: collect those in the same pass.
        nb = self.map.neighbours
        cells = []
        crowded: set[int] = set()
        for c in self.map.free_cells:
            if occ[c] < 0:
                cells.append(c)
            else:
                crowded.update(nb[c])
        calm = [c for c in cells if c not in crowded]
        return calm if calm else cells

    # -----------------------------------------------------------------------------------------
    # Contract
    def current_player(self) -> int:
        phase = self._phase
        if phase == MOVE:
            return self.actor
        if phase == OVER:
            return TERMINAL
        if phase == ALLY:
            return self.ally[self.ally_stage]
        return self.actor

    @property
    def phase(self) -> str:  # type: ignore[override]
        return self._phase

    @phase.setter
    def phase(self, value: str) -> None:
        self._phase = value

    def is_terminal(self) -> bool:
        return self._phase == OVER

    def returns(self) -> list[float]:
        if self._phase != OVER:
            return [0.0] * self.n
        return rank_rewards(self.score, self.strength)

    def truncation_returns(self) -> list[float]:
        return rank_rewards(self.score, self.strength)

    def set_step_limit(self, limit: int) -> None:
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise ValueError(f"the step limit must be an integer >= 1, got {limit!r}")
        self.step_limit = limit

    def end_reason(self) -> str | None:
        """``"rules"`` once one side is left (or none is alive), ``"no-progress"`` when the
        no-progress rule ended the game, None while it goes on."""
        if self._phase != OVER:
            return None
        return END_RULES if len(self.living_sides()) <= 1 else END_NO_PROGRESS

    def _legal_mask(self) -> np.ndarray:
        phase = self._phase
        if phase == MOVE:
            # Every step onto passable ground, less those onto a bot (but for the members of its own
            # line it may step onto: ``_can_turn``).
            occ = self.occ
            a = self.actor
            arena = self.map
            here = self.pos[a]
            code = arena.open_bits[here]
            for t in arena.neighbours[here]:
                if occ[t] >= 0:
                    break
            else:  # the usual case: no neighbour occupied
                return _MOVE_MASKS[code]
            lo = self.leader_of
            line = self.parties.get(a)
            for d, t in arena.moves[here]:
                o = occ[t]
                if o >= 0 and not (o != a and lo[o] == a and self._can_turn(line, t)):
                    code ^= 1 << d
            return _MOVE_MASKS[code]
        if phase == ALLY:
            return _ALLY_MASK
        if phase == GARY:
            return _GARY_MASK
        if phase == REWARD:
            return _REWARD_MASK if self.health > 0 else _REWARD_MASK_NO_HEALTH
        return _NO_MASK

    def legal_actions(self) -> list[int]:
        """The legal actions, ascending: looked up from the mask (always one of the tables above)."""
        mask = self.legal_mask()
        actions = _ACTIONS_OF_MASK.get(mask.tobytes())
        return list(actions) if actions is not None else np.flatnonzero(mask).tolist()

    def _apply(self, action: int) -> None:
        self.actions_taken += 1
        phase = self._phase
        if phase == MOVE:
            self._move(action)
            if self.declined:
                self._clean_declined()
            self._run_encounters(declined_clean=True)
        elif phase == ALLY:
            a, b = self.ally
            if action == ALLY_ACCEPT and self.ally_stage == 0:
                self.ally_stage = 1
                return
            self.ally = None
            self.ally_stage = 0
            if action == ALLY_ACCEPT:
                self._form_alliance(a, b)
            else:
                self.declined.append((min(a, b), max(a, b)))
            self._run_encounters()
        elif phase == GARY:
            if action == CHALLENGE:
                self._challenge()
            else:
                self._end_turn()
        elif phase == REWARD:
            a = self.actor
            c = self.counters[a]
            if action == REWARD_SCORE:
                self.score[a] += 2
                c[C_REWARD_SCORE] += 1
            elif action == REWARD_STRENGTH:
                self.strength[a] += 20
                c[C_REWARD_STRENGTH] += 1
            else:
                self.hp[a] += 2
                if self.hp[a] > self.max_hp[a]:
                    self.max_hp[a] = self.hp[a]
                c[C_REWARD_HEALTH] += 1
            self._end_turn()

    # -----------------------------------------------------------------------------------------
    # Movement
    def _move(self, d: int) -> None:
        if d == STAY:
            return
        a = self.actor
        arena = self.map
        pos, occ, strength = self.pos, self.occ, self.strength
        here = pos[a]
        target = arena.step[here][d]
        line = self.parties.get(a)
        if line is None:
            if arena.squeeze[here][d]:
                strength[a] = max(1, strength[a] - 1)
                self.counters[a][C_SQUEEZES] += 1
            occ[here] = -1
            pos[a] = target
            occ[target] = a
            return
        old = [pos[m] for m in line]
        if arena.squeeze[here][d]:
            strength[a] = max(1, strength[a] - 2)
            self.counters[a][C_SQUEEZES] += 1
        if occ[target] >= 0 and target != old[-1]:
            # onto its first follower (the move is legal): the line re-forms behind the leader
            path = self._turn_path(target)
            for cell in old:
                occ[cell] = -1
            for m, src, dest in zip(line, old, path):
                if m != a and src != dest and arena.is_squeeze(src, dest):
                    strength[m] = max(1, strength[m] - 1)
                    self.counters[m][C_SQUEEZES] += 1
                pos[m] = dest
                occ[dest] = m
            return
        pos[a] = target
        occ[target] = a  # a free cell or the tail's, which the tail leaves
        # Each follower steps into the cell ahead (``ArenaMap.is_squeeze`` written out inline);
        # the cells stay occupied but the last one, which is left empty (unless the leader
        # stepped onto it).
        row, col, passable, size = arena.row, arena.col, arena.passable, arena.size
        for m, src, dest in zip(line[1:], old[1:], old):
            rs, cs, rd, cd = row[src], col[src], row[dest], col[dest]
            if rs != rd and cs != cd and not passable[rs * size + cd] and not passable[rd * size + cs]:
                strength[m] = max(1, strength[m] - 1)
                self.counters[m][C_SQUEEZES] += 1
            pos[m] = dest
            occ[dest] = m
        if old[-1] != target:
            occ[old[-1]] = -1

    def _can_turn(self, line: list[int], target: int) -> bool:
        """Is the leader's step onto ``target``, a cell of its own ``line``, legal? Onto the tail
        always (the ordinary single file); onto the first follower when the line can back up (its
        tail has a free neighbour) or else re-form (``_turn_path``); onto any other member never."""
        pos, occ = self.pos, self.occ
        if target == pos[line[-1]]:
            return True
        if target != pos[line[1]]:
            return False
        for c in self.map.neighbours[pos[line[-1]]]:
            if occ[c] < 0:
                return True
        return self._turn_path(target) is not None

    def _turn_path(self, target: int) -> list[int] | None:
        """Where the actor's line stands after its leader steps onto ``target``, the cell of its
        first follower, or None if the line cannot re-form.

        The line backs up: each follower steps into the cell of the one behind it, the tail into
        its lowest-numbered free neighbour. Only if the tail has none: each follower, in line
        order, takes a cell next to the member ahead of it and at most one step from its own
        cell — the cell the member ahead has just left if it can, else its own cell, else the
        lowest-numbered one (held by its own line); a depth-first search backs up when a later
        member finds no cell and gives up after ``TURN_BUDGET`` nodes."""
        line = self.parties[self.actor]
        pos, occ = self.pos, self.occ
        old = [pos[m] for m in line]
        lead = self.actor
        lo = self.leader_of
        near, row, col = self.map.neighbours, self.map.row, self.map.col
        room = [c for c in near[old[-1]] if occ[c] < 0]
        if room:
            return old[1:] + [min(room)]

        def options(k: int, ahead: int, used: set[int]) -> list[int]:
            own = old[k]
            ro, co = row[own], col[own]
            ahead_old = old[k - 1]
            cands = []
            for c in near[ahead]:
                if c in used or abs(row[c] - ro) > 1 or abs(col[c] - co) > 1:
                    continue
                o = occ[c]
                if o >= 0 and lo[o] != lead:
                    continue
                cands.append((0 if c == ahead_old else (1 if c == own else 2), c))
            cands.sort()
            return [c for _, c in cands]

        return single_file(len(line), target, options, TURN_BUDGET)

    def _clean_declined(self) -> None:
        """Forget the declined pairs that are no longer two living solos next to each other."""
        if not self.declined:
            return
        alive, lo, parties, pos = self.alive, self.leader_of, self.parties, self.pos
        row, col = self.map.row, self.map.col
        keep = []
        for a, b in self.declined:
            if alive[a] and lo[a] == a and alive[b] and lo[b] == b and a not in parties and b not in parties:
                pa, pb = pos[a], pos[b]
                if -1 <= row[pa] - row[pb] <= 1 and -1 <= col[pa] - col[pb] <= 1:
                    keep.append((a, b))
        self.declined = keep

    # -----------------------------------------------------------------------------------------
    # Encounters
    def _adjacent_sides(self, lead: int) -> list[int]:
        """Leaders of the other sides with a member within distance 1 of the side led by
        ``lead``, in increasing order (usually none: then this is a short scan of the occupancy
        grid over the precomputed neighbour cells)."""
        occ, nb, lo, pos = self.occ, self.map.neighbours, self.leader_of, self.pos
        found: list[int] | None = None
        line = self.parties.get(lead)
        if line is None:
            for cell in nb[pos[lead]]:
                if occ[cell] >= 0:
                    break
            else:
                return []  # a solo with no neighbour at all, the most common case
        elif 3 * len(line) > self.n:
            # A long line (compared with the number of bots) has many neighbour cells: first test,
            # with bit sets, whether any living bot of another side stands next to it at all
            # (living bots stand on their cells).
            near_bits = self.map.near_bits
            reach = 0
            for m in line:
                reach |= near_bits[pos[m]]
            alive = self.alive
            for o in range(self.n):
                if lo[o] != lead and alive[o] and reach >> pos[o] & 1:
                    break
            else:
                return []
        for m in line if line is not None else (lead,):
            for cell in nb[pos[m]]:
                o = occ[cell]
                if o >= 0:
                    side = lo[o]
                    if side != lead:
                        if found is None:
                            found = [side]
                        elif side not in found:
                            found.append(side)
        if found is None:
            return []
        if len(found) > 1:
            found.sort()
        return found

    def _run_encounters(self, declined_clean: bool = False) -> None:
        """Resolve the actor's encounters one by one (other sides in registration order of their
        leaders), pausing for alliance decisions; then offer Gary or end the turn.

        ``declined_clean``: the caller has just cleaned the declined pairs, so when no encounter
        changes anything the end of the turn need not clean them again (same result)."""
        a = self.actor
        resolved = bool(self.met)  # resuming after an alliance decision
        alive, lo = self.alive, self.leader_of
        while not self.respawned and alive[a] and lo[a] == a:
            adjacent = self._adjacent_sides(a)
            if not adjacent:
                break  # the usual case: nobody within distance 1
            candidates = [
                o for o in adjacent
                if o not in self.met
                and not (a not in self.parties and o not in self.parties and (min(a, o), max(a, o)) in self.declined)
            ]
            if not candidates:
                break
            other = candidates[0]
            self.met.append(other)
            a_solo = a not in self.parties
            o_solo = other not in self.parties
            if a_solo and o_solo:
                self._phase = ALLY
                self.ally = [a, other]
                self.ally_stage = 0
                return
            resolved = True
            if a_solo:
                if self.strength[other] >= self.strength[a]:
                    self._join(a, other)
                else:
                    self._fight(a, other)
            elif o_solo:
                if self.strength[a] >= self.strength[other]:
                    self._join(other, a)
                else:
                    self._fight(a, other)
            else:
                self._fight(a, other)
            if self._check_over():
                return
        if resolved and self._check_over():
            return
        if not self.respawned and alive[a] and lo[a] == a:
            here, gary = self.pos[a], self.gary
            if gary == here or self.map.near_bits[here] >> gary & 1:  # Gary within distance 1
                self._phase = GARY
                return
        self._end_turn(declined_clean=declined_clean and not resolved)

    def _form_alliance(self, a: int, b: int) -> None:
        """Ally the mover ``a`` with ``b``: the greater strength leads, then the higher score, then the
        config's ``alliance_tie_break``."""
        st, sc = self.strength, self.score
        if (st[a], sc[a]) != (st[b], sc[b]):
            leader = a if (st[a], sc[a]) > (st[b], sc[b]) else b
        else:
            leader = self._tie_leader(a, b)
        other = b if leader == a else a
        self.counters[a][C_JOINED] += 1
        self.counters[b][C_JOINED] += 1
        self.quiet_rounds = 0
        self._set_line([leader, other])

    def _tie_leader(self, mover: int, other: int) -> int:
        rule, low, high = self.game.config["alliance_tie_break"], min(mover, other), max(mover, other)
        if rule == "higher-seat":
            return high
        if rule == "random":
            return low if self.rng.random() < 0.5 else high
        if rule == "more-hp" and self.hp[mover] != self.hp[other]:
            return mover if self.hp[mover] > self.hp[other] else other
        if rule == "mover":
            return mover
        return low

    def _join(self, solo: int, leader: int) -> None:
        self.counters[solo][C_JOINED] += 1
        self.quiet_rounds = 0
        self._set_line(self.line(leader) + [solo], block=[solo])

    def _fight(self, a: int, b: int) -> None:
        """Battle between the sides led by a (the actor's side, rolling first) and b."""
        sa, sb = self.side_strength(a), self.side_strength(b)
        winner = a if self._bouts(sa, sb) else b
        self._battle_result(winner, b if winner == a else a)

    def _bouts(self, mine: int, theirs: int) -> bool:
        """Best of three D20 × strength bouts, a tied bout rolled again; True if ``mine`` wins."""
        rng = self.rng
        won = lost = 0
        while won < 2 and lost < 2:
            x = rng.randint(1, 20) * mine
            y = rng.randint(1, 20) * theirs
            if x > y:
                won += 1
            elif y > x:
                lost += 1
        return won == 2

    def _battle_result(self, w: int, l: int) -> None:
        score, hp, counters, occ, pos, alive = self.score, self.hp, self.counters, self.occ, self.pos, self.alive
        wline = self.line(w)
        lline = self.line(l)
        self.quiet_rounds = 0
        score[w] += 2
        counters[w][C_WON_LED] += 1
        for m in wline[1:]:
            score[m] += 1
            counters[m][C_WON_MEMBER] += 1
        score[l] -= 1
        counters[l][C_LOST_LED] += 1
        for m in lline[1:]:
            counters[m][C_LOST_MEMBER] += 1
        # The losing party breaks up: HP first, so those who die are not absorbed.
        self.parties.pop(l, None)
        for m in lline:
            self.leader_of[m] = m
        if self.health > 0:
            for m in lline:
                loss = min(hp[m], self.rng.randint(1, 3))
                hp[m] -= loss
                counters[m][C_HP_LOST] += loss
            for m in lline:
                if hp[m] == 0:
                    alive[m] = False
                    if occ[pos[m]] == m:
                        occ[pos[m]] = -1
        if alive[l]:
            occ[pos[l]] = -1  # the loser leader leaves the field before anyone re-forms
        survivors = [m for m in lline[1:] if alive[m]]
        if survivors:
            self._set_line(wline + survivors, block=survivors)
        if alive[l]:
            cells = self.free_cells(avoid_crowd=True)
            cell = cells[self.rng.randrange(len(cells))]
            pos[l] = cell
            occ[cell] = l
            if l == self.actor:
                self.respawned = True

    # -----------------------------------------------------------------------------------------
    # Gary the Wizard
    def _challenge(self) -> None:
        a = self.actor
        won = self._bouts(self.side_strength(a), self.gary_strength)
        self._relocate_gary()
        if won:
            self.counters[a][C_GARY_WON] += 1
            self._phase = REWARD
            return
        self.counters[a][C_GARY_LOST] += 1
        if self.health > 0:
            loss = min(2, self.hp[a])
            self.hp[a] -= loss
            self.counters[a][C_HP_LOST] += loss
            if self.hp[a] == 0:
                self._kill(a)
                if self._check_over():
                    return
        else:
            self.score[a] -= 2
        self._end_turn()

    def _relocate_gary(self) -> None:
        occ = self.occ
        cells = [c for c in self.map.free_cells if occ[c] < 0 and c != self.gary]
        if cells:
            self.gary = cells[self.rng.randrange(len(cells))]

    def _roam_gary(self) -> None:
        options = list(self.map.neighbours[self.gary]) + [self.gary]
        self.gary = options[self.rng.randrange(len(options))]

    # -----------------------------------------------------------------------------------------
    # Death and the single-file line
    def _kill(self, b: int) -> None:
        """b reaches 0 HP: it leaves its party (leadership to the strongest survivor), a gravestone
        marks its cell, it never acts again."""
        self.alive[b] = False
        self.hp[b] = 0
        self.quiet_rounds = 0
        pos, occ = self.pos, self.occ
        if occ[pos[b]] == b:
            occ[pos[b]] = -1
        lead = self.leader_of[b]
        line = self.parties.pop(lead, None)
        self.leader_of[b] = b
        if line is None:
            return
        idx = line.index(b)
        rest = line[:idx] + line[idx + 1:]
        for m in line:
            self.leader_of[m] = m
        if idx == 0:
            st = self.strength
            new_leader = max(rest, key=lambda m: (st[m], -rest.index(m)))
            self._set_line([new_leader] + [m for m in rest if m != new_leader])
            return
        # A follower died: those behind it close up, each stepping into the cell ahead.
        gap = pos[b]
        for m in line[idx + 1:]:
            cell = pos[m]
            occ[cell] = -1
            pos[m] = gap
            occ[gap] = m
            gap = cell
        self._set_line(rest)

    def _set_line(self, line: list[int], block: list[int] | None = None) -> None:
        """Make ``line`` (leader first, who stays put) one party and re-form it single file.

        ``block``: the members just added at the end of ``line`` (a joining solo, absorbed bots);
        they may instead be placed, in this order or reversed, right behind a member they stand
        next to, when that moves bots less. Every member gets a cell next to the member ahead; the
        re-forming moves the farthest-moved bot as little as possible (bound 1, then 2, 4, 8,
        then none), then the bots in all as little as possible, then keeps the line order as
        given. Within a bound, members keep their cells where they can and otherwise take the free
        cell nearest to where they stand (a depth-first search with a node budget). If no
        placement exists, the longest leading part of the line that already stands single file
        stays a party and the others remain solo where they are.
        """
        for m in line:
            old = self.parties.pop(m, None)
            if old is not None:
                for x in old:
                    self.leader_of[x] = x
        if len(line) < 2:
            for m in line:
                self.leader_of[m] = m
            return
        pos, occ = self.pos, self.occ
        if all(self.cheb(pos[a], pos[b]) == 1 for a, b in zip(line, line[1:])):
            self.parties[line[0]] = list(line)  # already single file: nobody moves
            for m in line:
                self.leader_of[m] = line[0]
            return
        orders = [line]
        if block:
            base = line[:len(line) - len(block)]
            heads = [block] if len(block) == 1 else [block, block[::-1]]
            for j in range(len(base), 0, -1):
                for head in heads:
                    if self.cheb(pos[head[0]], pos[base[j - 1]]) == 1:
                        order = base[:j] + head + base[j:]
                        if order not in orders:
                            orders.append(order)
        path = keep = None
        size = self.map.size
        for bound in (1, 2, 4, 8, size):
            best = None
            budget = PLACEMENT_BUDGET if bound == size else BOUNDED_BUDGET
            for rank, order in enumerate(orders):
                found = self._place_line(order, bound, budget)
                if found is not None:
                    moved = sum(self.cheb(pos[m], c) for m, c in zip(order, found))
                    if best is None or (moved, rank) < best[0]:
                        best = ((moved, rank), order, found)
            if best is not None:
                _, keep, path = best
                break
        if path is not None:
            for m in keep:
                if occ[pos[m]] == m:
                    occ[pos[m]] = -1
            for m, c in zip(keep, path):
                pos[m] = c
                occ[c] = m
        else:
            keep = [line[0]]
            for m in line[1:]:
                if self.cheb(pos[m], pos[keep[-1]]) == 1:
                    keep.append(m)
                else:
                    break
        for m in line:
            self.leader_of[m] = m
        if len(keep) >= 2:
            self.parties[keep[0]] = list(keep)
            for m in keep:
                self.leader_of[m] = keep[0]

    def _place_line(self, line: list[int], bound: int, budget: int) -> list[int] | None:
        """Cells for ``line`` single file, the leader on its own cell and every member within
        ``bound`` steps of its own cell, or None (see ``_set_line``); at most ``budget`` nodes."""
        pos, occ = self.pos, self.occ
        members = set(line)
        nb, row, col = self.map.neighbours, self.map.row, self.map.col

        def options(k: int, ahead: int, used: set[int]) -> list[int]:
            home = pos[line[k]]
            hr, hc = row[home], col[home]
            cands = []
            for c in nb[ahead]:
                if c in used:
                    continue
                o = occ[c]
                if o >= 0 and o not in members:
                    continue
                dr, dc = row[c] - hr, col[c] - hc
                dist = max(dr, -dr, dc, -dc)  # Chebyshev distance from the member's own cell
                if dist <= bound:
                    cands.append((dist, c))
            cands.sort()
            return [c for _, c in cands]

        return single_file(len(line), pos[line[0]], options, budget)

    # -----------------------------------------------------------------------------------------
    # Turn order and the end
    def _check_over(self) -> bool:
        if len(self.living_sides()) <= 1:
            self._phase = OVER
            self.ally = None
            return True
        return False

    def _end_turn(self, declined_clean: bool = False) -> None:
        """Hand the move to the next living solo or leader in seat order (callers have checked
        that the game goes on); ``declined_clean``: nothing changed since the declined pairs
        were last cleaned."""
        if self.declined and not declined_clean:
            self._clean_declined()
        n, t = self.n, self.turn
        alive, lo = self.alive, self.leader_of
        nxt = t
        wrapped = False
        for i in range(t + 1, n):
            if alive[i] and lo[i] == i:
                nxt = i
                break
        else:  # none after t: the round wraps (t itself included, as the last one asked)
            for i in range(t + 1):
                if alive[i] and lo[i] == i:
                    nxt = i
                    wrapped = True
                    break
        if wrapped:
            self.round += 1
            self.quiet_rounds += 1
            if self.quiet_rounds >= self.no_progress_limit:
                self._phase = OVER  # the no-progress rule: the ranking stands as it is
                self.ally = None
                self.met = []
                self.respawned = False
                return
            if self.gary_roams:
                self._roam_gary()
        self.turn = self.actor = nxt
        self._phase = MOVE
        if self.met:
            self.met = []
        self.respawned = False

    # -----------------------------------------------------------------------------------------
    # Views, copies and saves
    def clone(self) -> ArenaState:
        other = object.__new__(ArenaState)
        other.game = self.game
        other.set_legal_mask(self.cached_legal_mask())
        other.map = self.map
        other.n = self.n
        other.health = self.health
        other.gary_strength = self.gary_strength
        other.gary_roams = self.gary_roams
        rng = random.Random()
        rng.setstate(self.rng.getstate())
        other.rng = rng
        other.pos = self.pos[:]
        other.hp = self.hp[:]
        other.max_hp = self.max_hp[:]
        other.strength = self.strength[:]
        other.score = self.score[:]
        other.alive = self.alive[:]
        other.counters = [c[:] for c in self.counters]
        other.leader_of = self.leader_of[:]
        other.parties = {k: v[:] for k, v in self.parties.items()}
        other.occ = self.occ[:]
        other.gary = self.gary
        other.turn = self.turn
        other.round = self.round
        other._phase = self._phase
        other.actor = self.actor
        other.ally = None if self.ally is None else self.ally[:]
        other.ally_stage = self.ally_stage
        other.met = self.met[:]
        other.declined = self.declined[:]
        other.respawned = self.respawned
        other.quiet_rounds = self.quiet_rounds
        other.no_progress_limit = self.no_progress_limit
        other.actions_taken = self.actions_taken
        other.step_limit = self.step_limit
        other.obs_cache = self.obs_cache  # immutable snapshot, safe to share
        return other

    # -----------------------------------------------------------------------------------------
    # The two ways to make a state: deal a fresh game, or load a saved one
    @classmethod
    def deal(cls, game: Any, rng: random.Random) -> ArenaState:
        """A fresh game: seeded terrain, bots on free cells away from each other, Gary on a free cell."""
        cfg = game.config
        need = 3 * cfg["num_bots"] + 2
        for _ in range(20):
            arena = generate_terrain(cfg["map_size"], cfg["terrain_density"], rng)
            if len(arena.free_cells) >= need:
                break
        else:  # pragma: no cover - the config check makes this practically impossible
            arena = ArenaMap(cfg["map_size"], [0] * cfg["map_size"] ** 2)
        arena = game.intern_map(arena)
        state = cls(game, arena, rng)
        # Each bot on a random cell of ``state.free_cells(avoid_crowd=True)``; the calm cells (free,
        # with no occupied neighbour) are kept up to date as bots are placed instead of being
        # recomputed from the whole map for every bot.
        calm = list(arena.free_cells)
        near = arena.neighbours
        for i in range(state.n):
            cells = calm or state.free_cells(avoid_crowd=False)
            cell = cells[rng.randrange(len(cells))]
            state.pos[i] = cell
            state.occ[cell] = i
            if calm:
                calm = list(filterfalse({cell, *near[cell]}.__contains__, calm))
        cells = state.free_cells(avoid_crowd=False)
        state.gary = cells[rng.randrange(len(cells))]
        return state

    @classmethod
    def saved_fields(cls, game: Any) -> Record:
        n, size = game.num_players, game.config["map_size"]
        bot, cell = Int(0, n - 1), Int(0, size * size - 1)
        amount = Int(0, MAX_COUNT)
        signed = Int(-MAX_COUNT, MAX_COUNT)
        per_bot = lambda spec: List(spec, size=n)  # noqa: E731

        def to_map(rows: list[str], where: str) -> ArenaMap:
            return game.map_for_rows(rows)

        def to_parties(lines: list[list[int]], where: str) -> dict[int, list[int]]:
            parties: dict[int, list[int]] = {}
            for line in lines:
                if line[0] in parties:
                    raise StateError(f"{where}: two parties are led by bot {line[0]}")
                parties[line[0]] = line
            return parties

        return Record(
            Field("rng", Rng()),
            Field("terrain", Convert(List(Str(size, "".join(TERRAIN_CHARS.values()), min_len=size), size=size),
                                     to_map, ArenaMap.rows), attr="map",
                  doc="rows of '.' free, 'M' mountain, 'F' forest"),
            Field("pos", per_bot(cell)),
            Field("hp", per_bot(amount)),
            Field("max_hp", per_bot(amount)),
            Field("strength_tenths", per_bot(Int(1, MAX_COUNT)), attr="strength"),
            Field("score", per_bot(signed)),
            Field("alive", per_bot(Bool())),
            Field("counters", per_bot(List(signed, size=NUM_COUNTERS)), doc=", ".join(COUNTER_NAMES)),
            Field("parties", Convert(List(List(bot, min_len=2, max_len=n), max_len=n // 2), to_parties,
                                     lambda parties: [parties[k] for k in sorted(parties)]),
                  doc="lines, leader first"),
            Field("gary", cell),
            Field("turn", bot),
            Field("round", amount),
            Field("phase", Choice(PHASES), attr="_phase"),
            Field("actor", bot),
            Field("ally", Optional(List(bot, size=2))),
            Field("ally_stage", Int(0, 1)),
            Field("met", List(bot, max_len=n)),
            Field("declined", Convert(List(List(bot, size=2), max_len=n * n),
                                      lambda pairs, where: [(a, b) for a, b in pairs], lambda pairs: pairs)),
            Field("respawned", Bool()),
            Field("quiet_rounds", Int(0, NO_PROGRESS_ROUNDS_PER_SIDE * size),
                  doc="rounds since the last alliance, join, battle or death (the no-progress rule)"),
            Field("actions_taken", amount, doc="actions taken this game (the time-left feature)"),
        )

    @classmethod
    def from_fields(cls, game: Any, values: dict[str, Any]) -> ArenaState:
        state = cls(game, values["terrain"], values["rng"])
        for field in game.saved_fields:
            setattr(state, field.attr, values[field.name])
        state.after_load()
        return state

    def after_load(self) -> None:
        self.leader_of = list(range(self.n))
        for lead, line in self.parties.items():
            for m in line:
                self.leader_of[m] = lead
        self.occ = [-1] * (self.map.size * self.map.size)
        for i in range(self.n):
            if self.alive[i] and self.occ[self.pos[i]] < 0:
                self.occ[self.pos[i]] = i
        self.set_legal_mask(None)

    def player_view(self, player: int) -> dict[str, Any]:
        data = self.game.saved_fields.dump(self, skip=("rng",))
        data["seat"] = player
        return data

    # -----------------------------------------------------------------------------------------
    def check_invariants(self) -> list[str]:
        problems: list[str] = []
        n, size, arena = self.n, self.map.size, self.map
        for i in range(n):
            if self.hp[i] < 0:
                problems.append(f"bot {i} has negative HP {self.hp[i]}")
            if self.hp[i] > self.max_hp[i]:
                problems.append(f"bot {i} has HP {self.hp[i]} above its maximum {self.max_hp[i]}")
            if self.strength[i] < 1:
                problems.append(f"bot {i} has strength {self.strength[i] / 10} below 0.1")
            if self.health > 0:
                if self.alive[i] != (self.hp[i] > 0):
                    problems.append(f"bot {i} alive={self.alive[i]} with HP {self.hp[i]}")
                c = self.counters[i]
                expected_hp = c[C_START_HP] + 2 * c[C_REWARD_HEALTH] - c[C_HP_LOST]
                if self.hp[i] != expected_hp:
                    problems.append(f"bot {i} has HP {self.hp[i]}, events say {expected_hp}")
            elif not self.alive[i]:
                problems.append(f"bot {i} died with health switched off")
            c = self.counters[i]
            expected = c[C_START_SCORE] + 2 * c[C_WON_LED] + c[C_WON_MEMBER] - c[C_LOST_LED] + 2 * c[C_REWARD_SCORE]
            if self.health == 0:
                expected -= 2 * c[C_GARY_LOST]
            if self.score[i] != expected:
                problems.append(f"bot {i} has score {self.score[i]}, events say {expected}")
            if self.alive[i] and not arena.passable[self.pos[i]]:
                problems.append(f"bot {i} stands on an obstacle")
        seen: dict[int, int] = {}
        for lead, line in self.parties.items():
            if line[0] != lead:
                problems.append(f"party {line} is filed under {lead}")
            if len(line) < 2:
                problems.append(f"party {line} has fewer than two members")
            for k, m in enumerate(line):
                if m in seen:
                    problems.append(f"bot {m} is in two parties")
                seen[m] = lead
                if not self.alive[m]:
                    problems.append(f"dead bot {m} is still in party {line}")
                if self.leader_of[m] != lead:
                    problems.append(f"bot {m} in party {line} has leader_of {self.leader_of[m]}")
                if k and chebyshev(size, self.pos[m], self.pos[line[k - 1]]) != 1:
                    problems.append(f"party {line} is not single file at {line[k - 1]}->{m}")
        for i in range(n):
            if i not in seen and self.leader_of[i] != i:
                problems.append(f"solo bot {i} has leader_of {self.leader_of[i]}")
        occ = [-1] * (size * size)
        for i in range(n):
            if self.alive[i]:
                if occ[self.pos[i]] >= 0:
                    problems.append(f"bots {occ[self.pos[i]]} and {i} share a cell")
                occ[self.pos[i]] = i
        if occ != self.occ:
            problems.append("occupancy grid does not match the bots' positions")
        if not arena.passable[self.gary]:
            problems.append("Gary stands on an obstacle")
        phase = self._phase
        if phase == ALLY:
            if self.ally is None or self.ally[0] != self.actor or self.ally[1] == self.actor \
                    or self.ally[1] not in self.met:
                problems.append(f"ally: pair {self.ally} is not the actor {self.actor} and a bot it just met")
        elif self.ally is not None or self.ally_stage:
            problems.append(f"ally: an alliance question {self.ally} outside the ally phase")
        if self.turn != self.actor:
            problems.append(f"turn: bot {self.turn}'s turn, but bot {self.actor} acts")
        if phase == MOVE and (self.met or self.respawned):
            problems.append("met: encounters or a respawn recorded before the actor has moved")
        if len(set(self.met)) != len(self.met):
            problems.append(f"met: a side is met twice ({self.met})")
        if self._phase != OVER:
            p = self.current_player()
            if not self.alive[p]:
                problems.append(f"dead bot {p} is asked to act")
            if self._phase == ALLY:
                if any(not self.is_acting(m) or m in self.parties for m in self.ally):
                    problems.append(f"alliance pair {self.ally} is not two living solos")
            elif not self.is_acting(p):
                problems.append(f"bot {p} acts but is not a living solo or leader")
            if len(self.living_sides()) <= 1:
                problems.append("the game should be over: one side remains")
            if self.quiet_rounds >= self.no_progress_limit:
                problems.append(f"quiet_rounds has reached the no-progress limit {self.no_progress_limit} "
                                "but the game is not over")
        elif len(self.living_sides()) > 1 and self.quiet_rounds < self.no_progress_limit:
            problems.append("the game is over but several sides remain")
        if not 0 <= self.quiet_rounds <= self.no_progress_limit:
            problems.append(f"quiet_rounds {self.quiet_rounds} outside [0, {self.no_progress_limit}]")
        return problems


# ---------------------------------------------------------------------------------------------
# Building positions from readable text (scenario tests, examples)
BOT_CHARS = "0123456789abcdef"


def from_text(
    game: Any,
    text: str,
    bots: dict[int, dict[str, Any]] | None = None,
    parties: list[list[int]] | tuple = (),
    dead: list[int] | tuple = (),
    turn: int = 0,
    seed: int = 0,
) -> ArenaState:
    """A position drawn as text: ``.`` free, ``M`` mountain, ``F`` forest, ``@`` Gary (on a free
    cell), ``0``–``9``/``a``–``f`` the bot with that (hex) seat number, standing on a free cell (a
    bot listed in ``dead`` lies there as a gravestone). ``bots`` sets per-seat ``strength``
    (float), ``hp``, ``max_hp`` and ``score``; ``parties`` lists lines, leader first. The map must
    be ``map_size`` square and hold every seat; it is ``turn``'s move.
    """
    from envs.core import make_rng

    rows = [row.strip() for row in text.strip().splitlines() if row.strip()]
    terrain_rows, gary, places = [], None, {}
    for r, row in enumerate(rows):
        chars = []
        for c, ch in enumerate(row):
            cell = r * len(rows) + c
            if ch == "@":
                gary = cell
                ch = "."
            elif ch in BOT_CHARS:
                places[BOT_CHARS.index(ch)] = cell
                ch = "."
            chars.append(ch)
        terrain_rows.append("".join(chars))
    arena = ArenaMap.from_rows(terrain_rows)
    if arena.size != game.config["map_size"]:
        raise ValueError(f"the picture is {arena.size} square but map_size is {game.config['map_size']}")
    state = ArenaState(game, arena, make_rng(seed))
    if sorted(places) != list(range(state.n)):
        raise ValueError(f"the picture shows seats {sorted(places)}, expected 0..{state.n - 1}")
    if gary is None:
        raise ValueError("the picture has no Gary (@)")
    state.gary = gary
    for i, cell in places.items():
        state.pos[i] = cell
    for i, stats in (bots or {}).items():
        if "strength" in stats:
            state.strength[i] = int(round(stats["strength"] * 10))
        if "hp" in stats:
            state.hp[i] = stats["hp"]
            state.counters[i][C_START_HP] = stats["hp"]
            state.max_hp[i] = max(state.max_hp[i], stats["hp"])
        if "max_hp" in stats:
            state.max_hp[i] = stats["max_hp"]
        if "score" in stats:
            state.score[i] = stats["score"]
            state.counters[i][C_START_SCORE] = stats["score"]
    for i in dead:
        state.alive[i] = False
        state.hp[i] = 0
        state.counters[i][C_START_HP] = 0
    for i in range(state.n):
        if state.alive[i]:
            state.occ[state.pos[i]] = i
    for line in parties:
        state.parties[line[0]] = list(line)
        for m in line:
            state.leader_of[m] = line[0]
    state.turn = state.actor = turn
    return state
