"""CHANGELOG.md keeps Keep a Changelog's form: an "Unreleased" section first, then the releases, newest
first, each with its version and date; the newest release is the package's version and the date in
CITATION.cff; every environment version the package ships is named in it."""

from __future__ import annotations

import datetime
import pathlib
import re

import yaml

import envs

ROOT = pathlib.Path(__file__).resolve().parents[1]
CHANGELOG = ROOT / "CHANGELOG.md"
CFF = ROOT / "CITATION.cff"

RELEASE = re.compile(r"^## \[(\d+)\.(\d+)\.(\d+)\] - (\d{4}-\d{2}-\d{2})$")
#: Keep a Changelog's kinds of change, and the groups of the first release's summary.
GROUPS = {"Added", "Changed", "Deprecated", "Removed", "Fixed", "Security",
          "Environments", "Agents", "Training", "Evaluation", "Play", "Integrations"}


def sections() -> list[str]:
    return [line for line in CHANGELOG.read_text().splitlines() if line.startswith("## ")]


def releases() -> list[tuple[tuple[int, int, int], datetime.date]]:
    out = []
    for heading in sections()[1:]:
        match = RELEASE.match(heading)
        assert match, f"CHANGELOG.md: {heading!r} is not '## [X.Y.Z] - YYYY-MM-DD'"
        out.append((tuple(int(g) for g in match.groups()[:3]), datetime.date.fromisoformat(match[4])))
    return out


def test_unreleased_comes_first_then_the_releases_newest_first():
    assert sections()[0] == "## [Unreleased]"
    found = releases()
    assert found, "CHANGELOG.md has no release"
    assert found == sorted(found, reverse=True), "releases must be listed newest first"
    assert len({version for version, _ in found}) == len(found), "a version is listed twice"


def test_the_newest_release_is_the_package_version_and_the_citations_date():
    (version, date), *_ = releases()
    assert ".".join(map(str, version)) == envs.__version__
    meta = yaml.safe_load(CFF.read_text())
    assert str(meta["date-released"]) == date.isoformat()


def test_every_group_heading_is_a_known_kind_or_an_environment():
    for line in CHANGELOG.read_text().splitlines():
        if line.startswith("### "):
            name = line[4:].strip()
            assert name in GROUPS or name in envs.NAMES, f"CHANGELOG.md: unknown group {name!r}"


def test_every_shipped_environment_version_is_named():
    text = CHANGELOG.read_text()
    for name in envs.NAMES:
        assert f"`{name}`" in text, f"CHANGELOG.md does not name {name}: a new _vN needs a line under its name"
