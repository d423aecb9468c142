"""Heuristic players for Pan's Trial.

``pans_trial_v0/experienced-v1`` follows the original game's "Experienced" profile as described in
the research sheet: a one-ply lookahead that scores every legal action by an evaluation of the
position it leads to (two-ply for Plane Shift, where the opponent's best reply is assumed). It only
uses the seat's ``view``: the lookahead works on ``state_from_view``, which fills in what the seat
cannot know (the Omen order before its reveal, the opponent's secret Appeasing card) by sampling.

Evaluation, from the deciding seat's side (weights from the research sheet):

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
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np

import envs
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


class ExperiencedAgent(Agent):
    """One-ply lookahead over :func:`evaluate` (two-ply for Plane Shift)."""

    def reset(self, seat: int, config: dict[str, Any]) -> None:
        super().reset(seat, config)
        self.game = envs.make_game("pans_trial_v0", **config)

    def act(self, observation: dict[str, np.ndarray], view: dict[str, Any]) -> int:
        legal = np.flatnonzero(observation["action_mask"]).tolist()
        if len(legal) == 1:
            return legal[0]
        if not hasattr(self, "game"):
            self.reset(self.seat, self.config)
        me = int(view["seat"])
        state = self.game.state_from_view(view, random.Random(self.rng.random()))
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
    "the original's Experienced profile: one-ply lookahead over a damage/weapons/mobility/distance "
    "evaluation, two-ply for Plane Shift",
)
