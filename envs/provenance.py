"""What made a result: the package version, the environment versions and the source commit.

Every file the software writes that carries a result (evaluations, training runs, checkpoints'
``eval.json``, game records, benchmark reports) includes :func:`provenance` under the key
``"provenance"``::

    {"package": "tabletop-rl", "version": "0.1.0",
     "environments": {"sequence_v0": 0},
     "commit": "6f284c8...", "dirty": false}

``environments`` maps each environment module the result used to its ``Game.version`` (the ``N`` of
``_vN``). ``commit`` is the git commit of the source tree the code was imported from, or ``None`` for
an installed wheel or a tree outside git; ``dirty`` says whether tracked files differed from that
commit (``None`` when there is no commit). The commit is read once per process.

:func:`check_provenance` validates such a dict read back from a file (records, reports).

It sits beside the game registry rather than in :mod:`envs.core`, because it looks environments up
by name and the core knows no particular game.
"""

from __future__ import annotations

import functools
import importlib
import json
import pathlib
import subprocess
from typing import Any, Iterable

import envs
from envs._version import __version__
from envs.core.errors import StateError

PACKAGE = "tabletop-rl"

_ROOT = pathlib.Path(__file__).resolve().parents[1]


@functools.lru_cache(maxsize=1)
def source_commit() -> tuple[str | None, bool | None]:
    """``(commit, dirty)`` of the checkout this package was imported from, or ``(None, None)``."""
    if not (_ROOT / "envs" / "core").is_dir() or not (_ROOT / ".git").exists():
        return None, None
    try:
        head = subprocess.run(["git", "-C", str(_ROOT), "rev-parse", "HEAD"], capture_output=True,
                              text=True, timeout=10, check=True).stdout.strip()
        status = subprocess.run(["git", "-C", str(_ROOT), "status", "--porcelain", "--untracked-files=no"],
                                capture_output=True, text=True, timeout=10, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return None, None
    return (head or None), (bool(status.strip()) if head else None)


def environment_version(name: str) -> int:
    """``Game.version`` of environment module ``name`` (e.g. ``"sequence_v0"`` -> 0)."""
    if name not in envs.NAMES:
        raise ValueError(f"unknown environment {name!r}; available: {list(envs.NAMES)}")
    return int(importlib.import_module(f"envs.{name}").Game.version)


def provenance(environments: str | Iterable[str] = ()) -> dict[str, Any]:
    """The provenance block for a result that used ``environments`` (module names)."""
    names = [environments] if isinstance(environments, str) else sorted(set(environments))
    commit, dirty = source_commit()
    return {
        "package": PACKAGE,
        "version": __version__,
        "environments": {name: environment_version(name) for name in names},
        "commit": commit,
        "dirty": dirty,
    }


def image_metadata(environments: str | Iterable[str] = ()) -> dict[str, str]:
    """The provenance of a picture, as PNG text chunks: ``Software`` (package and version) and ``Comment``
    (the provenance block as JSON). Matplotlib takes it as ``savefig(..., metadata=...)``; Pillow as
    ``pnginfo`` (:func:`png_info`) or, for a GIF, the ``Comment`` as ``comment``."""
    return {"Software": f"{PACKAGE} {__version__}",
            "Comment": json.dumps(provenance(environments), sort_keys=True)}


def png_info(environments: str | Iterable[str] = ()) -> Any:
    """:func:`image_metadata` as Pillow's ``PngInfo`` for ``Image.save(..., pnginfo=...)``."""
    from PIL.PngImagePlugin import PngInfo

    info = PngInfo()
    for key, value in image_metadata(environments).items():
        info.add_text(key, value)
    return info


def check_provenance(block: Any, where: str = "provenance") -> dict[str, Any]:
    """Validate a provenance block read from a file; return it, or raise :class:`StateError`."""
    if not isinstance(block, dict):
        raise StateError(f"{where}: expected an object with package, version, environments, commit, dirty; "
                         f"got {type(block).__name__}")
    expected = {"package", "version", "environments", "commit", "dirty"}
    if set(block) != expected:
        raise StateError(f"{where}: keys {sorted(block)}; expected exactly {sorted(expected)}")
    if block["package"] != PACKAGE:
        raise StateError(f"{where}.package: {block['package']!r}; expected {PACKAGE!r}")
    if not isinstance(block["version"], str) or not block["version"]:
        raise StateError(f"{where}.version: expected a non-empty string, got {block['version']!r}")
    envs_block = block["environments"]
    if not isinstance(envs_block, dict) or not all(
            isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool) and v >= 0 for k, v in envs_block.items()):
        raise StateError(f"{where}.environments: expected {{module name: version >= 0}}, got {envs_block!r}")
    if block["commit"] is not None and not (isinstance(block["commit"], str) and len(block["commit"]) == 40
                                            and all(c in "0123456789abcdef" for c in block["commit"])):
        raise StateError(f"{where}.commit: expected null or 40 hex digits, got {block['commit']!r}")
    if block["dirty"] is not None and not isinstance(block["dirty"], bool):
        raise StateError(f"{where}.dirty: expected null, true or false, got {block['dirty']!r}")
    return block
