"""Pan's Trial: what a move caused, in the game's words, for the front ends' log.

Told from one seat's views before and after the move only (see ``play/story.py``): the Omens
revealed after the draft, traps sprung, weapons picked up, ballista flights, combats and their strikes,
the Appeasing (each card once both are shown) and each request, cards placed back, the end. A
face-down Appeasing card is told as "chooses an Appeasing card" until both are shown.
"""

from __future__ import annotations

from typing import Any

from envs.pans_trial import rules as R


#: The requests to Pan by their names in the rules (``R.REQUEST_NAMES`` are the code's).
REQUEST_WORDS = {R.RESTRUCTURE: "Restructure", R.STEAL_LIFE: "Steal Life", R.IGNORE_US: "Ignore Us",
                 R.PLANE_SHIFT: "Plane Shift"}


def _p(seat: int) -> str:
    return f"player_{seat}"


def _at(s: int) -> str:
    return f"row {s // R.SIZE}, column {s % R.SIZE}"


def _card(view: dict[str, Any], c: int) -> str:
    roles = view.get("suit_role")
    role = f" ({R.ROLE_NAMES[roles[R.SUIT_OF[c]]]})" if roles else ""
    return f"{R.card_name(c)}{role}"


def _damage(view: dict[str, Any], p: int) -> int:
    return sum(R.VALUE[c] for c in view["damage"][p])


def tell(game, before: dict[str, Any], after: dict[str, Any], seat: int, action: int | None,
         states: Any = None) -> list[str]:
    out: list[str] = []
    me, other = seat, 1 - seat
    threshold = game.config["damage_threshold"]
    if action is None:
        return [f"{_p(me)} chooses an Appeasing card, face down"]
    if after["revealed"] and not before["revealed"]:
        kings = " and ".join(R.card_name(c) for c in after["identity"])
        roles = ", ".join(f"{R.SUITS[s]} are {R.ROLE_NAMES[x]}" for s, x in enumerate(after["suit_role"]))
        out.append(f"the draft is over; the Omens are revealed: {roles} (the undrafted Kings: {kings})")
        out.append(f"Traversing begins: {_p(after['active'])} moves first")
    # Damage: a strike, or a trap sprung by moving onto it or using it (a Steal Life is told below).
    if R.A_STRIKE <= action < R.A_APPEASE:
        out.append(f"{_p(me)} strikes {_p(other)} with {_card(after, action - R.A_STRIKE)}: damage "
                   f"{_damage(after, other)}/{threshold}")
    elif action <= R.A_INTERACT:
        for c in after["damage"][me][len(before["damage"][me]):]:
            out.append(f"{_p(me)} springs the trap {_card(after, c)}: damage {_damage(after, me)}/{threshold}; "
                       "the square becomes a hole")
    # Weapons picked up (a card left the board into a hand during Traversing).
    if before["stage"] in ("traverse", "ballista_target"):
        for p in (0, 1):
            got = sorted(set(after["hands"][p]) - set(before["hands"][p]))
            for c in got:
                out.append(f"{_p(p)} picks up the weapon {_card(after, c)}")
    if before["stage"] == "ballista_target" and R.A_TARGET <= action < R.A_PLACE:
        out.append(f"the ballista flings {_p(me)} to {_at(action - R.A_TARGET)}")
    if after["stage"] == "ballista_target" and before["stage"] != "ballista_target":
        out.append(f"{_p(me)} stands on a ballista and chooses where to fly")
    if after["stage"] == "combat" and before["stage"] != "combat":
        out.append(f"combat: {_p(me)} meets {_p(other)}; whoever holds a weapon strikes, "
                   f"{_p(after['actor'])} first")
    elif action < R.A_INTERACT and after["pos"][me] == after["pos"][other] and after["stage"] != "combat":
        out.append(f"{_p(me)} meets {_p(other)}, but neither holds a weapon: no combat")
    if action == R.A_PASS and before["stage"] == "traverse":
        if before["forced"][me]:
            out.append(f"{_p(me)} serves a forced pass ({after['forced'][me]} left)")
    # The Appeasing.
    if before["stage"] == "appease" and R.A_APPEASE <= action < R.A_STEAL_MINE:
        if after["stage"] == "request":
            w = after["appease_winner"]
            loser_card, winner_card = after["pending"]
            out.append(f"the Appeasing: {_p(w)}'s {_card(after, winner_card)} beats {_p(1 - w)}'s "
                       f"{_card(after, loser_card)}; {_p(w)} wins Pan's favour and asks first")
        else:
            out.append(f"{_p(me)} chooses an Appeasing card"
                       + (f", {_card(after, action - R.A_APPEASE)}" if after["seat"] == me else ", face down"))
    if R.A_REQUEST <= action < R.A_RESTRUCTURE:
        out.append(f"{_p(me)} asks Pan for {REQUEST_WORDS[action - R.A_REQUEST]}")
    if R.A_RESTRUCTURE <= action < R.A_SHIFT:
        x, y = R.SUIT_PAIRS[action - R.A_RESTRUCTURE]
        out.append(f"Restructure: {R.SUITS[x]} are now {R.ROLE_NAMES[after['suit_role'][x]]}, "
                   f"{R.SUITS[y]} are now {R.ROLE_NAMES[after['suit_role'][y]]}")
    if R.A_SHIFT <= action < R.A_TARGET:
        out.append(f"Plane Shift: {game.action_to_string(action)[6:]}")
    if R.A_STEAL_MINE <= action < R.A_STEAL_THEIRS:
        out.append(f"Steal Life: {_p(me)} gives {_card(after, action - R.A_STEAL_MINE)} from their damage")
    if R.A_STEAL_THEIRS <= action:
        out.append(f"Steal Life: ... and takes {_card(after, action - R.A_STEAL_THEIRS)} from {_p(other)}'s; "
                   f"damage {_p(0)} {_damage(after, 0)}, {_p(1)} {_damage(after, 1)} (of {threshold})")
    if R.A_PLACE <= action < R.A_DRAFT:
        k, s = divmod(action - R.A_PLACE, R.NUM_SQUARES)
        out.append(f"{_p(me)} places {_card(after, before['pending'][k])} at {_at(s)}")
    for p in (0, 1):
        if after["forced"][p] > before["forced"][p]:
            out.append(f"{_p(p)} is walled in and owes {after['forced'][p]} forced passes")
    if after["stage"] == "traverse" and before["stage"] != "draft" and after["winner"] is None and (
            before["stage"] not in ("traverse", "ballista_target", "combat")
            or after["turns_left"] > before["turns_left"]):
        out.append(f"a new Traversing phase: {_p(after['active'])} moves first, {after['turns_left']} turns in all")
    if before["stage"] == "traverse" and after["stage"] == "appease":
        out.append(f"the Traversing phase is over: the Appeasing of Pan, {_p(after['actor'])} chooses first")
    end = ending(game, after)
    if end and before["winner"] is None:
        out.append(end)
    return out


def label(game, view: dict[str, Any], action: int) -> str:
    name = game.action_to_string(action)
    if R.A_REQUEST <= action < R.A_RESTRUCTURE:
        return f"ask Pan for {REQUEST_WORDS[action - R.A_REQUEST]}"
    if R.A_PLACE <= action < R.A_DRAFT and view.get("pending"):
        k, s = divmod(action - R.A_PLACE, R.NUM_SQUARES)
        card = view["pending"][k]
        if card >= 0:
            whose = "the Appeasing loser's card" if k == 0 else "the Appeasing winner's card"
            return f"place {R.card_name(card)} ({whose}) at {R.square_name(s)}"
    return name


def turn(game, view: dict[str, Any]) -> str:
    """The turn line: who acts, in which phase, and the draft's limits."""
    if view["winner"] is not None:
        return "the game is over"
    actor = _p(view["actor"])
    stage = view["stage"]
    if stage == "draft":
        picked = len(view["hands"][0]) + len(view["hands"][1])
        kings = sum(1 for h in view["hands"] for c in h if R.IS_KING[c])
        line = f"draft: {actor} picks ({picked} of {R.DRAFT_PICKS} cards drafted)"
        if kings >= R.MAX_KINGS and any(R.IS_KING[c] for c in view["pool"]):
            line += (f"; {R.MAX_KINGS} Kings are drafted already, the most allowed, so the Kings left in the "
                     "pool are not offered (they become the undrafted Kings)")
        return line
    if stage == "traverse":
        return (f"Traversing: {actor} to move ({view['turns_left']} turn(s) of this phase left, "
                "the players take turns)")
    names = {"ballista_target": "where the ballista flings them", "combat": "a weapon to strike with",
             "appease": "an Appeasing card (face down)", "request": "a request to Pan",
             "restructure": "two suits to swap roles", "steal_mine": "a card of their damage to give",
             "steal_theirs": "a card of the other's damage to take", "plane_shift": "a row or column to shift",
             "place": "where a card goes back on the board"}
    return f"{stage.replace('_', ' ')}: {actor} chooses {names.get(stage, 'a move')}"


#: The stages in which a player makes (and carries out) their request to Pan.
REQUESTING = ("request", "restructure", "steal_mine", "steal_theirs", "plane_shift")


def waiting(game, view: dict[str, Any]) -> str:
    """Why the viewer cannot act for a while: after the Appeasing the other player may make a request,
    place both played cards back and then open the next Traversing phase, several moves in a row.

    Forced passes are no wait: the seat that owes them still takes its turns, passing. Everything said
    here is public (the stage, who acts, who won the Appeasing, whether a card was chosen).
    """
    me = view["seat"]
    other = 1 - me
    if view["winner"] is not None or view["actor"] != other:
        return ""
    stage = view["stage"]
    if stage in REQUESTING:
        if view["appease_winner"] == other:
            return (f"{_p(other)} won the Appeasing and makes their request to Pan first; yours comes "
                    "after, unless they choose Ignore Us")
        return (f"{_p(other)} lost the Appeasing and makes their request to Pan; then they put the two "
                "played cards back and begin the next Traversing phase")
    if stage == "place":
        return (f"{_p(other)} lost the Appeasing and puts the two played cards back on the board; then "
                "they begin the next Traversing phase")
    if stage == "appease" and view["appease_submitted"][me]:
        return f"your Appeasing card is chosen; {_p(other)} chooses theirs face down, then both are shown"
    return ""


def ending(game, view: dict[str, Any]) -> str:
    w = view["winner"]
    if w is None:
        return ""
    if w == R.DRAW:
        return "a draw: a whole phase of nothing but passes would repeat forever"
    return (f"{_p(w)} wins: {_p(1 - w)}'s damage reached {_damage(view, 1 - w)}, at least the "
            f"{game.config['damage_threshold']} that ends the trial")
