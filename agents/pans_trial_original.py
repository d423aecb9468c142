"""``pans_trial_v0/experienced-v2``: the original game's "Experienced" profile, decision for decision.

The original Pan's Trial ships three scripted opponents in its balance-testing harness
(``balance_testing.py`` in the public repository BlakeEvans28/Pans_Trial_3). This module plays its
Experienced profile on our engine. The logic is re-derived from that description, not copied; where
our engine asks a question in another shape (one Plane Shift action instead of a direction then a
line, one Restructure action for a pair of suits, a placement action naming the card) the
decision is the one the original's two steps reach.

How it decides (seat ``me``; all choices break ties by taking the first candidate in the order the
original lists its options, unless said otherwise):

* **Draft**: score each pickable card: King 120, Queen 80, Ten 55; +40 for a King while holding
  none; +15 for a King while the opponent holds none; +10 for a suit not yet in hand; plus a
  uniform random number in [0, 1) (from the agent's seeded generator); take the highest.
* **Traversing, Ballista landing, placement, Restructure**: one step of lookahead. Every option
  is applied to a copy of the position and scored by :func:`evaluate` plus an immediate bonus
  (only for a move or a pick-up: the card stepped onto or picked up is worth +24 / +30 as a
  Weapon, +8 as a Ballista, −16 / −18 as a Trap, +4 for anything else picked up; stepping onto the
  opponent +22 when armed, −14 when unarmed against an armed opponent). Option order: pick up,
  then moves up, down, left, right; landings direction by direction (up, down, left, right),
  nearest first.
* **Combat strike**: the highest-valued Weapon.
* **Appeasing card**: the card of the strongest suit in the trump order (by its suit's current
  role), then the highest value.
* **Request**: Steal Life when it is open and one's largest damage card is worth more than the
  opponent's smallest; else Plane Shift when open; else Restructure when one has taken more damage
  or has fewer legal moves than the opponent; else Ignore Us; else the first open request in the
  order Restructure, Ignore Us, Plane Shift, Steal Life.
* **Steal Life**: give one's largest damage card, take the opponent's smallest.
* **Plane Shift**: the (direction, line) whose result scores best, directions in the order up,
  down, left, right, lines 0-5.
* **Restructure**: the suit that currently holds the Walls, swapped with whichever other suit
  (in role order Traps, Ballista, Weapons) gives the best score after the swap.
* **Placement**: the first submitted Appeasing card still waiting goes first, into the hole (in
  reading order) whose result scores best.

:func:`evaluate` (the original's position score, from ``me``'s side):
4.5 × (opponent's damage − own damage) + 7.5 × (own Weapon cards − the opponent's)
+ 1.2 × (own hand size − the opponent's) + 1.1 × (own legal moves − the opponent's);
−20 when one's own damage is within 5 of the threshold, +20 when the opponent's is;
armed: +2.5 × (6 − distance to the opponent), unarmed: +2.0 × (6 − distance to the nearest Weapon
on the board, 6 when there is none); +15 while a combat waits for one's own strike, −10 while it
waits for the opponent's; +4 while one's own Ballista landing is to be chosen.

Where and why it differs from the original
------------------------------------------
1. **Appeasing suit order** (the one place where the original is broken for today's game): the
   original ranks suits by the reverse of the Omen order, i.e. Weapons > Ballista > Traps > Walls
   — the trump order of the version of the game it was written for. The current rules (and our
   engine, config ``trump_order``) rank Walls > Traps > Ballista > Weapons, so the original would
   lead with its weakest card. We rank by the game's actual trump order.
2. **Threshold**: "within 5" of ``damage_threshold`` (20 of 25 in the original, which had a fixed
   threshold), so a changed threshold keeps the meaning.
3. **Rules that differ between the two engines** change what the same decision leads to, not the
   decision: interacting with a Ballista launches the player here (the original put the card in
   hand); a hole under a player is not open for placement here; the second requester cannot
   answer Ignore Us here (the original offered it, and the profile took it as its last resort), so
   the profile falls back to the first open request in the original's order.
4. **Degenerate checks kept as played**: the original "looks ahead" before asking for Plane Shift
   by choosing a direction, which changes nothing on the board, so its test always passes — it
   asks for Plane Shift whenever Steal Life does not qualify. Its Restructure picks the first
   suit before anything can differ, so it always moves the current Walls suit. Both are kept:
   they are what the original plays, not errors against the rules.
5. Random tie-breaks in the draft use this agent's seeded generator, not the original's global
   one. The decisions are made on a state rebuilt from the seat's view (the hidden Omen order and
   the opponent's secret Appeasing card are sampled); no decision here depends on them.

``pans_trial_v0/experienced-v1`` (in ``agents/pans_trial.py``) is an earlier, looser reading of
the same profile and keeps its behaviour under its id.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np

from agents.base import Agent
from agents.registry import register
from envs.pans_trial import rules as R

#: The original's option orders, in our ids.
MOVE_ORDER = (0, 2, 3, 1)  # up, down, left, right (our directions: up, right, down, left)
DRAFT_BASE = {12: 120, 11: 80, 9: 55}  # King, Queen, Ten by rank index
NEAR_THRESHOLD = 5  # "within 5 of the threshold": the original's fixed 20 of 25


def torus_distance(a: int, b: int) -> int:
    dr = abs(a // R.SIZE - b // R.SIZE)
    dc = abs(a % R.SIZE - b % R.SIZE)
    return min(dr, R.SIZE - dr) + min(dc, R.SIZE - dc)


def _weapons(state: R.PansTrialState, p: int) -> list[int]:
    return [c for c in state.hands[p] if state.role_of(c) == R.WEAPONS]


def _moves(state: R.PansTrialState, p: int) -> int:
    return sum(1 for n in R.NEIGH[state.pos[p]] if not state.is_wall(n))


def evaluate(state: R.PansTrialState, me: int) -> float:
    """The original Experienced profile's score of ``state`` for seat ``me`` (see the module notes)."""
    op = 1 - me
    own_dmg, opp_dmg = state.dmg_total[me], state.dmg_total[op]
    own_w, opp_w = len(_weapons(state, me)), len(_weapons(state, op))
    score = (opp_dmg - own_dmg) * 4.5
    score += (own_w - opp_w) * 7.5
    score += (len(state.hands[me]) - len(state.hands[op])) * 1.2
    score += (_moves(state, me) - _moves(state, op)) * 1.1
    near = state.game.config["damage_threshold"] - NEAR_THRESHOLD
    if own_dmg >= near:
        score -= 20
    if opp_dmg >= near:
        score += 20
    here = state.pos[me]
    if own_w > 0:
        score += (6 - torus_distance(here, state.pos[op])) * 2.5
    else:
        targets = [s for s, c in enumerate(state.board) if c >= 0 and state.role_of(c) == R.WEAPONS]
        nearest = min((torus_distance(here, s) for s in targets), default=6)
        score += (6 - nearest) * 2.0
    if state.winner is None and state.stage == R.COMBAT:
        score += 15 if state.actor == me else -10
    if state.winner is None and state.stage == R.TARGET and state.actor == me:
        score += 4
    return score


def landing_order(state: R.PansTrialState, square: int) -> list[int]:
    """Ballista landings in the original's order: up, down, left, right, nearest first."""
    out: list[int] = []
    for d in MOVE_ORDER:
        for t in R.LINES[square][d]:
            if state.is_wall(t):
                break
            if t not in out:
                out.append(t)
    return out


def shift_action(direction: str, index: int) -> int:
    """Our Plane Shift action for the original's (direction, row or column index)."""
    if direction in ("left", "right"):
        return R.A_SHIFT + 2 * index + (direction == "right")
    return R.A_SHIFT + 12 + 2 * index + (direction == "down")


def _after(state: R.PansTrialState, action: int) -> R.PansTrialState:
    child = state.clone()
    child.apply_action(action)
    return child


class OriginalExperiencedAgent(Agent):
    """The original's Experienced profile (see the module notes)."""

    def reset(self, seat: int, game: Any) -> None:
        """``game`` is the configured ``Game``."""
        super().reset(seat, game)

    def act(self, observation: dict[str, np.ndarray], view: dict[str, Any]) -> int:
        legal = np.flatnonzero(observation["action_mask"]).tolist()
        if len(legal) == 1:
            return legal[0]
        if not hasattr(self, "game"):
            self.reset(self.seat, self.config)
        state = self.game.state_from_view(view, random.Random(self.rng.random()))
        return self.decide(state, int(view["seat"]), legal)

    # ------------------------------------------------------------------------------------------
    def decide(self, state: R.PansTrialState, me: int, legal: list[int]) -> int:
        """The profile's choice among ``legal`` in ``state`` (the full state as the seat sees it)."""
        st = state.stage
        if st == R.DRAFT:
            return self._draft(state, me, legal)
        if st == R.COMBAT:
            return max(legal, key=lambda a: R.VALUE[a - R.A_STRIKE])
        if st == R.APPEASE:
            strength, role = state.game.trump_strength, state.suit_role
            return max(legal, key=lambda a: (strength[role[R.SUIT_OF[a - R.A_APPEASE]]], R.VALUE[a - R.A_APPEASE]))
        if st == R.REQUEST:
            return self._request(state, me, legal)
        if st == R.STEAL_MINE:
            return max(legal, key=lambda a: R.VALUE[a - R.A_STEAL_MINE])
        if st == R.STEAL_THEIRS:
            return min(legal, key=lambda a: R.VALUE[a - R.A_STEAL_THEIRS])
        if st == R.TRAVERSE:
            order = [R.A_INTERACT, *MOVE_ORDER]
            return self._best(state, me, [a for a in order if a in legal])
        if st == R.TARGET:
            return self._best(state, me, [R.A_TARGET + t for t in landing_order(state, state.pos[me])])
        if st == R.SHIFT_PICK:
            options = [shift_action(d, i) for d in ("up", "down", "left", "right") for i in range(R.SIZE)]
            return self._best(state, me, options)
        if st == R.RESTRUCTURE_PICK:
            walls = state.suit_role.index(R.WALLS)
            others = [state.suit_role.index(r) for r in (R.TRAPS, R.BALLISTA, R.WEAPONS)]
            pairs = [R.A_RESTRUCTURE + R.SUIT_PAIRS.index(tuple(sorted((walls, s)))) for s in others]
            return self._best(state, me, pairs)
        if st == R.PLACE:
            loser = 1 - state.appease_winner
            first = 0 if state.first_submitter == loser else 1  # pending = [loser's, winner's]
            k = first if state.pending[first] >= 0 else 1 - first
            return self._best(state, me, [a for a in legal if (a - R.A_PLACE) // 36 == k])
        return legal[0]

    def _draft(self, state: R.PansTrialState, me: int, legal: list[int]) -> int:
        own, theirs = state.hands[me], state.hands[1 - me]
        own_suits = {R.SUIT_OF[c] for c in own}
        own_king = any(R.IS_KING[c] for c in own)
        their_king = any(R.IS_KING[c] for c in theirs)

        def score(a: int) -> float:
            c = a - R.A_DRAFT
            base = DRAFT_BASE[c % 13]
            if R.IS_KING[c] and not own_king:
                base += 40
            if R.IS_KING[c] and not their_king:
                base += 15
            if R.SUIT_OF[c] not in own_suits:
                base += 10
            return base + self.rng.random()

        return max(legal, key=score)

    def _best(self, state: R.PansTrialState, me: int, options: list[int]) -> int:
        best, best_score = options[0], -float("inf")
        for a in options:
            score = evaluate(_after(state, a), me) + immediate_bonus(state, me, a)
            if score > best_score:
                best, best_score = a, score
        return best

    def _request(self, state: R.PansTrialState, me: int, legal: list[int]) -> int:
        op = 1 - me
        open_ = {a - R.A_REQUEST for a in legal}
        if R.STEAL_LIFE in open_:
            own_high = max(R.VALUE[c] for c in state.damage[me])
            opp_low = min(R.VALUE[c] for c in state.damage[op])
            if own_high > opp_low:
                return R.A_REQUEST + R.STEAL_LIFE
        if R.PLANE_SHIFT in open_:
            return R.A_REQUEST + R.PLANE_SHIFT  # the original's look-ahead test always passes
        if R.RESTRUCTURE in open_ and (
            state.dmg_total[me] > state.dmg_total[op] or _moves(state, me) < _moves(state, op)
        ):
            return R.A_REQUEST + R.RESTRUCTURE
        for r in (R.IGNORE_US, R.RESTRUCTURE, R.PLANE_SHIFT, R.STEAL_LIFE):
            if r in open_:
                return R.A_REQUEST + r
        return legal[0]


def immediate_bonus(state: R.PansTrialState, me: int, action: int) -> float:
    """The original's bonus for the card a pick-up takes or a move steps onto (0 otherwise)."""
    if action == R.A_INTERACT:
        c = state.board[state.pos[me]]
        role = state.role_of(c) if c >= 0 else None
        return {R.WEAPONS: 30, R.BALLISTA: 8, R.TRAPS: -18}.get(role, 4)
    if R.A_MOVE <= action < R.A_INTERACT:
        target = R.NEIGH[state.pos[me]][action - R.A_MOVE]
        c = state.board[target]
        bonus = {R.WEAPONS: 24.0, R.BALLISTA: 8.0, R.TRAPS: -16.0}.get(state.role_of(c), 0.0) if c >= 0 else 0.0
        if target == state.pos[1 - me]:
            if _weapons(state, me):
                bonus += 22
            elif _weapons(state, 1 - me):
                bonus -= 14
        return bonus
    return 0.0


register(
    "pans_trial_v0/experienced-v2",
    OriginalExperiencedAgent,
    "the original game's Experienced profile decision for decision (one-step lookahead over its "
    "position score); Appeasing cards ranked by today's trump order (see agents/pans_trial_original.py)",
)
