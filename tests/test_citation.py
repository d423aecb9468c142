"""CITATION.cff is valid Citation File Format 1.2.0 and names the package's version and its release
date; the BibTeX entry on the citation page agrees with it."""

from __future__ import annotations

import pathlib
import re

import cffconvert  # the dev extra installs it
import pytest
import yaml

import envs

ROOT = pathlib.Path(__file__).resolve().parents[1]
CFF = ROOT / "CITATION.cff"
PAGE = ROOT / "docs" / "reference" / "citation.md"


def test_citation_file_is_valid_cff_1_2_0():
    text = CFF.read_text()
    cffconvert.Citation(text).validate()  # raises jsonschema's ValidationError, naming the field
    assert yaml.safe_load(text)["cff-version"] == "1.2.0"


def test_the_validator_refuses_a_broken_citation():
    """The check above can fail: a misspelt key is refused."""
    broken = CFF.read_text().replace("title:", "titel:")
    with pytest.raises(Exception, match="titel"):
        cffconvert.Citation(broken).validate()


def test_citation_names_a_release_date():
    """``date-released`` is the date of the release named by ``version`` (tests/test_changelog.py checks it
    against CHANGELOG.md); a date in another form is refused by the schema."""
    date = str(yaml.safe_load(CFF.read_text())["date-released"])
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", date)
    broken = CFF.read_text().replace(f'date-released: "{date}"', 'date-released: "6 December 2026"')
    assert broken != CFF.read_text()
    with pytest.raises(Exception, match="date"):
        cffconvert.Citation(broken).validate()


def test_citation_and_bibtex_name_the_package_version_and_title():
    meta = yaml.safe_load(CFF.read_text())
    assert meta["version"] == envs.__version__
    page = PAGE.read_text()
    (entry,) = re.findall(r"```bibtex\n(.*?)```", page, re.S)
    fields = dict(re.findall(r"^\s*(\w+)\s*=\s*\{(.*)\},?$", entry, re.M))
    assert fields["version"] == envs.__version__
    assert fields["title"] == meta["title"]
    assert fields["author"] == "{" + meta["authors"][0]["name"] + "}"
