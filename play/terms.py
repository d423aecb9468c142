"""The words of a game, read from the glossary of its rules file, for both front ends.

Each game's ``RULES.md`` (beside its engine) ends with a ``## Terms`` section: a Markdown list with one
item per word, ``- **Omen**: one of the four Jacks ...``, several names for one word given as
``- **Appeasing Pan**, **Appeasing**: ...``, an item's later lines indented. The terminal's
``help TERM`` and the browser's Rules panel (``GET /api/terms/{game}``) both read it here, so the
definitions live in the rules file alone.

A term is looked up whatever its case and whether it is written singular or plural (``omens``,
``Omen``); a word that is no term's whole name finds every term with that word in its name (``jack``:
the one-eyed and the two-eyed jack).
"""

from __future__ import annotations

import inspect
import pathlib
import re
from dataclasses import dataclass
from typing import Any

__all__ = ["Glossary", "GlossaryError", "Term", "glossary", "normalise", "parse_terms", "rules_file"]

#: The heading of the glossary section in a rules file.
HEADING = "## Terms"
_ITEM = re.compile(r"^[-*] +(?P<names>\*\*[^*]+\*\*(?:(?:,| or) +\*\*[^*]+\*\*)*) *: *(?P<text>.*)$")
_NAME = re.compile(r"\*\*([^*]+)\*\*")


class GlossaryError(ValueError):
    """A rules file's ``## Terms`` section has a line that is not a term; the message names it."""


@dataclass(frozen=True)
class Term:
    """One word of a game: its names (the first is the one shown) and its meaning in plain text."""

    names: tuple[str, ...]
    text: str

    @property
    def name(self) -> str:
        return self.names[0]

    def heading(self) -> str:
        """The names as a reader sees them: ``Appeasing Pan (also: Appeasing, Pan)``."""
        return self.name + (f" (also: {', '.join(self.names[1:])})" if len(self.names) > 1 else "")

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "names": list(self.names), "text": self.text}


def plain(markdown: str) -> str:
    """Inline Markdown as plain text: links keep their words; bold, italics and code marks go."""
    text = re.sub(r"\[([^\]]+)\]\([^)]*\)", r"\1", markdown)
    text = re.sub(r"\*\*([^*]+)\*\*", r"\1", text)
    text = re.sub(r"(?<![\w*])\*([^*\s][^*]*)\*(?![\w*])", r"\1", text)
    return text.replace("`", "")


def _singular(word: str) -> str:
    if len(word) > 3 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith(("ches", "shes", "sses", "xes")):
        return word[:-2]
    if len(word) > 2 and word.endswith("s") and not word.endswith(("ss", "us")):
        return word[:-1]
    return word


def normalise(text: str) -> str:
    """A name or a query as it is compared: lower case, hyphens as spaces, no leading article, every word
    singular."""
    words = [w.strip(".,;:!?()\"*`") for w in re.sub(r"[-_/]", " ", text.lower()).replace("'", "").split()]
    while words and words[0] in ("the", "a", "an"):
        words = words[1:]
    return " ".join(_singular(w) for w in words if w)


def parse_terms(markdown: str, where: str = "RULES.md") -> list[Term]:
    """The terms of the ``## Terms`` section of ``markdown`` (none if it has no such section).

    The section runs to the next heading of level one or two. Its list items are terms; text outside
    the list (an introduction) is allowed; an item that does not start with bold names and a colon
    raises :class:`GlossaryError` naming it, as does a name given twice."""
    lines = markdown.splitlines()
    try:
        start = next(i for i, line in enumerate(lines) if line.rstrip() == HEADING) + 1
    except StopIteration:
        return []
    items: list[tuple[int, list[str]]] = []
    current: list[str] | None = None  # the lines of the item being read
    for number, line in enumerate(lines[start:], start + 1):
        if re.match(r"#{1,2} ", line):
            break
        if re.match(r"[-*] ", line):
            current = [line.strip()]
            items.append((number, current))
        elif current is not None and line.startswith((" ", "\t")) and line.strip():
            current.append(line.strip())
        elif line.strip():
            current = None  # a paragraph of its own (an introduction), not part of a term
    terms: list[Term] = []
    seen: dict[str, str] = {}
    for number, parts in items:
        match = _ITEM.match(" ".join(parts))
        if match is None:
            raise GlossaryError(f"{where}, line {number}: a term is written '- **Name**: what it means' "
                                f"(more names: '- **Name**, **Other name**: ...'); got {parts[0]!r}")
        names = tuple(n.strip() for n in _NAME.findall(match["names"]))
        for name in names:
            key = normalise(name)
            if key in seen:
                raise GlossaryError(f"{where}, line {number}: the term {name!r} is already given as {seen[key]!r}")
            seen[key] = name
        text = plain(match["text"]).strip()
        if not text:
            raise GlossaryError(f"{where}, line {number}: the term {names[0]!r} has no meaning after its colon")
        terms.append(Term(names, text[0].upper() + text[1:]))
    return terms


def rules_file(game: Any) -> pathlib.Path:
    """The ``RULES.md`` beside a game's engine (``game``: its :class:`~envs.core.game.Game` class or
    an instance of it)."""
    cls = game if isinstance(game, type) else type(game)
    return pathlib.Path(inspect.getfile(cls)).resolve().with_name("RULES.md")


@dataclass(frozen=True)
class Glossary:
    """A game's terms, the title of its rules and where they are."""

    game: str
    title: str
    terms: tuple[Term, ...]
    path: pathlib.Path | None

    def names(self) -> list[str]:
        return [t.name for t in self.terms]

    def lookup(self, query: str) -> list[Term]:
        """The terms ``query`` means: the one with that name (any case, singular or plural), else every
        term with all of the query's words among its names' words; [] when none."""
        key = normalise(query)
        if not key:
            return []
        exact = [t for t in self.terms if key in {normalise(n) for n in t.names}]
        if exact:
            return exact
        words = set(key.split())
        return [t for t in self.terms if any(words <= set(normalise(n).split()) for n in t.names)]

    def example(self) -> str:
        """A term to show in ``help TERM``'s example: the first one."""
        return self.terms[0].name if self.terms else ""

    def to_dict(self) -> dict[str, Any]:
        return {"game": self.game, "title": self.title, "terms": [t.to_dict() for t in self.terms]}


def glossary(game: Any) -> Glossary:
    """The glossary of ``game`` (its Game class or an instance), read from its rules file; a game with
    no rules file or no ``## Terms`` section has no terms."""
    cls = game if isinstance(game, type) else type(game)
    path = rules_file(cls)
    if not path.is_file():
        return Glossary(cls.name, cls.name, (), None)
    text = path.read_text(encoding="utf-8")
    first = next((line for line in text.splitlines() if line.startswith("# ")), "")
    title = plain(first[2:].split(" — ")[0]).strip() or cls.name
    return Glossary(cls.name, title, tuple(parse_terms(text, f"{cls.name}'s RULES.md")), path)
