"""The words of each game: the glossary at the end of its RULES.md, read by play.terms for both front
ends; looked up whatever the case and number; served to the browser by the play server."""

from __future__ import annotations

import asyncio
import json
import re

import pytest

import envs
from play.terms import Glossary, GlossaryError, glossary, normalise, parse_terms
from tests.test_play_words import odd_words

#: The words a player of each game meets first, which its glossary must explain (a query and the term
#: it finds).
REQUIRED = {
    "pans_trial_v0": {"Draft": "Draft", "Omens": "Omen", "Traversing": "Traversing", "Appeasing": "Appeasing Pan",
                      "Pan": "Appeasing Pan", "requests": "Request", "Ballista": "Ballista", "walls": "Wall",
                      "traps": "Trap", "weapons": "Weapon", "plane shift": "Plane Shift",
                      "restructure": "Restructure"},
    "dojo_v0": {"belts": "Belt", "Kumite": "Kumite", "Fatica": "Fatica", "Nebbia": "Nebbia del Dojo",
                "Kiai": "Kiai", "the Final Exam": "Final Exam", "exam": "Final Exam"},
    "wizard_arena_v0": {"alliance": "Alliance", "party": "Party", "follow": "Follower", "battle": "Battle",
                        "bouts": "Bout", "Gary": "Gary", "gravestone": "Gravestone"},
    "sequence_v0": {"sequence": "Sequence", "jacks": "Jack", "one-eyed jack": "One-eyed jack",
                    "two eyed jacks": "Two-eyed jack", "dead cards": "Dead card"},
}


def _body(text: str) -> str:
    """A rules file without its glossary: the rules themselves."""
    head, _, rest = text.partition("\n## Terms\n")
    tail = re.search(r"^#{1,2} .*", rest, flags=re.M)
    return head + (rest[tail.start():] if tail else "")


@pytest.mark.parametrize("name", envs.NAMES)
def test_every_game_has_a_glossary_that_explains_its_first_words(name):
    words = glossary(envs.game_class(name))
    assert words.path is not None and words.path.name == "RULES.md" and words.path.parent.name == name[:-3]
    assert words.title and words.title != name  # the rules file's own title ("Pan's Trial")
    for query, term in REQUIRED[name].items():
        assert [t.name for t in words.lookup(query)] == [term], (name, query)


@pytest.mark.parametrize("name", envs.NAMES)
def test_every_term_is_a_word_of_the_rules_and_reads_as_words(name):
    """A glossary explains the words the rules use (each term appears in the rules above it), in plain
    words a player can read (no identifier of the code, no Markdown marks)."""
    words = glossary(envs.game_class(name))
    rules = normalise(_body(words.path.read_text(encoding="utf-8")))
    for term in words.terms:
        assert any(f" {normalise(n)} " in f" {rules} " for n in term.names), (name, term.names)
        assert not odd_words(term.text) and not re.search(r"\*\*|`", term.text), (name, term.name, term.text)
        assert term.text[0].isupper() and term.text.endswith("."), (name, term.name)


def test_a_word_is_found_whatever_its_case_and_number():
    text = """# Cards — rules

## Terms

A word of introduction.

- **Two-eyed jack**, **wild**: a chip on any empty square.
- **One-eyed jack**: removes a chip
  of another team.
- **Party**: bots in single file.
- **Pass**: nothing.

## Interpretations
- **Not a term**: after the section.
"""
    terms = parse_terms(text)
    assert [t.names for t in terms] == [("Two-eyed jack", "wild"), ("One-eyed jack",), ("Party",), ("Pass",)]
    assert terms[1].text == "Removes a chip of another team." and terms[0].heading() == "Two-eyed jack (also: wild)"
    words = Glossary("cards", "Cards", tuple(terms), None)
    for query, found in [("PARTIES", ["Party"]), ("party", ["Party"]), ("passes", ["Pass"]), ("Wild", ["Two-eyed jack"]),
                         ("two eyed jacks", ["Two-eyed jack"]), ("jack", ["Two-eyed jack", "One-eyed jack"]),
                         ("one-eyed", ["One-eyed jack"]), ("zzz", []), ("", [])]:
        assert [t.name for t in words.lookup(query)] == found, query
    assert normalise("Omens") == normalise("omen") and normalise("Plane-Shifts") == "plane shift"
    assert parse_terms("# No glossary\n\nRules.\n") == []


@pytest.mark.parametrize("bad, message", [
    ("- Omen: no bold name", "line 4: a term is written"),
    ("- **Omen**: one.\n- **omens**: twice.", "line 5: the term 'omens' is already given as 'Omen'"),
    ("- **Omen**:", "line 4: the term 'Omen' has no meaning"),
])
def test_a_glossary_line_that_is_not_a_term_is_refused_naming_it(bad, message):
    with pytest.raises(GlossaryError, match=message):
        parse_terms(f"# Game\n\n## Terms\n{bad}\n", "the test's rules")


def _get(app, path: str, query: str = "") -> tuple[int, str, bytes]:
    """One GET to the ASGI app, in process: (status, content type, body)."""
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "GET", "scheme": "http",
             "path": path, "raw_path": path.encode(), "query_string": query.encode(), "root_path": "",
             "headers": [(b"host", b"test")], "client": ("127.0.0.1", 1), "server": ("127.0.0.1", 80)}
    replies = []

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message):
        replies.append(message)

    asyncio.run(app(scope, receive, send))
    start = next(m for m in replies if m["type"] == "http.response.start")
    kind = dict(start["headers"]).get(b"content-type", b"").decode()
    return start["status"], kind, b"".join(m.get("body", b"") for m in replies if m["type"] == "http.response.body")


def test_the_server_gives_the_words_of_a_game_and_its_rules():
    pytest.importorskip("starlette")
    from play.web import create_app

    app = create_app()
    status, kind, body = _get(app, "/api/terms/pans_trial_v0")
    data = json.loads(body)
    words = glossary(envs.game_class("pans_trial_v0"))
    assert status == 200 and data["title"] == "Pan's Trial" and data["rules"] == "/rules/pans_trial_v0"
    assert data["terms"] == [t.to_dict() for t in words.terms] and "found" not in data
    status, _, body = _get(app, "/api/terms/pans_trial_v0", "q=OMENS")
    assert [t["name"] for t in json.loads(body)["found"]] == ["Omen"]
    status, _, body = _get(app, "/api/terms/pans_trial_v0", "q=kumite")
    assert status == 200 and json.loads(body)["found"] == []
    status, kind, body = _get(app, "/rules/pans_trial_v0")
    assert status == 200 and kind.startswith("text/plain") and body.decode() == words.path.read_text(encoding="utf-8")
    for path in ("/api/terms/chess_v0", "/rules/chess_v0"):
        status, _, body = _get(app, path)
        assert status == 404 and 'unknown game "chess_v0"' in json.loads(body)["error"]
