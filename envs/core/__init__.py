"""The shared engine contract and the generic PettingZoo environment."""

from envs.core.errors import ConfigError, IllegalActionError, StateError, UnknownKeywordError
from envs.core.game import TERMINAL, Game, State
from envs.core.rng import make_rng, rng_from_json, rng_to_json

__all__ = [
    "TERMINAL",
    "ConfigError",
    "Game",
    "IllegalActionError",
    "State",
    "StateError",
    "UnknownKeywordError",
    "make_rng",
    "rng_from_json",
    "rng_to_json",
]
