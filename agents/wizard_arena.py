"""Wizard Arena players.

``wizard_arena_v0/heuristic-v1`` reads only its seat's ``view`` (the whole public state) and the
action mask:

* moving: every legal step (and staying) is scored by the encounters it would bring nearer — weaker
  sides to beat, solos it would lead or absorb, and Gary when the odds are good attract; parties it
  would only follow and stronger sides repel; every pull fades with the walking distance (a
  breadth-first search over the map, so round obstacles) from the cell the leader would step to to
  the nearest member of the other side; squeezes cost a little. On top, a plan: the most rewarding
  encounter (discounted by its distance now) is the goal, and a step that leaves it nearer along
  the shortest path (round the terrain and round the bots in the way, its own coiled line
  included) wins over the sum of pulls, so the bot never settles between two of them. A
  party may step onto its tail or first follower to turn round (the rules re-form the line), so it
  never freezes with its line pointing away;
* refused alliances: a solo that declined (or was declined by) the solo next to it is ignored while
  the position is as it was; once strengths, scores or the sides changed and the alliance would
  pay, the bot steps apart (which clears the refusal) and comes back to ask again;
* alliances: accepts when it would lead the new party, or follow into the strongest side on the map,
  unless uniting everyone would end the game while it does not rank in the upper half (a tie in the
  middle is worth nothing);
* leading the ranking by a clear margin, it heads for the solos that would join it rather than
  for Gary (more score changes no rank; uniting the sides ends the game);
* Gary: challenges when the exact best-of-three odds are good enough — long odds while HP is
  plentiful (a loss costs HP, not score), an even bet without health, near certainty when a loss
  could kill;
* rewards: health when low on HP, strength until beating Gary is near certain, otherwise score.

``wizard_arena_v0/heuristic-noisy-v1`` is heuristic-v1 with 15% of its move decisions (those with a
choice) replaced by a uniformly random legal move.

``wizard_arena_v0/lone-wolf-v1`` plays for first place alone, where heuristic-v1 plays for a good rank:
it never agrees to follow (an alliance it would not lead is declined, and such a solo is walked away
from, not towards), and it unites the last two sides, ending the game, only when it would then rank
first outright (heuristic-v1 does so whenever it ranks in the upper half). Everything else is
heuristic-v1's. The winner leads the final party in nearly every game, so a follower almost never
wins; the price is fewer battles won as a member.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np

from agents.base import Agent
from agents.registry import register
from envs.core.game import Game
from envs.wizard_arena.map import DIRECTIONS, ArenaMap, spread
from envs.wizard_arena.rules import (
    ALLY_ACCEPT, ALLY_DECLINE, CHALLENGE, NO_CHALLENGE, REWARD_HEALTH, REWARD_SCORE, REWARD_STRENGTH, STAY,
)

GAME = "wizard_arena_v0"


#: Worth of one step nearer the planned encounter, against the sum of pulls (at most a few units).
PLAN_WEIGHT = 2.0

@lru_cache(maxsize=65536)
def win_probability(mine: int, theirs: int) -> float:
    """Chance that strength ``mine`` (tenths) wins best of three D20 bouts against ``theirs``
    (tied bouts rolled again)."""
    wins = losses = 0
    for x in range(1, 21):
        for y in range(1, 21):
            a, b = x * mine, y * theirs
            wins += a > b
            losses += a < b
    if wins + losses == 0:
        return 0.5
    p = wins / (wins + losses)
    return p * p * (3 - 2 * p)


class HeuristicAgent(Agent):
    """Greedy one-step scorer over the public state (see the module docstring)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        #: partner -> (strengths, scores, number of sides) when our alliance was last declined
        self._declined_at: dict[int, tuple] = {}

    def reset(self, seat: int, game: Game) -> None:
        super().reset(seat, game)
        self._declined_at = {}

    def act(self, observation: dict[str, np.ndarray], view: dict[str, Any]) -> int:
        mask = observation["action_mask"]
        legal = [int(a) for a in np.flatnonzero(mask)]
        if len(legal) == 1:
            return legal[0]
        phase = view["phase"]
        me = view["seat"]
        if phase == "ally":
            return ALLY_ACCEPT if self._ally_pays(view, me) else ALLY_DECLINE
        if phase == "gary":
            return CHALLENGE if self._gary_pays(view, me) else NO_CHALLENGE
        if phase == "reward":
            return self._pick_reward(view, me, legal)
        return self._pick_move(view, me, legal)

    # -----------------------------------------------------------------------------------------
    @staticmethod
    def _sides(view: dict[str, Any]) -> dict[int, list[int]]:
        n = len(view["pos"])
        leader_of = list(range(n))
        sides: dict[int, list[int]] = {}
        for line in view["parties"]:
            for m in line:
                leader_of[m] = line[0]
            sides[line[0]] = list(line)
        for i in range(n):
            if view["alive"][i] and leader_of[i] == i and i not in sides:
                sides[i] = [i]
        return sides

    @staticmethod
    def _my_rank(view: dict[str, Any], me: int) -> float:
        keys = list(zip(view["score"], view["strength_tenths"]))
        better = sum(k > keys[me] for k in keys)
        equal = sum(k == keys[me] for k in keys)
        return better + (equal + 1) / 2

    @staticmethod
    def _leads_ranking(view: dict[str, Any], me: int) -> bool:
        """First on score by a clear margin (more than one battle won by anyone else)."""
        score = view["score"]
        return score[me] > max(s for i, s in enumerate(score) if i != me) + 2

    def _would_lead(self, view: dict[str, Any], me: int, other: int, mover: int) -> bool:
        """Whether ``me`` would lead an alliance with ``other`` (``mover``: whose turn it is), by the
        table's ``alliance_tie_break`` when strength and score tie (a coin flip counts as no)."""
        st, sc = view["strength_tenths"], view["score"]
        if (st[me], sc[me]) != (st[other], sc[other]):
            return (st[me], sc[me]) > (st[other], sc[other])
        rule = self.game.config["alliance_tie_break"]
        if rule == "higher-seat":
            return me > other
        if rule == "mover":
            return me == mover
        if rule == "random":
            return False
        if rule == "more-hp" and view["hp"][me] != view["hp"][other]:
            return view["hp"][me] > view["hp"][other]
        return me < other

    def _ally_pays(self, view: dict[str, Any], me: int) -> bool:
        sides = self._sides(view)
        if len(sides) <= 2:  # an alliance would end the game now: only if it pays to stop here
            return self._my_rank(view, me) < (len(view["pos"]) + 1) / 2
        a, b = view["ally"]
        other = b if a == me else a
        if self._would_lead(view, me, other, mover=a):
            return True
        # Following only pays when the new party would be the strongest side (it wins battles, +1 each).
        return self._strongest_if_united(view, sides, me, other)

    @staticmethod
    def _strongest_if_united(view: dict[str, Any], sides: dict[int, list[int]], me: int, other: int) -> bool:
        st = view["strength_tenths"]
        united = st[me] + st[other]
        rest = [sum(st[m] for m in line) for lead, line in sides.items() if lead not in (me, other)]
        return united > max(rest, default=0)

    def _gary_pays(self, view: dict[str, Any], me: int) -> bool:
        st = view["strength_tenths"]
        sides = self._sides(view)
        mine = sum(st[m] for m in sides.get(me, [me]))
        gary = int(round(self.config.get("gary_strength", 3.0) * 10))
        return win_probability(mine, gary) >= self._gary_threshold(view, me)

    def _gary_threshold(self, view: dict[str, Any], me: int) -> float:
        """Least odds worth a challenge. With health on a loss costs HP, not score, so even long
        odds pay while HP is plentiful; a loss that could kill needs near certainty."""
        if self.config.get("health", 10) == 0:
            return 0.5  # a loss costs 2 score: an even bet at best
        hp = view["hp"][me]
        if hp <= 2:
            return 0.8
        return 0.5 if hp <= 4 else 0.2

    def _pick_reward(self, view: dict[str, Any], me: int, legal: list[int]) -> int:
        health = self.config.get("health", 10)
        gary = int(round(self.config.get("gary_strength", 3.0) * 10))
        if REWARD_HEALTH in legal and view["hp"][me] <= max(3, health // 3):
            return REWARD_HEALTH
        st = view["strength_tenths"]
        mine = sum(st[m] for m in self._sides(view).get(me, [me]))
        if win_probability(mine, gary) < 0.9:  # grow until beating Gary is near certain
            return REWARD_STRENGTH
        return REWARD_SCORE

    # -----------------------------------------------------------------------------------------
    def _encounter_value(self, view, me, my_side, lead, other) -> float:
        """Expected gain (score-like units) of meeting the side ``other`` led by ``lead``."""
        st = view["strength_tenths"]
        mine = sum(st[m] for m in my_side)
        theirs = sum(st[m] for m in other)
        i_solo, o_solo = len(my_side) == 1, len(other) == 1
        merges = (i_solo and o_solo) or (i_solo and st[lead] >= st[me]) or (o_solo and st[me] >= st[lead])
        if merges and len(self._sides(view)) == 2:
            # Uniting the last two sides ends the game: only worth it when ranked first outright.
            return 1.0 if self._my_rank(view, me) == 1.0 else -1.0
        if i_solo and o_solo:
            if self._would_lead(view, me, lead, mover=me):
                return 0.6
            return 0.2 if self._strongest_if_united(view, self._sides(view), me, lead) else -0.1
        if i_solo and st[lead] >= st[me]:
            return -0.2  # we would join as a follower: it scores little and never acts
        if o_solo and st[me] >= st[lead]:
            gary = int(round(self.config.get("gary_strength", 3.0) * 10))
            # the solo joins us: worth most while the party is still too weak for Gary, or when
            # we lead the ranking (every side absorbed brings the end, and the win, nearer)
            if win_probability(mine, gary) < 0.55 or self._leads_ranking(view, me):
                return 0.8
            return 0.2
        p = win_probability(mine, theirs)
        lose_cost = 1.0 + 0.5 * len(my_side)  # −1 score, HP, and the party is gone
        health = self.config.get("health", 10)
        if health > 0 and view["hp"][me] <= 3:
            lose_cost += 3.0
        gain = 2.0 + 0.5 * (len(other) - 1)
        return p * gain - (1 - p) * lose_cost

    def _declined_partners(self, view: dict[str, Any], me: int) -> dict[int, bool]:
        """Solos that declined an alliance with me (or I with them) and still stand next to me:
        partner -> whether the position changed since (then it pays to step apart, which clears
        the refusal, and come back to ask again)."""
        st, sc = view["strength_tenths"], view["score"]
        sides = len(self._sides(view))
        out = {}
        current = set()
        for a, b in view["declined"]:
            if me not in (a, b):
                continue
            other = b if a == me else a
            current.add(other)
            snapshot = (st[me], sc[me], st[other], sc[other], sides)
            first = self._declined_at.setdefault(other, snapshot)
            out[other] = first != snapshot
        for other in list(self._declined_at):
            if other not in current:
                del self._declined_at[other]
        return out

    @staticmethod
    def _path_lengths(view: dict[str, Any], goal: list[int], my_side: list[int], arena: ArenaMap) -> list[int]:
        """Steps from every cell to the nearest ``goal`` cell, walking round the terrain and round
        the bots standing in the way: other bots and the own line (but its tail, which moves
        away) are walls, except on the goal cells; a cell of the own line reads one more than
        its best free neighbour. Where bots wall the goal off, the terrain distance (``arena``'s walking
        distances) stands in."""
        terrain = view["terrain"]
        size = len(terrain)
        pos, alive = view["pos"], view["alive"]
        far = 4 * size * size
        free = [ch == "." for row in terrain for ch in row]
        for i, cell in enumerate(pos):
            if alive[i]:
                free[cell] = False
        free[pos[my_side[-1]]] = True  # the tail (or a solo itself) moves out of the way
        dist = spread(size, free, goal)
        for m in my_side:
            cell = pos[m]
            if dist[cell] >= far:
                r, c = divmod(cell, size)
                best = min((dist[(r + dr) * size + c + dc] for dr, dc in DIRECTIONS
                            if 0 <= r + dr < size and 0 <= c + dc < size), default=far)
                dist[cell] = best + 1 if best < far else far
        if dist[pos[my_side[0]]] >= far:  # walled off by bots: fall back on the terrain
            tables = [arena.walking_distances(g) for g in goal]
            return [min(t[cell] for t in tables) for cell in range(size * size)]
        return dist

    def _pick_move(self, view: dict[str, Any], me: int, legal: list[int]) -> int:
        """Score every legal step (and staying) by the encounters it brings nearer, measured by
        walking distance round the obstacles from the cell where the leader would stand."""
        size = len(view["terrain"])
        terrain = view["terrain"]
        arena = self.game.map_for_rows(terrain)  # the game's shared map: walking distances cached per source
        walk = arena.walking_distances
        pos = view["pos"]
        sides = self._sides(view)
        my_side = sides.get(me, [me])
        here = pos[me]
        r0, c0 = divmod(here, size)
        declined = self._declined_partners(view, me) if len(my_side) == 1 else {}
        others = []
        other_sides = []
        for lead, line in sides.items():
            if lead == me:
                continue
            value = self._encounter_value(view, me, my_side, lead, line)
            if lead in declined:
                if not declined[lead] or value <= 0:
                    continue  # asking again would get the same answer: ignore them
                others.append((value, [walk(pos[lead])], True))
            else:
                others.append((value, [walk(pos[m]) for m in line], False))
            other_sides.append((lead, line))
        gary_value = 0.0
        st = view["strength_tenths"]
        gary_strength = int(round(self.config.get("gary_strength", 3.0) * 10))
        p = win_probability(sum(st[m] for m in my_side), gary_strength)
        if p >= self._gary_threshold(view, me):
            loss = 2.0 if self.config.get("health", 10) == 0 else 0.5
            gary_value = 1.5 * (2 * p - loss * (1 - p))
            if self._leads_ranking(view, me):
                gary_value *= 0.25  # more score changes no rank: ending the game pays more
        gary_dist = walk(view["gary"])
        # The plan: the most rewarding reachable encounter, discounted by its walking distance
        # from the leader now; each step is then judged first by the distance it leaves to it
        # (so the party walks round obstacles along a shortest path instead of settling between
        # two pulls), then by the sum of all pulls and pushes.
        goal, goal_worth = None, 0.0
        for (v, tables, apart_first), (_lead, line) in zip(others, other_sides):
            if v > 0 and not apart_first:
                worth = v * 0.75 ** max(0, min(t[here] for t in tables) - 1)
                if worth > goal_worth:
                    goal, goal_worth = [pos[m] for m in line], worth
        if gary_value > 0 and gary_value * 0.9 ** max(0, gary_dist[here] - 1) > goal_worth:
            goal = [view["gary"]]
        if goal is not None:
            goal_dist = self._path_lengths(view, goal, my_side, arena)
        best, best_value = STAY, -1e9
        for a in legal:
            if a == STAY:
                cell = here
            else:
                dr, dc = DIRECTIONS[a]
                cell = (r0 + dr) * size + c0 + dc
            value = 0.0
            for v, tables, apart_first in others:
                d = min(t[cell] for t in tables)
                if apart_first:  # the refusal is cleared only by standing apart first
                    value += 0.0 if d <= 1 else v * 0.75 ** (d - 1)
                else:
                    value += v if d <= 1 else v * 0.75 ** (d - 1)
            if gary_value > 0:
                d = gary_dist[cell]
                value += gary_value * (1.0 if d <= 1 else 0.9 ** (d - 1))
            if goal is not None:
                value -= PLAN_WEIGHT * max(1, goal_dist[cell])
            if a != STAY and a % 2 == 1:  # diagonal: is it a squeeze?
                dr, dc = DIRECTIONS[a]
                if terrain[r0 + dr][c0] != "." and terrain[r0][c0 + dc] != ".":
                    value -= 0.15 if len(my_side) > 1 else 0.1
            value += self.rng.random() * 1e-3
            if value > best_value:
                best, best_value = a, value
        return best


class NoisyHeuristicAgent(HeuristicAgent):
    """heuristic-v1, but a share of its move decisions (where it has a choice) is a uniformly random
    legal move: a weaker league opponent, and a yardstick for how much a clone's wrong moves cost."""

    noise = 0.15

    def act(self, observation: dict[str, np.ndarray], view: dict[str, Any]) -> int:
        action = super().act(observation, view)  # keeps the heuristic's memory of refusals up to date
        legal = np.flatnonzero(observation["action_mask"]).tolist()
        if view["phase"] == "move" and len(legal) > 1 and self.noise and self.rng.random() < self.noise:
            return legal[self.rng.randrange(len(legal))]
        return action


class LoneWolfAgent(HeuristicAgent):
    """heuristic-v1 that never follows and ends the game only as the sole leader of the ranking (see the
    module docstring)."""

    def _ally_pays(self, view: dict[str, Any], me: int) -> bool:
        if len(self._sides(view)) <= 2:  # an alliance would end the game now: only as the outright first
            return self._my_rank(view, me) == 1.0
        a, b = view["ally"]
        other = b if a == me else a
        return self._would_lead(view, me, other, mover=a)

    def _encounter_value(self, view, me, my_side, lead, other) -> float:
        if (len(my_side) == 1 and len(other) == 1 and len(self._sides(view)) > 2
                and not self._would_lead(view, me, lead, mover=me)):
            return -0.3  # an alliance we would only follow: keep away
        return super()._encounter_value(view, me, my_side, lead, other)


class GaryHunterAgent(LoneWolfAgent):
    """lone-wolf-v1 that gambles on Gary: it heads for him and challenges him whenever a lost challenge
    cannot kill it, whatever the odds (a solo at strength 1.0 wins 5.7% of challenges, and the +2.0
    strength of a win makes it the leader of every alliance and join it meets). As a player alone it is
    weaker than heuristic-v1; it is meant as a plan for a search to try (``rollout=[..., "gary-hunter-v1"]``)."""

    def _gary_threshold(self, view: dict[str, Any], me: int) -> float:
        if self.config.get("health", 10) == 0:
            return super()._gary_threshold(view, me)  # a loss costs score: no gamble
        return 0.0 if view["hp"][me] > 2 else 1.01

    def _pick_move(self, view: dict[str, Any], me: int, legal: list[int]) -> int:
        if self.config.get("health", 10) == 0 or view["hp"][me] <= 2:
            return super()._pick_move(view, me, legal)
        size = len(view["terrain"])
        walk = self.game.map_for_rows(view["terrain"]).walking_distances(view["gary"])
        r0, c0 = divmod(view["pos"][me], size)
        best, best_d = STAY, walk[view["pos"][me]]
        for a in legal:  # the step that brings the leader nearest to Gary (staying once beside him)
            if a == STAY:
                continue
            dr, dc = DIRECTIONS[a]
            d = walk[(r0 + dr) * size + c0 + dc]
            if d < best_d or (d == best_d and best_d > 1 and best == STAY):
                best, best_d = a, d
        return best


register(f"{GAME}/heuristic-v1", HeuristicAgent,
         "greedy scorer: allies, absorbs weaker sides, avoids stronger ones, challenges Gary on good odds")
register(f"{GAME}/heuristic-noisy-v1", NoisyHeuristicAgent,
         "heuristic-v1 with 15% of its move decisions replaced by a uniformly random legal move")
register(f"{GAME}/gary-hunter-v1", GaryHunterAgent,
         "lone-wolf-v1 that heads for Gary and challenges him at any odds while a loss cannot kill it (a plan for search)")
register(f"{GAME}/lone-wolf-v1", LoneWolfAgent,
         "heuristic-v1 playing for first place alone: never follows, ends the game only when it would win outright")
