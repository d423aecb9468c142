"""What an installed copy and its users see: shipped checkpoints as package data, the licence, help texts."""

from __future__ import annotations

import fnmatch
import re
import subprocess
import sys

import pytest

from agents.checkpoint import LOCK_FILE
from tests.checkpoint_helpers import REPO

tomllib = pytest.importorskip("tomllib")  # Python 3.11+

PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())


def test_the_shipped_checkpoints_are_package_data_of_the_wheel():
    setuptools = PYPROJECT["tool"]["setuptools"]
    assert "checkpoints" in setuptools["packages"]["find"]["include"]
    patterns = setuptools["package-data"]["checkpoints"]
    # Every file of the folder but the registry's own lock (left behind by registering here; not data).
    shipped = {p.relative_to(REPO / "checkpoints").as_posix() for p in (REPO / "checkpoints").rglob("*")
               if p.is_file() and p.name != LOCK_FILE}
    assert all(pat.startswith("**/") for pat in patterns)  # file patterns at any depth
    covered = {f for f in shipped if any(fnmatch.fnmatch(f.rsplit("/", 1)[-1], pat[3:]) for pat in patterns)}
    assert covered == shipped, f"not packaged: {sorted(shipped - covered)}"
    assert not any(f.endswith((".zip", ".pkl", ".pt", ".pth")) for f in shipped)


def test_the_licence_file_matches_pyproject():
    assert PYPROJECT["project"]["license"] == "MIT" and PYPROJECT["project"]["license-files"] == ["LICENSE"]
    assert (REPO / "LICENSE").read_text().startswith("MIT License")


def _help(module: str) -> str:
    done = subprocess.run([sys.executable, "-m", module, "--help"], cwd=REPO, capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_golden_playthroughs_help_says_what_it_does_and_its_default():
    text = _help("tests.golden_playthroughs")
    assert "Regenerate the golden playthrough files" in text and "(default: every game)" in text


def test_every_sb3_option_has_a_meaning_and_a_default():
    text = _help("training.sb3")
    options = re.findall(r"^  (--[a-z-]+)", text, flags=re.MULTILINE)
    assert len(options) > 20
    blocks = re.split(r"\n  (?=--)", text.split("options:", 1)[1])[1:]
    for block in blocks:
        flag = block.split()[0]
        words = " ".join(block.split())
        assert "(default:" in words, block
        assert len(words.split()) > 4, f"{flag} has no explanation"
    assert "runs/sb3" in text and "(empty: do not register" in text
