"""Sphinx configuration for the tabletop-rl documentation site.

Build (from the repository root, with the ``docs`` extra installed)::

    python -m sphinx -W --keep-going -b html docs docs/_build/html

Warnings are errors: a broken cross-reference, a missing include or a docstring autodoc cannot parse
fails the build. Pages of shipped checkpoints are generated from ``checkpoints/index.json`` and each
checkpoint's ``eval.json`` at build time (``docs/_generated/``), so they cannot drift from the index.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(ROOT))

from docutils import nodes  # noqa: E402
from sphinx.transforms import SphinxTransform  # noqa: E402

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

GAMES = {
    "sequence_v0": "Sequence",
    "pans_trial_v0": "Pan's Trial",
    "dojo_v0": "Il Labirinto del Dojo",
    "wizard_arena_v0": "Wizard Arena",
}


def _percent(x: float) -> str:
    return f"{100 * x:.1f}%"


def _strength_lines(entry: dict, evaluation: dict) -> list[str]:
    """One line per evaluated lineup: who it met, games, wins and the Wilson 95% interval."""
    lines = []
    for outer in evaluation.get("lineups", []):
        for lineup in outer.get("lineups", []):
            rows = [row for row in lineup.get("agents", []) if row.get("agent") == entry["id"]]
            if not rows:
                continue
            row = rows[0]
            others = sorted({team for team in lineup["teams"] if team != entry["id"]})
            low, high = row["win_rate_ci95"]
            lines.append(
                f"against {', '.join(f'`{o}`' for o in others)}: {row['wins']}/{row['games']} wins, "
                f"{_percent(row['win_rate'])} (95% CI {_percent(low)}–{_percent(high)}; "
                f"fair share {_percent(row['fair_share'])})"
            )
    if not lines and "final" in evaluation:
        lines.append(f"training-run evaluation only (`final` in `{entry['eval']}`)")
    return lines


def write_checkpoint_pages(checkpoints: Path = ROOT / "checkpoints", out: Path = DOCS / "_generated") -> None:
    """Write ``_generated/checkpoints_<game>.md``: every shipped checkpoint of a game with its strength."""
    index = json.loads((checkpoints / "index.json").read_text(encoding="utf-8"))
    out.mkdir(exist_ok=True)
    for game in GAMES:
        entries = [e for e in index["checkpoints"] if e["game"] == game]
        text = [
            f"Generated at build time from `checkpoints/index.json` ({len(entries)} checkpoints for `{game}`). "
            "Strength: the checkpoint's own `eval.json` (fresh seeds, seats rotated, Wilson 95% intervals; "
            "the command that made it is in the file).",
            "",
        ]
        for entry in entries:
            evaluation = json.loads((checkpoints / entry["eval"]).read_text(encoding="utf-8"))
            text.append(f"**`{entry['id']}`** — {entry['description']}")
            text.append("")
            for line in _strength_lines(entry, evaluation):
                text.append(f"- {line}")
            if evaluation.get("command"):
                text.append(f"- made by: `{evaluation['command']}`")
            text.append("")
        target = out / f"checkpoints_{game}.md"
        new = "\n".join(text)
        if not target.exists() or target.read_text(encoding="utf-8") != new:
            target.write_text(new, encoding="utf-8")


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


def _generate(app) -> None:
    write_checkpoint_pages()


def setup(app):
    app.connect("builder-inited", _generate)
    app.add_transform(DocstringSectionsAreNotLabels)
    return {"parallel_read_safe": True}

# Ray and OpenSpiel are optional extras (``.[rllib]``, ``.[openspiel]``) with environments of their own; their
# modules are documented without them.
autodoc_mock_imports = ["ray", "pyspiel", "open_spiel"]
autodoc_inherit_docstrings = False  # a method without its own docstring does not borrow gymnasium's
