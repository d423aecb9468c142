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


def test_each_game_page_lists_every_agent_of_its_ladder_strongest_first(tmp_path):
    from agents.ladder import ladder, ladder_configs

    conf = load_conf()
    conf.write_ladder_pages(out=tmp_path)
    for game in GAME_MODULES:
        page = (tmp_path / f"ladder_{game}.md").read_text(encoding="utf-8")
        remake = f"```bash\npython -m training.league --make-ladder {game}\n```"
        sections = page.split(remake)[:-1]  # each table ends with its remake command
        assert len(sections) == len(ladder_configs(game))
        for config, section in zip(ladder_configs(game), sections):
            rows = ladder(game, config)
            listed = re.findall(r"^\| \d+ \| `([^`]+)` \|", section, flags=re.M)
            # current agents strongest first, then the older versions strongest first
            assert listed == ([r["id"].split("/", 1)[1] for r in rows if not r["superseded_by"]]
                              + [r["id"].split("/", 1)[1] for r in rows if r["superseded_by"]]), (game, config)


def test_a_game_page_table_that_cannot_be_made_fails_the_build(tmp_path, monkeypatch):
    from agents.ladder import LadderError, ladder_path

    conf = load_conf()
    folder = tmp_path / "ladders"
    folder.mkdir()
    for path in ladder_path("sequence_v0").parent.glob("*.json"):
        (folder / path.name).write_bytes(path.read_bytes())
    monkeypatch.setenv("TABLETOP_LADDERS", str(folder))
    broken = folder / "pans_trial_v0.json"
    data = json.loads(broken.read_text())
    data["rows"] = [r for r in data["rows"] if r["id"] != "pans_trial_v0/heuristic-noisy-v1"]
    broken.write_text(json.dumps(data))
    with pytest.raises(RuntimeError, match="heuristic-noisy-v1.*not on its ladder"):
        conf.ladder_page("pans_trial_v0")
    broken.write_text("{")
    with pytest.raises(LadderError, match="not valid JSON"):
        conf.ladder_page("pans_trial_v0")


def test_every_game_has_a_page_with_its_rules_and_reference_pages_and_pictures():
    import envs

    for name in envs.NAMES:
        game = name.removesuffix("_v0")
        page = (DOCS / "games" / f"{game}.md").read_text(encoding="utf-8")
        for generated in (f"facts_{name}.md", f"usage_{name}.rst", f"ladder_{name}.md"):
            assert f"../_generated/{generated}" in page, generated
        assert f"({game}_rules.md)" in page and f"({game}_reference.md)" in page
        assert f"../../envs/{game}/RULES.md" in (DOCS / "games" / f"{game}_rules.md").read_text(encoding="utf-8")
        assert f".. automodule:: envs.{name}" in (DOCS / "games" / f"{game}_reference.md").read_text(encoding="utf-8")
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
    # Each game page reads in a couple of minutes: measured in Chromium at 1,280 px where it is installed.
    from benchmarks import page_heights

    if not Path(page_heights.CHROMIUM).exists() or importlib.util.find_spec("playwright") is None:
        return
    heights = page_heights.page_heights(tmp_path / "html")
    assert set(heights) == set(page_heights.GAME_PAGES)
    assert all(1000 < px <= page_heights.LIMIT_PX for px in heights.values()), heights


# -- What the generated and hand-written pages must keep ------------------------------------------

#: Words that speak to the team rather than the reader: paths outside the repository, issue numbers,
#: and the names the rules files once used for their sources.
INTERNAL = re.compile(
    r"shared/(?:seeds|research)|seed page|seed rules|research sheet|the brief\b|issue text|\bissue \d+|\(issue",
    re.I,
)
GAME_MODULES = ("sequence_v0", "pans_trial_v0", "dojo_v0", "wizard_arena_v0")


def _measurements(evaluation: dict) -> list[tuple[str | None, dict]]:
    """``(command, lineup)`` for every lineup a checkpoint's ``eval.json`` measured, its further
    evaluations (``more``) included."""
    found = []
    for block in [evaluation, *evaluation.get("more", [])]:
        for outer in block.get("lineups", []):
            for lineup in outer.get("lineups", []):
                found.append((outer.get("command") or block.get("command"), lineup))
    return found


def reader_texts() -> dict[str, str]:
    """Every text a reader meets: the site's pages, the README, the rules files, the game modules'
    docstrings, the checkpoint notes, index descriptions and the text fields of every ``eval.json``."""
    import importlib

    texts = {str(p.relative_to(ROOT)): p.read_text(encoding="utf-8")
             for p in [*DOCS.rglob("*.md"), ROOT / "README.md", ROOT / "checkpoints" / "README.md",
                       *ROOT.glob("envs/*/RULES.md")]
             if "_build" not in p.parts}
    for name in GAME_MODULES:
        texts[f"envs/{name}.py"] = importlib.import_module(f"envs.{name}").__doc__
    index = json.loads((ROOT / "checkpoints" / "index.json").read_text(encoding="utf-8"))
    for entry in index["checkpoints"]:
        texts[f"checkpoints/index.json {entry['id']}"] = entry["description"]
        evaluation = json.loads((ROOT / "checkpoints" / entry["eval"]).read_text(encoding="utf-8"))
        texts[entry["eval"]] = json.dumps(
            {k: v for k, v in evaluation.items() if isinstance(v, str)}
            | {"commands": [command for command, _ in _measurements(evaluation)]})
    return texts


def test_no_page_rules_file_docstring_or_shipped_json_speaks_to_the_team():
    found = {where: INTERNAL.findall(text) for where, text in reader_texts().items()}
    assert not {where: words for where, words in found.items() if words}


def test_the_internal_words_check_catches_them():
    for text in ("see shared/seeds/x.txt", "the seed page says", "(issue 10)", "the brief's choice", "issue text"):
        assert INTERNAL.search(text), text
    assert not INTERNAL.search("the original game's rules page; an issue of timing")


def test_every_evaluation_command_is_runnable_as_written():
    """No placeholder: each command names the lineup it measured, the checkpoint in the first team."""
    index = json.loads((ROOT / "checkpoints" / "index.json").read_text(encoding="utf-8"))
    for entry in index["checkpoints"]:
        evaluation = json.loads((ROOT / "checkpoints" / entry["eval"]).read_text(encoding="utf-8"))
        measured = _measurements(evaluation)
        assert measured or "final" in evaluation, entry["id"]
        for command, lineup in measured:
            assert command and "OPPONENT" not in command and "..." not in command, (entry["id"], command)
            words = command.split()
            assert words[:3] == ["python", "-m", "training.league"] and words[words.index("--game") + 1] == entry["game"]
            teams = words[words.index("--lineup") + 1:words.index("--games")]
            assert teams == lineup["teams"] and teams[0] == entry["id"], (entry["id"], command)
            requested = int(words[words.index("--games") + 1])
            assert requested <= lineup["agents"][0]["games"] < requested + len(teams) * 6, (entry["id"], command)


def game_page_reading_order(name: str) -> str:
    """A game page as it reads: its Markdown with the generated facts table and usage in place."""
    conf = load_conf()
    from envs.facts import facts_markdown

    page = (DOCS / "games" / f"{name.removesuffix('_v0')}.md").read_text(encoding="utf-8")
    page = page.replace(f"```{{include}} ../_generated/facts_{name}.md\n```", facts_markdown(name))
    return page.replace(f"```{{eval-rst}}\n.. include:: ../_generated/usage_{name}.rst\n```", conf.usage_section(name))


@pytest.mark.parametrize("name", GAME_MODULES)
def test_a_game_page_reads_in_pettingzoos_order(name):
    """Picture, the facts table (import line, manual control), both usages, the agents, the links to the
    rules and the reference, and last the commands that redraw the pictures."""
    text = game_page_reading_order(name)
    marks = [r"```\{image\}", f"from envs import {name}", "\\| Manual control \\|", f"python -m play terminal {name}",
             "\n## Usage", "env.agent_iter()", f"env = {name}.parallel_env()", "\n## Agents, strongest first",
             f"ladder_{name}\\.md", "\n## Rules, observation and actions", "_rules.md", "_reference.md",
             "\n## How the pictures are made", "python -m play replay"]
    found = [re.search(mark, text) for mark in marks]
    assert None not in found, [m for m, f in zip(marks, found) if f is None]
    where = [f.start() for f in found]
    assert where == sorted(where), [m for m, w in sorted(zip(marks, where), key=lambda x: x[1])]


def test_the_four_facts_tables_have_the_same_rows_in_the_same_order():
    from envs.facts import ROWS, facts

    for name in GAME_MODULES:
        rows = facts(name)
        assert [row for row, _ in rows] == list(ROWS), name
        assert all(value.strip() for _, value in rows), name
    assert dict(facts("pans_trial_v0"))["Observation shape"].startswith("`Dict`")  # the env returns a Dict


@pytest.mark.parametrize("name", GAME_MODULES)
def test_a_game_modules_usage_examples_run_with_both_apis(name):
    """The Usage section shows the AEC loop and the parallel API, and both run as written."""
    import importlib

    doc = importlib.import_module(f"envs.{name}").__doc__
    usage = doc.split("Usage\n-----", 1)[1].split("\n-----", 1)[0]
    blocks = usage.split(".. code-block:: python\n\n")[1:]
    assert len(blocks) == 2 and "env.agent_iter()" in blocks[0] and f"{name}.parallel_env()" in blocks[1]
    for n, block in enumerate(blocks):
        code = []
        for line in block.splitlines():
            if line.strip() and not line.startswith("    "):
                break
            code.append(line[4:])
        if n:  # the parallel example reuses the import of the first
            code.insert(0, f"from envs import {name}")
        exec(compile("\n".join(code), f"envs/{name}.py usage {n}", "exec"), {"__name__": "__docs__"})


@pytest.mark.parametrize("name", GAME_MODULES)
def test_env_raw_env_and_parallel_env_are_documented_with_types(name):
    import importlib
    import inspect

    module = importlib.import_module(f"envs.{name}")
    for factory in (module.env, module.raw_env, module.parallel_env):
        assert factory.__module__ == f"envs.{name}" and factory.__doc__ and "Args:" in factory.__doc__
    for factory in (module.env, module.parallel_env):
        signature = inspect.signature(factory)
        assert signature.parameters["render_mode"].annotation != inspect.Parameter.empty
        assert signature.parameters["max_cycles"].annotation != inspect.Parameter.empty
        assert signature.return_annotation in ("AECEnv", "ParallelEnv")


def test_module_names_and_page_paths_written_as_code_become_links():
    conf = load_conf()
    docs = {"reference/_api/training.league", "guide/vector", "games/sequence_rules", "reference/checkpoints"}
    assert conf.literal_target("training.league", docs) == "reference/_api/training.league"
    assert conf.literal_target("docs/guide/vector.md", docs) == "guide/vector"
    assert conf.literal_target("envs/sequence/RULES.md", docs) == "games/sequence_rules"
    assert conf.literal_target("checkpoints/README.md", docs) == "reference/checkpoints"
    for text in ("python -m training.league", "numpy.random", "docs/missing.md", "training.missing"):
        assert conf.literal_target(text, docs) is None, text


#: What readers of the built site marked as written for the team rather than for a user, turned into a
#: check: test files cited as evidence, goals and bars the project set itself, reviews, placeholders and
#: release bookkeeping. (A page for contributors may name the checks a new game must pass.)
TEAM_TALK = re.compile(
    r"tests/(?:\w+/)*test_\w+\.py|\(tested\)|\bfor maintainers\b|before the first release|goal reached|\bnot reached\b"
    r"|\basked for\b|\ba review\b|OPPONENT\.\.\.|\bwe tried\b|when the site is built|makes this page",
    re.I,
)
#: pages written for contributors, where naming a test a new game must pass is the point
CONTRIBUTOR_PAGES = ("docs/adding_a_game.md",)


def test_no_reader_text_speaks_to_the_team_about_goals_reviews_or_tests():
    found = {where: TEAM_TALK.findall(text or "") for where, text in reader_texts().items()
             if where not in CONTRIBUTOR_PAGES}
    assert not {where: words for where, words in found.items() if words}


def test_the_team_talk_check_catches_what_readers_marked():
    for text in ("(tested in tests/test_play_records.py)", "the check tests/sequence/test_sequence_vector.py",
                 "For maintainers: run this", "the 1.2× asked for",
                 "goal reached", "Before the first release, rules may change", "a review's 3,000 games",
                 "--opponents OPPONENT...", "this is the module docstring, read when the site is built"):
        assert TEAM_TALK.search(text), text
    assert not TEAM_TALK.search("a tie is re-rolled; the seat that moves first wins 52% of 400 games")


def test_ladder_descriptions_name_no_internal_functions():
    """What an agent is, in words: a ladder row never sends the reader to a function of the code."""
    from agents.ladder import ladder_configs, ladder_info

    for game in GAME_MODULES:
        for config in ladder_configs(game):
            for row in ladder_info(game, config)["rows"]:
                assert not re.search(r"\b(?:agents|envs|training)\.\w+\.\w+", row["description"]), row
