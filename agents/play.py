"""Play one game between agents through the environment (used by evaluation, tools and tests)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import envs
from agents.base import Agent


@dataclass
class GameRecord:
    """The outcome of one game: per-seat returns, number of actions, and how it ended."""

    returns: list[float]
    length: int
    truncated: bool
    actions: list[int] = field(default_factory=list)
    final_state: dict[str, Any] | None = None


def play_game(
    game_name: str,
    seat_agents: Sequence[Agent],
    seed: int | None = None,
    config: dict[str, Any] | None = None,
    record_actions: bool = False,
    keep_final_state: bool = False,
) -> GameRecord:
    """Play one seeded game, seat ``i`` played by ``seat_agents[i]``; raises if an agent cheats.

    The strict ``raw_env`` is used, so an agent returning an illegal action raises
    :class:`~envs.core.errors.IllegalActionError` instead of silently losing.
    """
    config = dict(config or {})
    env = envs.make(game_name, raw=True, **config)
    env.reset(seed=seed)
    if len(seat_agents) != len(env.possible_agents):
        raise ValueError(
            f"{game_name} with config {config} has {len(env.possible_agents)} seats, "
            f"got {len(seat_agents)} agents"
        )
    full_config = env.game.config
    for seat, agent in enumerate(seat_agents):
        agent.reset(seat, full_config)
    index = {a: i for i, a in enumerate(env.possible_agents)}
    actions: list[int] = []
    returns = [0.0] * len(seat_agents)
    truncated = False
    while env.agents:
        agent_name = env.agent_selection
        if env.terminations[agent_name] or env.truncations[agent_name]:
            returns[index[agent_name]] = env._cumulative_rewards[agent_name]
            truncated = truncated or env.truncations[agent_name]
            env.step(None)
            continue
        seat = index[agent_name]
        action = seat_agents[seat].act(env.observe(agent_name), env.player_view(agent_name))
        if record_actions:
            actions.append(int(action))
        env.step(int(action))
    record = GameRecord(returns=returns, length=env._steps, truncated=truncated, actions=actions)
    if keep_final_state:
        record.final_state = env.save_state()
    return record
