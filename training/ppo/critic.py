"""The centralised critic of ``--critic state``: a value network over the whole position.

In a game of hidden information a seat's value is uncertain in ways the position is not: the critic
that reads the referee's view (``Game.encode_state``: every hand, the deck, secret choices) can give
a lower-variance baseline, while the actor, the only part that plays and is exported, still sees only
its seat's observation (centralised training, decentralised execution, as in MAPPO).

The critic reads the seat's observation beside the whole position (MAPPO's "agent-specific" global
state): ``encode_state`` is laid out from seat 0's side, and a value for the seat to act read from it
alone must learn to turn it round for every other seat (measured on Sequence with two teams of two:
far behind the seat's own critic).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import nn


CRITICS = ("seat", "state")
"""``--critic`` values: ``seat`` (the actor network's own value head, from the seat's observation) or
``state`` (:class:`StateCritic`, from the whole position)."""


def _init(layer: nn.Linear, gain: float = 2**0.5) -> nn.Linear:
    """Orthogonal weights and zero biases, as the actor networks start (CleanRL's ``layer_init``)."""
    nn.init.orthogonal_(layer.weight, gain)
    nn.init.zeros_(layer.bias)
    return layer


class StateCritic(nn.Module):
    """An MLP of two ``hidden``-wide ReLU layers over the seat's observation and the whole position side
    by side, each value scaled to [0, 1] by its space's bounds (counts and scores would otherwise dwarf
    the one-hot parts); one value out. ``low``/``high`` are the bounds of that joined input."""

    def __init__(self, low: np.ndarray, high: np.ndarray, hidden: int) -> None:
        super().__init__()
        if low.shape != high.shape or low.ndim != 1 or hidden <= 0:
            raise ValueError(f"StateCritic needs 1-d bounds of one shape and hidden > 0; got {low.shape}, "
                             f"{high.shape}, hidden={hidden}")
        span = np.where(np.isfinite(high - low) & (high > low), high - low, 1.0)
        offset = np.where(np.isfinite(low), low, 0.0)
        self.register_buffer("offset", torch.as_tensor(offset, dtype=torch.float32))
        self.register_buffer("scale", torch.as_tensor(1.0 / span, dtype=torch.float32))
        self.net = nn.Sequential(
            _init(nn.Linear(low.shape[0], hidden)), nn.ReLU(),
            _init(nn.Linear(hidden, hidden)), nn.ReLU(),
            _init(nn.Linear(hidden, 1), 1.0),
        )

    def forward(self, obs: torch.Tensor, state: torch.Tensor) -> torch.Tensor:
        """The value of the seat to act, from its observation ``obs`` and the whole position ``state``."""
        joined = torch.cat((obs.reshape(obs.shape[0], -1), state), dim=1)
        return self.net((joined - self.offset) * self.scale).squeeze(-1)


def build_state_critic(game: Any, hidden: int) -> StateCritic:
    """The critic for ``game``'s observations and ``encode_state`` arrays."""
    shape = tuple(game.observation_shape)
    state_low, state_high = game.state_bounds()
    low = np.concatenate((np.broadcast_to(np.asarray(game.observation_low, dtype=np.float64), shape).ravel(),
                          np.asarray(state_low, dtype=np.float64)))
    high = np.concatenate((np.broadcast_to(np.asarray(game.observation_high, dtype=np.float64), shape).ravel(),
                           np.asarray(state_high, dtype=np.float64)))
    return StateCritic(low, high, hidden)
