"""Imports flow one way, and no module of the project imports itself round a loop.

The layers: ``envs`` (rules, then ``envs.core``) -> ``agents`` -> ``training``, ``play`` and ``tools``
(``tools`` may use ``training``; ``training`` and ``play`` know neither each other nor ``tools``) ->
``benchmarks``. Every import statement counts, including those inside functions (a lazy import is
still a dependency). The rules modules' stricter limit (stdlib, numpy, envs.core) is tested in
``tests/test_contract.py``.
"""

from __future__ import annotations

import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]

#: package -> top-level packages of this project it must never import
FORBIDDEN = {
    "envs": {"agents", "training", "tools", "benchmarks", "tests", "play"},
    "agents": {"training", "tools", "benchmarks", "tests", "play"},
    "training": {"tools", "benchmarks", "tests", "play"},
    "play": {"training", "tools", "benchmarks", "tests"},
    "tools": {"benchmarks", "tests", "play"},
    "benchmarks": {"tests"},
}
#: Every top-level package of the project; each must have a row above.
PACKAGES = ("envs", "agents", "training", "play", "tools", "benchmarks")


def imported_modules(path: pathlib.Path) -> list[tuple[int, str]]:
    """``(line, module)`` of every import in ``path``; ``from a import b`` gives ``a.b`` (which
    :func:`import_graph` maps back to ``a`` when ``b`` is not a module)."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            out += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out += [(node.lineno, f"{node.module}.{alias.name}") for alias in node.names]
    return out


def module_name(root: pathlib.Path, path: pathlib.Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph(root: pathlib.Path, packages: tuple[str, ...]) -> dict[str, set[str]]:
    """Module -> the project modules it imports (the longest module prefix of each imported name)."""
    modules = {module_name(root, p): p for package in packages for p in sorted((root / package).rglob("*.py"))}

    def owner(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    return {m: {o for _, name in imported_modules(p) if (o := owner(name)) not in (None, m)}
            for m, p in modules.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def files_of(package: str) -> list[pathlib.Path]:
    return sorted((ROOT / package).rglob("*.py"))


def test_every_top_level_package_has_a_row():
    on_disk = {p.parent.name for p in ROOT.glob("*/__init__.py")} - {"tests", "checkpoints"}
    assert on_disk == set(PACKAGES) == set(FORBIDDEN)


def test_the_graph_walks_every_subpackage():
    """Each trainer's package (and the league) is walked, its modules' imports included."""
    graph = import_graph(ROOT, PACKAGES)
    assert {"training.ppo.loop", "training.sb3.trainer", "training.sb3.selfplay", "training.sb3.convert",
            "training.rllib.trainer", "training.rllib.env", "training.league.matches"} <= set(graph)
    assert {"training.sb3.convert", "training.sb3.selfplay"} <= graph["training.sb3.trainer"]


def test_no_import_cycles():
    found = cycles(import_graph(ROOT, PACKAGES))
    assert not found, "modules that import each other round a loop:\n" + "\n".join(" <-> ".join(c) for c in found)


def test_the_cycle_check_finds_a_lazy_loop(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from pkg.b import thing\n")
    (pkg / "b.py").write_text("def thing():\n    from pkg import c\n")
    (pkg / "c.py").write_text("import pkg.a\n")
    (pkg / "d.py").write_text("from pkg.a import thing\n")  # imports into the loop, is not part of it
    assert cycles(import_graph(tmp_path, ("pkg",))) == [["pkg.a", "pkg.b", "pkg.c"]]


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_imports_flow_one_way(package):
    files = files_of(package)
    assert files, f"no Python files under {package}/"
    wrong = []
    for path in files:
        for line, module in imported_modules(path):
            if module.split(".")[0] in FORBIDDEN[package]:
                wrong.append(f"{path.relative_to(ROOT)}:{line} imports {module}")
    assert not wrong, "imports against the one-way flow:\n" + "\n".join(wrong)


def test_core_knows_no_particular_game():
    import envs

    games = {name.rsplit("_v", 1)[0] for name in envs.NAMES}
    wrong = []
    for path in files_of("envs/core"):
        for line, module in imported_modules(path):
            parts = module.split(".")
            if parts[0] == "envs" and len(parts) > 1 and (parts[1] in games or parts[1] in envs.NAMES):
                wrong.append(f"{path.relative_to(ROOT)}:{line} imports {module}")
    assert not wrong, "\n".join(wrong)


def test_core_imports_nothing_of_envs_but_the_core():
    # Not the registry (``envs``, which lists the games) nor a module beside it (``envs.provenance``,
    # ``envs.vector``): the core sits below all of them.
    wrong = []
    for path in files_of("envs/core"):
        for line, module in imported_modules(path):
            parts = module.split(".")
            if parts[0] == "envs" and parts[1:2] != ["core"]:
                wrong.append(f"{path.relative_to(ROOT)}:{line} imports {module}")
    assert not wrong, "\n".join(wrong)


def test_the_checker_sees_lazy_imports(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text("def f():\n    from training import stats\n    import tools.simulate\n")
    assert [m for _, m in imported_modules(sample)] == ["training.stats", "tools.simulate"]
