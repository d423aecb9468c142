"""agents.pool: one function mapped over tasks in this process or a local process pool, with the same
results either way; the tournament and the simulator give the same tables with --workers as
without. (The Ray side, on a local cluster, is tests/test_ray_pool.py: it needs the rllib extra.)"""

from __future__ import annotations

import contextlib
import importlib.util
import json

import pytest

from agents import pool
from tools import simulate, tournament

PLAYED: list[int] = []


def square(x: int) -> int:
    PLAYED.append(x)
    return x * x


@pytest.mark.parametrize("workers", [None, 1, 2])
def test_every_task_is_played_once_and_comes_back_with_its_index(workers):
    results = list(pool.map_unordered(square, range(9), workers=workers))
    assert sorted(results) == [(i, i * i) for i in range(9)]
    assert pool.map_ordered(square, range(9), workers=workers) == [i * i for i in range(9)]


def test_map_ordered_reports_each_result_as_it_arrives():
    seen = []
    assert pool.map_ordered(square, [3, 1, 2], workers=2, on_result=lambda i, r: seen.append((i, r))) == [9, 1, 4]
    assert sorted(seen) == [(0, 9), (1, 1), (2, 4)]


def test_closing_the_iterator_in_this_process_starts_no_further_task():
    PLAYED.clear()
    with contextlib.closing(pool.map_unordered(square, range(10), workers=1)) as results:
        for index, _ in results:
            if index == 2:
                break
    assert PLAYED == [0, 1, 2]


def test_an_iterator_never_read_starts_nothing():
    PLAYED.clear()
    pool.map_unordered(square, range(3), workers=1)
    assert PLAYED == []


@pytest.mark.parametrize("kwargs,message", [
    ({"workers": 0}, "workers must be an integer >= 1"),
    ({"workers": True}, "workers must be an integer >= 1"),
    ({"workers": "2"}, "workers must be an integer >= 1"),
    ({"chunksize": 0}, "chunksize must be an integer >= 1"),
    ({"workers": 2, "start_method": "teleport"}, "teleport"),
    ({"ray_address": ""}, "ray_address must be a cluster address"),
    ({"ray_address": "auto", "start_method": "spawn"}, "local pool only"),
])
def test_bad_settings_are_refused_before_any_task_runs(kwargs, message):
    PLAYED.clear()
    with pytest.raises(ValueError, match=message):
        pool.map_unordered(square, range(3), **kwargs)
    assert PLAYED == []


@pytest.mark.skipif(importlib.util.find_spec("ray") is not None, reason="Ray is installed here")
def test_a_ray_address_without_ray_names_the_extra_to_install():
    with pytest.raises(ImportError, match=r"tabletop-rl\[rllib\]"):
        pool.map_unordered(square, range(3), ray_address="auto")
    with pytest.raises(SystemExit, match=r"tabletop-rl\[rllib\]"):
        tournament.main(["--ray-address", "auto", "--no-progress"])


def _tournament(argv, capsys):
    tournament.main(["--num-bots", "3", "--games", "4", "-H", "3", "--map-size", "8", "--max-cycles", "30",
                     "--plain", "--no-progress", "--boards", *argv])
    return capsys.readouterr().out


def test_the_tournament_prints_the_same_tables_with_workers(capsys, tmp_path):
    alone = _tournament(["--records", str(tmp_path / "one")], capsys)
    pooled = _tournament(["--workers", "2", "--records", str(tmp_path / "two")], capsys)
    assert pooled == alone.replace(str(tmp_path / "one"), str(tmp_path / "two"))
    one, two = sorted((tmp_path / "one").iterdir()), sorted((tmp_path / "two").iterdir())
    assert [p.name for p in one] == [p.name for p in two] and len(one) == 4
    for a, b in zip(one, two):
        assert json.loads(a.read_text())["moves"] == json.loads(b.read_text())["moves"]


def test_the_simulator_reports_the_same_numbers_with_workers(tmp_path):
    argv = ["sequence_v0", "--games", "3", "--agents", "random", "--variants", "all", "--no-progress",
            "--max-cycles", "40", "--out", str(tmp_path / "sim.png")]
    alone = simulate.main(argv)
    pooled = simulate.main(argv + ["--workers", "2"])
    assert pooled["default"] == alone["default"] and pooled["variants"] == alone["variants"]


@pytest.mark.parametrize("argv,message", [
    (["--workers", "0"], "--workers must be an integer >= 1"),
    (["--ray-address", ""], "ray_address must be a cluster address"),
])
def test_the_tools_refuse_bad_pool_settings_in_one_line(argv, message, tmp_path):
    for main, base in ((tournament.main, ["--no-progress"]),
                       (simulate.main, ["dojo_v0", "--no-progress", "--out", str(tmp_path / "x.png")])):
        with pytest.raises(SystemExit) as refused:
            main(base + argv)
        assert str(refused.value.code).startswith("error: ") and message in str(refused.value.code)


def test_the_league_command_refuses_bad_pool_settings_in_one_line():
    from training.league.__main__ import main

    base = ["--game", "sequence_v0", "--lineup", "heuristic-v1", "random-v0", "--games", "2", "--no-progress"]
    for argv, message in ((["--workers", "0"], "--workers must be an integer >= 1"),
                          (["--ray-address", "auto", "--start-method", "spawn"], "local workers only")):
        if "--ray-address" in argv and importlib.util.find_spec("ray") is None:
            message = r"tabletop-rl\[rllib\]"  # without Ray, the missing extra is said first
        with pytest.raises(SystemExit, match=message):
            main(base + argv)
