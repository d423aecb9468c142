"""A game's facts table, read from the environment itself: the same rows, in the same order, for
every game (PettingZoo's rows, then this project's).

>>> from envs.facts import facts
>>> dict(facts("pans_trial_v0"))["Action values"]
'Discrete(408)'

The documentation site prints it at the top of each game page, so it cannot drift from the code.
Each value is Markdown text. It sits beside the game registry rather than in :mod:`envs.core`,
because it looks games up by name.
"""

from __future__ import annotations

import json
from typing import Any

import envs
from envs._version import __version__

#: The rows, in order.
ROWS = ("Import", "Actions", "Parallel API", "Manual control", "Agents", "Agents count", "Action shape",
        "Action values", "Observation shape", "Observation values", "State shape", "Config families",
        "Episode end", "Registry id", "Version")


def _space_text(space: Any) -> str:
    return f"`{space}`"


def facts(name: str, random_play: dict[str, Any] | None = None) -> list[tuple[str, str]]:
    """``[(row, value), ...]`` for game ``name`` at its default config, in :data:`ROWS` order.

    ``random_play`` adds what games of random legal moves do to the "Episode end" row:
    ``{"games": 40, "truncated": 0, "mean_length": 58.3}`` (the measured rows of
    ``python -m tools.properties``)."""
    env = envs.make(name, raw=True)
    env.reset(seed=0)
    game = env.unwrapped.game
    cls = type(game)
    agents = list(env.possible_agents)
    observation = env.observation_space(agents[0])
    action = env.action_space(agents[0])
    families = {family: envs.make_game(name, **config) for family, config in cls.config_families.items()}
    counts = ", ".join(f"`{family}` {g.num_players}" for family, g in families.items())
    sizes = sorted({g.num_players for g in families.values()})
    span = f"{sizes[0]}–{sizes[-1]}" if len(sizes) > 1 else str(sizes[0])
    try:
        state = f"`{env.state_space.shape}` (`env.state()`: the whole position, hidden information included)"
    except AttributeError:
        state = "not used: this game has no whole-position state"
    ends = "; ".join(text.format(**game.config) for text in cls.end_texts.values())
    end = (f"the rules end it: {ends}. Truncation after `max_cycles` cycles of one action per seat "
           f"(default {cls.default_max_cycles})")
    if random_play:
        cut = random_play["truncated"]
        end += (f". Random legal play: {cut} of {random_play['games']} seeded games reach the cap"
                + ("" if cut == random_play["games"] else f", the others end after {random_play['mean_length']:.0f} "
                   "actions on average" if cut else f"; a game lasts {random_play['mean_length']:.0f} actions on "
                   "average"))
    mask = observation["action_mask"]
    obs = observation["observation"]
    rows = {
        "Import": f"`from envs import {name}`",
        "Actions": "Discrete, with a legal-action mask (an illegal action raises in `raw_env()`; `env()` ends the "
                   "game with the standard −1 for the seat that played it)",
        "Parallel API": f"Yes: `{name}.parallel_env()`, one seat acting at a time",
        "Manual control": f"Yes: `python -m play terminal {name}`, or the browser page of `python -m play serve`",
        "Agents": "`agents = " + json.dumps(agents).replace('"', "'") + "`",
        "Agents count": f"{len(agents)} at the default config; {span} across the config families ({counts})",
        "Action shape": "`()`: one integer a step",
        "Action values": f"`{action}`",
        "Observation shape": f"`Dict`: `observation` `{obs.shape}`, `action_mask` `{mask.shape}`",
        "Observation values": f"`observation` in [{obs.low.min():g}, {obs.high.max():g}] ({obs.dtype}); "
                              f"`action_mask` 0 or 1 ({mask.dtype})",
        "State shape": state,
        "Config families": ", ".join(f"`{family}`" for family in cls.config_families)
                           + f" (`{name}.env(**config)`; `Game.config_families`)",
        "Episode end": end,
        "Registry id": f"`{envs.registry_id(name)}` (`pettingzoo.make(\"aec\", \"{envs.registry_id(name)}\")`)",
        "Version": f"`{name}`: version {cls.version} of the environment, package {__version__}",
    }
    env.close()
    return [(row, rows[row]) for row in ROWS]


def facts_markdown(name: str, random_play: dict[str, Any] | None = None) -> str:
    """:func:`facts` as a two-column Markdown table with a header row."""
    lines = ["| fact | value |", "|---|---|"]
    lines += [f"| {row} | {value} |" for row, value in facts(name, random_play)]
    return "\n".join(lines) + "\n"
