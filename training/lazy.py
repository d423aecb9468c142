"""Public names of a trainer package that load their module on first use, so that importing the
package (or ``training``) does not import torch or a training library."""

from __future__ import annotations

import importlib
from typing import Any, Callable


def lazy_exports(package: str, exports: dict[str, tuple[str, ...]]) -> tuple[Callable[[str], Any],
                                                                           Callable[[], list[str]], list[str]]:
    """``(__getattr__, __dir__, __all__)`` for ``package``, whose public names live in the modules
    ``exports`` maps to them (``{"training.sb3.trainer": ("Args", "main")}``)."""
    where = {name: module for module, names in exports.items() for name in names}

    def getattr_(name: str) -> Any:
        if name not in where:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(where[name]), name)

    def dir_() -> list[str]:
        return sorted(set(vars(importlib.import_module(package))) | set(where))

    return getattr_, dir_, sorted(where)
