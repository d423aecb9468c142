"""Play one game between agents through the environment (used by evaluation, tools and tests)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

import envs
from agents.base import Agent
from agents.registry import make
from envs.core import IllegalActionError


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


def seat_inputs(state, seat: int) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """What an agent at ``seat`` is handed in ``state``, exactly as the environment builds it:
    the observation dict (mask only for the seat to act) and the player view."""
    game = state.game
    if seat == state.current_player():
        mask = state.legal_mask().copy()
    else:
        mask = np.zeros(game.num_actions, dtype=np.int8)
    return {"observation": game.observe(state, seat), "action_mask": mask}, state.player_view(seat)


def decide(agent_id: str, state, seed: int | None = None) -> int:
    """The action a freshly made ``agent_id`` chooses for the seat to act in ``state``.

    For tools and tests that ask "what does this agent play here?" about a built position. Raises
    :class:`~envs.core.errors.IllegalActionError` if the agent picks a masked-out action.
    """
    seat = state.current_player()
    bot = make(agent_id, seed=seed)
    bot.reset(seat, state.game.config)
    observation, view = seat_inputs(state, seat)
    action = bot.act(observation, view)
    if not observation["action_mask"][action]:
        raise IllegalActionError(
            f"{agent_id} chose {action} ({state.game.action_to_string(int(action))}), "
            f"illegal for player {seat} in phase {state.phase!r}"
        )
    return int(action)
