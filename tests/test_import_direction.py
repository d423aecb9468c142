"""Imports flow one way: envs/<game> rules -> envs.core -> agents -> training -> tools.

Every import statement counts, including those inside functions (a lazy import is still a
dependency). The rules modules' stricter limit (stdlib, numpy, envs.core) is tested in
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
    "tools": {"benchmarks", "tests"},
}


def imported_modules(path: pathlib.Path) -> list[tuple[int, str]]:
    out = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            out += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.append((node.lineno, node.module))
    return out


def files_of(package: str) -> list[pathlib.Path]:
    return sorted((ROOT / package).rglob("*.py"))


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


def test_the_checker_sees_lazy_imports(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text("def f():\n    from training import stats\n    import tools.simulate\n")
    assert [m for _, m in imported_modules(sample)] == ["training", "tools.simulate"]
