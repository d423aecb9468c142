"""The log tells what each move caused, in each game's words, and a resumed game tells its past the same way.

A whole seeded game is played (the human seat by a fixed rule, the others by agents) and its log,
as the human seat is told it, must name every kind of consequence that happened in that game.
"""

from __future__ import annotations

import io
import json
import random
import re

import pytest

import envs
from envs.dojo.board import SIZE
from envs.dojo.rules import A_STEP, from_position
from envs.pans_trial import rules as R
from play.session import Session
from play.story import tell, waiting_reason
from play.terminal import TerminalGame
from tests.pans_trial.pt_builder import build, card


def _play(game, opponent, seed, config=None):
    n = envs.make_game(game, **(config or {})).num_players
    s = Session(game, ["human"] + [opponent] * (n - 1), config=config, seed=seed)
    while not s.over:
        s.run_agents()
        if s.over:
            break
        moves = s.legal_moves()
        s.play(0, moves[len(s.events) % len(moves)][0])
    return s


def _log(session, seat=0):
    return "\n".join(line for e in session.events_for(seat) for line in [e["text"], *e["story"]])


def _missing(log, phrases):
    return [p for p in phrases if p not in log]


def test_wizard_arena_log_names_every_kind_of_event_that_happened():
    s = _play("wizard_arena_v0", "wizard_arena_v0/random-v0", seed=0)
    log = _log(s)
    counters = s.runner.state.counters  # what the rules counted, bot by bot
    happened = {
        "ally: ": any(e.name == "ally accept" for e in s.events),
        "battle: ": any(c[0] for c in counters),
        "bouts (D20 x strength): ": any(c[0] or c[4] or c[5] for c in counters),
        "beats Gary": any(c[4] for c in counters),
        "Gary wins": any(c[5] for c in counters),
        "takes the reward": any(c[6] + c[7] + c[8] for c in counters),
        "respawns": any(c[2] for c in counters),
        "dies": not all(s.runner.state.alive),
    }
    assert sum(happened.values()) >= 6, happened
    assert _missing(log, [k for k, v in happened.items() if v]) == []
    # every bout line holds the rolls: D20 x strength on each side
    assert all("x" in line and " v " in line for line in log.splitlines() if "bouts" in line)
    assert s.end_text().count("ranks first") + s.end_text().count("rank first") == 1, s.end_text()


def test_sequence_log_names_cards_chips_draws_and_sequences():
    s = _play("sequence_v0", "sequence_v0/heuristic-v1", seed=0)
    log = _log(s)
    assert _missing(log, ["plays", "places a chip on the", "removes team", "you draw ", "player_1 draws a card",
                          "completes a sequence", "wins with"]) == []
    # the opponent's drawn card is never named to player_0
    assert not any(line.startswith("player_1 draws ") and line != "player_1 draws a card"
                   for line in log.splitlines())


def test_pans_trial_log_names_draft_traps_weapons_ballista_combat_and_the_appeasing():
    s = _play("pans_trial_v0", "pans_trial_v0/heuristic-v1", seed=2)
    log = _log(s)
    assert _missing(log, ["draft ", "the Omens are revealed", "springs the trap", "picks up the weapon",
                          "the ballista flings", "combat: ", "strikes", "the Appeasing: ", "asks Pan for",
                          "places", " wins: "]) == []
    # the opponent's face-down Appeasing card stays unnamed until both are shown
    for e in s.events_for(0):
        if e["seat"] == 1 and e["name"] is None:
            assert e["story"] == ["player_1 chooses an Appeasing card, face down"]


def test_dojo_log_names_dice_steps_kumite_cards_and_the_exam():
    s = _play("dojo_v0", "dojo_v0/heuristic-v1", seed=8, config={"num_players": 4})
    log = _log(s)
    assert _missing(log, ["rolls", "steps onto the", "gains", "loses", "Kumite", "draws", "sent to Start",
                          "Final Exam", "Black Belt"]) == []
    assert "target seat+" not in log and "room square" not in log  # players and squares by name


@pytest.mark.parametrize("game, opponent, seed, hides", [
    ("wizard_arena_v0", "wizard_arena_v0/heuristic-v1", 21, False),
    ("pans_trial_v0", "pans_trial_v0/heuristic-v1", 3, True),
])
def test_a_resumed_session_tells_the_past_as_it_was_told(game, opponent, seed, hides):
    s = _play(game, opponent, seed)
    told = s.events_for(0)
    resumed = Session.load(json.loads(json.dumps(s.save())))
    assert resumed.events_for(0) == told
    hidden = [e for e in told if e["name"] is None]
    if hides:
        assert hidden, "the game should hold a face-down choice of the opponent"
    else:
        assert hidden == [] and not any("hidden choice" in e["text"] for e in told)


def test_a_game_that_hides_something_is_told_from_the_viewers_views_alone(monkeypatch):
    """Only a game that hides nothing is handed the full positions; the others get the seat's views."""
    from play.story import story_module

    handed = []
    for game in ("sequence_v0", "wizard_arena_v0"):
        module = story_module(envs.make_game(game))
        real = module.tell

        def spy(*args, real=real, game=game, **kwargs):
            handed.append((game, kwargs.get("states") is not None, args[1]["seat"]))
            return real(*args, **kwargs)

        monkeypatch.setattr(module, "tell", spy)
        s = Session(game, ["human", f"{game}/random-v0"], config="2bots" if game == "wizard_arena_v0" else None,
                    seed=1)
        for _ in range(3):
            s.run_agents(limit=2)
            if s.human_to_act() is not None:
                s.play(0, s.legal_moves()[0][0])
    assert {g for g, _, _ in handed} == {"sequence_v0", "wizard_arena_v0"}
    assert all(full == (g == "wizard_arena_v0") for g, full, _ in handed)
    assert all(viewer == 0 for _, _, viewer in handed)  # told to the human seat, from its own view


def test_wizard_arena_story_replays_each_move_to_the_very_same_position():
    """The story plays each move again on a noting copy: it must land exactly where the game did."""
    from envs.wizard_arena.story import _Noted

    game = envs.make_game("wizard_arena_v0", num_bots=6)
    state = game.new_initial_state(4)
    rng = random.Random(4)
    moves = 0
    while not state.is_terminal() and moves < 1500:
        action = rng.choice(state.legal_actions())
        noted = _Noted.copy_of(state)
        noted.apply_action(action)
        state.apply_action(action)
        assert noted.to_dict() == state.to_dict()
        moves += 1
    assert moves > 100


def _front_ends_offer_skip(session, seat, reason):
    """The page shows ``reason`` with its skip button (the state it is sent: not the seat's turn, not
    over, the reason); the terminal says it and skips to the seat's next move on 'skip'."""
    web = pytest.importorskip("play.web")
    body = web.seat_state(session, seat, "sid")
    assert (body["your_turn"], body["over"], body["waiting"]) == (False, False, reason)
    out, asked = io.StringIO(), []

    def read(prompt):
        if prompt.startswith("Press Enter"):
            asked.append(prompt)
            return "skip"
        raise EOFError  # the seat's own move: leave the game there

    TerminalGame(session, out=out, read=read, color=False, pace=0).run()
    assert f"You cannot act now: {reason[:40]}" in " ".join(out.getvalue().split())
    assert len(asked) == 1 and "type 'skip' to go to your next move" in asked[0]
    assert session.to_act() == seat


def test_dojo_a_meditating_player_is_told_their_turn_is_skipped():
    game = envs.make_game("dojo_v0", num_players=2)
    # player_0 drew Meditazione: player_1 walks, player_0's turn is skipped, player_1 walks again
    state = from_position(game, {}, turn=1, meditating=(0,), dice=[3, 4, 2, 5])
    reason = waiting_reason(game, state.player_view(0))
    assert reason.startswith("you meditate (Meditazione): your next turn is skipped")
    assert waiting_reason(game, state.player_view(1)) == ""  # the one to act waits for nothing
    awake = from_position(game, {}, turn=1, dice=[3, 4])
    assert waiting_reason(game, awake.player_view(0)) == ""  # simply player_1's move
    session = Session("dojo_v0", ["human", "dojo_v0/heuristic-v1"], config={"num_players": 2},
                      state=game.save(state), seed=1)
    _front_ends_offer_skip(session, 0, reason)
    assert session.runner.state.turn_index - state.turn_index == 3  # player_1, player_0 (skipped), player_1


def test_pans_trial_the_appeasing_and_its_requests_are_told_as_waits_from_either_side():
    game = envs.make_game("pans_trial_v0")
    # player_0's forced pass ends the phase: player_1 chooses an Appeasing card first
    state = build(game, ". . . . . .\n" * 6, pos=((0, 0), (3, 3)), hands=("W2 X5", "X3 T3"), active=0,
                  turns_left=1, forced=(1, 0))
    state.apply_action(R.A_PASS)
    assert waiting_reason(game, state.player_view(0)) == ""  # simply player_1's choice
    state.apply_action(R.A_APPEASE + card("X3"))
    assert waiting_reason(game, state.player_view(1)) == (
        "your Appeasing card is chosen; player_0 chooses theirs face down, then both are shown")
    state.apply_action(R.A_APPEASE + card("W2"))  # the Walls card beats the Weapons card
    winner_first = waiting_reason(game, state.player_view(1))
    assert winner_first.startswith("player_0 won the Appeasing and makes their request to Pan first")
    saved = game.save(state)
    state.apply_action(R.A_REQUEST + R.RESTRUCTURE)
    assert waiting_reason(game, state.player_view(1)) == winner_first  # the request takes two choices
    state.apply_action(R.A_RESTRUCTURE + 0)
    assert state.current_player() == 1 and waiting_reason(game, state.player_view(0)).startswith(
        "player_1 lost the Appeasing and makes their request to Pan")
    state.apply_action(R.A_REQUEST + R.PLANE_SHIFT)
    state.apply_action(R.A_SHIFT + 0)
    assert state.phase == "place"
    assert waiting_reason(game, state.player_view(0)).startswith(
        "player_1 lost the Appeasing and puts the two played cards back on the board")
    session = Session("pans_trial_v0", ["pans_trial_v0/heuristic-v1", "human"], state=saved, seed=1)
    _front_ends_offer_skip(session, 1, winner_first)


def test_dojo_a_kumite_settled_inside_one_step_is_told_with_its_dice():
    game = envs.make_game("dojo_v0", num_players=2)
    # player_0 rolls 1+1 and steps east onto player_1 (Tatami, row 7); nobody holds a Tecnica, so the
    # Kumite is settled inside the step: dice 5 v 3 at equal belts
    state = from_position(game, {0: 7 * SIZE + 0, 1: 7 * SIZE + 1}, turn=0, dice=[1, 1, 5, 3])
    before = state.clone()
    state.apply_action(A_STEP + 1)
    for viewer in (0, 1):
        told = tell(game, before, state, 0, A_STEP + 1, viewer)
        assert "Kumite: player_0 attacks player_1; dice 5 v 3, totals 5 v 3 with belts and Tecnica" in told, told
        assert "player_1 is sent to Start (back to their Safe Room)" in told
    # the next move settles no bout, so nothing of this one is told again
    after, seat = state.clone(), state.current_player()
    action = state.legal_actions()[0]
    state.apply_action(action)
    told = tell(game, after, state, seat, action, 0)
    assert told and not any("Kumite" in line for line in told), told


# ----------------------------------------------------------------------------------------------
# Wizard Arena: every kind of line in good grammar, alliance answers naming both bots
BOT = r"player_\d+ \([A-P]\)"
NUM = r"-?\d+(?:\.\d+)?"
BOUT = rf"(\d+)x({NUM})=({NUM}) v (\d+)x({NUM})=({NUM})( \(a tie: rolled again\))?"
ARENA_LINES = {
    "offer": rf"{BOT} offers an alliance to {BOT}; {BOT} is asked",
    "no offer": rf"{BOT} meets {BOT} and offers no alliance",
    "accept": rf"{BOT} accepts the alliance offered by {BOT}",
    "decline": rf"{BOT} declines the alliance offered by {BOT}",
    "ally": rf"{BOT} and {BOT} ally: {BOT} leads the party",
    "join": rf"{BOT} joins the party of {BOT} \(strength {NUM} now\)",
    "no place": rf"{BOT} meets the party of {BOT} but finds no place in its line",
    "battle": rf"battle: the side of {BOT} \(strength {NUM}\) against the side of {BOT} \(strength {NUM}\)",
    "bouts": rf"  bouts \(D20 x strength\): {BOUT}(?:; {BOUT})*",
    "side wins": rf"  the side of {BOT} wins \(\+2 score to {BOT}(?:, \+1 to each member)?\); {BOT} loses 1 score",
    "hp": rf"  {BOT} loses \d+ HP \(\d+ left\)",
    "dies": rf"  {BOT} loses \d+ HP \(0 left\) and dies: a gravestone marks its square",
    "follows": rf"  {BOT} now follows {BOT}",
    "follow": rf"  {BOT}(?:, {BOT})* and {BOT} now follow {BOT}",
    "respawn": rf"  {BOT} respawns at row \d+, column \d+",
    "challenge": rf"{BOT} challenges Gary the Wizard \(strength {NUM} against Gary's {NUM}\)",
    "beats Gary": rf"  {BOT} beats Gary and picks a reward; Gary vanishes to another square",
    "Gary wins": rf"  Gary wins: {BOT} loses (?:\d+ HP and dies|\d+ HP \(\d+ left\)|\d+ score)",
    "leaves party": rf"  {BOT} leaves its party",
    "no challenge": rf"{BOT} leaves Gary alone",
    "reward": rf"{BOT} takes the reward: \+2 (?:score|strength|HP)",
    "squeeze": rf"{BOT} squeezes between two obstacles: strength {NUM}",
    "round": r"round \d+ begins",
    "end": rf"(?:no bot is alive|the last living bot is {BOT}|every living bot stands in the party of {BOT}"
           rf"|the no-progress rule ended the game \(8 x \d+ rounds without an alliance, a join, a battle or a death\))"
           rf"; (?:{BOT} ranks|{BOT}(?: and {BOT})+ rank) first \(score {NUM}, strength {NUM}\)",
}
#: Kinds of line that may not turn up in the games below (they need rare positions).
RARE = {"no place", "leaves party"}


def test_wizard_arena_tells_every_kind_of_event_in_good_grammar():
    from envs.wizard_arena.rules import ALLY_ACCEPT, ALLY_DECLINE
    from envs.wizard_arena.story import bot
    from play.story import label

    seen: dict[str, int] = {}
    odd = []
    for config, seeds in (({"num_bots": 6}, range(10)), ({"num_bots": 16}, range(4)), ({"num_bots": 6, "health": 0}, range(3)),
                          ({"num_bots": 8, "health": 2}, range(6))):
        game = envs.make_game("wizard_arena_v0", **config)
        for seed in seeds:
            state, rng = game.new_initial_state(seed), random.Random(seed)
            for _ in range(3000):
                if state.is_terminal():
                    break
                seat = state.current_player()
                if state.phase == "ally":
                    # the answer's name says whom it answers (the mover is named beside it in the log)
                    asker, asked = state.ally
                    view = state.player_view(seat)
                    other = asked if seat == asker else asker
                    for action in (ALLY_ACCEPT, ALLY_DECLINE):
                        name = label(game, view, action)
                        assert bot(other) in name and bot(seat) not in name, name
                action = rng.choice(state.legal_actions())
                before = state.clone()
                state.apply_action(action)
                for line in tell(game, before, state, seat, action, seat):
                    kinds = [k for k, pattern in ARENA_LINES.items() if re.fullmatch(pattern, line)]
                    if not kinds:
                        odd.append(line)
                    for kind in kinds:
                        seen[kind] = seen.get(kind, 0) + 1
                    if kinds == ["bouts"]:
                        for bout in re.finditer(BOUT, line):
                            tied = float(bout.group(3)) == float(bout.group(6))
                            assert tied == (bout.group(7) is not None), line  # a tied bout says it is rolled again
    assert odd == [], odd[:10]
    assert set(ARENA_LINES) - RARE - set(seen) == set(), seen
