"""Sphinx configuration for the tabletop-rl documentation site.

Build (from the repository root, with the ``docs`` extra installed)::

    python -m sphinx -W --keep-going -b html docs docs/_build/html

Warnings are errors: a broken cross-reference, a missing include or a docstring autodoc cannot parse
fails the build. Each game page's agents table is generated from the ladder shipped with the package
(``agents/ladders/``) at build time (``docs/_generated/``), so it cannot drift from the data.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(ROOT))

from docutils import nodes  # noqa: E402
from sphinx import addnodes  # noqa: E402
from sphinx.transforms import SphinxTransform  # noqa: E402
from sphinx.transforms.post_transforms import SphinxPostTransform  # noqa: E402

import envs  # noqa: E402  (after the path so the checkout's package is documented)

# nitpicky is off: with it on, the build reports about 300 references it cannot resolve. Most are
# types in signatures from other projects (numpy, torch, pathlib, random, gymnasium, pettingzoo) that
# would need intersphinx inventories fetched from the network at build time; the rest (about 145
# distinct names) are short names in docstrings and annotations (``Game``, ``StateError``, private
# helpers) that need qualifying one by one. Without nitpicky, a broken explicit cross-reference, a
# missing page or include, an ambiguous reference or a docstring that does not parse still fails -W.
project = "tabletop-rl"
author = "the tabletop-rl authors"
copyright = "the tabletop-rl authors, MIT licence"  # noqa: A001
version = release = envs.__version__

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
    "sphinx.ext.viewcode",
]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
root_doc = "index"
# guide/ppo_compare/*.md are tables that guide/ppo_reference.md includes, not pages of their own
exclude_patterns = ["_build", "_generated", "play/records", "guide/ppo_compare", "Thumbs.db", ".DS_Store"]

myst_enable_extensions = ["colon_fence", "deflist"]
# "ref.python": an unqualified annotation (``Args``) that names classes of several modules; the
# annotation stays readable text instead of a link, which is all nitpicky-off would give it anyway.
suppress_warnings = ["myst.header", "ref.python"]

# ignore-module-all: a package documents what it defines, not what it re-exports (agents.Agent is agents.base.Agent)
autodoc_default_options = {"members": True, "show-inheritance": True, "ignore-module-all": True}
autodoc_member_order = "bysource"
autodoc_typehints = "description"
autosummary_generate = True
napoleon_google_docstring = True
napoleon_numpy_docstring = False

html_theme = "furo"
html_title = f"tabletop-rl {release}"
html_static_path = ["_static"]
html_css_files = ["tabletop.css"]
html_js_files = ["tabletop.js"]

GAMES = {
    "sequence_v0": "Sequence",
    "pans_trial_v0": "Pan's Trial",
    "dojo_v0": "Il Labirinto del Dojo",
    "wizard_arena_v0": "Wizard Arena",
}


def _what(row: dict, checkpoint_ids: set[str]) -> str:
    """What an agent is, in a few words, from its id and registry entry."""
    agent = row["id"].split("/", 1)[1]
    if row["id"] in checkpoint_ids:
        kind = "network with search at play time" if row["searches"] else "trained network"
        return f"{kind} ([how it was trained](../reference/checkpoints.md))"
    if agent.startswith("ismcts-"):
        return "OpenSpiel's information-set MCTS (needs the `openspiel` extra)"
    text = row["description"].split(";")[0].strip()
    return text[:1].upper() + text[1:]


def _interval(row: dict) -> str:
    """A row's 95% interval as the page shows it: the league's text, except an interval of zero width
    (every game of the agent gave the same result, so resampling them cannot move its rating), which
    is no interval at all: ``"— (4 games)"``."""
    from training.league.output import ladder_interval_text

    if not row["id"].endswith("/heuristic-v1") and row["elo_low"] is not None and row["elo_low"] == row["elo_high"]:
        return f"— ({row['games']} games)"
    return ladder_interval_text(row)


def _rows(rows: list[dict], checkpoint_ids: set[str], start: int = 1) -> list[str]:
    from agents.ladder import move_time_text

    out = ["| # | agent | Elo | 95% interval | games | time a move | what it is |", "|--:|---|--:|--:|--:|--:|---|"]
    for n, row in enumerate(rows, start):
        out.append(f"| {n} | `{row['id'].split('/', 1)[1]}` | {row['elo']:.0f} | {_interval(row)} | {row['games']} | "
                   f"{move_time_text(row['seconds_per_move'])} | {_what(row, checkpoint_ids)} |")
    return out


def _rounded(count: int, rotations: int) -> int:
    """``count`` games rounded up to whole seat rotations, as the league plays them."""
    return -(-count // rotations) * rotations


def _table_notes(rows: list[dict], design: dict, rotations: int) -> list[str]:
    """What the table's numbers need explaining: the game counts, and any interval that is open or
    missing. Only what this table shows is explained."""
    counts = [(design["games_per_pairing"], "each anchor"), (design["search_games_per_pairing"], "a searching agent"),
              (design["slow_games_per_pairing"], "IS-MCTS")]
    rounded = [f"{c} → {_rounded(c, rotations)} ({who})" for c, who in counts if _rounded(c, rotations) != c]
    notes = ["*Games* is an agent's total over its pairings (two for most agents, one against `heuristic-v1` for a "
             "searching agent; the anchors' totals count every game they played)"
             + (f". Each pairing's games are rounded up to whole seat rotations, {rotations} seat orders at this "
                f"table: {', '.join(rounded)}" if rounded else "") + "."]
    texts = [_interval(r) for r in rows]
    if any(t.startswith("≤") for t in texts):
        notes.append("*≤ X*: the agent lost every game it played, so its interval has no lower end: its rating "
                     "is at most X.")
    if any(t.startswith("≥") for t in texts):
        notes.append("*≥ X*: the agent won every game it played, so its interval has no upper end: its rating is "
                     "at least X.")
    if any(t.startswith("—") for t in texts):
        notes.append("*—*: every game of the agent ended the same way for it, so resampling them cannot move its "
                     "rating and the interval is unknown (not zero): read the rating as a rough placing.")
    return notes


def ladder_page(game: str) -> str:
    """The Markdown of a game's agents, from the ladder shipped with the package: one table per config
    family with agents of its own, current agents strongest first, then the older versions.
    A table that cannot be made (a missing or damaged ladder file, an agent of the game missing from
    it) raises, and so fails the build."""
    from agents.checkpoint import scan_index
    from agents.ladder import ladder_configs, ladder_info
    from training.league.matches import orderings, table_facts
    from training.league.tables import game_tables, table_title

    checkpoint_ids = {entry["id"] for entry in scan_index()[0]}
    tables = game_tables(game)
    if [t.config for t in tables] != ladder_configs(game):
        raise RuntimeError(f"{game}: the ladder files ({ladder_configs(game)}) are not the game's tables "
                           f"({[t.config for t in tables]}); remake them: python -m training.league --make-ladder {game}")
    text = []
    for table in tables:
        info = ladder_info(game, table.config)
        rows = info["rows"]
        missing = sorted(set(table.agents) - {r["id"] for r in rows})
        if missing:
            raise RuntimeError(f"{game}: {missing} can sit at {table.label} but are not on its ladder; remake it: "
                               f"{info['command']}")
        current = [r for r in rows if not r["superseded_by"]]
        older = [r for r in rows if r["superseded_by"]]
        design = info["design"]
        if len(tables) > 1:
            text += [f"### {table_title(game, table.config)}", ""]
        # one agent against the anchor's copies: the seat orders a pairing's games are rounded up to
        rotations = len(orderings(("agent",) + (design["reference"],) * (table_facts(game, table.config)[1] - 1)))
        text += [
            f"`agents.ladder(\"{game}\"{', ' + json.dumps(table.config) if table.config else ''})` returns these rows. "
            f"Elo is one Bradley–Terry fit with `heuristic-v1` at 1500; 200 points mean the stronger side scores "
            f"about 76% against the weaker. Every agent played `random-v0` and `heuristic-v1`, "
            f"{design['games_per_pairing']} games each, seats rotated on the same deals; an agent that searches at "
            f"play time played `heuristic-v1` alone, {design['search_games_per_pairing']} games "
            f"({design['slow_games_per_pairing']} for OpenSpiel's IS-MCTS), so its interval is wider. "
            "*Time a move* is CPU time of one decision on the machine that made the ladder.",
            "",
            *_rows(current, checkpoint_ids),
        ]
        if older:
            text += ["", "Older versions, replaced by a newer one of the same family (they still load by id):", "",
                     *_rows(older, checkpoint_ids, len(current) + 1)]
        text += ["", " ".join(_table_notes(rows, design, rotations))]
        text += ["", "Remake this ladder (every game is seeded: the same command gives the same ratings):", "",
                 "```bash", info["command"], "```", ""]
    return "\n".join(text)


PROPERTIES = DOCS / "reference" / "properties.json"


def random_play(game: str, properties: Path = PROPERTIES) -> dict | None:
    """What games of random legal moves did at the game's default config (``python -m tools.properties``)."""
    if not properties.is_file():
        return None
    default = envs.make_game(game).config
    for row in json.loads(properties.read_text(encoding="utf-8"))["rows"]:
        if row["game"] == game and envs.make_game(game, **row["config"]).config == default:
            return row["measured"].get("random-v0")
    return None


def write_generated(name: str, make, out: Path = DOCS / "_generated") -> None:
    """Write ``_generated/<name>_<game>.<ext>`` (``name`` holds the extension: ``"facts.md"``) as
    ``make(game)`` gives it, for every game; a file is rewritten only when it changes."""
    stem, ext = name.split(".")
    out.mkdir(exist_ok=True)
    for game in GAMES:
        target = out / f"{stem}_{game}.{ext}"
        new = make(game)
        if not target.exists() or target.read_text(encoding="utf-8") != new:
            target.write_text(new, encoding="utf-8")


def facts_page(game: str) -> str:
    """A game's facts table, read from the environment (:func:`envs.facts.facts`), the same rows in the
    same order for every game, with what random play does from the measured properties."""
    from envs.facts import facts_markdown

    families = envs.game_class(game).config_families
    example = next(name for name in families if name != "default") if len(families) > 1 else "default"
    return (facts_markdown(game, random_play(game)).rstrip("\n") + "\n\n"
            f"A *config family* is a named set of config keywords (a number of players, a rules variant): "
            f"`{game}.Game.config_families[\"{example}\"]` gives its keywords, `python -m play terminal {game} "
            f"--config {example}` plays at it, and [Properties](../reference/properties.md) lists every "
            f"family's keywords.\n")


def usage_section(game: str) -> str:
    """The Usage section of a game module's docstring (reStructuredText), for the game's page: the
    examples live once, in the docstring, where ``help()`` shows them too."""
    import importlib

    doc = importlib.import_module(f"envs.{game}").__doc__
    if "\nUsage\n-----\n" not in doc:
        raise RuntimeError(f"envs.{game}'s docstring has no Usage section")
    lines = doc.split("\nUsage\n-----\n", 1)[1].splitlines()
    end = next((i for i in range(len(lines) - 1) if lines[i].strip() and set(lines[i + 1]) == {"-"}
                and len(lines[i + 1]) >= len(lines[i].rstrip())), len(lines))
    return "\n".join(lines[:end]).strip() + "\n"


def write_ladder_pages(out: Path = DOCS / "_generated") -> None:
    """Write ``_generated/ladder_<game>.md`` (:func:`ladder_page`) for every game."""
    write_generated("ladder.md", ladder_page, out)


class DocstringSectionsAreNotLabels(SphinxTransform):
    """The game pages show each module docstring, whose sections ("Action encoding", "Version history")
    repeat from game to game. Parsed inside a MyST page they become explicit labels and collide across
    pages; nothing refers to them by label, so they are made implicit (headings and anchors stay)."""

    default_priority = 800  # before Sphinx's SphinxDomains (850), which registers the labels

    def apply(self, **kwargs) -> None:
        if not self.env.docname.startswith("games/"):
            return
        for name, explicit in list(self.document.nametypes.items()):
            node = self.document.ids.get(self.document.nameids.get(name) or "")
            if explicit and isinstance(node, nodes.section):
                self.document.nametypes[name] = False


#: Repository files that the site shows on a page of its own.
FILE_PAGES = {
    "checkpoints/README.md": "reference/checkpoints",
    "CHANGELOG.md": "changelog",
    **{f"envs/{game.removesuffix('_v0')}/RULES.md": f"games/{game.removesuffix('_v0')}_rules" for game in GAMES},
}


def literal_target(text: str, docs: set[str]) -> str | None:
    """The page an inline literal names, if it names one: a documented module (``training.league``),
    a page of this site by its path (``docs/guide/vector.md``) or a repository file the site shows."""
    if text in FILE_PAGES and FILE_PAGES[text] in docs:
        return FILE_PAGES[text]
    if text.startswith("docs/") and text.endswith(".md") and text[5:-3] in docs:
        return text[5:-3]
    if text.split(".")[0] in {"envs", "agents", "training", "play", "tools"} and f"reference/_api/{text}" in docs:
        return f"reference/_api/{text}"
    return None


class LiteralsAsLinks(SphinxPostTransform):
    """Module names and page paths written as inline code (```training.league```,
    ```docs/guide/vector.md```) become links to their page, where a reader would click them."""

    default_priority = 900
    formats = ("html",)

    def run(self, **kwargs) -> None:
        docs = set(self.env.found_docs)
        for node in list(self.document.findall(nodes.literal)):
            if any(isinstance(a, (nodes.reference, nodes.title, addnodes.desc_signature, addnodes.pending_xref))
                   for a in _ancestors(node)):
                continue
            target = literal_target(node.astext(), docs)
            if target is None or target == self.env.docname:
                continue
            uri = self.app.builder.get_relative_uri(self.env.docname, target)
            reference = nodes.reference("", "", internal=True, refuri=uri)
            node.replace_self(reference)
            reference += node


def _ancestors(node):
    while node.parent is not None:
        node = node.parent
        yield node


def _generate(app) -> None:
    write_generated("facts.md", facts_page)
    write_generated("usage.rst", usage_section)
    write_ladder_pages()


def _clear_api_pages(app) -> None:
    """autosummary writes a page per module into reference/_api and never removes one: a module that
    was moved or deleted would keep a page that fails to import, so each build starts from an empty
    folder (before autosummary's own builder-inited handler, which runs at the default priority)."""
    shutil.rmtree(Path(app.srcdir) / "reference" / "_api", ignore_errors=True)


def setup(app):
    app.connect("builder-inited", _clear_api_pages, priority=100)
    app.connect("builder-inited", _generate)
    app.add_transform(DocstringSectionsAreNotLabels)
    app.add_post_transform(LiteralsAsLinks)
    return {"parallel_read_safe": True}

# Ray and OpenSpiel are optional extras (``.[rllib]``, ``.[openspiel]``) with environments of their own; their
# modules are documented without them.
autodoc_mock_imports = ["ray", "pyspiel", "open_spiel"]
autodoc_inherit_docstrings = False  # a method without its own docstring does not borrow gymnasium's
