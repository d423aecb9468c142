"""The documentation site: its runnable code blocks run, its checkpoint pages cover the index, and it
builds with warnings as errors.

Code blocks marked ``:class: run-in-tests`` (a MyST ``code-block`` option that shows nothing on the
page) are executed here, so the PettingZoo loop and the other examples on the pages cannot rot. The
full Sphinx build runs where the ``docs`` extra is installed (the ``dev`` extra brings it; skipped
otherwise, saying so), so the README's test command builds the site with warnings as errors.
"""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
RUNNABLE = re.compile(r"^```\{code-block\} python\n:class: run-in-tests\n\n(.*?)^```$", re.S | re.M)


def runnable_blocks() -> list[tuple[str, int, str]]:
    """(page, index, code) for every block marked to run, on every page of the site."""
    blocks = []
    for page in sorted(DOCS.rglob("*.md")):
        if "_build" in page.parts:
            continue
        for i, match in enumerate(RUNNABLE.finditer(page.read_text(encoding="utf-8"))):
            blocks.append((str(page.relative_to(ROOT)), i, match.group(1)))
    return blocks


def test_the_pettingzoo_loop_pages_have_runnable_blocks():
    pages = {page for page, _, _ in runnable_blocks()}
    assert "docs/getting_started.md" in pages
    assert "docs/tutorials/pettingzoo_loop.md" in pages


def block_id(value) -> str:
    return str(value) if not isinstance(value, str) or value.endswith(".md") else "code"


@pytest.mark.parametrize("page,index,code", runnable_blocks(), ids=block_id)
def test_code_block_runs(page, index, code):
    if "sb3_contrib" in code or "torch" in code:
        pytest.importorskip("sb3_contrib", reason="the block needs the train extra")
        import torch

        torch.set_num_threads(1)
    exec(compile(code, f"{page}[{index}]", "exec"), {"__name__": "__docs__"})


def load_conf():
    pytest.importorskip("sphinx", reason="the docs extra is not installed (pip install -e '.[docs]')")
    spec = importlib.util.spec_from_file_location("docs_conf", DOCS / "conf.py")
    conf = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(conf)
    return conf


def test_checkpoint_pages_list_every_indexed_checkpoint_with_its_evaluation(tmp_path):
    conf = load_conf()
    conf.write_checkpoint_pages(out=tmp_path)
    index = json.loads((ROOT / "checkpoints" / "index.json").read_text(encoding="utf-8"))
    for entry in index["checkpoints"]:
        page = (tmp_path / f"checkpoints_{entry['game']}.md").read_text(encoding="utf-8")
        assert f"**`{entry['id']}`**" in page
    sequence = (tmp_path / "checkpoints_sequence_v0.md").read_text(encoding="utf-8")
    # sequence_v0/ppo-v4's eval.json: 197 wins of 400 against heuristic-v1
    assert "against `sequence_v0/heuristic-v1`: 197/400, 49.2% [44.4, 54.1]" in sequence


def test_every_game_has_a_page_with_its_docstring_rules_and_pictures():
    import envs

    for name in envs.NAMES:
        game = name.removesuffix("_v0")
        page = (DOCS / "games" / f"{game}.md").read_text(encoding="utf-8")
        assert f".. automodule:: envs.{name}" in page
        assert f"../../envs/{game}/RULES.md" in page
        assert f"checkpoints_{name}.md" in page
        for picture in re.findall(r"```\{image\} (\S+)", page):
            assert (DOCS / "games" / picture).resolve().is_file(), picture


@pytest.mark.slow
def test_site_builds_with_warnings_as_errors(tmp_path):
    pytest.importorskip("sphinx", reason="the docs extra is not installed (pip install -e '.[docs]')")
    pytest.importorskip("furo", reason="the docs extra is not installed (pip install -e '.[docs]')")
    pytest.importorskip("myst_parser", reason="the docs extra is not installed (pip install -e '.[docs]')")
    result = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html", "-d", str(tmp_path / "doctrees"),
         str(DOCS), str(tmp_path / "html")],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )
    assert result.returncode == 0, result.stderr[-5000:]
    assert (tmp_path / "html" / "games" / "sequence.html").is_file()
