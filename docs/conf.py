"""Sphinx configuration for the tabletop-rl documentation site.

Build (from the repository root, with the ``docs`` extra installed)::

    python -m sphinx -W --keep-going -b html docs docs/_build/html

Warnings are errors: a broken cross-reference, a missing include or a docstring autodoc cannot parse
fails the build. Pages of shipped checkpoints are generated from ``checkpoints/index.json`` and each
checkpoint's ``eval.json`` at build time (``docs/_generated/``), so they cannot drift from the index.
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


MOVE_TIMES = DOCS / "reference" / "move_times.json"
#: The baselines every checkpoint is measured against (columns of the checkpoint tables).
BASELINES = ("heuristic-v1", "random-v0")


def _percent(x: float) -> str:
    return f"{100 * x:.1f}%"


def _measurements(evaluation: dict) -> list[tuple[str | None, dict]]:
    """``(command, lineup)`` for every lineup the checkpoint's ``eval.json`` measured, its further
    evaluations (``more``) included."""
    found = []
    for block in [evaluation, *evaluation.get("more", [])]:
        for outer in block.get("lineups", []):
            for lineup in outer.get("lineups", []):
                found.append((outer.get("command") or block.get("command"), lineup))
    return found


def _requested_games(command: str | None) -> int | None:
    words = (command or "").split()
    return int(words[words.index("--games") + 1]) if "--games" in words else None


def _row_of(agent: str, lineup: dict) -> dict | None:
    return next((row for row in lineup.get("agents", []) if row.get("agent") == agent), None)


def _field(agent: str, lineup: dict) -> str | None:
    """The one opponent id of a lineup whose other teams are all the same agent, else None."""
    others = {team for team in lineup["teams"] if team != agent}
    return others.pop() if len(others) == 1 else None


def _result(agent: str, command: str | None, lineup: dict, short: bool = False) -> str:
    """``61/402 wins, 15.2% [12.0, 19.0]``: wins, games, win rate and its Wilson 95% interval."""
    row = _row_of(agent, lineup)
    low, high = row["win_rate_ci95"]
    text = f"{row['wins']}/{row['games']}, {_percent(row['win_rate'])} [{100 * low:.1f}, {100 * high:.1f}]"
    if short:
        return text
    requested = _requested_games(command)
    if requested and requested != row["games"]:
        text += f" (`--games {requested}` rounded up to whole seat rotations)"
    return text


def _pair_scores(agent: str, lineup: dict) -> list[tuple[str, str, float, float]]:
    """``(agent, opponent, score, comparisons)``: the league's pairwise view of one lineup.

    In every game each pair of teams of different agents is a comparison, won by the higher return
    and drawn when equal. Against a field of one agent the checkpoint's mean score over those
    comparisons follows from its mean rank r among n teams: (n - r) / (n - 1)."""
    opponent = _field(agent, lineup)
    row = _row_of(agent, lineup)
    if opponent is None or row is None:
        return []
    teams = len(lineup["teams"])
    score = (teams - row["mean_rank"]) / (teams - 1)
    return [(agent, opponent, score, row["games"] * (teams - 1))]


def checkpoint_elo(game: str, entries: list[dict], evaluations: dict[str, dict]) -> dict[str, float]:
    """One Bradley–Terry fit (``agents.stats.fit_ratings``) over every lineup of the game's checkpoint
    evaluations, on the Elo scale with ``heuristic-v1`` at 1500 (so the pages of different games read alike)."""
    from agents.stats import fit_ratings

    pairs = [p for e in entries for command, lineup in _measurements(evaluations[e["id"]])
             for p in _pair_scores(e["id"], lineup)]
    names = sorted({name for a, b, _, _ in pairs for name in (a, b)})
    if not names:
        return {}
    index = {name: i for i, name in enumerate(names)}
    points = [[0.0] * len(names) for _ in names]
    for a, b, score, count in pairs:
        points[index[a]][index[b]] += score * count
        points[index[b]][index[a]] += (1 - score) * count
    ratings = dict(zip(names, (float(r) for r in fit_ratings(points))))
    anchor = ratings.get(f"{game}/heuristic-v1", 1500.0)
    return {name: rating - anchor + 1500 for name, rating in ratings.items()}


def _kind(entry: dict, defaults: dict) -> str:
    kind = "network + search" if "search" in entry["id"].split("/")[1] else "network"
    changed = {k: v for k, v in (entry.get("config") or {}).items() if k in defaults and defaults[k] != v}
    if changed:
        kind += " (" + ", ".join(f"{k}={json.dumps(v)}" for k, v in sorted(changed.items())) + ")"
    return kind


def _opponents_heading(game: str, entries: list[dict], evaluations: dict[str, dict], baseline: str) -> str:
    """Column heading: ``against heuristic-v1``, or ``among three heuristic-v1`` at a table of more teams."""
    for entry in entries:
        for _, lineup in _measurements(evaluations[entry["id"]]):
            if _field(entry["id"], lineup) == f"{game}/{baseline}" and len(lineup["teams"]) > 2:
                teams = len(lineup["teams"])
                return f"first places among {_WORDS.get(teams - 1, teams - 1)} `{baseline}`"
    return f"wins against `{baseline}`"


_WORDS = {2: "two", 3: "three", 4: "four", 5: "five", 6: "six"}


def _shell(command: str, width: int = 96) -> list[str]:
    """A long command broken into shell lines (``\\`` continuations) that fit a page."""
    lines, line = [], ""
    for word in command.split():
        if line and len(line) + 1 + len(word) > width:
            lines.append(line + " \\")
            line = "    " + word
        else:
            line = f"{line} {word}" if line else word
    return [*lines, line]


def _fmt_ms(ms: float) -> str:
    return f"{ms:.0f} ms" if ms >= 10 else f"{ms:.1f} ms"


def checkpoint_page(game: str, checkpoints: Path = ROOT / "checkpoints", move_times: Path = MOVE_TIMES) -> str:
    """The Markdown of a game's shipped checkpoints: a table, strongest first, then each checkpoint's
    description and the commands that measured it."""
    import envs

    index = json.loads((checkpoints / "index.json").read_text(encoding="utf-8"))
    entries = [e for e in index["checkpoints"] if e["game"] == game]
    evaluations = {e["id"]: json.loads((checkpoints / e["eval"]).read_text(encoding="utf-8")) for e in entries}
    times = json.loads(move_times.read_text(encoding="utf-8")).get("checkpoints", {}) if move_times.is_file() else {}
    defaults = envs.make(game, raw=True).game.default_config
    # One fit per table: checkpoints trained for another config (Sequence's 2 teams of 2) met the
    # baselines at that table, whose strengths there are not the ones at the default table.
    # Keywords that change only what a seat observes (Game.observation_keys) leave the table as it is.
    observation_keys = envs.make(game, raw=True).game.observation_keys
    tables: dict[str, list[dict]] = {}
    for entry in entries:
        config = {k: v for k, v in (entry.get("config") or {}).items() if k not in observation_keys}
        tables.setdefault(_kind({**entry, "config": config}, defaults).partition(" (")[2].rstrip(")"), []).append(entry)
    fits = {table: checkpoint_elo(game, group, evaluations) for table, group in tables.items()}
    elo = {entry["id"]: fits[table][entry["id"]] for table, group in tables.items() for entry in group
           if entry["id"] in fits[table]}
    entries.sort(key=lambda e: (-elo.get(e["id"], float("-inf")), e["id"]))

    def strength(entry: dict, baseline: str) -> str:
        for command, lineup in _measurements(evaluations[entry["id"]]):
            if _field(entry["id"], lineup) == f"{game}/{baseline}":
                return _result(entry["id"], command, lineup, short=True)
        return "not measured"

    headings = [_opponents_heading(game, entries, evaluations, b) for b in BASELINES]
    teams = max((len(lineup["teams"]) for e in entries for _, lineup in _measurements(evaluations[e["id"]])), default=2)
    fair = (f"At these tables of {teams} players the fair share of first places, what a player as strong as the others "
            f"would take, is {_percent(1 / teams)}. ") if teams > 2 else ""
    text = [
        f"{len(entries)} trained checkpoints, strongest first. Each column of results gives wins/games, the win "
        "rate and its Wilson 95% interval, on fresh seeds with the seats rotated (the commands under each "
        "checkpoint below rerun them). " + fair + "**Kind**: a network plays its most likely legal move; "
        "*+ search* adds a lookahead over sampled hidden cards at play time (`agents.search`). "
        "**Elo**: one Bradley–Terry fit over the evaluations of each table (config) on this page, "
        "`heuristic-v1` set to 1500 at each; at a table of more than two teams each pair of teams in a game counts "
        "as one comparison, as in the league. **CPU to train**: one core's CPU time of the training run, rounded. "
        "**Time a move**: CPU time of one decision on one thread "
        "(`python -m benchmarks.move_times`, which writes `docs/reference/move_times.json`).",
        "",
        ":::{container} checkpoint-table",
        "",
        f"| id | kind | {headings[0]} | {headings[1]} | Elo | CPU to train | time a move |",
        "|---|---|---|---|--:|--:|--:|",
    ]
    for entry in entries:
        rating = elo.get(entry["id"])
        timing = times.get(entry["id"])
        text.append(
            f"| `{entry['id']}` | {_kind(entry, defaults)} | {strength(entry, BASELINES[0])} | "
            f"{strength(entry, BASELINES[1])} | {'—' if rating is None else f'{rating:.0f}'} | "
            f"{evaluations[entry['id']].get('training_compute', '—').removeprefix('about ')} | "
            f"{_fmt_ms(timing['ms_per_move']) if timing else '—'} |"
        )
    text += ["", ":::"]
    for table, fit in fits.items():
        baselines = sorted((name for name in fit if name not in evaluations), key=lambda n: -fit[n])
        if baselines:
            where = f" at the table `{table}` (its own fit)" if table else (" at the default table" if len(fits) > 1 else "")
            text += ["", f"The baselines{where}: " + ", ".join(f"`{name}` {fit[name]:.0f}" for name in baselines) + "."]
    for entry in entries:
        evaluation = evaluations[entry["id"]]
        text += ["", f"**`{entry['id']}`** — {entry['description']}", ""]
        for command, lineup in _measurements(evaluation):
            others = sorted({team for team in lineup["teams"] if team != entry["id"]})
            field = len(lineup["teams"]) - 1
            against = (f"among {_WORDS.get(field, field)} `{others[0]}`" if field > 1 and len(others) == 1
                       else "against " + ", ".join(f"`{o}`" for o in others))
            text.append(f"- {against}: {_result(entry['id'], command, lineup)}")
            if command:
                text += ["", "  ```bash", *(f"  {line}" for line in _shell(command)), "  ```", ""]
        if "final" in evaluation:
            final = ", ".join(f"`{opponent}` {r['wins']}/{r['games']}" for opponent, r in evaluation["final"].items())
            text.append(f"- the training run's own evaluation: {final}")
    return "\n".join(text) + "\n"


def write_checkpoint_pages(checkpoints: Path = ROOT / "checkpoints", out: Path = DOCS / "_generated") -> None:
    """Write ``_generated/checkpoints_<game>.md`` (:func:`checkpoint_page`) for every game."""
    out.mkdir(exist_ok=True)
    for game in GAMES:
        target = out / f"checkpoints_{game}.md"
        new = checkpoint_page(game, checkpoints)
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


#: Repository files that the site shows on a page of its own.
FILE_PAGES = {
    "checkpoints/README.md": "reference/checkpoints",
    "CHANGELOG.md": "changelog",
    **{f"envs/{game.removesuffix('_v0')}/RULES.md": f"games/{game.removesuffix('_v0')}" for game in GAMES},
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
    write_checkpoint_pages()


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
