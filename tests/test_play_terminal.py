"""The terminal front end, end to end through a pseudo-terminal (pexpect), plus watch and replay."""

from __future__ import annotations

import io
import json
import os
import pathlib
import re
import subprocess
import sys

import pytest

from agents.records import load_record, replay
from play.session import Session
from play.terminal import TerminalGame, choose, draw_picture
from play.views import action_square, picture

pexpect = pytest.importorskip("pexpect")

ROOT = pathlib.Path(__file__).resolve().parents[1]
SHORT = ["wizard_arena_v0", "--config", "2bots", "--max-cycles", "8",
         "--opponents", "wizard_arena_v0/heuristic-v1", "--pace", "0", "--no-color"]
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def _spawn(args, cwd):
    env = dict(os.environ, PYTHONPATH=str(ROOT), NO_COLOR="")
    return pexpect.spawn(sys.executable, ["-m", "play", *args], cwd=str(cwd), env=env, encoding="utf-8",
                         timeout=60, dimensions=(50, 80))


def _play_to_the_end(child, moves_typed=0):
    while True:
        i = child.expect([r"player_0> ", r"Game over: (.*)\r?\n"])
        if i == 1:
            return moves_typed, child.match.group(1)
        child.sendline("1")
        moves_typed += 1


def test_whole_game_typed_in_with_bad_input_answered(tmp_path):
    record_path = tmp_path / "game.json"
    child = _spawn(["terminal", *SHORT, "--seed", "3", "--record", str(record_path)], tmp_path)
    child.expect("player_0> ")
    child.sendline("zzz")
    child.expect("Not understood: no legal move is named 'zzz'")
    child.expect("player_0> ")
    child.sendline("99")
    child.expect("there is no move number 99")
    child.expect("player_0> ")
    child.sendline("move")
    child.expect(r"'move' matches \d+ moves")
    child.expect("player_0> ")
    child.sendline("help")
    child.expect("hint \\[AGENT\\]")
    child.expect("player_0> ")
    child.sendline("hint")
    child.expect(r"Hint from wizard_arena_v0/heuristic-v1: \d+\. ")
    child.expect("player_0> ")
    child.sendline("stay")
    child.expect(r"player_0 \(you\): stay")
    typed, result = _play_to_the_end(child, 1)
    child.expect(pexpect.EOF)
    assert typed >= 5
    assert "cut off at the move limit" in result or "wins" in result or "draw" in result
    record = load_record(record_path)
    assert sum(1 for m in record.moves if m.seat == 0) == typed
    assert record.moves[0].name == "stay" or any(m.name == "stay" for m in record.moves if m.seat == 0)
    assert record.result["over"]
    replay(record)


def test_save_quit_and_resume(tmp_path):
    save = tmp_path / "saved.json"
    child = _spawn(["terminal", *SHORT, "--seed", "5", "--save", str(save)], tmp_path)
    for _ in range(3):
        child.expect("player_0> ")
        child.sendline("1")
    child.expect("player_0> ")
    child.sendline("save")
    child.expect(f"Saved to {re.escape(str(save))}")
    child.expect("player_0> ")
    child.sendline("quit")
    child.expect("Bye.")
    child.expect(pexpect.EOF)
    saved = json.loads(save.read_text())
    played = len(saved["record"]["moves"])
    assert sum(1 for m in saved["record"]["moves"] if m["seat"] == 0) == 3

    record_path = tmp_path / "resumed.json"
    child = _spawn(["terminal", "--resume", str(save), "--pace", "0", "--no-color", "--record", str(record_path)],
                   tmp_path)
    _play_to_the_end(child)
    child.expect(pexpect.EOF)
    record = load_record(record_path)
    assert [m.to_dict() for m in record.moves[:played]] == saved["record"]["moves"]
    assert record.result["over"]


def test_hot_seat_hands_the_keyboard_over(tmp_path):
    child = _spawn(["terminal", "wizard_arena_v0", "--config", "2bots", "--max-cycles", "3", "--humans", "0", "1",
                    "--pace", "0", "--no-color", "--seed", "1"], tmp_path)
    seen = set()
    while True:
        i = child.expect([r"pass the keyboard to player_(\d)", r"player_(\d)> ", r"Game over"])
        if i == 0:
            child.sendline("")
        elif i == 1:
            seen.add(child.match.group(1))
            child.sendline("1")
        else:
            break
    assert seen == {"0", "1"}


def test_unknown_opponent_and_game_are_clear_errors(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-m", "play", "terminal", "sequence_v0", "--opponents", "nobody"],
                         cwd=tmp_path, env=env, check=False, capture_output=True, text=True, timeout=60)
    assert out.returncode != 0 and "neither 'human' nor an agent of sequence_v0" in out.stderr
    out = subprocess.run([sys.executable, "-m", "play", "terminal", "--help"], cwd=tmp_path, env=env,
                         check=False, capture_output=True, text=True, timeout=60)
    for option in ("--opponents", "--humans", "--hint-agent", "--save", "--resume", "--record", "--config",
                   "--set", "--seed", "--max-cycles", "--no-color", "--pace"):
        assert option in out.stdout
    assert out.stdout.count("default") >= 12


@pytest.mark.parametrize("game, config", [("sequence_v0", {}), ("sequence_v0", {"num_teams": 3}),
                                          ("pans_trial_v0", {}), ("dojo_v0", {"num_players": 8}),
                                          ("wizard_arena_v0", {})])
def test_board_is_coloured_and_fits_80_columns(game, config):
    import envs

    n = len(envs.make(game, **config).possible_agents)
    s = Session(game, ["human"] + [f"{game}/random-v0"] * (n - 1), config=config, seed=0)
    s.run_agents()
    text = draw_picture(picture(s.game, s.view(s.human_to_act())), color=True)
    assert "\x1b[48;2;" in text
    assert max(len(ANSI.sub("", line)) for line in text.splitlines()) <= 80
    plain = draw_picture(picture(s.game, s.view(s.human_to_act())), color=False)
    assert "\x1b" not in plain


def test_choose_by_number_name_and_prefix():
    moves = [(3, "move N"), (5, "move NE"), (8, "stay")]
    assert choose("1", moves) == 3
    assert choose("move n", moves) == 3  # an exact name wins over a longer one it starts
    assert choose("move ne", moves) == 5
    assert choose("st", moves) == 8
    with pytest.raises(ValueError, match="matches 2 moves"):
        choose("mo", moves)
    with pytest.raises(ValueError, match="no move number 4"):
        choose("4", moves)


def test_undo_command_in_the_terminal():
    s = Session("wizard_arena_v0", ["human", "wizard_arena_v0/heuristic-v1"], config="2bots", seed=2)
    answers = iter(["1", "undo", "undo", "quit"])
    out = io.StringIO()
    TerminalGame(s, out=out, read=lambda prompt: next(answers), color=False, pace=0).run()
    text = out.getvalue()
    assert re.search(r"Undone: [1-9][0-9]* move\(s\) taken back.", text)
    assert "Cannot undo: there is no human move to undo" in text


def test_watch_and_replay_make_a_gif_and_a_transcript(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    record = tmp_path / "watched.json"
    out = subprocess.run([sys.executable, "-m", "play", "watch", "pans_trial_v0", "--agents",
                          "pans_trial_v0/heuristic-v1", "pans_trial_v0/experienced-v1", "--pace", "0",
                          "--seed", "2", "--no-color", "--record", str(record)],
                         cwd=tmp_path, env=env, check=False, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "Game over:" in out.stdout and "move 1: player_" in out.stdout
    gif, png, txt = tmp_path / "g.gif", tmp_path / "g.png", tmp_path / "g.txt"
    out = subprocess.run([sys.executable, "-m", "play", "replay", str(record), "--gif", str(gif), "--png", str(png),
                          "--transcript", str(txt), "--max-frames", "20"],
                         cwd=tmp_path, env=env, check=False, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    from PIL import Image

    with Image.open(gif) as im:
        assert im.n_frames >= 2
    with Image.open(png) as im:
        assert im.size[0] > 100
    rec = load_record(record)
    lines = txt.read_text().splitlines()
    assert len(lines) == len(rec.moves) + 3
    assert lines[2].endswith(rec.moves[0].name)

    data = json.loads(record.read_text())
    data["moves"][1]["action"] = data["moves"][0]["action"]
    data["moves"][1]["name"] = data["moves"][0]["name"]
    record.write_text(json.dumps(data))
    out = subprocess.run([sys.executable, "-m", "play", "replay", str(record)], cwd=tmp_path, env=env,
                         check=False, capture_output=True, text=True, timeout=120)
    assert out.returncode != 0 and "move 2 " in out.stderr and "does not replay" in out.stderr


def test_a_two_eyed_jack_turn_is_grouped_and_a_typed_square_plays(tmp_path):
    # seed 3, two players: player_0 is dealt a two-eyed jack, so about a hundred moves are legal
    child = _spawn(["terminal", "sequence_v0", "--config", "2p", "--seed", "3", "--opponents",
                    "sequence_v0/random-v0", "--pace", "0", "--no-color"], tmp_path)
    child.expect("player_0> ")
    screen = ANSI.sub("", child.before)
    assert "wild: any of the" in screen and "+: squares of your moves" in screen
    turn = screen[screen.index("    0   1"):]
    assert len(turn.splitlines()) <= 23  # with the prompt: an 80x24 terminal
    child.sendline("r2c5")  # 5D: a card in hand and the jack both fit; the terminal names both
    child.expect(r"'r2c5' matches 2 moves \(place 5D r2c5, wild r2c5\)")
    child.expect("player_0> ")
    child.sendline("5d r2c5")
    child.expect(r"player_0 \(you\): place 5D r2c5")
    child.expect("player_0> ")
    child.sendline("quit")
    child.expect(pexpect.EOF)


def test_ctrl_c_at_the_prompt_writes_the_record_and_leaves_cleanly(tmp_path):
    child = _spawn(["terminal", *SHORT, "--record", "game.json"], tmp_path)
    child.expect(r"player_0> ")
    child.sendline("1")
    child.expect(r"player_0> ")
    child.sendintr()
    child.expect(r"Record written to .*game\.json")
    child.expect(r"Interrupted: the game is left")
    child.expect(pexpect.EOF)
    child.close()
    assert "Traceback" not in child.before and child.exitstatus == 130
    record = load_record(tmp_path / "game.json")
    assert sum(1 for m in record.moves if m.seat == 0) == 1
    replay(record)


def test_watch_help_is_true():
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-m", "play", "watch", "--help"], env=env, check=True,
                         capture_output=True, text=True, timeout=60)
    assert "--resume" not in out.stdout and "--agents" in out.stdout


def test_a_wait_is_explained_and_can_be_skipped():
    """Wizard Arena: once the player's bot follows a party it cannot act; the terminal says why and skips on request."""
    for seed in range(40):
        session = Session("wizard_arena_v0", ["human"] + ["wizard_arena_v0/heuristic-v1"] * 5, seed=seed)
        out = io.StringIO()
        asked = []

        def read(prompt, asked=asked):
            if prompt.startswith("Press Enter"):
                asked.append(prompt)
                return "skip"
            return "1"

        TerminalGame(session, out=out, read=read, color=False, pace=0).run()
        text = out.getvalue()
        if "You cannot act now: your bot follows the party of player_" in text:
            assert asked and asked[0].startswith("Press Enter to watch, or type 'skip' to go to your next move")
            # under the moves, what they caused: the join that made the wait, in the game's words
            assert re.search(r"\n      [^\n]*player_0 \(A\)[^\n]*(joins the party of|ally: )", text), text[:2000]
            assert "Game over:" in text
            return
    pytest.fail("in 40 games the player's bot never followed a party")


# ----------------------------------------------------------------------------------------------
# Every prompt obeys 'quit', 'help' and Ctrl-D
#: seed 25: after two moves of its own player_0's bot follows a party, and the offer to skip comes
WAITS = ["wizard_arena_v0", "--opponents", "wizard_arena_v0/heuristic-v1", "--seed", "25", "--pace", "0", "--no-color"]
HOT_SEAT = ["wizard_arena_v0", "--config", "2bots", "--humans", "0", "1", "--pace", "0", "--no-color", "--seed", "1"]
PROMPTS = {
    # kind: (arguments, the prompt, what 'help' says there)
    "move": (SHORT + ["--seed", "3"], r"player_0> ", r"hint \[AGENT\]"),
    "wait": (WAITS, r"Press Enter to watch, or type 'skip' to go to your next move \(or the end\), 'quit' to leave: ",
             r"You cannot act for a while"),
    "hot seat": (HOT_SEAT, r"Hot seat: pass the keyboard to player_0, then press Enter ", r"alone should be at"),
}


def _reach(child, prompt):
    while child.expect([prompt, r"player_0> "]) == 1:  # play on (typing the first move) up to the prompt
        child.sendline("1")


@pytest.mark.parametrize("kind", list(PROMPTS))
@pytest.mark.parametrize("leave", ["quit", "ctrl-d"])
def test_quit_help_and_ctrl_d_work_at_every_prompt(tmp_path, kind, leave):
    args, prompt, helped = PROMPTS[kind]
    child = _spawn(["terminal", *args, "--record", "game.json"], tmp_path)
    _reach(child, prompt)
    child.sendline("help")
    child.expect(helped)
    if kind != "move":
        child.expect(r"'quit' \(or Ctrl-D\) leaves the game")
    child.expect(prompt)  # asked again, the game not gone on
    if leave == "quit":
        child.sendline("quit")
    else:
        child.sendeof()
    child.expect(r"Record written to .*game\.json")
    child.expect("Bye.")
    child.expect(pexpect.EOF)
    child.close()
    assert "Traceback" not in child.before and child.exitstatus == 0
    replay(load_record(tmp_path / "game.json"))


def test_the_offer_to_skip_watches_on_enter_skips_on_skip_and_obeys_help_and_quit(monkeypatch):
    import play.terminal as terminal

    monkeypatch.setattr(terminal, "waiting_reason", lambda game, view: "your bot follows a party")
    pauses: list[float] = []
    monkeypatch.setattr(terminal.time, "sleep", pauses.append)  # watching pauses between moves; skipping not
    for answers, verdict in ((["help", ""], "watch"), (["skip"], "skip"), (["s"], "skip"), (["watch"], "watch"),
                             (["1"], "watch"), (["help", "quit"], "quit"), ([], "quit")):
        session = Session("wizard_arena_v0", ["human", "wizard_arena_v0/heuristic-v1"], config="2bots", seed=1)
        given, asked, out = iter(answers), [], io.StringIO()
        pauses.clear()

        def read(prompt, given=given, asked=asked):
            if prompt != terminal.WAIT_PROMPT and asked:
                raise EOFError  # the move prompt after the wait: leave the game there
            if prompt == terminal.WAIT_PROMPT:
                asked.append(prompt)
                try:
                    return next(given)
                except StopIteration:
                    raise EOFError from None  # Ctrl-D
            return "1"

        assert TerminalGame(session, out=out, read=read, color=False, pace=0.5).run() == "quit"
        moved = [e for e in session.events if e.seat == 1]
        assert len(asked) == 1 + answers.count("help"), answers
        assert ("You cannot act for a while" in out.getvalue()) == ("help" in answers)
        if verdict == "quit":
            assert moved == [] and out.getvalue().endswith("Bye.\n")  # left at the offer, before any agent move
        else:
            assert bool(pauses) == (verdict == "watch"), (answers, pauses)


# ----------------------------------------------------------------------------------------------
# help WORD: the words of the game, from the glossary of its rules
HELP_GAMES = [("sequence_v0", "2p", "one-eyed jacks", "One-eyed jack (also: remove): A jack of hearts or spades"),
              ("pans_trial_v0", None, "omens", "Omen: One of the four Jacks."),
              ("dojo_v0", "2p", "KUMITE", "Kumite: A fight."),
              ("wizard_arena_v0", "2bots", "gravestones", "Gravestone: The mark a dead bot leaves")]


@pytest.mark.parametrize("game, config, word, meaning", HELP_GAMES)
def test_help_lists_the_words_of_the_game_and_help_word_explains_one(game, config, word, meaning):
    from play.terminal import typing_squares
    from play.terms import glossary

    s = Session(game, ["human", f"{game}/random-v0"], config=config, seed=3)
    answers = iter(["help", f"help {word}", "help zzz", "quit"])
    out = io.StringIO()
    terminal = TerminalGame(s, out=out, read=lambda prompt: next(answers), color=False, pace=0)
    assert terminal.run() == "quit"
    text = out.getvalue()
    words = glossary(s.game)
    helped = text[text.index("Type the number of a move"):]
    listing = " ".join(helped[helped.index(f"Words of {words.title}"):].split())
    assert f"(type 'help WORD', e.g. 'help {words.example()}'): " + ", ".join(words.names()) + "." in listing
    assert "The full rules: " in listing and "RULES.md" in listing
    assert meaning in " ".join(text.split())
    assert f"'zzz' is not a word of the rules of {words.title}." in text
    assert text.count(f"Words of {words.title}") == 2  # after 'help', and after the unknown word

    # the examples of typing a square are squares of this board, and the words pick a legal move
    seat = s.human_to_act()
    pic = picture(s.game, s.view(seat))
    squares = {a: action_square(s.game, s.view(seat), a) for a, _ in s.legal_moves()}
    said = typing_squares(s.legal_moves(), squares, pic.rows, pic.cols)
    assert " ".join(said.split()) in " ".join(text.split())
    for r, c in re.findall(r"\br(\d+)c(\d+)\b", said):
        assert 0 <= int(r) < pic.rows and 0 <= int(c) < pic.cols, said
    example = re.search(r"words and a square \((.+)\)\.", said)
    if example:
        assert choose(example[1], s.legal_moves(), squares) in dict(s.legal_moves())


def test_the_square_example_is_on_the_board_when_no_move_is_about_a_square():
    """Pan's Trial's draft: no move is about a square; the example is a square of its 6x6 board (not r6c3)."""
    from play.terminal import typing_squares

    said = typing_squares([(0, "draft 10H")], {0: None}, 6, 6)
    assert "(r3c3: row 3, column 3)" in said and "r6" not in said
    assert typing_squares([(0, "take 1")], {0: None}, 0, 0) == ""  # no board, no squares to type
    assert typing_squares([(0, "place 5H r2c5"), (1, "wild r2c5")], {0: (2, 5), 1: (2, 5)}, 10, 10).endswith(
        "type a square (r2c5) or words and a square (place r2c5).")
    with pytest.raises(ValueError) as refused:
        choose("zzz", [(0, "draft 10H")], {0: None})
    assert "square" not in str(refused.value)


def test_help_word_at_the_offer_to_skip(monkeypatch):
    import play.terminal as terminal

    monkeypatch.setattr(terminal, "waiting_reason", lambda game, view: "your bot follows a party")
    session = Session("wizard_arena_v0", ["human", "wizard_arena_v0/heuristic-v1"], config="2bots", seed=1)
    given, out = iter(["help parties", "help", "quit"]), io.StringIO()

    def read(prompt):
        return next(given) if prompt == terminal.WAIT_PROMPT else "1"

    assert TerminalGame(session, out=out, read=read, color=False, pace=0).run() == "quit"
    text = out.getvalue()
    assert "Party: Bots walking in single file behind their leader." in " ".join(text.split())
    assert "'help WORD' says what a word of the game means." in text


def test_help_word_typed_in_a_terminal(tmp_path):
    child = _spawn(["terminal", *SHORT, "--seed", "3"], tmp_path)
    child.expect("player_0> ")
    child.sendline("help")
    child.expect(r"Words of Wizard Arena \(type 'help WORD', e\.g\. 'help Bot'\): Bot, Map,")
    child.expect(r"The full rules: \S*envs/wizard_arena/RULES\.md")
    child.expect("player_0> ")
    child.sendline("help Gravestones")
    child.expect(r"Gravestone: The mark a dead bot leaves on its last cell\.")
    child.expect("player_0> ")
    child.sendline("help wizard")
    child.expect(r"Gary \(also: Gary the Wizard\): The wizard on the map")
    child.expect("player_0> ")
    child.sendline("help omens")
    child.expect(r"'omens' is not a word of the rules of Wizard Arena\.\s+Words of Wizard Arena")
    child.expect("player_0> ")
    child.sendline("quit")
    child.expect(pexpect.EOF)
