"""Heuristic players for Pan's Trial.

``pans_trial_v0/experienced-v1`` is our own loose reading of the original game's "Experienced"
profile, written from a summary of the original game before the original's code was read: it shares
the idea (a one-ply lookahead that scores every legal action by an evaluation of the position it
leads to) and the first four weights, but not the rest — its distance and near-death terms, its
two-ply Plane Shift against the opponent's best reply, the lookahead through chained decisions,
and its draft, Appeasing, request and placement rules are its own. It is *not* the original's
profile: on 5,238 decisions with a real choice (150 games of the original's profile against
itself) it picks the same action as ``experienced-v2`` — which follows the original decision for
decision, see ``agents/pans_trial_original.py`` — 73% of the time (draft 76%, Traversing 74%,
Ballista landing 67%, Appeasing card 82%, request 58%, Plane Shift 27%, placement 38%); and it is
stronger: it wins 67.8% [63.0, 72.1] of 400 seat-rotated games against ``experienced-v2``. The id
keeps this behaviour. It only uses the seat's ``view``: the lookahead works on
``state_from_view``, which fills in what the seat cannot know (the Omen order before its reveal,
the opponent's secret Appeasing card) by sampling.

Evaluation, from the deciding seat's side::

    4.5 * (opponent damage - own damage)
  + 7.5 * (weapon cards held - opponent's weapon cards)
  + 1.2 * (hand size - opponent's hand size)
  + 1.1 * (own legal moves - opponent's legal moves)
  +/- 20 when the opponent / oneself is within one King (12) of the damage threshold
  + distance terms: armed and better armed -> approach the opponent; unarmed -> approach the
    nearest weapon on the board and keep away from an armed opponent.

Decisions that the evaluation cannot see through (the draft, the Appeasing card) use simple rules:
draft the highest value; appease with the card most likely to win that is not a weapon, cheapest
first.

``pans_trial_v0/heuristic-v1`` is ours. It also decides on a state rebuilt from its view, and:

* Traversing (and the launch or strike that completes a turn): alpha-beta minimax over the next
  three Traversing turns (mine, the opponent's, mine), every chained decision inside a turn (a
  ballista landing, the strikes of a combat) searched without using up depth; below the root a
  striker uses its largest weapon and only the four best-looking ballista landings plus the one on
  the opponent are explored. The end of the phase is a leaf valued by who can win the Appeasing.
* Requests, Restructure, Steal Life, Plane Shift, placement: the same search over the rest of the
  request sequence (the opponent's reply included), lines through a player only for Plane Shift.
* Appeasing: for every pair (my card, a card the opponent may play; hands are public) it resolves
  the trump and searches the request sequence that follows, then plays the card with the best
  average of its worst case and its mean over the opponent's cards. It never looks at the
  opponent's secret card (the rebuilt state's sample is overwritten by each candidate).
* Draft: highest value.

Its evaluation (:func:`h_evaluate`, in damage points) is the damage race: damage difference;
0.35 per point of weapon value held; 0.12 per point of other hand cards; a bonus when one's largest
(or two largest) weapons would finish the opponent; weapons lying on the board weighted by
value / (1 + distance), mine against theirs; the better-armed side wants contact; the seat to move
next to the other, armed, has the first strike (decisive when lethal); mobility, being walled in and
forced passes; at the Appeasing, the edge of whoever holds the strongest card (they can always win
it), grown by the Steal Life swap or the Restructure it would allow, decisive when that swap kills.

``pans_trial_v0/heuristic-noisy-v1`` is heuristic-v1 playing a uniformly random legal action in
30% of its real choices.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np

from agents.base import Agent
from agents.registry import register
from envs.pans_trial import rules as R

WIN = 1000.0
NEAR_DEATH = 12

# Decisions that belong to the same move of the same player: the lookahead follows them greedily.
_CHAIN = (R.TARGET, R.COMBAT, R.RESTRUCTURE_PICK, R.STEAL_MINE, R.STEAL_THEIRS, R.SHIFT_PICK, R.PLACE)


def _torus_distance(a: int, b: int) -> int:
    dr = abs(a // R.SIZE - b // R.SIZE)
    dc = abs(a % R.SIZE - b % R.SIZE)
    return min(dr, R.SIZE - dr) + min(dc, R.SIZE - dc)


def evaluate(state: R.PansTrialState, me: int) -> float:
    """The Experienced profile's score of ``state`` for seat ``me``."""
    op = 1 - me
    if state.winner is not None:
        if state.winner == R.DRAW:
            return 0.0
        return WIN if state.winner == me else -WIN
    thr = state.game.config["damage_threshold"]
    role = state.suit_role
    weapons = [sum(1 for c in h if role[R.SUIT_OF[c]] == R.WEAPONS) for h in state.hands]
    moves = [sum(1 for n in R.NEIGH[state.pos[q]] if not state.is_wall(n)) for q in (0, 1)]
    score = 4.5 * (state.dmg_total[op] - state.dmg_total[me])
    score += 7.5 * (weapons[me] - weapons[op])
    score += 1.2 * (len(state.hands[me]) - len(state.hands[op]))
    score += 1.1 * (moves[me] - moves[op])
    if state.dmg_total[op] >= thr - NEAR_DEATH:
        score += 20.0
    if state.dmg_total[me] >= thr - NEAR_DEATH:
        score -= 20.0
    dist = _torus_distance(state.pos[me], state.pos[op])
    if weapons[me] > 0 and weapons[me] >= weapons[op]:
        score -= 0.8 * dist
    elif weapons[me] == 0:
        if weapons[op] > 0:
            score += 0.5 * dist
        targets = [s for s, c in enumerate(state.board) if c >= 0 and role[R.SUIT_OF[c]] == R.WEAPONS]
        if targets:
            score -= 0.6 * min(_torus_distance(state.pos[me], s) for s in targets)
    return score


class _ViewSearchAgent(Agent):
    """Shared by the search agents: they think on a full state rebuilt from the seat's view."""

    def _legal_and_state(self, observation: dict[str, np.ndarray], view: dict[str, Any]):
        """The legal actions, and a state sampled from the view (None when there is no choice)."""
        legal = np.flatnonzero(observation["action_mask"]).tolist()
        if len(legal) == 1:
            return legal, None
        if self.game is None:
            raise RuntimeError(f"{self.agent_id or type(self).__name__}: act() called before reset(seat, game)")
        return legal, self.game.state_from_view(view, random.Random(self.rng.random()))


class ExperiencedAgent(_ViewSearchAgent):
    """One-ply lookahead over :func:`evaluate` (two-ply for Plane Shift)."""

    def act(self, observation: dict[str, np.ndarray], view: dict[str, Any]) -> int:
        legal, state = self._legal_and_state(observation, view)
        if state is None:
            return legal[0]
        me = int(view["seat"])
        if state.stage == R.DRAFT:
            return max(legal, key=lambda a: (R.VALUE[a - R.A_DRAFT], self.rng.random()))
        if state.stage == R.APPEASE:
            return self._appease(state, me, legal)
        best, best_score = [], -float("inf")
        for a in legal:
            score = self._value_after(state, a, me, depth=2)
            if score > best_score + 1e-9:
                best, best_score = [a], score
            elif abs(score - best_score) <= 1e-9:
                best.append(a)
        return best[self.rng.randrange(len(best))]

    def _value_after(self, state: R.PansTrialState, action: int, me: int, depth: int) -> float:
        child = state.clone()
        child.apply_action(action)
        if child.winner is not None:
            return evaluate(child, me)
        if state.stage == R.SHIFT_PICK and child.current_player() != me:
            # two-ply: assume the opponent answers with the reply that is worst for us
            return min(evaluate(self._after(child, b), me) for b in child.legal_actions())
        if depth > 0 and child.current_player() == me and child.stage in _CHAIN:
            return max(self._value_after(child, b, me, depth - 1) for b in child.legal_actions())
        if depth > 0 and child.current_player() == me and child.stage == R.REQUEST:
            return max(self._value_after(child, b, me, depth - 1) for b in child.legal_actions())
        return evaluate(child, me)

    @staticmethod
    def _after(state: R.PansTrialState, action: int) -> R.PansTrialState:
        child = state.clone()
        child.apply_action(action)
        return child

    def _appease(self, state: R.PansTrialState, me: int, legal: list[int]) -> int:
        op = 1 - me
        strength = state.game.trump_strength
        role = state.suit_role
        theirs = state.hands[op]

        def beats(a: int, b: int) -> bool:
            if R.SUIT_OF[a] == R.SUIT_OF[b]:
                return R.VALUE[a] > R.VALUE[b]
            return strength[role[R.SUIT_OF[a]]] > strength[role[R.SUIT_OF[b]]]

        def score(action: int) -> tuple:
            c = action - R.A_APPEASE
            win = sum(beats(c, d) for d in theirs) / max(1, len(theirs))
            weapon = role[R.SUIT_OF[c]] == R.WEAPONS
            return (win - (0.6 if weapon else 0.0), -R.VALUE[c], self.rng.random())

        return max(legal, key=score)


register(
    "pans_trial_v0/experienced-v1",
    ExperiencedAgent,
    "our loose reading of the original's Experienced profile (not the original: see experienced-v2): "
    "one-ply lookahead over a damage/weapons/mobility/distance evaluation, two-ply for Plane Shift",
)


# ================================================================================================
# heuristic-v1: our own player (alpha-beta search over a rebuilt state, damage-race evaluation)
# ================================================================================================
#
# Everything below works on a state rebuilt from the seat's view (``state_from_view``); nothing
# reads the true state. The search copies states with the engine's cheap clone (the rng is shared:
# it is only consumed by the set-up, which the search never replays), generates moves with the
# engine's ``legal_actions()`` and applies them with ``apply_unchecked``.

_DIST = [[0] * R.NUM_SQUARES for _ in range(R.NUM_SQUARES)]
for _a in range(R.NUM_SQUARES):
    for _b in range(R.NUM_SQUARES):
        _DIST[_a][_b] = _torus_distance(_a, _b)

def _clone(s: R.PansTrialState) -> R.PansTrialState:
    """A cheap copy for the search: shares the rng (only the set-up draws from it) and no caches."""
    return s.clone(share_rng=True)


def _step(s: R.PansTrialState, a: int) -> R.PansTrialState:
    o = _clone(s)
    o.apply_unchecked(a)
    return o


#: Evaluation weights (damage points are the unit).
W_AMMO = 0.35  # per point of weapon value held (it becomes damage on the opponent when used)
W_HAND = 0.12  # per point of a non-weapon hand card (appeasing strength, a future weapon)
W_KILL = 15.0  # my largest weapon is enough to finish the opponent
W_KILL2 = 6.0  # my two largest weapons are enough
W_FIRST = 0.5  # the seat to move stands next to the other and is armed: its first-strike edge
W_FIRST_KILL = 40.0  # ... and that first strike is lethal
W_BOARD_WEAPON = 0.35  # reachable weapon cards on the board (value / (1 + distance)), mine vs theirs
W_CHASE = 0.4  # per square: the better-armed side wants to be close, the other far away
W_MOBILITY = 0.3  # per legal move
W_TRAPPED = 3.0  # walled in (no legal move)
W_FORCED = 1.0  # per forced pass owed
W_APPEASE = 5.0  # the Appeasing winner's edge (requests first), at phase end
W_STEAL = 1.0  # ... plus this per point a Steal Life swap would move
W_STEAL_KILL = 60.0  # ... or this when that swap would be lethal
W_RESTRUCTURE = 0.5  # ... or this per point of firepower a Restructure would shift to the winner


_SUIT_OR_NONE = R.SUIT_OF + [-1]  # index -1 (a hole) gives -1
_WALL_FREE_NEIGH = R.NEIGH


def _weapons(s: R.PansTrialState, p: int) -> list[int]:
    ws = s.suit_role.index(R.WEAPONS)
    return sorted((R.VALUE[c] for c in s.hands[p] if c // 13 == ws), reverse=True)


def _moves(s: R.PansTrialState, p: int) -> int:
    board = s.board
    wall = s.suit_role.index(R.WALLS)
    n = 0
    for q in R.NEIGH[s.pos[p]]:
        if _SUIT_OR_NONE[board[q]] != wall:
            n += 1
    return n


def _best_appease_card(s: R.PansTrialState, p: int) -> tuple:
    strength = s.game.trump_strength
    role = s.suit_role
    return max(((strength[role[R.SUIT_OF[c]]], R.VALUE[c]) for c in s.hands[p]), default=(-1, 0))


def h_evaluate(s: R.PansTrialState, me: int) -> float:
    """Static value of ``s`` for seat ``me`` in damage points (positive is good for ``me``)."""
    if s.winner is not None:
        if s.winner == R.DRAW:
            return 0.0
        return WIN if s.winner == me else -WIN
    op = 1 - me
    thr = s.game.config["damage_threshold"]
    life = (thr - s.dmg_total[0], thr - s.dmg_total[1])
    role = s.suit_role
    ws = role.index(R.WEAPONS)
    value = R.VALUE
    score = 0.0
    w = [None, None]
    for p, sign in ((me, 1.0), (op, -1.0)):
        q = 1 - p
        wp = []
        other = 0
        for c in s.hands[p]:
            if c // 13 == ws:
                wp.append(value[c])
            else:
                other += value[c]
        wp.sort(reverse=True)
        w[p] = wp
        v = -s.dmg_total[p] + W_AMMO * sum(wp) + W_HAND * other
        if wp:
            if wp[0] >= life[q]:
                v += W_KILL
            elif len(wp) > 1 and wp[0] + wp[1] >= life[q]:
                v += W_KILL2
        m = _moves(s, p)
        v += W_MOBILITY * m
        if m == 0:
            v -= W_TRAPPED
        v -= W_FORCED * s.forced[p]
        score += sign * v
    pm, po = s.pos[me], s.pos[op]
    dist = _DIST[pm][po]
    # weapons lying on the board: closer to me than to the opponent is good
    score += W_BOARD_WEAPON * _board_weapon_pull(s.board, ws, pm, po)
    # chasing: the side with more firepower wants contact (scaled by the firepower gap, so that a
    # weapon is never worth less than nothing; 3 is the typical distance)
    gap = sum(w[me]) - sum(w[op])
    if gap:
        score += W_CHASE * max(-1.0, min(1.0, gap / 10.0)) * (3 - dist)
    # the seat to move next to an armed opponent gets the first strike
    if dist == 1 and s.stage == R.TRAVERSE:
        x = s.actor
        if w[x] and s.forced[x] == 0 and not s.is_wall(s.pos[1 - x]):
            sign = 1.0 if x == me else -1.0
            if w[x][0] >= life[1 - x]:
                score += sign * W_FIRST_KILL
            else:
                score += sign * W_FIRST * w[x][0]
    if s.stage == R.APPEASE:
        score += _appease_edge(s, me, thr)
    return score


def _appease_edge(s: R.PansTrialState, me: int, thr: int) -> float:
    """What the coming Appeasing is worth to ``me``: whoever holds the strongest card can win it,
    and the winner may at least Steal Life (their largest damage card for the loser's smallest)."""
    win = 0 if _best_appease_card(s, 0) > _best_appease_card(s, 1) else 1
    lose = 1 - win
    sign = 1.0 if win == me else -1.0
    steal = 0.0
    if s.damage[0] and s.damage[1]:
        swing = max(R.VALUE[c] for c in s.damage[win]) - min(R.VALUE[c] for c in s.damage[lose])
        if swing > 0:
            if s.dmg_total[lose] + swing >= thr:
                return sign * W_STEAL_KILL
            steal = W_STEAL * swing
    # Restructure: the best swap of two suits' roles for the winner's firepower over the loser's
    role = s.suit_role
    per_suit = [[0] * 4, [0] * 4]
    for p in (0, 1):
        for c in s.hands[p]:
            per_suit[p][c // 13] += R.VALUE[c]
    ws = role.index(R.WEAPONS)
    now = per_suit[win][ws] - per_suit[lose][ws]
    best = 0.0
    for x in range(4):
        if x != ws:
            best = max(best, per_suit[win][x] - per_suit[lose][x] - now)
    return sign * (W_APPEASE + max(steal, W_RESTRUCTURE * best))


_INV1 = [1.0 / (1 + d) for d in range(8)]

#: (weapon suit, my square, their square, *board) -> the board-weapon pull. A search changes the
#: board only by shifts, so most evaluations repeat a key; emptied when it grows past the bound.
_PULL_CACHE: dict[tuple, float] = {}
_PULL_CACHE_MAX = 20_000  # about 10 MB


def _board_weapon_pull(board: list[int], ws: int, pm: int, po: int) -> float:
    """Weapon cards on the board, each worth its value times how much nearer it lies to ``pm``
    than to ``po`` (``1 / (1 + distance)``), summed in square order."""
    key = (ws, pm, po, *board)
    bw = _PULL_CACHE.get(key)
    if bw is None:
        if len(_PULL_CACHE) >= _PULL_CACHE_MAX:
            _PULL_CACHE.clear()
        dm, do = _DIST[pm], _DIST[po]
        suit, value = _SUIT_OR_NONE, R.VALUE
        bw = 0.0
        for sq_, c in enumerate(board):
            if suit[c] == ws:
                bw += value[c] * (_INV1[dm[sq_]] - _INV1[do[sq_]])
        _PULL_CACHE[key] = bw
    return bw


class HeuristicAgent(_ViewSearchAgent):
    """Alpha-beta search over the rebuilt state with :func:`h_evaluate` (see the module notes)."""

    depth = 3  # Traversing plies searched (chained decisions inside a turn are free)
    max_targets = 4  # ballista landings explored below the root
    appease_worst = 0.5  # Appeasing: weight of the worst case against the mean over their cards

    # -- entry point ----------------------------------------------------------------------------
    def act(self, observation: dict[str, np.ndarray], view: dict[str, Any]) -> int:
        legal, state = self._legal_and_state(observation, view)
        if state is None:
            return legal[0]
        me = int(view["seat"])
        self.me = me
        st = state.stage
        if st == R.DRAFT:
            return self._draft(state, me, legal)
        if st == R.APPEASE:
            return self._appease(state, me, legal)
        # a launch or a strike belongs to the Traversing turn being played: same depth left
        depth = self.depth - 1 if st in (R.TRAVERSE, R.TARGET, R.COMBAT) else 2
        best, best_score = [], -float("inf")
        for a in legal:
            v = self._search(_step(state, a), depth, -float("inf"), float("inf"))
            if v > best_score + 1e-9:
                best, best_score = [a], v
            elif v >= best_score - 1e-9:
                best.append(a)
        return best[self.rng.randrange(len(best))]

    # -- search ---------------------------------------------------------------------------------
    def _children(self, s: R.PansTrialState) -> list[int]:
        st = s.stage
        acts = s.legal_actions()
        if st == R.COMBAT and len(acts) > 1:
            return [max(acts, key=lambda a: R.VALUE[a - R.A_STRIKE])]
        if st == R.SHIFT_PICK:
            # only the lines through a player matter much for the search
            keep = []
            for p in (0, 1):
                r, c = divmod(s.pos[p], R.SIZE)
                keep += [R.A_SHIFT + 2 * r, R.A_SHIFT + 2 * r + 1, R.A_SHIFT + 12 + 2 * c,
                         R.A_SHIFT + 13 + 2 * c]
            return sorted(set(keep))
        if st == R.TARGET and len(acts) > self.max_targets:
            # keep the few most promising landings (static value for the seat choosing)
            # (landing on the opponent, i.e. combat, is always kept)
            sign = 1.0 if s.actor == self.me else -1.0
            hit = R.A_TARGET + s.pos[1 - s.actor]
            rest = [a for a in acts if a != hit]
            rest.sort(key=lambda a: -sign * h_evaluate(_step(s, a), self.me))
            keep = rest[:self.max_targets]
            if hit in acts:
                keep.insert(0, hit)
            return keep
        if st == R.STEAL_MINE:
            return [max(acts, key=lambda a: R.VALUE[a - R.A_STEAL_MINE])]
        if st == R.STEAL_THEIRS:
            return [min(acts, key=lambda a: R.VALUE[a - R.A_STEAL_THEIRS])]
        return acts

    def _search(self, s: R.PansTrialState, depth: int, alpha: float, beta: float) -> float:
        me = self.me
        if s.winner is not None:
            if s.winner == R.DRAW:
                return 0.0
            return (WIN + depth) if s.winner == me else -(WIN + depth)
        st = s.stage
        if st == R.APPEASE or st == R.DRAFT:
            return h_evaluate(s, me)
        if st == R.PLACE:
            return h_evaluate(s, me)
        if depth <= 0 and st in (R.TRAVERSE, R.REQUEST):
            return h_evaluate(s, me)
        acts = self._children(s)
        nd = depth - 1 if st in (R.TRAVERSE, R.REQUEST) else depth
        if s.actor == me:
            v = -float("inf")
            for a in acts:
                v = max(v, self._search(_step(s, a), nd, alpha, beta))
                if v >= beta:
                    return v
                alpha = max(alpha, v)
            return v
        v = float("inf")
        for a in acts:
            v = min(v, self._search(_step(s, a), nd, alpha, beta))
            if v <= alpha:
                return v
            beta = min(beta, v)
        return v

    # -- draft and Appeasing ----------------------------------------------------------------------
    def _draft(self, state: R.PansTrialState, me: int, legal: list[int]) -> int:
        # Roles are secret until the draft ends, so every suit is alike: take the highest value.
        # (Bonuses for a one-suit hand or for breaking up the opponent's suit measured no better.)
        return max(legal, key=lambda a: (R.VALUE[a - R.A_DRAFT], self.rng.random()))

    def _appease(self, state: R.PansTrialState, me: int, legal: list[int]) -> int:
        op = 1 - me
        mine = [a - R.A_APPEASE for a in legal]
        theirs = state.hands[op][:]
        # value of each (my card, their card) pair: search the request phase that follows
        table = []
        for c in mine:
            row = []
            for o in theirs:
                s = _clone(state)
                s.appease_card = [-1, -1]  # forget the sampled card: each candidate replaces it
                s.actor = me
                s.apply_unchecked(R.A_APPEASE + c)  # mine, then theirs: the trick is resolved
                s.apply_unchecked(R.A_APPEASE + o)
                row.append(self._search(s, 2, -float("inf"), float("inf")))
            table.append(row)
        # choose: the average of the worst case and the mean over their possible cards
        def score(i):
            row = table[i]
            return self.appease_worst * min(row) + (1.0 - self.appease_worst) * sum(row) / len(row)
        best = max(range(len(mine)), key=lambda i: (score(i), self.rng.random()))
        return R.A_APPEASE + mine[best]


register(
    "pans_trial_v0/heuristic-v1",
    HeuristicAgent,
    "alpha-beta search (3 Traversing plies, request phase searched) over a damage-race evaluation; "
    "Appeasing card chosen by searching the requests each pair of cards leads to",
)


class NoisyHeuristicAgent(HeuristicAgent):
    """``heuristic-v1`` that plays a uniformly random legal action instead in a share of its
    decisions with a real choice (a weaker, less predictable sparring partner)."""

    noise = 0.3

    def act(self, observation: dict[str, np.ndarray], view: dict[str, Any]) -> int:
        legal = np.flatnonzero(observation["action_mask"]).tolist()
        if len(legal) > 1 and self.rng.random() < self.noise:
            return legal[self.rng.randrange(len(legal))]
        return super().act(observation, view)


register(
    "pans_trial_v0/heuristic-noisy-v1",
    NoisyHeuristicAgent,
    "heuristic-v1 with 30% of its real choices replaced by a uniformly random legal action",
)

# The original game's Experienced profile, decision for decision (its own module).
import agents.pans_trial_original  # noqa: E402, F401
