"""Progress fits where it goes: a redrawn bar on a terminal, whole lines in a file or a pipe."""

from __future__ import annotations

import io
import os
import pathlib
import subprocess
import sys

from agents.progress import LINE_EVERY_S, PlainProgress, progress_bar

ROOT = pathlib.Path(__file__).resolve().parents[1]


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_plain_lines_every_tenth_and_after_a_long_quiet():
    out, clock = io.StringIO(), Clock()
    bar = PlainProgress(total=100, desc="games", unit="game", file=out, clock=clock)
    for _ in range(25):
        bar.update()
    assert out.getvalue().splitlines() == ["games: 10/100 games (10%) after 0 s", "games: 20/100 games (20%) after 0 s"]
    clock.now += LINE_EVERY_S
    bar.set_postfix(win=0.25)
    bar.update()
    assert out.getvalue().splitlines()[-1] == "games: 26/100 games (26%) after 30 s; win=0.25"
    bar.update(3)  # 29: no line until the next tenth
    assert out.getvalue().splitlines()[-1].startswith("games: 26/100")
    bar.update()
    assert out.getvalue().splitlines()[-1].startswith("games: 30/100 games (30%)")
    bar.update(5)
    bar.close()
    bar.close()
    lines = out.getvalue().splitlines()
    assert lines[-1].startswith("games: 35/100 games (35%)") and lines.count(lines[-1]) == 1
    assert "\r" not in out.getvalue()


def test_plain_progress_without_a_total_and_over_an_iterable():
    out, clock = io.StringIO(), Clock()
    bar = PlainProgress(desc="steps", unit="step", file=out, clock=clock)
    bar.update(7)
    assert out.getvalue() == ""  # no total: a line only now and then
    clock.now += LINE_EVERY_S + 1
    bar.update(1)
    assert out.getvalue() == "steps: 8 steps after 31 s\n"
    out = io.StringIO()
    assert list(PlainProgress(range(4), desc="games", unit="game", file=out, clock=Clock())) == [0, 1, 2, 3]
    assert out.getvalue().splitlines()[-1] == "games: 4/4 games (100%) after 0 s"
    silent = io.StringIO()
    for _ in PlainProgress(range(3), file=silent, disable=True):
        pass
    assert silent.getvalue() == ""


def test_a_terminal_gets_the_bar_and_anything_else_plain_lines():
    from tqdm import tqdm

    assert isinstance(progress_bar(total=3, file=io.StringIO()), PlainProgress)
    primary, secondary = os.openpty()
    try:
        with open(secondary, "w", closefd=False) as terminal:
            bar = progress_bar(total=3, file=terminal, desc="games")
            assert isinstance(bar, tqdm)
            bar.close()
    finally:
        os.close(primary)
        os.close(secondary)


def test_a_league_run_into_a_pipe_prints_lines_not_redraws(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-m", "training.league", "--game", "sequence_v0", "--agents", "random-v0",
                           "heuristic-v1", "--games", "4", "--out", str(tmp_path / "league")],
                          cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=300)
    text = done.stdout.decode()
    assert done.returncode == 0, text
    assert "\r" not in text
    assert "sequence_v0: 4/4 games (100%)" in text
