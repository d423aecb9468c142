"""Front ends any game plugs into: the toy game (tests/toy, Nim) declares its picture and plays in the
terminal and through the browser's HTTP API; a game that declares no picture falls back to text and
move buttons; the terminal lists long move lists compactly, takes a typed square, keeps legend and board
in agreement and says why a game ended."""

from __future__ import annotations

import asyncio
import io
import json
import re

import pytest

import agents
import envs
from play.session import Session
from play.terminal import TerminalGame, choose, draw_picture, format_moves
from play.views import Cell, Picture, action_square, picture
from tests.toy_game import NimGame

NIM = "nim_v0"


@pytest.fixture
def nim(monkeypatch):
    """The toy game registered as docs/adding_a_game.md says (envs.NAMES, agents/nim.py)."""
    monkeypatch.setattr(envs, "NAMES", (*envs.NAMES, NIM))
    agents.load_game_agents(NIM)
    return NimGame


@pytest.fixture
def plain_nim(nim, monkeypatch):
    """The toy game as a game that declares no picture (the base class's hooks)."""
    monkeypatch.setattr(NimGame, "picture_module", None)
    return NimGame


def _terminal(session, answers, width=80):
    answers = iter(answers)
    out = io.StringIO()
    verdict = TerminalGame(session, out=out, read=lambda prompt: next(answers), color=False, pace=0,
                           width=width).run()
    return verdict, out.getvalue()


# ----------------------------------------------------------------------------------------------
# The toy game in both front ends
def test_the_toy_game_declares_its_picture_and_the_square_of_each_move(nim):
    game = NimGame(heap=5)
    view = game.new_initial_state(0).player_view(0)
    pic = picture(game, view)
    assert (pic.rows, pic.cols) == (1, 5) and [c.text for c in pic.cells[0]] == ["o"] * 5
    assert [action_square(game, view, a) for a in range(3)] == [(0, 4), (0, 3), (0, 2)]
    assert "your secret die" in pic.private[1] and not any("secret" in line for line in pic.lines)


def test_the_toy_game_plays_in_the_terminal_by_square_number_and_name(nim):
    session = Session(NIM, ["human", "nim_v0/random-v0"], seed=4)
    verdict, text = _terminal(session, ["r0c12", "1", "take 1", "1", "1", "1", "1", "1"])
    assert verdict == "over"
    moves = [m for m in session.record.moves if m.seat == 0]
    assert moves[0].name == "take 3"  # r0c12: the first of the last three counters of fifteen
    assert len(moves) >= 2 and moves[1].name == "take 1" and (len(moves) < 3 or moves[2].name == "take 1")
    assert " 0  o  o  o  o" in text and "o o+ o+ o+" in text and "+: squares" in text
    assert "How it ended: the rules ended the game" in text


def _asgi(app, method, path, body=None):
    """One request to the ASGI app, in process: (status, JSON body)."""
    payload = json.dumps(body).encode() if body is not None else b""
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": method,
             "scheme": "http", "path": path, "raw_path": path.encode(), "query_string": b"", "root_path": "",
             "headers": [(b"content-type", b"application/json"), (b"host", b"test")],
             "client": ("127.0.0.1", 1), "server": ("127.0.0.1", 80)}
    sent, replies = [{"type": "http.request", "body": payload, "more_body": False}], []

    async def receive():
        return sent.pop(0) if sent else {"type": "http.disconnect"}

    async def send(message):
        replies.append(message)

    asyncio.run(app(scope, receive, send))
    status = next(m["status"] for m in replies if m["type"] == "http.response.start")
    return status, json.loads(b"".join(m.get("body", b"") for m in replies if m["type"] == "http.response.body"))


def _browser_game(plain):
    pytest.importorskip("starlette")
    from play.web import create_app

    app = create_app()
    status, state = _asgi(app, "POST", "/api/sessions", {"game": NIM, "opponents": "nim_v0/random-v0", "seed": 2})
    assert status == 200, state
    sid, shown = state["id"], []
    while not state["over"]:
        shown.append(state)
        if not state["your_turn"]:
            status, state = _asgi(app, "POST", f"/api/sessions/{sid}/advance")
            continue
        move = state["moves"][-1]
        body = {"action": move["action"]} if plain else {"square": move["square"]}
        status, state = _asgi(app, "POST", f"/api/sessions/{sid}/move", body)
        assert status == 200, state
    return shown, state


def test_the_toy_game_plays_through_the_browser_api_by_clicking_squares(nim):
    shown, end = _browser_game(plain=False)
    first = shown[0]
    assert first["picture"]["rows"] == 1 and first["picture"]["cols"] == 15
    assert [m["square"] for m in first["moves"]] == [[0, 14], [0, 13], [0, 12]]
    assert end["over"] and ("player_0 wins" in end["result"] or "player_1 wins" in end["result"])


def test_a_game_without_a_picture_is_text_and_move_buttons(plain_nim):
    game = NimGame()
    view = game.new_initial_state(0).player_view(0)
    pic = picture(game, view)
    assert pic.rows == 0 and "heap: 15" in pic.lines and "declares no board picture" in pic.legend
    assert action_square(game, view, 0) is None
    assert draw_picture(pic, color=False) == pic.legend  # no board, no row numbers
    session = Session(NIM, ["human", "nim_v0/random-v0"], seed=4)
    verdict, text = _terminal(session, ["1"] * 10)
    assert verdict == "over" and "  1. take 1" in text and "squares of your moves" not in text
    shown, end = _browser_game(plain=True)
    assert shown[0]["picture"]["rows"] == 0 and all(m["square"] is None for m in shown[0]["moves"])
    assert end["over"]


def test_a_picture_that_is_not_a_picture_is_refused(nim, monkeypatch):
    monkeypatch.setattr(NimGame, "picture", lambda self, view: {"rows": 1})
    game = NimGame()
    with pytest.raises(TypeError, match="must return an envs.core.picture.Picture or None, got dict"):
        picture(game, game.new_initial_state(0).player_view(0))


# ----------------------------------------------------------------------------------------------
# The terminal: compact moves, squares typed, legend and board agree
def _sequence_with_a_two_eyed_jack():
    for seed in range(200):
        session = Session("sequence_v0", ["human", "sequence_v0/random-v0"], config="2p", seed=seed)
        session.run_agents()
        if session.human_to_act() == 0 and sum(name.startswith("wild") for _, name in session.legal_moves()) > 30:
            return session
    raise AssertionError("no deal in 200 gives player_0 a two-eyed jack at once")


def test_a_two_eyed_jack_fits_an_80_by_24_screen_and_a_square_can_be_typed():
    session = _sequence_with_a_two_eyed_jack()
    moves = session.legal_moves()
    assert len(moves) > 40
    squares = {a: action_square(session.game, session.view(0), a) for a, _ in moves}
    listed = format_moves(moves, 80, squares)
    assert "wild: any of the" in listed and len(listed.splitlines()) <= 6
    answers = ["quit"]
    verdict, screen = _terminal(session, answers)
    turn = screen[screen.index("\n\n") + 2:screen.index("Bye.")]  # board, lines and moves; the prompt follows
    assert len(turn.splitlines()) <= 23 and max(len(line) for line in turn.splitlines()) <= 80
    # a square: the one move about it; a card and a square; ambiguity named
    wild = next(a for a, name in moves if name.startswith("wild"))
    r, c = squares[wild]
    place_here = [a for a, name in moves if name.startswith("place") and squares[a] == (r, c)]
    if place_here:
        with pytest.raises(ValueError, match="matches 2 moves"):
            choose(f"r{r}c{c}", moves, squares)
    else:
        assert choose(f"r{r}c{c}", moves, squares) == wild
    assert choose(f"wild r{r}c{c}", moves, squares) == wild
    place = next(a for a, name in moves if name.startswith("place"))
    card, square = session.game.action_to_string(place).split()[1:]
    assert choose(f"{card} {square}", moves, squares) == place
    with pytest.raises(ValueError, match="no legal move is named 'r99c99'"):
        choose("r99c99", moves, squares)


def test_the_numbered_list_stays_for_short_lists_and_the_moves_command_shows_all():
    moves = [(i, f"move {i}") for i in range(8)]
    assert format_moves(moves, 80).splitlines()[0].startswith("  1. move 0")
    many = [(i, f"wild r{i // 10}c{i % 10}") for i in range(60)]
    assert "60 moves" in format_moves(many, 80, {i: divmod(i, 10) for i in range(60)})
    assert len(format_moves(many, 80, max_lines=None).splitlines()) >= 10


def _pic(strong: bool) -> Picture:
    cells = [[Cell("5H", "#ebe4d2"), Cell("9C", "#ebe4d2", mark="A", mark_colour="#c83c3c", strong=strong)]]
    return Picture(1, 2, cells, legend="A chips of team A", cell_width=4, strong_means="locked in a sequence")


def test_plain_text_marks_every_target_square_and_the_legend_matches_the_board():
    text = draw_picture(_pic(strong=False), color=False, targets={(0, 0), (0, 1)})
    # a card square and a chip square, both with the target "+"; the chip never hides the card under it
    assert " 0  5H+  9C(A)+" in text
    assert "+: squares of your moves" in text and "locked" not in text
    text = draw_picture(_pic(strong=True), color=False)
    assert "9C[A]" in text and "[X]: locked in a sequence" in text and "+:" not in text
    coloured = draw_picture(_pic(strong=False), color=True, targets={(0, 0)})
    assert "\x1b[1m" not in coloured and "magenta: squares of your moves" in coloured
    coloured = draw_picture(_pic(strong=True), color=True)
    assert "\x1b[1m\x1b[4m" in coloured and "bold underlined: locked in a sequence" in coloured
    assert _pic(strong=True).to_dict()["legend"].endswith("thick black ring: locked in a sequence")


# ----------------------------------------------------------------------------------------------
# Saying how a game ended
@pytest.mark.parametrize("game, config, expected", [
    ("pans_trial_v0", "default", r"How it ended: (player_[01] wins: player_[01]'s damage reached \d+, at least "
                                 r"the 25 that ends the trial|a draw: a whole phase of nothing but passes)"),
    ("wizard_arena_v0", "2bots", r"How it ended: (the last living bot is player_\d|every living bot stands in the "
                                 r"party of player_\d|the no-progress rule ended the game).*player_\d \(\w\) ranks? first"),
])
def test_the_terminal_says_how_an_agents_game_ended(game, config, expected):
    session = Session(game, ["human", f"{game}/heuristic-v1"], config=config, seed=1)
    _, text = _terminal(session, ["1"] * 400, width=80)
    assert re.search(expected, text.replace("\n    ", " ")), text[-600:]
    board = text[text.rindex("Game over") - 2000:]
    assert "to act" not in board.split("Game over")[-1]


def test_a_game_cut_at_the_move_limit_says_so():
    session = Session("wizard_arena_v0", ["human", "wizard_arena_v0/heuristic-v1"], config="2bots", seed=1,
                      max_cycles=3)
    _, text = _terminal(session, ["1"] * 10)
    assert "How it ended: the move limit was reached before the rules ended the game" in text


def test_wizard_arena_status_line_after_the_end_names_no_one_to_act():
    session = Session("wizard_arena_v0", ["wizard_arena_v0/heuristic-v1"] * 2, config="2bots", seed=3)
    session.run_agents()
    assert session.over and session.runner.end_reason != "truncated"
    turn = picture(session.game, session.view(0)).turn
    assert turn.endswith("the game is over") and "to act" not in turn
    # the front ends put how it ended in the turn line's place
    ended = picture(session.game, session.view(0), ended=session.end_text())
    assert ended.turn == f"game over: {session.end_text()}" and ended.lines == picture(session.game, session.view(0)).lines


def test_a_game_cut_off_by_the_move_limit_names_no_one_to_act():
    """The view of a truncated game still has a seat to act; the front ends say the move limit ended it."""
    session = Session("dojo_v0", ["dojo_v0/random-v0"] * 2, config="2p", seed=1, max_cycles=5)
    session.run_agents()
    assert session.over and session.runner.end_reason == "truncated"
    assert "to act" in picture(session.game, session.view(0)).turn
    ended = picture(session.game, session.view(0), ended=session.end_text())
    assert "to act" not in ended.turn and "move limit" in ended.turn


# ----------------------------------------------------------------------------------------------
# Every shipped game declares a picture the front ends can draw, and words for each way it ends
@pytest.mark.parametrize("name", envs.NAMES)
def test_every_game_declares_a_consistent_picture_and_its_end_texts(name):
    import random

    game = envs.game_class(name)()
    assert game.picture_module == f"envs.{name.removesuffix('_v0')}.picture"
    rng = random.Random(0)
    for seed in range(3):
        state = game.new_initial_state(seed)
        for step in range(4000):
            if state.is_terminal():
                break
            if step % 5 == 0:  # every fifth position: drawing is the slow part
                view = state.player_view(state.current_player())
                pic = picture(game, view)
                assert len(pic.cells) == pic.rows and all(len(row) == pic.cols for row in pic.cells)
                for action in state.legal_actions():
                    square = action_square(game, view, action)
                    assert square is None or (0 <= square[0] < pic.rows and 0 <= square[1] < pic.cols), square
            state.apply_action(rng.choice(state.legal_actions()))
        if state.is_terminal():
            assert state.end_reason() in game.end_texts, state.end_reason()
            game.end_texts[state.end_reason()].format(**game.config)


# ----------------------------------------------------------------------------------------------
# Replay pictures carry a legend and the result
def test_replay_pictures_have_a_legend_and_a_result_caption(tmp_path):
    from PIL import Image

    from play.replay import frames, result_text, write_png

    session = Session("pans_trial_v0", ["pans_trial_v0/heuristic-v1"] * 2, seed=2)
    session.run_agents()
    record = session.record
    assert record.result["over"] and not record.result["truncated"]
    raw = frames(record, max_frames=3, captions=False)
    shown = frames(record, max_frames=3)
    assert len(raw) == len(shown) >= 2
    assert all(c.shape[0] > r.shape[0] and (c[:r.shape[0], :r.shape[1]] == r).all() for r, c in zip(raw, shown))
    assert shown[-1].shape[0] > shown[0].shape[0]  # the last frame has the result line as well
    from agents.records import replay

    text = result_text(record, replay(record))
    assert re.fullmatch(r"player_[01] wins \(player_0 [+-]1, player_1 [+-]1\): a player's damage reached 25; "
                        r"the other player wins", text), text
    with Image.open(write_png(record, tmp_path / "end.png")) as im:
        assert im.height > raw[-1].shape[0] + 30 and im.width >= 360
