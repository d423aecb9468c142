"""The public API page (docs/reference/public_api.md) names only what exists: every module, function,
class and method it lists imports, and every command it lists runs its --help."""

from __future__ import annotations

import importlib
import importlib.util
import pathlib
import re
import subprocess
import sys

import pytest

PAGE = pathlib.Path(__file__).resolve().parents[1] / "docs" / "reference" / "public_api.md"


def _section(title: str) -> str:
    text = PAGE.read_text(encoding="utf-8")
    return text.split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]


def _resolve(dotted: str):
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for name in parts[cut:]:
            obj = getattr(obj, name)
        return obj
    raise ImportError(dotted)


def _names(section: str) -> list[str]:
    rows = [line for line in _section(section).splitlines() if line.startswith("| `")]
    return [name for row in rows for name in re.findall(r"`((?:envs|agents)\.[\w.]+)`", row.split(" | ")[0])]


@pytest.mark.parametrize("section", ["Environments", "Agents"])
def test_every_name_the_page_lists_exists(section):
    names = _names(section)
    assert len(names) >= 8
    for name in names:
        assert _resolve(name) is not None, name


def test_the_methods_listed_for_game_and_state_exist():
    import envs

    for name in envs.NAMES:
        game = envs.make_game(name)
        for obj, cls in ((game, "Game"), (game.new_initial_state(0), "State")):
            row = next(line for line in _section("Environments").splitlines() if line.startswith(f"| `envs.core.{cls}`"))
            members = re.findall(r"`(\w+)`", row.split(" | ", 1)[1])
            assert len(members) >= 6
            for member in members:
                assert hasattr(obj, member), f"{name}: {cls}.{member}"


def test_every_command_the_page_lists_runs_its_help():
    commands = re.findall(r"^\| `python -m ([\w.]+)` \|", _section("Commands"), flags=re.M)
    assert "training.league" in commands and "play" in commands
    for module in commands:  # training.rllib's --help works without Ray too
        assert importlib.util.find_spec(module) is not None, module
        done = subprocess.run([sys.executable, "-m", module, "--help"], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0 and "usage" in done.stdout.lower(), (module, done.stderr[-2000:])
