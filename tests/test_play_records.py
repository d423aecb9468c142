"""Game records: written, validated as outside data, replayed exactly, refused when they do not replay."""

from __future__ import annotations

import json
import pathlib
import re

import numpy as np
import pytest

import agents
import envs
from agents.records import (
    MAX_RECORD_BYTES,
    Record,
    Recorder,
    RecordError,
    env_result,
    load_record,
    parse_record,
    position_fingerprint,
    record_game,
    replay,
)


def _played(game="sequence_v0", seed=3, config=None):
    config = config or {}
    import envs

    n = len(envs.make(game, **config).possible_agents)
    ids = [f"{game}/random-v0"] * n
    bots = [agents.make(i, seed=k) for k, i in enumerate(ids)]
    result = agents.play_game(game, bots, seed=seed, config=config, record_actions=True)
    return record_game(game, ids, seed, result.actions, config=config, meta={"source": "test"}), result


@pytest.mark.parametrize("game", ["sequence_v0", "pans_trial_v0", "dojo_v0", "wizard_arena_v0"])
def test_record_round_trip_replays_to_the_same_result(game, tmp_path):
    config = {"num_bots": 2, "map_size": 8} if game == "wizard_arena_v0" else {}
    record, result = _played(game, config=config)
    assert record.result["returns"] == [float(r) for r in result.returns]
    path = record.save(tmp_path / "r.json")
    loaded = load_record(path)
    assert loaded.to_dict() == record.to_dict()
    env = replay(loaded)
    assert env.unwrapped.engine_state.returns() == result.returns or record.result["truncated"]
    assert all(m.name == env.action_to_string(m.action) for m in loaded.moves)


def test_edited_action_is_refused_naming_the_first_failing_move():
    record, _ = _played()
    data = record.to_dict()
    # Move 5 becomes another legal-looking id with its matching name: the game diverges there or later.
    bad = json.loads(json.dumps(data))
    bad["moves"][4]["action"] = 348
    bad["moves"][4]["name"] = "pass"
    with pytest.raises(RecordError, match=r"move 5 \(player_0, 'pass'\) does not replay"):
        replay(Record.from_dict(bad))


def test_name_from_another_version_is_refused():
    record, _ = _played()
    data = record.to_dict()
    data["moves"][2]["name"] = "place XX r9c9"
    with pytest.raises(RecordError, match=r"move 3 .*named '.*' in this version"):
        replay(Record.from_dict(data))


def test_wrong_seat_and_changed_result_are_refused():
    record, _ = _played()
    data = record.to_dict()
    data["moves"][0]["seat"] = 1
    with pytest.raises(RecordError, match=r"move 1 .* player_0 is to act"):
        replay(Record.from_dict(data))
    data = record.to_dict()
    data["result"]["returns"] = list(reversed(data["result"]["returns"]))
    with pytest.raises(RecordError, match="differs from the replayed result"):
        replay(Record.from_dict(data))


def test_the_final_position_is_fingerprinted_and_checked_on_replay():
    record, _ = _played()
    env = replay(record)
    assert record.result["position"] == position_fingerprint(env.unwrapped.engine_state)
    data = record.to_dict()
    data["result"]["position"] = "0" * 64  # the moves replay, the position they reach does not match
    with pytest.raises(RecordError, match="reach another position than recorded"):
        replay(Record.from_dict(data))
    del data["result"]["position"]  # a record written before fingerprints still replays
    replay(Record.from_dict(data))
    for bad in ("ABC", 7, "g" * 64):
        data["result"]["position"] = bad
        with pytest.raises(RecordError, match="'position' must be 64 lowercase hex digits"):
            Record.from_dict(data)


def test_moves_after_the_end_are_refused():
    record, _ = _played()
    data = record.to_dict()
    data["moves"].append(dict(data["moves"][-1]))
    with pytest.raises(RecordError, match=rf"move {len(data['moves'])} .*already over"):
        replay(Record.from_dict(data))


@pytest.mark.parametrize("change, message", [
    (lambda d: d.update(format="other"), "format"),
    (lambda d: d.update(game="chess_v0"), "unknown"),
    (lambda d: d.update(game_version=7), "version 7"),
    (lambda d: d.update(seed=-1), "seed"),
    (lambda d: d.update(seed="1"), "seed"),
    (lambda d: d.update(seats=["human", "rm -rf /"]), "seats"),
    (lambda d: d["moves"][0].update(action=True), "action"),
    (lambda d: d["moves"][0].update(extra=1), "exactly"),
    (lambda d: d.update(result={"over": True}), "result"),
    (lambda d: d.update(config={"board_file": "/etc/passwd"}), "names a file"),
    (lambda d: d.update(surprise=1), "unknown keys"),
    (lambda d: d.update(meta={"x": "y" * 20000}), "meta"),
])
def test_malformed_records_are_refused_with_the_reason(change, message):
    record, _ = _played()
    data = record.to_dict()
    change(data)
    with pytest.raises(RecordError, match=message):
        Record.from_dict(data)


def test_bad_config_is_refused_at_replay():
    record, _ = _played()
    data = record.to_dict()
    data["config"]["num_teams"] = 9
    with pytest.raises(RecordError, match="not valid for sequence_v0"):
        replay(Record.from_dict(data))


def test_a_record_without_a_later_keyword_replays_with_its_default():
    record, result = _played("sequence_v0")
    data = record.to_dict()
    del data["config"]["dead_cards"]  # as written before the keyword existed; its default is the old play
    env = replay(Record.from_dict(data))
    assert env.unwrapped.engine_state.returns() == result.returns or record.result["truncated"]
    # A keyword present must match the config it builds exactly, types included.
    record, _ = _played("wizard_arena_v0", config={"num_bots": 2, "map_size": 8})
    data = record.to_dict()
    data["config"]["initial_strength"] = 1  # builds 1.0: the same strength, not the same config
    with pytest.raises(RecordError, match=r"keys differing: \['initial_strength'\]"):
        replay(Record.from_dict(data))


def test_non_json_nan_and_oversized_input_are_refused(tmp_path):
    with pytest.raises(RecordError, match="not valid JSON"):
        parse_record(b"{nope")
    record, _ = _played()
    text = record.to_json().replace('"seed": 3', '"seed": NaN')
    with pytest.raises(RecordError, match="NaN is not allowed"):
        parse_record(text)
    big = tmp_path / "big.json"
    big.write_bytes(b" " * (MAX_RECORD_BYTES + 1))
    with pytest.raises(RecordError, match="larger than"):
        load_record(big)


def _replays_on_the_command_line(path, tmp_path) -> str:
    """``python -m play replay PATH`` accepts the record; returns its transcript."""
    from play.__main__ import main

    text = tmp_path / (pathlib.Path(path).stem + ".txt")
    assert main(["replay", str(path), "--transcript", str(text)]) == 0
    return text.read_text()


def test_a_recorder_hook_writes_the_record_while_the_game_is_played():
    ids = ["pans_trial_v0/heuristic-v1", "pans_trial_v0/random-v0"]
    recorder = Recorder(ids, meta={"source": "test"})
    bots = [agents.make(i, seed=k) for k, i in enumerate(ids)]
    played = agents.play_game("pans_trial_v0", bots, seed=5, hooks=[recorder], record_actions=True)
    record = recorder.record
    assert record.actions == played.actions and record.seats == ids and record.seed == 5
    assert record.result == {"over": True, "truncated": played.truncated, "returns": played.returns,
                             "position": record.result["position"]}
    again = record_game("pans_trial_v0", ids, 5, played.actions, meta={"source": "test"})
    assert again.moves == record.moves and again.result == record.result
    replay(Record.from_dict(json.loads(record.to_json())))
    with pytest.raises(RecordError, match="needs a seeded game"):
        agents.play_game("pans_trial_v0", bots, hooks=[Recorder(ids)])
    with pytest.raises(RecordError, match="has 2 seats; the recorder names 3"):
        agents.play_game("pans_trial_v0", bots, seed=1, hooks=[Recorder(ids + ids[:1])])


def test_every_evaluated_game_is_written_as_a_record_that_replays(tmp_path):
    from training.league import __main__ as ev

    out, folder = tmp_path / "eval", tmp_path / "records"
    code = ev.main(["--game", "sequence_v0", "--lineup", "heuristic-v1", "random-v0", "--games", "2",
                    "--config", "players_per_team=2", "--workers", "2", "--out", str(out), "--no-progress",
                    "--records", str(folder)])
    assert code == 0
    report = json.loads((out / "results.json").read_text())
    assert sorted(p.name for p in folder.iterdir()) == sorted(g["record"] for g in report["games"])
    game = envs.make_game("sequence_v0", players_per_team=2)
    for result in report["games"]:
        path = folder / result["record"]
        record = load_record(path)
        assert record.seed == result["seed"] and record.meta["source"] == "evaluate"
        assert record.seats == [result["teams"][game.team_of(s)] for s in range(4)]
        assert len(record.moves) == result["length"]
        env = replay(record)
        assert game.team_returns(env_result(env)["returns"]) == result["team_returns"]
        transcript = _replays_on_the_command_line(path, tmp_path)
        assert transcript.count("\n") == len(record.moves) + 3


def test_a_time_budget_writes_only_the_records_of_the_games_it_keeps(tmp_path):
    from training.league.matches import evaluate

    ids = ["sequence_v0/random-v0", "sequence_v0/heuristic-v1"]
    report = evaluate("sequence_v0", [tuple(ids)], 4, {"max_cycles": 5}, workers=1, progress=False,
                      budget_s=0.0, records=tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == [g["record"] for g in report["games"]]
    report = evaluate("sequence_v0", [tuple(ids)], 2, {"max_cycles": 5}, workers=1, progress=False, records=tmp_path)
    for result in report["games"]:
        record = load_record(tmp_path / result["record"])
        assert record.max_cycles == 5 and record.result["truncated"] and len(record.moves) == 10
        replay(record)


def test_every_tournament_game_is_written_as_a_record_that_replays(tmp_path, capsys):
    from tools import tournament

    folder = tmp_path / "records"
    entrants = tournament.main(["--bot", "ann=heuristic-v1", "--bot", "bob", "--bot", "cy", "--games", "2",
                                "--seed", "3", "--map-size", "8", "--max-cycles", "40", "--plain", "--no-progress",
                                "--records", str(folder)])
    assert "2 game record(s) written" in capsys.readouterr().out
    paths = sorted(folder.iterdir())
    assert [p.name for p in paths] == ["wizard_arena_v0-seed3.json", "wizard_arena_v0-seed4.json"]
    for k, path in enumerate(paths):
        record = load_record(path)
        assert record.seed == 3 + k and record.meta["source"] == "tournament"
        assert sorted(record.meta["bots"]) == ["ann", "bob", "cy"]
        by_name = {e.name: e for e in entrants}
        assert record.seats == [by_name[name].agent_id for name in record.meta["bots"]]
        env = replay(record)
        returns = env_result(env)["returns"]
        assert [returns[record.meta["bots"].index(e.name)] for e in entrants] == [e.rewards[k] for e in entrants]
        _replays_on_the_command_line(path, tmp_path)


COMMITTED = sorted((pathlib.Path(__file__).resolve().parents[1] / "docs" / "play" / "records").glob("*.json"))


def test_the_readme_pictures_have_their_records():
    assert {p.stem for p in COMMITTED} == {"sequence", "pans_trial", "dojo", "wizard_arena"}


@pytest.mark.parametrize("path", COMMITTED, ids=lambda p: p.stem)
def test_every_committed_record_replays_to_its_picture(path, tmp_path):
    """docs/play/records/*.json replay in this version, and docs/play/<name>.png is their final position
    as the replay command draws it today (regenerate the pictures with docs/make_pictures.sh)."""
    from PIL import Image

    _replays_on_the_command_line(path, tmp_path)
    record = load_record(path)
    assert record.result is not None and record.result["over"]
    from play.replay import write_png

    drawn = np.asarray(Image.open(write_png(record, tmp_path / "drawn.png")).convert("RGB"))
    committed = np.asarray(Image.open(path.parents[1] / f"{path.stem}.png").convert("RGB"))
    assert np.array_equal(committed, drawn), f"docs/play/{path.stem}.png is not the replayed final position"
    board = replay(record, render_mode="rgb_array").render()  # the board on top, the caption below it
    assert np.array_equal(committed[:board.shape[0], :board.shape[1]], board)


# ----------------------------------------------------------------------------------------------
# The pictures on the pages are what the commands printed beside them draw
DOCS = pathlib.Path(__file__).resolve().parents[1] / "docs"
#: The maintainers' script that redraws every committed picture from its committed record.
SCRIPT = DOCS / "make_pictures.sh"
GAME_PAGES = [DOCS / "games" / f"{p.stem}.md" for p in COMMITTED]


def _joined(text: str) -> list[str]:
    """The lines of a shell text with continuation lines joined and spaces squeezed."""
    return [" ".join(line.split()) for line in text.replace("\\\n", " ").splitlines() if line.strip()]


def user_commands(page: pathlib.Path) -> list[str]:
    """The commands a game page gives its reader for pictures of a game of their own: the ``sh`` block
    of "How the pictures are made", a ``python -m play watch ... --record FILE`` then a
    ``python -m play replay FILE --png ... --gif ...``."""
    section = page.read_text(encoding="utf-8").split("## How the pictures are made", 1)[1]
    blocks = re.findall(r"```(?:sh|bash)\n(.*?)```", section, flags=re.S)
    assert len(blocks) == 1, f"{page.name}: one block of commands for the pictures"
    return _joined(blocks[0])


def script_commands() -> list[str]:
    """The ``python -m play replay`` lines of docs/make_pictures.sh."""
    return [c for c in _joined(SCRIPT.read_text(encoding="utf-8")) if c.startswith("python -m play replay ")]


def _written(command: str) -> dict[str, str]:
    """``{"png": path, "gif": path}`` for what a replay command writes."""
    return dict(re.findall(r"--(png|gif) (\S+)", command))


def _shown(page: pathlib.Path) -> dict[str, pathlib.Path]:
    """The committed pictures a game page shows, by kind: ``{"png": ..., "gif": ...}``."""
    shown = re.findall(r"```\{image\} (\S+)", page.read_text(encoding="utf-8"))
    return {pathlib.Path(s).suffix[1:]: (page.parent / s).resolve() for s in shown}


def committed_pictures() -> set[pathlib.Path]:
    return {p.resolve() for p in [*(DOCS / "play").glob("*.png"), *(DOCS / "play").glob("*.gif"),
                                  *(DOCS / "games" / "media").glob("*")]}


def test_the_script_redraws_every_committed_picture_and_the_pages_show_them():
    """docs/make_pictures.sh has one command for each picture under docs/play/ and docs/games/media/,
    from that game's committed record; each game page shows its game's PNG and GIF, and no page names
    the maintainers' script or records."""
    made = {}
    for command in script_commands():
        (kind, where), = _written(command).items()
        record = re.search(r"python -m play replay (\S+)", command)[1]
        assert record == f"docs/play/records/{pathlib.Path(where).stem}.json", command
        made[(DOCS.parent / where).resolve()] = command
    assert set(made) == committed_pictures(), set(made) ^ committed_pictures()
    for page in GAME_PAGES:
        shown = _shown(page)
        assert set(shown) == {"png", "gif"} and set(shown.values()) <= set(made), page.name
        assert all(s.stem == page.stem for s in shown.values()), page.name
    for page in DOCS.rglob("*.md"):
        if "_build" not in page.parts:
            text = page.read_text(encoding="utf-8")
            assert "make_pictures" not in text and "play/records/" not in text, page


@pytest.mark.parametrize("command", script_commands(), ids=lambda c: re.search(r"--(?:png|gif) (\S+)", c)[1])
def test_the_script_draws_the_committed_picture(command, tmp_path):
    """Run as the script gives it (its output written aside): the committed picture has the same size,
    frames, legend strip and pixels, and names what made it (the package and the game's version)."""
    import shlex

    from PIL import Image

    from play.__main__ import main

    words = shlex.split(command)[3:]
    option = next(w for w in words if w in ("--png", "--gif"))
    committed = DOCS.parent / words[words.index(option) + 1]
    words[words.index(option) + 1] = str(tmp_path / committed.name)
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(DOCS.parent)
        assert main(words) == 0
    size, frames, durations = _frames(tmp_path / committed.name)
    committed_size, committed_frames, committed_durations = _frames(committed)
    where = committed.relative_to(DOCS.parent)
    assert committed_size == size, f"{where} is {committed_size}, the command draws {size}"
    assert len(committed_frames) == len(frames) and committed_durations == durations, where
    for k, (mine, theirs) in enumerate(zip(frames, committed_frames)):
        assert np.array_equal(mine, theirs), f"{where}: frame {k} differs from what the command draws"
    record = load_record(DOCS.parent / words[1])
    with Image.open(committed) as im:
        made_by = json.loads(im.info.get("Comment") or im.info.get("comment"))
    assert made_by["package"] == "tabletop-rl" and made_by["environments"] == {record.game: record.game_version}


def _frames(path: pathlib.Path) -> tuple[tuple[int, int], list[np.ndarray], list[int]]:
    """A picture's size, its frames (RGB) and their durations (a PNG: one frame, no duration)."""
    from PIL import Image, ImageSequence

    with Image.open(path) as im:
        frames = [np.asarray(f.convert("RGB")) for f in ImageSequence.Iterator(im)]
        durations = [f.info.get("duration", 0) for f in ImageSequence.Iterator(im)]
        return im.size, frames, durations


@pytest.mark.parametrize("page", GAME_PAGES, ids=lambda p: p.stem)
def test_a_game_pages_commands_draw_its_pictures(page, tmp_path, capsys):
    """The reader's two commands, run as the page gives them in an empty folder: they record the game
    the page shows (seed 7: the committed record's moves) and draw pictures of the committed pictures'
    size, frame count and legend strip (the part below the board)."""
    import shlex

    from play.__main__ import main

    watch, draw = user_commands(page)
    assert watch.startswith("python -m play watch ") and "--seed 7" in watch, watch
    assert draw.startswith("python -m play replay "), draw
    written = _written(draw)
    record_file = re.search(r"--record (\S+)", watch)[1]
    assert shlex.split(draw)[4] == record_file and "/" not in record_file, "the record goes to the current folder"
    assert all("/" not in w for w in written.values()), "the pictures go to the current folder"
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(tmp_path)
        assert main(shlex.split(watch)[3:]) == 0
        assert main(shlex.split(draw)[3:]) == 0
    capsys.readouterr()
    mine, committed = load_record(tmp_path / record_file), load_record(DOCS / "play" / "records" / f"{page.stem}.json")
    built = [envs.make_game(r.game, **r.config).config for r in (mine, committed)]  # a later keyword at its default
    assert (mine.game, mine.seats, mine.seed) == (committed.game, committed.seats, committed.seed), page.name
    assert built[0] == built[1], page.name
    assert mine.moves == committed.moves, f"{page.name}: the commands play another game than the pictures show"
    board_height = replay(committed, render_mode="rgb_array").render().shape[0]
    shown = _shown(page)
    assert set(written) == set(shown), page.name
    for kind, name in written.items():
        size, frames, _ = _frames(tmp_path / name)
        committed_size, committed_frames, _ = _frames(shown[kind])
        where = shown[kind].relative_to(DOCS.parent)
        assert size == committed_size, f"{where} is {committed_size}, the page's commands draw {size}"
        assert len(frames) == len(committed_frames), f"{where}: {len(committed_frames)} frames, the commands draw {len(frames)}"
        assert np.array_equal(frames[-1][board_height:], committed_frames[-1][board_height:]), (
            f"{where}: the legend strip differs from what the page's commands draw")


def test_each_front_page_card_shows_the_whole_board():
    """The front page's cards show the top left square of each picture at about its own size (the
    site's stylesheet), or, for a picture about as tall as it is wide (figclass ``whole-picture``), the
    whole picture: either way the whole width of the board, never the legend shrunk to a few pixels."""
    from PIL import Image

    css = (DOCS / "_static" / "tabletop.css").read_text(encoding="utf-8")
    card = re.search(r"\.game-grid figure img \{(.*?)\}", css, flags=re.S)[1]
    for rule in ("aspect-ratio: 1 / 1", "object-fit: cover", "object-position: left top", "max-width: 24rem"):
        assert rule in card, rule
    figures = re.findall(r"^:::\{figure\} (\S+)\n(.*?)^$", (DOCS / "index.md").read_text(encoding="utf-8"),
                         flags=re.S | re.M)
    assert sorted(pathlib.Path(p).stem for p, _ in figures) == sorted(p.stem for p in COMMITTED)
    for path, options in figures:
        with Image.open(DOCS / path) as im:
            width, height = im.size
        if ":figclass: whole-picture" in options:
            assert abs(width - height) <= 0.05 * width, path
            continue
        board = replay(load_record(DOCS / "play" / "records" / f"{pathlib.Path(path).stem}.json"),
                       render_mode="rgb_array").render()
        assert board.shape[1] <= min(width, height), path
