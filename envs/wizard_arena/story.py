"""Wizard Arena: what a move caused, in the game's words, for the front ends' log.

Wizard Arena hides nothing, so the story is told from the full positions: the move is played again
on a copy that notes each alliance, join, battle (every bout with its two D20 rolls), challenge of
Gary, hit, death and respawn as the rules make them — the same rules, the same random draws, so the
copy ends exactly where the game did. See ``play/story.py`` for the contract.
"""

from __future__ import annotations

import random
from typing import Any

from envs.wizard_arena.rules import (
    ALLY_ACCEPT,
    ALLY_DECLINE,
    NO_CHALLENGE,
    REWARD_HEALTH,
    REWARD_SCORE,
    REWARD_STRENGTH,
    STAY,
    NO_PROGRESS_ROUNDS_PER_SIDE,
    ArenaState,
)


def bot(i: int) -> str:
    """A bot by its seat and its letter on the board."""
    return f"player_{i} ({chr(ord('A') + i)})"


def _strength(tenths: int) -> str:
    return f"{tenths / 10:g}"


class _Rolls(random.Random):
    """The game's generator, noting every die (``randint``) it rolls."""

    def __init__(self, state: Any) -> None:
        super().__init__()
        self.setstate(state)
        self.rolled: list[int] = []

    def randint(self, a: int, b: int) -> int:
        value = super().randint(a, b)
        self.rolled.append(value)
        return value


class _Noted(ArenaState):
    """An :class:`ArenaState` that notes what happens as the rules play a move (nothing else differs)."""

    __slots__ = ("notes",)

    @classmethod
    def copy_of(cls, state: ArenaState) -> _Noted:
        twin = state.clone()
        noted = object.__new__(cls)
        for name in ("game", "_mask", *ArenaState.__slots__):
            setattr(noted, name, getattr(twin, name))
        noted.rng = _Rolls(twin.rng.getstate())
        noted.notes = []
        return noted

    def _form_alliance(self, a: int, b: int) -> None:
        super()._form_alliance(a, b)
        lead = self.leader_of[a]
        self.notes.append(f"{bot(a)} and {bot(b)} ally: {bot(lead)} leads the party")

    def _join(self, solo: int, leader: int) -> None:
        super()._join(solo, leader)
        if self.leader_of[solo] == leader:
            self.notes.append(f"{bot(solo)} joins the party of {bot(leader)} (strength "
                              f"{_strength(self.side_strength(leader))} now)")
        else:
            self.notes.append(f"{bot(solo)} meets the party of {bot(leader)} but finds no place in its line")

    def _bouts(self, mine: int, theirs: int) -> bool:
        start = len(self.rng.rolled)
        won = super()._bouts(mine, theirs)
        rolls = self.rng.rolled[start:]
        bouts = [f"{x}x{_strength(mine)}={x * mine / 10:g} v {y}x{_strength(theirs)}={y * theirs / 10:g}"
                 + (" (a tie: rolled again)" if x * mine == y * theirs else "")
                 for x, y in zip(rolls[0::2], rolls[1::2])]
        self.notes.append("  bouts (D20 x strength): " + "; ".join(bouts))
        return won

    def _fight(self, a: int, b: int) -> None:
        self.notes.append(f"battle: the side of {bot(a)} (strength {_strength(self.side_strength(a))}) "
                          f"against the side of {bot(b)} (strength {_strength(self.side_strength(b))})")
        super()._fight(a, b)

    def _battle_result(self, w: int, l: int) -> None:
        losers = list(self.line(l))
        hp = self.hp[:]
        winners = list(self.line(w))
        before = self.pos[l]
        super()._battle_result(w, l)
        gain = f"+2 score to {bot(w)}" + (", +1 to each member" if len(winners) > 1 else "")
        self.notes.append(f"  the side of {bot(w)} wins ({gain}); {bot(l)} loses 1 score")
        for m in losers:
            lost = hp[m] - self.hp[m]
            if lost:
                self.notes.append(f"  {bot(m)} loses {lost} HP ({self.hp[m]} left)"
                                  + (" and dies: a gravestone marks its square" if not self.alive[m] else ""))
        absorbed = [m for m in losers[1:] if self.alive[m] and self.leader_of[m] == self.leader_of[w]]
        if absorbed:
            who = ", ".join(bot(m) for m in absorbed[:-1]) + " and " + bot(absorbed[-1]) if len(absorbed) > 1 \
                else bot(absorbed[0])
            self.notes.append(f"  {who} now follow{'s' if len(absorbed) == 1 else ''} {bot(self.leader_of[w])}")
        if self.alive[l] and self.pos[l] != before:
            self.notes.append(f"  {bot(l)} respawns at row {self.pos[l] // self.map.size}, "
                              f"column {self.pos[l] % self.map.size}")

    def _challenge(self) -> None:
        a = self.actor
        hp = self.hp[a]
        score = self.score[a]
        self.notes.append(f"{bot(a)} challenges Gary the Wizard (strength {_strength(self.side_strength(a))} "
                          f"against Gary's {_strength(self.gary_strength)})")
        super()._challenge()
        if self.phase == "reward":
            self.notes.append(f"  {bot(a)} beats Gary and picks a reward; Gary vanishes to another square")
        elif not self.alive[a]:
            self.notes.append(f"  Gary wins: {bot(a)} loses {hp} HP and dies")
        elif self.hp[a] != hp:
            self.notes.append(f"  Gary wins: {bot(a)} loses {hp - self.hp[a]} HP ({self.hp[a]} left)")
        else:
            self.notes.append(f"  Gary wins: {bot(a)} loses {score - self.score[a]} score")

    def _kill(self, b: int) -> None:
        lead = self.leader_of[b]
        super()._kill(b)
        if lead != b or b in self.parties:
            self.notes.append(f"  {bot(b)} leaves its party")


def tell(game, before: dict[str, Any], after: dict[str, Any], seat: int, action: int | None,
         states: tuple[ArenaState, ArenaState] | None = None) -> list[str]:
    if states is None or action is None:
        return []
    noted = _Noted.copy_of(states[0])
    noted.apply_action(action)
    out: list[str] = []
    if action in (ALLY_ACCEPT, ALLY_DECLINE) and states[0].ally:
        asker, asked = states[0].ally
        if states[0].ally_stage == 0:
            out.append(f"{bot(asker)} offers an alliance to {bot(asked)}; {bot(asked)} is asked"
                       if action == ALLY_ACCEPT else f"{bot(asker)} meets {bot(asked)} and offers no alliance")
        else:
            out.append(f"{bot(asked)} {'accepts' if action == ALLY_ACCEPT else 'declines'} the alliance "
                       f"offered by {bot(asker)}")
    elif action == NO_CHALLENGE:
        out.append(f"{bot(seat)} leaves Gary alone")
    elif action == REWARD_SCORE:
        out.append(f"{bot(seat)} takes the reward: +2 score")
    elif action == REWARD_STRENGTH:
        out.append(f"{bot(seat)} takes the reward: +2 strength")
    elif action == REWARD_HEALTH:
        out.append(f"{bot(seat)} takes the reward: +2 HP")
    elif action < STAY:
        b, a = states[0], noted
        if a.strength[seat] < b.strength[seat]:
            out.append(f"{bot(seat)} squeezes between two obstacles: strength {_strength(a.strength[seat])}")
    out.extend(noted.notes)
    if noted.round != states[0].round and noted.phase != "over":
        out.append(f"round {noted.round} begins")
    if noted.phase == "over":
        out.append(ending(game, after))
    return [line for line in out if line]


def label(game, view: dict[str, Any], action: int) -> str:
    """The move's name; an alliance answer names the other bot of the question (the mover is named
    beside it in the log): the bot that met another offers an alliance or not, then the other accepts
    or declines."""
    if action in (ALLY_ACCEPT, ALLY_DECLINE):
        if not view.get("ally"):
            return "accept an alliance" if action == ALLY_ACCEPT else "decline an alliance"
        asker, asked = view["ally"]
        if view.get("ally_stage", 0) == 0:
            return f"offer an alliance to {bot(asked)}" if action == ALLY_ACCEPT else \
                f"offer no alliance to {bot(asked)}"
        return f"{'accept' if action == ALLY_ACCEPT else 'decline'} the alliance offered by {bot(asker)}"
    return game.action_to_string(action)


def waiting(game, view: dict[str, Any]) -> str:
    me = view["seat"]
    if view["phase"] == "over":
        return ""
    if not view["alive"][me]:
        return (f"your bot {bot(me)} is dead: it takes no more turns, and the others play on to the end "
                "(your rank still counts)")
    for line in view["parties"]:
        if me in line and line[0] != me:
            return (f"your bot follows the party of {bot(line[0])}: its leader moves for the whole party, "
                    "and you act again when the party breaks up (a lost battle, a death) or the game ends")
    return ""


def ending(game, view: dict[str, Any]) -> str:
    if view["phase"] != "over":
        return ""
    alive = [i for i in range(len(view["alive"])) if view["alive"][i]]
    order = sorted(range(len(view["score"])), key=lambda i: (view["score"][i], view["strength_tenths"][i]),
                   reverse=True)
    top = order[0]
    ties = [i for i in order if (view["score"][i], view["strength_tenths"][i]) ==
            (view["score"][top], view["strength_tenths"][top])]
    best = " and ".join(bot(i) for i in ties)
    head = f"{best} rank{'s' if len(ties) == 1 else ''} first (score {view['score'][top]}, strength " \
           f"{_strength(view['strength_tenths'][top])})"
    sides = {}
    for lead, line in ((line[0], line) for line in view["parties"]):
        sides[lead] = line
    if not alive:
        return f"no bot is alive; {head}"
    leaders = sorted({next((line[0] for line in view["parties"] if i in line), i) for i in alive})
    if len(leaders) == 1:
        line = sides.get(leaders[0], [leaders[0]])
        who = "the last living bot is " + bot(line[0]) if len(line) == 1 else \
            "every living bot stands in the party of " + bot(line[0])
        return f"{who}; {head}"
    return (f"the no-progress rule ended the game ({NO_PROGRESS_ROUNDS_PER_SIDE} x {game.config['map_size']} "
            f"rounds without an alliance, a join, a battle or a death); {head}")
