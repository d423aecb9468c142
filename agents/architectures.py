"""The table of network architectures a policy file may name, and the one way to build from it.

A policy file (:mod:`agents.policy_io`) names its network by architecture name plus keyword
arguments; this module owns the name -> builder table and builds networks from it. A builder is a
callable ``builder(**arch_kwargs) -> torch.nn.Module`` whose module maps a float32 batch of
observations ``(B, *observation_shape)`` to action logits ``(B, num_actions)``.

Built in: ``"mlp"`` (the shape of SB3's default ``MlpPolicy`` actor, what
``training.sb3.convert`` and the RLlib exporter write) and the trainer's actor-critic networks of
:mod:`agents.nets` (``"mlp_ac"``, ``"board_conv"``, ``"table_entity"``), added on first use so that
importing this module does not import torch. Code of your own can add more with
:func:`register_architecture`; nothing in a policy file can (a file only names an entry).

Import direction: :mod:`agents.policy_io` -> this module -> :mod:`agents.nets`; ``agents.nets``
imports nothing of the project's, so there is no cycle.
"""

from __future__ import annotations

from typing import Any, Callable

_TABLE: dict[str, Callable[..., Any]] = {}
_BUILT_IN_ADDED = [False]


def _table() -> dict[str, Callable[..., Any]]:
    """The table, with the built-in architectures added on first use (this imports torch)."""
    if not _BUILT_IN_ADDED[0]:
        from agents import nets

        for name, builder in {"mlp": build_mlp, **nets.BUILDERS}.items():
            _TABLE.setdefault(name, builder)
        _BUILT_IN_ADDED[0] = True
    return _TABLE


def register_architecture(name: str, builder: Callable[..., Any]) -> None:
    """Make ``name`` buildable and loadable: ``builder(**arch_kwargs)`` returns the torch module."""
    if not isinstance(name, str) or not name:
        raise ValueError(f"architecture name must be a non-empty string, got {name!r}")
    if not callable(builder):
        raise ValueError(f"the builder of architecture {name!r} must be callable, got {type(builder).__name__}")
    table = _table()
    if name in table and table[name] is not builder:
        raise ValueError(f"architecture {name!r} is already registered")
    table[name] = builder


def architecture_names() -> list[str]:
    """Every registered architecture name, sorted."""
    return sorted(_table())


def is_architecture(name: Any) -> bool:
    """Whether ``name`` is a registered architecture."""
    return isinstance(name, str) and name in _table()


def builder_of(name: str) -> Callable[..., Any]:
    """The builder registered as ``name`` (a ``ValueError`` listing the known names otherwise)."""
    table = _table()
    if name not in table:
        raise ValueError(f"architecture {name!r} is not registered; known: {sorted(table)}")
    return table[name]


def build_architecture(name: str, **arch_kwargs: Any) -> Any:
    """A fresh, untrained network of architecture ``name`` (what loading a policy file fills)."""
    return builder_of(name)(**arch_kwargs)


def build_mlp(obs_dim: int, hidden: list[int], num_actions: int, activation: str = "tanh"):
    """SB3 ``MlpPolicy``'s actor: Linear/activation layers then a linear head to the logits."""
    import torch
    from torch import nn

    acts = {"tanh": nn.Tanh, "relu": nn.ReLU}
    if activation not in acts:
        raise ValueError(f"mlp activation {activation!r} is not one of {sorted(acts)}")

    class MLP(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            layers: list[nn.Module] = []
            last = obs_dim
            for width in hidden:
                layers += [nn.Linear(last, width), acts[activation]()]
                last = width
            self.body = nn.Sequential(*layers)
            self.head = nn.Linear(last, num_actions)

        def forward(self, obs: torch.Tensor) -> torch.Tensor:
            return self.head(self.body(obs.reshape(obs.shape[0], -1)))

    return MLP()
