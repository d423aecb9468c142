"""The agent that plays a trained policy, and the per-process cache of loaded policy folders.

:class:`PolicyAgent` sits between the policy files (:mod:`agents.policy_io`, which validates and
loads them) and everything that plays a policy: the checkpoint index (:mod:`agents.checkpoint`
registers each listed id as a ``PolicyAgent`` or a search agent) and the search at play time
(:class:`agents.search.SearchPolicyAgent` extends it). It imports neither of them.
"""

from __future__ import annotations

import os
import pathlib
import random
from collections.abc import Sequence
from typing import Any

import numpy as np

import envs
from agents.base import Agent
from agents.policy_io import SPEC_FILE, WEIGHTS_FILE, CheckpointError, inside, load_policy

_LOADED: dict[tuple, tuple[Any, dict[str, Any]]] = {}

#: How close two logits must come, relative to the row's largest logit (at least 1), for a batched forward
#: pass's choice to be computed again from the row alone: on the shipped networks a batch's logits differ
#: from one row's by at most about 1.5e-6 of that.
BATCH_TOLERANCE = 1e-4


def _stamp(path: pathlib.Path) -> tuple[int, int]:
    stat = path.stat()
    return stat.st_mtime_ns, stat.st_size


def load_checkpoint(policy_folder: pathlib.Path, game_name: str, root: pathlib.Path | None = None):
    """``(module, spec)`` of ``policy_folder``, checked against ``game_name``; cached per process.

    With ``root``, the policy files themselves must also lie inside ``root`` (no symlink out).
    """
    policy_folder = pathlib.Path(policy_folder)
    if root is not None:
        for name in (SPEC_FILE, WEIGHTS_FILE):
            rel = (policy_folder / name).relative_to(root).as_posix()
            inside(root, rel, name)
    try:
        key = (str(policy_folder.resolve()), game_name, _stamp(policy_folder / SPEC_FILE),
               _stamp(policy_folder / WEIGHTS_FILE))
    except OSError:
        key = None
    if key is not None and key in _LOADED:
        return _LOADED[key]
    loaded = load_policy(policy_folder, game=game_name)
    if key is not None:
        _LOADED[key] = loaded
    return loaded


class PolicyAgent(Agent):
    """Plays a trained policy: the most likely legal action, or (``deterministic=False``) a seeded sample.

    The network maps an observation to one logit per action; illegal actions are masked out before the
    choice. Give either ``path`` (a folder with ``policy.json`` + ``policy.safetensors``) or ``model``
    (an already built torch module, e.g. from a trainer).
    """

    def __init__(
        self,
        game_name: str,
        seed: int | None = None,
        path: str | os.PathLike | None = None,
        config: dict[str, Any] | None = None,
        deterministic: bool = True,
        model: Any = None,
        root: str | os.PathLike | None = None,
    ) -> None:
        super().__init__(game_name, seed)
        if model is None and path is None:
            raise CheckpointError("PolicyAgent needs a policy folder (path=...) or a built torch module (model=...)")
        if model is not None and not callable(model):
            raise CheckpointError(
                f"model must be a torch module mapping observations to logits, got {type(model).__name__}"
            )
        self.path = pathlib.Path(path) if path is not None else None
        self.root = pathlib.Path(root) if root is not None else None
        self.trained_config = dict(config or {})
        self.deterministic = deterministic
        self.model = model
        self.spec: dict[str, Any] | None = None
        #: The game the policy was trained for (its complete config filled in), made once.
        self._trained: Any = None
        #: At a table whose config differs from the trained one only in the game's
        #: ``observation_keys``: the trained game, which re-encodes each observation from the view.
        self.observer: Any = None

    def _trained_game(self):
        """The configured game the policy was trained for (made once)."""
        if self._trained is None:
            self._trained = envs.make_game(self.game_name, **self.trained_config)
        return self._trained

    def _load(self) -> None:
        self.model, self.spec = load_checkpoint(self.path, self.game_name, self.root)
        if not self.trained_config:  # the policy file says which config it was trained for
            self.trained_config = dict(self.spec["config"])
        trained = self._trained_game()
        shape, n = tuple(trained.observation_shape), int(trained.num_actions)
        if tuple(self.spec["observation_shape"]) != shape or self.spec["num_actions"] != n:
            raise CheckpointError(
                f"{self.path} expects observations {tuple(self.spec['observation_shape'])} and "
                f"{self.spec['num_actions']} actions, but {self.game_name} with config {self.trained_config} "
                f"gives {shape} and {n}"
            )

    def reset(self, seat: int, game: Any) -> None:
        super().reset(seat, game)
        if self.model is None:
            self._load()
        self.observer = None
        if self.trained_config:
            trained = self._trained_game()
            if trained.config != game.config:
                rules = trained.rule_differences(game)
                if rules:
                    allowed = (f"differs at most in {list(trained.observation_keys)}" if trained.observation_keys
                               else "is the one it was trained for")
                    raise CheckpointError(
                        f"{self.agent_id or 'policy'} was trained for {self.game_name} with {trained.config}, "
                        f"but this game has {game.config}: the rules differ in {rules} (a policy plays at a "
                        f"table whose config {allowed})"
                    )
                self.observer = trained

    def observation_vector(self, observation: dict[str, np.ndarray], view: dict[str, Any]) -> np.ndarray:
        """What the network reads: the table's observation, or, at a table that observes through other
        ``observation_keys``, the trained encoding rebuilt from the seat's view."""
        if self.observer is None:
            return observation["observation"]
        return self.observer.observe_view(view, self.seat, self.game, observation["observation"])

    def logits(self, observation: np.ndarray) -> np.ndarray:
        """The network's logits for one observation (float32, one per action)."""
        import torch

        torch.set_num_threads(1)
        if self.model is None:
            self._load()
        with torch.no_grad():
            obs = torch.as_tensor(np.asarray(observation, dtype=np.float32)[None])
            return self.model(obs)[0].numpy()

    def act(self, observation: dict[str, np.ndarray], view: dict[str, Any]) -> int:
        mask = np.asarray(observation["action_mask"]).astype(bool)
        if not mask.any():
            raise ValueError(f"{self.agent_id or 'policy'}: asked to act with an empty action mask")
        logits = self.logits(self.observation_vector(observation, view)).astype(np.float64)
        draw = None if self.deterministic else self.rng.random()
        return self._pick(mask, logits, draw)

    def _pick(self, mask: np.ndarray, logits: np.ndarray, draw: float | None) -> int:
        """The action for one row's float64 logits (``draw``: the uniform number of a sampled choice)."""
        masked = np.where(mask, logits, -np.inf)
        if draw is None:
            return int(np.argmax(masked))
        probs = np.exp(masked - masked.max())
        cumulative = np.cumsum(probs)
        pick = int(np.searchsorted(cumulative, draw * cumulative[-1], side="right"))
        legal = np.flatnonzero(mask)
        return pick if pick < len(mask) and mask[pick] else int(legal[-1])

    @staticmethod
    def _sample_is_clear(mask: np.ndarray, logits: np.ndarray, draw: float) -> bool:
        """Whether logits moved by :data:`BATCH_TOLERANCE` could not move ``draw``'s sample across a boundary
        (a logit moved by ``slack`` scales each probability by at most e**(2 slack))."""
        masked = np.where(mask, logits, -np.inf)
        cumulative = np.cumsum(np.exp(masked - masked.max()))
        slack = BATCH_TOLERANCE * max(1.0, float(np.abs(logits).max()))
        return bool(np.abs(cumulative - draw * cumulative[-1]).min() > 4.0 * slack * cumulative[-1])

    @property
    def batch_reads_view(self) -> bool:
        """Whether :meth:`act_batch` reads its ``views``: only at a table observed through other
        ``observation_keys`` than the trained ones (known once :meth:`reset` has run)."""
        return self.observer is not None

    def batch_group(self) -> Any:
        """Agents with equal groups choose alike for the same observation and generator, so one of them may
        :meth:`act_batch` the others' rows: the seats of one network, greedy or sampled alike, at a table it
        observes as trained (a re-encoding reads the agent's own seat, so it groups alone)."""
        if self.observer is None and self.model is not None:
            return (type(self), id(self.model), self.deterministic)
        return ("agent", id(self))

    def batch_row_bytes(self) -> int:
        """About how many bytes one row of :meth:`act_batch` holds at its peak: its observation (as handed
        in and as the stacked input) and every layer's output for it, from one forward pass of one row."""
        import torch

        if self.model is None:
            self._load()
        shape = tuple(self._trained_game().observation_shape)
        row = 2 * 4 * int(np.prod(shape))
        outputs: list[int] = []

        def count(_module: Any, _inputs: Any, output: Any) -> None:
            for t in output if isinstance(output, (tuple, list)) else (output,):
                if isinstance(t, torch.Tensor):
                    outputs.append(t.element_size() * t.numel())

        modules = list(self.model.modules()) if isinstance(self.model, torch.nn.Module) else []
        hooks = [m.register_forward_hook(count) for m in modules]
        try:
            with torch.no_grad():
                self.model(torch.zeros((1, *shape), dtype=torch.float32))
        finally:
            for hook in hooks:
                hook.remove()
        return row + sum(outputs)

    def act_batch(self, observations: Sequence[dict[str, np.ndarray]], views: Sequence[dict[str, Any]] | None = None,
                  rngs: Sequence[random.Random] | None = None) -> list[int]:
        """What :meth:`act` would play for each observation, from one forward pass over them all.

        ``views`` (one per row) are read only where :attr:`batch_reads_view` says so. A sampled policy
        draws row ``i``'s number from ``rngs[i]`` as :meth:`act` draws from :attr:`rng` (without
        ``rngs``: from :attr:`rng`, row after row, as a loop of :meth:`act` would). A batch runs through
        other kernels than one row, so its logits differ from one row's in the last bits; a row whose
        choice such a difference could turn (two best logits, or a sample's number and a boundary,
        within :data:`BATCH_TOLERANCE`) is computed again alone, so every action is exactly
        :meth:`act`'s.
        """
        import torch

        torch.set_num_threads(1)
        if self.model is None:
            self._load()
        if not observations:
            return []
        if rngs is not None and len(rngs) != len(observations):
            raise ValueError(f"act_batch: {len(observations)} observations but {len(rngs)} rngs")
        if self.observer is not None and (views is None or len(views) != len(observations)):
            raise ValueError(f"{self.agent_id or 'policy'}: this table is observed through other keys than the "
                             "network's, so act_batch needs one view per observation")
        masks = np.stack([np.asarray(o["action_mask"]) for o in observations]).astype(bool)
        empty = np.flatnonzero(~masks.any(axis=1))
        if len(empty):
            raise ValueError(f"{self.agent_id or 'policy'}: asked to act with an empty action mask (row {int(empty[0])})")
        if self.observer is None:
            rows = [np.asarray(o["observation"], dtype=np.float32) for o in observations]
        else:
            rows = [np.asarray(self.observation_vector(o, v), dtype=np.float32) for o, v in zip(observations, views)]
        # equal observations are read once (rollouts of one move often see the same position)
        slot: dict[bytes, int] = {}
        inverse = np.empty(len(rows), dtype=np.intp)
        unique = []
        for i, row in enumerate(rows):
            j = slot.setdefault(row.tobytes(), len(unique))
            if j == len(unique):
                unique.append(row)
            inverse[i] = j
        with torch.no_grad():
            logits = self.model(torch.as_tensor(np.stack(unique))).numpy().astype(np.float64)[inverse]
        if self.deterministic:  # _pick on every row at once
            every = np.arange(len(masks))
            masked = np.where(masks, logits, -np.inf)
            actions = masked.argmax(axis=1)
            top = masked[every, actions]
            masked[every, actions] = -np.inf
            clear = top - masked.max(axis=1) > BATCH_TOLERANCE * np.maximum(1.0, np.abs(logits).max(axis=1))
            for i in np.flatnonzero(~clear):
                actions[i] = self._pick(masks[i], self.logits(rows[i]).astype(np.float64), None)
            return actions.tolist()
        actions = []
        for i, mask in enumerate(masks):
            draw = (self.rng if rngs is None else rngs[i]).random()
            clear = self._sample_is_clear(mask, logits[i], draw)
            actions.append(self._pick(mask, logits[i] if clear else self.logits(rows[i]).astype(np.float64), draw))
        return actions
