"""Trained policies as agents, loaded by versioned id from the committed checkpoint index.

``checkpoints/index.json`` lists every shipped checkpoint: its id (``sequence_v0/ppo-v1``), the game
config it was trained for, and the folder that holds ``model.zip`` with its ``args.json`` (training
arguments) and ``eval.json`` (its evaluation) beside it. Each listed id is registered at import, so
``agents.make("sequence_v0/ppo-v1")`` works like any other agent. Nothing is ever loaded by "newest
file". Set ``TABLETOP_CHECKPOINTS`` to use another checkpoint folder.

torch and sb3-contrib are imported only when a policy is first used.
"""

from __future__ import annotations

import json
import os
import pathlib
import zipfile
from functools import partial
from typing import Any

import numpy as np

from agents.base import Agent
from agents.registry import register

DEFAULT_DIR = pathlib.Path(__file__).resolve().parents[1] / "checkpoints"


class CheckpointError(ValueError):
    """A checkpoint file or index entry that is missing, corrupt or made for another game/config."""


def checkpoint_dir() -> pathlib.Path:
    return pathlib.Path(os.environ.get("TABLETOP_CHECKPOINTS", DEFAULT_DIR))


def read_index(folder: pathlib.Path | None = None) -> list[dict[str, Any]]:
    """The entries of ``index.json`` (an empty list if there is no index), validated."""
    folder = folder or checkpoint_dir()
    path = folder / "index.json"
    if not path.exists():
        return []
    try:
        data = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise CheckpointError(f"{path} is not valid JSON: {exc}") from exc
    entries = data.get("checkpoints") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise CheckpointError(f"{path} must hold {{'checkpoints': [...]}}")
    for entry in entries:
        missing = [k for k in ("id", "game", "path", "config") if k not in entry]
        if missing:
            raise CheckpointError(f"{path}: entry {entry.get('id', entry)!r} lacks {missing}")
    return entries


_LOADED: dict[tuple[str, float, str, str], Any] = {}


def load_policy(model_path: pathlib.Path, game_name: str, config: dict[str, Any]):
    """Load a MaskablePPO zip and check that it fits ``game_name`` with ``config``.

    Loaded models are cached by path, modification time, game and config, so an evaluation that
    builds a fresh agent for every game loads each checkpoint once per process.
    """
    model_path = pathlib.Path(model_path)
    key = None
    if model_path.exists():
        key = (str(model_path.resolve()), model_path.stat().st_mtime, game_name, json.dumps(config, sort_keys=True))
        if key in _LOADED:
            return _LOADED[key]
    model = _load_policy(model_path, game_name, config)
    if key is not None:
        _LOADED[key] = model
    return model


def _load_policy(model_path: pathlib.Path, game_name: str, config: dict[str, Any]):
    import envs

    if not model_path.exists():
        raise CheckpointError(f"checkpoint file {model_path} does not exist")
    if not zipfile.is_zipfile(model_path):
        raise CheckpointError(f"checkpoint file {model_path} is not a zip archive (corrupt or truncated)")
    import torch
    from sb3_contrib import MaskablePPO

    torch.set_num_threads(1)
    try:
        model = MaskablePPO.load(str(model_path), device="cpu")
    except Exception as exc:  # sb3 raises many kinds of errors on a damaged archive
        raise CheckpointError(f"checkpoint file {model_path} could not be loaded: {type(exc).__name__}: {exc}") from exc
    env = envs.make(game_name, raw=True, **config)
    agent0 = env.possible_agents[0]
    obs_space = env.observation_space(agent0)["observation"]
    if model.observation_space.shape != obs_space.shape:
        raise CheckpointError(
            f"{model_path} expects observations of shape {model.observation_space.shape}, but {game_name} "
            f"with config {config} gives {obs_space.shape}"
        )
    if model.action_space.n != env.action_space(agent0).n:
        raise CheckpointError(
            f"{model_path} has {model.action_space.n} actions, but {game_name} has {env.action_space(agent0).n}"
        )
    return model


class PolicyAgent(Agent):
    """Plays a trained MaskablePPO policy: the most likely legal action (or a sample if stochastic)."""

    def __init__(
        self,
        game_name: str,
        seed: int | None = None,
        model_path: str | os.PathLike | None = None,
        config: dict[str, Any] | None = None,
        deterministic: bool = True,
        model: Any = None,
    ) -> None:
        super().__init__(game_name, seed)
        if model is None and model_path is None:
            raise CheckpointError("PolicyAgent needs a model_path or a loaded model")
        self.model_path = pathlib.Path(model_path) if model_path is not None else None
        self.trained_config = dict(config or {})
        self.deterministic = deterministic
        self.model = model

    def reset(self, seat: int, game: Any) -> None:
        super().reset(seat, game)
        if self.model is None:
            self.model = load_policy(self.model_path, self.game_name, self.trained_config)
        if self.trained_config:
            import envs

            trained = envs.make_game(self.game_name, **self.trained_config).config
            if trained != game.config:
                raise CheckpointError(
                    f"{self.agent_id or 'policy'} was trained for {self.game_name} with {trained}, "
                    f"but this game has {game.config}"
                )

    def act(self, observation: dict[str, np.ndarray], view: dict[str, Any]) -> int:
        if self.model is None:
            self.model = load_policy(self.model_path, self.game_name, self.trained_config)
        mask = observation["action_mask"].astype(bool)
        if self.deterministic:
            action, _ = self.model.predict(observation["observation"], action_masks=mask, deterministic=True)
            return int(action)
        import torch

        with torch.no_grad():
            obs_t, _ = self.model.policy.obs_to_tensor(observation["observation"])
            dist = self.model.policy.get_distribution(obs_t, action_masks=mask[None])
            probs = dist.distribution.probs[0].numpy().astype(float)
        probs = probs * mask
        probs /= probs.sum()
        return int(np.searchsorted(np.cumsum(probs), self.rng.random() * probs.sum(), side="right").clip(0, len(probs) - 1))


def register_index(folder: pathlib.Path | None = None) -> list[str]:
    """Register every checkpoint of the index as an agent id; returns the ids."""
    folder = folder or checkpoint_dir()
    ids = []
    for entry in read_index(folder):
        factory = partial(
            _make_policy_agent, model_path=folder / entry["path"], config=entry["config"]
        )
        register(entry["id"], factory, entry.get("description", "trained MaskablePPO policy"))
        ids.append(entry["id"])
    return ids


def _make_policy_agent(game_name: str, seed: int | None = None, *, model_path, config) -> PolicyAgent:
    return PolicyAgent(game_name, seed=seed, model_path=model_path, config=config)
