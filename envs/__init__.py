"""tabletop-rl environments: four tabletop games as PettingZoo AEC environments.

>>> import envs
>>> env = envs.make("sequence_v0", num_teams=3)          # the wrapped env, like sequence_v0.env()
>>> env = envs.sequence_v0.env()                         # the same, PettingZoo style
>>> import pettingzoo; env = pettingzoo.make("aec", "tabletop/sequence-v0")   # after ``import envs``
>>> par = pettingzoo.make("parallel", "tabletop/sequence-v0")                # sequence_v0.parallel_env()

``envs.NAMES`` lists every game by module name. Importing this package registers each game with
PettingZoo's registries as ``tabletop/<game>-v0`` (entry points: the module's ``env`` for
``"aec"``, its ``parallel_env`` for ``"parallel"``), so ``pettingzoo.make("aec" or "parallel",
"tabletop/...")`` works only after ``import envs``. A game whose name has two words is registered
the way PettingZoo spells its own (``tabletop/pans_trial-v0``, like ``classic/connect_four-v3``) and
with a hyphen (``tabletop/pans-trial-v0``); both build the same environment.
"""

from __future__ import annotations

import importlib
from typing import Any

from envs._version import __version__

NAMES: tuple[str, ...] = ("sequence_v0", "pans_trial_v0", "dojo_v0", "wizard_arena_v0")
"""Every game, by module name (``envs.<name>`` has ``env``, ``raw_env`` and ``Game``)."""


def _module(name: str):
    if name not in NAMES:
        raise ValueError(_unknown_game(name))
    return importlib.import_module(f"envs.{name}")


def _unknown_game(name: Any) -> str:
    """The error for an unknown game name: what the name may have meant and every game's names."""
    import difflib

    listing = ", ".join(f"{n} ({registry_id(n)})" for n in NAMES)
    text = f"unknown game {name!r}; games by module name (PettingZoo id): {listing}"
    if isinstance(name, str):
        spelled = {_spelling(i): n for n in NAMES for i in (n, *registry_ids(n))}
        meant = spelled.get(_spelling(name)) or next(iter(difflib.get_close_matches(name, NAMES, n=1)), None)
        if meant is not None:
            text += f". Did you mean {meant!r}?"
    return text


def _spelling(name: str) -> str:
    """A name with its namespace, case, ``-``/``_`` and ``-v``/``_v`` differences taken out."""
    return name.rpartition("/")[2].lower().replace("-", "_")


def make(name: str, raw: bool = False, **config: Any):
    """Create game ``name``'s environment: ``env(**config)``, or ``raw_env(**config)`` if raw."""
    module = _module(name)
    return module.raw_env(**config) if raw else module.env(**config)


def game_class(name: str):
    """The engine's :class:`~envs.core.game.Game` subclass for ``name``."""
    return _module(name).Game


def make_game(name: str, **config: Any):
    """A configured engine (no environment), e.g. for search agents and tools."""
    return game_class(name)(**config)


def registry_id(name: str) -> str:
    """PettingZoo registry id of a game: ``sequence_v0`` -> ``tabletop/sequence-v0``,
    ``pans_trial_v0`` -> ``tabletop/pans_trial-v0`` (the module name's words, as PettingZoo writes
    ``classic/connect_four-v3``)."""
    base, version = name.rsplit("_v", 1)
    return f"tabletop/{base}-v{version}"


def registry_ids(name: str) -> tuple[str, ...]:
    """Every id game ``name`` is registered under: :func:`registry_id`, then, for a name of several
    words, the same with hyphens (``tabletop/pans-trial-v0``)."""
    canonical = registry_id(name)
    namespace, _, rest = canonical.partition("/")
    base, _, version = rest.rpartition("-v")
    hyphenated = f"{namespace}/{base.replace('_', '-')}-v{version}"
    return (canonical,) if hyphenated == canonical else (canonical, hyphenated)


def register_with_pettingzoo(name: str) -> str:
    """Register game ``name`` under each of :func:`registry_ids` in PettingZoo's AEC registry
    (entry point the module's ``env``) and its parallel registry (``parallel_env``); done on import
    for every game in ``NAMES``. Returns the main id, :func:`registry_id`."""
    import warnings

    import pettingzoo

    for env_id in registry_ids(name):
        for kind, registry, factory in (("aec", pettingzoo.aec_registry, "env"),
                                        ("parallel", pettingzoo.parallel_registry, "parallel_env")):
            if env_id not in registry:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    pettingzoo.register(kind, env_id, entry_point=f"envs.{name}:{factory}")
    return registry_id(name)


def _register_all() -> None:
    for name in NAMES:
        register_with_pettingzoo(name)


def __getattr__(attr: str):
    # ``envs.sequence_v0`` works without importing every game up front.
    if attr in NAMES:
        return importlib.import_module(f"envs.{attr}")
    raise AttributeError(f"module 'envs' has no attribute {attr!r}")


_register_all()

__all__ = ["NAMES", "__version__", "game_class", "make", "make_game", "register_with_pettingzoo", "registry_id",
           "registry_ids", *NAMES]
