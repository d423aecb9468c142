"""The ladder: the shipped files, agents.ladder's checks, the command that remakes a ladder, the quick
league that prints the same numbers twice, and training.ppo --register with loading by path."""

from __future__ import annotations

import json
import pathlib

import pytest

import agents
import envs
from agents.ladder import LadderError, ladder, ladder_configs, ladder_info, ladder_path, load_ladder, row_fields
from agents.registry import superseded_by
from envs.core import ConfigError
from envs.provenance import environment_version
from training.league import __main__ as ev
from training.league.tables import Table, game_tables

SEQ_RANDOM, SEQ_HEURISTIC, SEQ_NOISY = "sequence_v0/random-v0", "sequence_v0/heuristic-v1", "sequence_v0/heuristic-noisy-v1"


# ----------------------------------------------------------------------------------------------
# The shipped ladders


@pytest.mark.parametrize("game_name", envs.NAMES)
def test_every_table_of_every_game_ships_a_sorted_ladder_of_every_agent_that_fits(game_name):
    tables = game_tables(game_name)
    assert [t.config for t in tables] == ladder_configs(game_name)  # one ladder per table, no stray file
    for table in tables:
        info = ladder_info(game_name, table.config)
        rows = info["rows"]
        ids = [r["id"] for r in rows]
        assert len(ids) == len(set(ids))
        assert [r["elo"] for r in rows] == sorted((r["elo"] for r in rows), reverse=True)
        missing = set(table.agents) - set(ids)
        assert not missing, f"{table.label}: agents that fit the table but are not on its ladder: {sorted(missing)}"
        heuristic = next(r for r in rows if r["id"] == f"{game_name}/heuristic-v1")
        assert heuristic["elo"] == heuristic["elo_low"] == heuristic["elo_high"] == 1500.0
        for row in rows:
            assert set(row) == set(row_fields())
            assert row["superseded_by"] == superseded_by(row["id"]) or row["id"] not in agents.available(game_name)
            if row["id"] in agents.available(game_name):  # what the agent is, in the registry's words
                assert row["description"] == agents.describe(row["id"]), row["id"]
            assert row["games"] > 0 and row["seconds_per_move"] >= 0
            low, high = row["elo_low"], row["elo_high"]
            assert (low is None or low <= row["elo"] + 1e-6) and (high is None or row["elo"] <= high + 1e-6)
        searching = [r for r in rows if r["searches"]]
        plain = [r for r in rows if not r["searches"]]
        if searching and plain:  # the ladder says that searching agents play fewer games
            assert max(r["games"] for r in searching) < max(r["games"] for r in plain)
        made = info["provenance"]
        assert made["package"] == "tabletop-rl" and made["environments"] == {game_name: environment_version(game_name)}
        assert "commit" in made and info["games_provenance"]
        assert info["command"] == f"python -m training.league --make-ladder {game_name}"


def test_the_ladder_api_returns_copies_strongest_first():
    rows = ladder("pans_trial_v0")
    rows[0]["elo"] = -1
    assert ladder("pans_trial_v0")[0]["elo"] != -1
    assert ladder("sequence_v0", {"players_per_team": 2}) == ladder("sequence_v0", {"num_teams": 2, "players_per_team": 2})


# ----------------------------------------------------------------------------------------------
# Bad input


def test_an_unknown_game_or_config_value_gets_the_error_envs_gives():
    with pytest.raises(ValueError) as theirs:
        envs.make("sequnce_v0")
    with pytest.raises(ValueError) as ours:
        ladder("sequnce_v0")
    assert str(ours.value) == str(theirs.value)
    with pytest.raises(ConfigError) as theirs:
        envs.make_game("sequence_v0", num_teams=7)
    with pytest.raises(ConfigError) as ours:
        ladder("sequence_v0", {"num_teams": 7})
    assert str(ours.value) == str(theirs.value)


def test_a_config_without_a_ladder_names_the_configs_that_have_one():
    with pytest.raises(LadderError, match=r'no ladder of sequence_v0 for config \{"num_teams": 3\}; ladders exist for: '
                                          r'the default config, \{"players_per_team": 2\}'):
        ladder("sequence_v0", {"num_teams": 3})


def _copy_ladders(tmp_path, monkeypatch) -> pathlib.Path:
    folder = tmp_path / "ladders"
    folder.mkdir()
    for path in ladder_path("sequence_v0").parent.glob("sequence_v0*.json"):
        (folder / path.name).write_bytes(path.read_bytes())
    monkeypatch.setenv("TABLETOP_LADDERS", str(folder))
    return folder


@pytest.mark.parametrize("damage,message", [
    (lambda text: text[: len(text) // 2], "not valid JSON"),
    (lambda text: json.dumps({**json.loads(text), "environment_version": 7}), "made for sequence_v7"),
    (lambda text: json.dumps({**json.loads(text), "rows": []}), "holds no rows"),
    (lambda text: json.dumps({**json.loads(text), "rows": json.loads(text)["rows"][::-1]}), "not sorted"),
    (lambda text: json.dumps({**json.loads(text), "rows": [{**json.loads(text)["rows"][0], "elo": "high"}]}),
     "elo has the wrong type"),
    (lambda text: json.dumps({**json.loads(text), "format": "something else"}), "not a ladder"),
    (lambda text: json.dumps([1, 2]), "not a ladder"),
])
def test_a_damaged_ladder_file_is_refused_naming_the_file(tmp_path, monkeypatch, damage, message):
    folder = _copy_ladders(tmp_path, monkeypatch)
    path = folder / "sequence_v0.json"
    path.write_text(damage(path.read_text()))
    with pytest.raises(LadderError, match=message) as refused:
        ladder("sequence_v0")
    assert str(path) in str(refused.value)


def test_a_missing_ladder_file_is_refused_never_an_empty_ladder(tmp_path, monkeypatch):
    folder = _copy_ladders(tmp_path, monkeypatch)
    (folder / "sequence_v0.json").unlink()
    with pytest.raises(LadderError, match="ladders exist for"):
        ladder("sequence_v0")
    with pytest.raises(LadderError, match="no such file"):
        load_ladder(folder / "sequence_v0.json")


def test_the_command_prints_a_ladder_and_refuses_a_bad_one_in_one_line(capsys):
    assert ev.main(["--ladder", "sequence_v0"]) == 0
    out = capsys.readouterr().out
    assert "Ladder: sequence_v0" in out and "heuristic-v1" in out and "--make-ladder sequence_v0" in out
    with pytest.raises(LadderError, match="^no ladder of sequence_v0 for config"):
        ev.main(["--ladder", "sequence_v0", "--config", "num_teams=3"])


# ----------------------------------------------------------------------------------------------
# Remaking a ladder


def test_the_remake_command_makes_a_small_ladder_and_a_second_run_reads_its_games_back(tmp_path, monkeypatch):
    small = Table("sequence_v0", "sequence_v0", {}, [SEQ_RANDOM, SEQ_HEURISTIC, SEQ_NOISY, "sequence_v0/ppo-v4"],
                  {"sequence_v0/ppo-teams-v1": "trained for another config"})
    monkeypatch.setattr(ev, "game_tables", lambda name: [small])
    argv = ["--make-ladder", "sequence_v0", "--ladder-games", "4", "--work", str(tmp_path / "work"),
            "--ladder-dir", str(tmp_path / "out"), "--workers", "1", "--no-progress"]
    assert ev.main(argv) == 0
    first = (tmp_path / "out" / "sequence_v0.json").read_text()
    info = load_ladder(tmp_path / "out" / "sequence_v0.json", "sequence_v0")
    assert sorted(r["id"] for r in info["rows"]) == sorted(small.agents)
    assert info["left_out"] == small.left_out
    assert {r["games"] for r in info["rows"] if r["id"] not in (SEQ_RANDOM, SEQ_HEURISTIC)} == {8}  # both anchors
    assert info["design"]["games_per_pairing"] == 4
    assert len(info["pairings"]) == 1 + 2 * 2  # the anchors, then each other agent against each

    import training.league.ladder as making

    def no_games(*args, **kwargs):
        raise AssertionError("a second run must read every pairing back, not play it")

    monkeypatch.setattr(making, "evaluate", no_games)
    assert ev.main(argv) == 0
    assert (tmp_path / "out" / "sequence_v0.json").read_text() == first  # the same file, times included


def test_the_ladder_design_pairs_every_agent_with_the_anchors_and_searchers_with_the_heuristic_only():
    from training.league.ladder import pairings

    table = Table("dojo_v0", "dojo_v0", {}, ["dojo_v0/random-v0", "dojo_v0/heuristic-v1", "dojo_v0/ppo-v3",
                                              "dojo_v0/search-v3"])
    plan = pairings(table, 4, games=8, search_games=4, slow_games=2)
    assert plan == [
        (("dojo_v0/heuristic-v1",) + ("dojo_v0/random-v0",) * 3, 8),
        (("dojo_v0/ppo-v3",) + ("dojo_v0/random-v0",) * 3, 8),
        (("dojo_v0/ppo-v3",) + ("dojo_v0/heuristic-v1",) * 3, 8),
        (("dojo_v0/search-v3",) + ("dojo_v0/heuristic-v1",) * 3, 4),
    ]
    with pytest.raises(ValueError, match="reference agent"):
        pairings(Table("dojo_v0", "dojo_v0", {}, ["dojo_v0/random-v0", "dojo_v0/ppo-v3"]), 4)


def test_bad_ladder_flags_are_refused_before_any_game():
    with pytest.raises(SystemExit, match="--ladder-games must be at least 1"):
        ev.main(["--make-ladder", "sequence_v0", "--ladder-games", "0"])
    with pytest.raises(SystemExit, match="unknown game 'chess_v0'"):
        ev.main(["--make-ladder", "chess_v0"])


# ----------------------------------------------------------------------------------------------
# The quick league: the same numbers twice


def _without_times(value):
    if isinstance(value, dict):
        return {k: _without_times(v) for k, v in value.items() if k not in ("seconds", "stop_reason")}
    if isinstance(value, list):
        return [_without_times(v) for v in value]
    return value


def test_two_quick_runs_of_a_game_write_the_same_results(tmp_path, monkeypatch):
    monkeypatch.setattr(ev, "QUICK_GAMES", 2)
    monkeypatch.setattr(ev, "QUICK_TOP_GAMES", 2)
    outs = []
    for n in range(2):
        out = tmp_path / f"run{n}"
        assert ev.main(["--game", "sequence_v0", "--quick", "--workers", str(n + 1), "--no-progress",
                        "--out", str(out)]) == 0
        outs.append(out)
    tables = sorted(p.parent.name for p in outs[0].glob("*/results.json"))
    assert tables == ["sequence_v0", "sequence_v0-players_per_team=2"]  # --game plays its config families too
    for table in tables:
        first, second = (json.loads((out / table / "results.json").read_text()) for out in outs)
        first.pop("workers"), second.pop("workers")
        assert _without_times(first) == _without_times(second)
    summaries = [json.loads((out / "summary.json").read_text()) for out in outs]
    assert _without_times(summaries[0]) == _without_times(summaries[1])


def test_a_game_league_without_agents_never_seats_an_agent_that_cannot_sit_there(tmp_path, monkeypatch):
    monkeypatch.setattr(ev, "QUICK_GAMES", 2)
    monkeypatch.setattr(ev, "QUICK_TOP_GAMES", 2)
    assert ev.main(["--game", "sequence_v0", "--config", "num_teams=3", "--workers", "1", "--no-progress",
                    "--out", str(tmp_path)]) == 0
    report = json.loads((tmp_path / "sequence_v0-num_teams=3" / "results.json").read_text())
    seated = {a for line in report["lineups"] for a in line["teams"]}
    assert SEQ_HEURISTIC in seated and "sequence_v0/ppo-v4" not in seated  # a 2-team network cannot sit at 3 teams


# ----------------------------------------------------------------------------------------------
# Train, register, play


def test_ppo_register_adds_the_policy_and_records_its_id_and_a_path_loads_like_an_id(tmp_path, monkeypatch):
    from tests.test_ppo import tiny_run

    from agents.checkpoint import read_index
    from training import ppo

    monkeypatch.setenv("TABLETOP_CHECKPOINTS", str(tmp_path / "checkpoints"))
    run = tiny_run(tmp_path, "sequence_v0", "--register", "sequence_v0/ppo-test-v1", steps=64)
    evaluation = json.loads((run / "eval.json").read_text())
    assert evaluation["checkpoint_id"] == "sequence_v0/ppo-test-v1"
    [entry] = read_index(tmp_path / "checkpoints")
    assert entry["id"] == "sequence_v0/ppo-test-v1" and entry["description"].startswith("training.ppo:")
    assert (tmp_path / "checkpoints" / entry["path"] / "eval.json").is_file()
    with pytest.raises(SystemExit):
        ppo.parse_args(["--register", "sequence_v0/ppo-test-v1", "--no-progress"])
    # a run folder and its policy folder are agents wherever an id is
    for path in (str(run), str(run / "policy")):
        assert ev.resolve_agent("sequence_v0", path) == path
        bot = agents.make(path, seed=0)
        record = agents.play_game("sequence_v0", [bot, agents.make(SEQ_RANDOM, seed=1)], seed=3)
        assert record.length > 0
    out = tmp_path / "league"
    assert ev.main(["--game", "sequence_v0", "--agents", str(run), "random-v0", "--games", "2", "--workers", "1",
                    "--no-progress", "--out", str(out)]) == 0
    assert str(run) in json.loads((out / "results.json").read_text())["agents"]


def test_a_taken_register_id_is_refused_before_training_naming_the_next_free_version(capsys):
    from training import ppo

    with pytest.raises(SystemExit):
        ppo.parse_args(["--game", "pans_trial_v0", "--register", "pans_trial_v0/ppo-v2"])
    err = capsys.readouterr().err
    assert "exists already" in err and "pans_trial_v0/ppo-v5, the next free version" in err


def test_a_path_that_is_not_a_policy_is_refused_naming_what_is_missing(tmp_path):
    (tmp_path / "half").mkdir()
    (tmp_path / "half" / "policy.json").write_text("{}")
    for path, missing in ((tmp_path, "holds no policy.json"), (tmp_path / "half", "no policy.safetensors")):
        with pytest.raises(SystemExit) as refused:
            ev.resolve_agent("sequence_v0", str(path))
        assert missing in str(refused.value) and str(path) in str(refused.value)
    with pytest.raises(SystemExit, match="holds a policy for 'dojo_v0', not 'sequence_v0'"):
        ev.resolve_agent("sequence_v0", str(pathlib.Path(agents.__file__).parents[1] / "checkpoints/dojo_v0/ppo-v3"))


def test_the_readmes_strongest_agents_are_the_ladders():
    from training.league.output import ladder_summary

    readme = (pathlib.Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    block = readme.split("<!-- ladder-summary: made by python -m training.league --ladder-summary -->\n", 1)[1]
    assert block.split("<!-- end of ladder-summary -->", 1)[0] == ladder_summary(), (
        "the README's strongest agents differ from the ladders: paste python -m training.league --ladder-summary")
    for game in envs.NAMES:
        assert f"`{ladder(game)[0]['id'].split('/', 1)[1]}`" in block


def test_both_front_ends_offer_the_opponents_in_the_ladders_order():
    from play.opponents import listing, opponents
    from play.web import games_catalogue

    for entry in games_catalogue():
        for family, ranked in entry["opponents_by_config"].items():
            assert sorted(e["id"] for e in ranked) == sorted(entry["agents_by_config"][family])
            older = [e["older"] for e in ranked]
            assert older == sorted(older)  # current agents first, then the older versions
            rated = [e["elo"] for e in ranked if not e["older"] and e["elo"] is not None]
            assert rated == sorted(rated, reverse=True), (entry["name"], family)
    text = listing("sequence_v0").splitlines()
    assert text[0].startswith("  sequence_v0/" + ladder("sequence_v0")[0]["id"].split("/")[1] + " (Elo ")
    assert "older versions:" in text and text[text.index("older versions:") + 1].startswith("    sequence_v0/ppo-v")
    assert [e["id"] for e in opponents("sequence_v0", "2x2")][0] == ladder("sequence_v0", {"players_per_team": 2})[0]["id"]


def _bash_blocks(text: str) -> list[str]:
    """The commands of a page's ```bash blocks, continuation lines joined."""
    import re

    return [line for block in re.findall(r"```bash\n(.*?)```", text, flags=re.S)
            for line in block.replace("\\\n", " ").splitlines() if line.strip()]


def test_the_ppo_tutorials_train_register_play_examples_run_as_written(tmp_path, monkeypatch):
    """The tutorial's tiny run, its league against the run folder and its --register example, as the
    page writes them (only the budget shrunk), in a folder of their own with a checkpoint index of
    their own: the example id cannot collide with a shipped one."""
    import shlex

    from training import ppo

    page = (pathlib.Path(__file__).resolve().parents[1] / "docs" / "tutorials" / "ppo.md").read_text(encoding="utf-8")
    commands = [shlex.split(c) for c in _bash_blocks(page)]
    train = [c for c in commands if c[:3] == ["python", "-m", "training.ppo"] and "--name" in c
             and c[c.index("--name") + 1] in ("tiny", "mine")]
    league = [c for c in commands if c[:3] == ["python", "-m", "training.league"]]
    assert len(train) == 2 and len(league) == 2, commands
    registering = next(c for c in train if "--register" in c)
    registered = registering[registering.index("--register") + 1]
    assert registered not in agents.available("sequence_v0")  # the example id is free in the shipped index
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TABLETOP_CHECKPOINTS", str(tmp_path / "checkpoints"))

    def shrunk(argv: list[str]) -> list[str]:
        out = list(argv[3:])
        for flag, value in (("--total-timesteps", "256"), ("--eval-every", "256"), ("--eval-games", "2"),
                            ("--games", "2")):
            if flag in out:
                out[out.index(flag) + 1] = value
        return out + ["--no-progress"]

    for argv in train:
        ppo.main(shrunk(argv))
    from agents import registry
    from agents.checkpoint import register_index

    for table in ("_REGISTRY", "_DESCRIPTIONS", "_SEARCHES", "_SUPERSEDED_BY"):  # registered for this test alone
        monkeypatch.setattr(registry, table, type(getattr(registry, table))(getattr(registry, table)))
    register_index(tmp_path / "checkpoints")  # a new process would see it on import
    for argv in league:
        assert ev.main(shrunk(argv) + ["--workers", "1"]) == 0
    assert (tmp_path / "runs" / "league" / "sequence_v0" / "results.json").is_file()


def test_the_readmes_python_examples_run_as_written():
    import re

    readme = (pathlib.Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", readme, flags=re.S)
    assert len(blocks) == 2
    for n, block in enumerate(blocks):
        exec(compile(block, f"README.md python block {n}", "exec"), {"__name__": "__readme__"})


@pytest.mark.parametrize("game_name", envs.NAMES)
def test_the_quick_leagues_tables_include_each_tables_ladder_top(game_name):
    import io

    from rich.console import Console

    summary: dict = {}
    tables = ev.league_tables(game_name, True, summary, Console(file=io.StringIO()))
    for label, config, ids, top in tables:
        best = ladder(game_name, config)[0]["id"]
        assert best in ids or best == top, (label, best)
        assert top is None or top not in ids  # a searching top plays heuristic-v1 alone
        assert all(superseded_by(a) is None for a in ids)
