"""The settings every trainer shares, declared once: the PPO hyperparameters, self-play, seeding, the device.

``training.ppo`` (the project's own PPO), ``training.sb3`` (Stable-Baselines3's MaskablePPO) and
``training.rllib`` (Ray RLlib's PPO) build their ``Args`` on :class:`Settings`: a setting that
means the same in all three is declared here once, with one default and one docstring (the
``--help`` text, as in CleanRL). A trainer that needs another default redeclares the field with a
one-line reason in its docstring.

What else lives here, so that no trainer has its own copy:

* :func:`check_settings` — the one validation, run before any work: a value that would make a NaN,
  an empty batch or a silent no-op is refused with a :class:`SettingsError` naming the values that
  fit (minibatches must split the rollout evenly, two decisions or more each);
* :func:`parse_settings` — the command line from the dataclass, with the removed flags refused
  before parsing, each with a line naming what to give instead;
* one spelling of self-play: the opponent kind ``"self"`` (a frozen earlier copy of the learner) with
  ``--snapshot-every`` and ``--snapshot-max``;
* :func:`seed_everything`, :func:`resolve_device`, and :func:`check_finite`, which stops a run at a
  non-finite loss with a :class:`NonFiniteLossError` naming the step and the loss.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any, TypeVar

import numpy as np

SELF = "self"
"""The opponent kind of a frozen earlier copy of the learner (self-play)."""

REMOVED_KINDS = {"snapshot": f"use {SELF!r}"}
"""Opponent kinds that are gone: kind -> what to give instead (refused by :func:`check_settings`)."""

DEVICES = ("cpu", "cuda", "auto")
"""Where the network is updated: ``auto`` is ``cuda`` when torch sees a CUDA device, else ``cpu``."""

MIN_MINIBATCH = 2
"""The fewest decisions a minibatch may hold: the standard deviation of one advantage is NaN."""


class SettingsError(ValueError):
    """A setting that cannot work; the message names it and what is allowed."""


class NonFiniteLossError(RuntimeError):
    """A loss became NaN or infinite: the run stops at ``step`` (learner decisions so far) and writes nothing
    after it; ``losses`` holds the bad values by name."""

    def __init__(self, step: int, losses: Mapping[str, float]) -> None:
        self.step = int(step)
        self.losses = dict(losses)
        named = ", ".join(f"{name} = {value}" for name, value in self.losses.items())
        super().__init__(
            f"non-finite loss at learner step {self.step}: {named}; the run stops here and writes nothing more (its "
            "last checkpoint, if any, is from before this step; a lower --learning-rate or --max-grad-norm may help)"
        )


def check_finite(losses: Mapping[str, Any], step: int) -> None:
    """Raise :class:`NonFiniteLossError` naming ``step`` and every loss in ``losses`` that is NaN or
    infinite; values are floats, numpy scalars or one-element tensors."""
    bad = {name: float(value) for name, value in losses.items() if not math.isfinite(float(value))}
    if bad:
        raise NonFiniteLossError(step, bad)


@dataclass
class Settings:
    """The settings of every trainer; each trainer's ``Args`` adds its own."""

    game: str = "sequence_v0"
    """game module name (one of envs.NAMES)"""
    config: str = "{}"
    """game config as a JSON object, e.g. '{"players_per_team": 2}'"""
    seed: int = 1
    """seed of everything: torch, numpy, Python's random, deals, opponents"""
    opponents: list[str] = field(default_factory=lambda: ["random-v0"])
    """opponent kinds drawn per game: agent kinds of the game (ids without the game prefix, e.g. random-v0
    heuristic-v1) or 'self', a frozen earlier copy of the learner"""
    snapshot_every: int = 100_000
    """with 'self' among --opponents: add a frozen copy of the learner every N learner decisions (0: keep only
    the starting network)"""
    snapshot_max: int = 8
    """with 'self' among --opponents: keep the newest N frozen copies (the first is the starting network)"""
    learning_rate: float = 3e-4
    """Adam learning rate"""
    gamma: float = 0.995
    """discount factor"""
    gae_lambda: float = 0.95
    """GAE lambda"""
    clip_coef: float = 0.2
    """PPO clipping of the probability ratio"""
    ent_coef: float = 0.01
    """entropy bonus weight"""
    vf_coef: float = 0.5
    """value loss weight"""
    max_grad_norm: float = 0.5
    """gradient norm clip (above 0)"""
    update_epochs: int = 6
    """passes over each rollout"""
    num_minibatches: int = 4
    """minibatches per pass over a rollout; they split it evenly (each rollout / num_minibatches decisions, 2 or more)"""
    norm_adv: bool = True
    """normalise the advantages within each minibatch"""
    eval_games: int = 100
    """seeded games per evaluation opponent (seats rotated)"""
    progress: bool = True
    """show a progress bar"""

    def rollout_size(self) -> int:
        """Decisions in one rollout, the batch that ``num_minibatches`` splits."""
        raise NotImplementedError

    def rollout_text(self) -> str:
        """How the rollout size is made, in flags, for error messages."""
        raise NotImplementedError


@dataclass
class StepSettings(Settings):
    """The settings of the trainers that count learner decisions and update in this process."""

    total_timesteps: int = 100_000
    """learner decisions to train on"""
    num_envs: int = 1
    """tables stepped together"""
    num_steps: int = 1024
    """learner decisions per table per rollout (rollout size = num_envs * num_steps)"""
    device: str = "cpu"
    """where the network is updated: cpu, cuda or auto (cuda when torch sees one, else cpu)"""
    eval_every: int = 20_000
    """evaluate the greedy policy every N learner decisions (0: only at the end)"""
    eval_opponents: list[str] = field(default_factory=lambda: ["random-v0"])
    """opponent kinds the policy is evaluated against (agent kinds of the game)"""

    def rollout_size(self) -> int:
        return self.num_envs * self.num_steps

    def rollout_text(self) -> str:
        return f"num_envs * num_steps = {self.num_envs} * {self.num_steps}"


@dataclass
class Registers:
    """The settings of a trainer that can add its policy to the checkpoint index."""

    register: str = ""
    """after training, add the policy to the checkpoint index under this new versioned id, e.g.
    sequence_v0/ppo-v2 (empty: do not register; an id that exists is refused before training)"""


#: Each shared hyperparameter's name in Stable-Baselines3's PPO and in RLlib's PPO config (None: that
#: library has no such setting; RLlib always normalises the advantages, over each training batch).
LIBRARY_NAMES: dict[str, tuple[str, str | None]] = {
    "learning_rate": ("learning_rate", "lr"),
    "gamma": ("gamma", "gamma"),
    "gae_lambda": ("gae_lambda", "lambda_"),
    "clip_coef": ("clip_range", "clip_param"),
    "ent_coef": ("ent_coef", "entropy_coeff"),
    "vf_coef": ("vf_coef", "vf_loss_coeff"),
    "max_grad_norm": ("max_grad_norm", "grad_clip"),
    "update_epochs": ("n_epochs", "num_epochs"),
    "norm_adv": ("normalize_advantage", None),
}
LIBRARIES = ("sb3", "rllib")


def library_kwargs(args: Settings, library: str) -> dict[str, Any]:
    """The shared hyperparameters of ``args`` under ``library``'s names (``"sb3"`` or ``"rllib"``)."""
    column = LIBRARIES.index(library)
    return {names[column]: getattr(args, ours) for ours, names in LIBRARY_NAMES.items() if names[column]}


# ----------------------------------------------------------------------------------------------
# The one validation


def minibatch_counts_that_fit(rollout: int) -> list[int]:
    """The values of ``num_minibatches`` that split ``rollout`` decisions evenly into minibatches of
    :data:`MIN_MINIBATCH` or more."""
    return [m for m in range(1, rollout // MIN_MINIBATCH + 1) if rollout % m == 0]


def check_settings(args: Settings) -> None:
    """Refuse, with a :class:`SettingsError` naming the values that fit, any setting of ``args`` that
    would fail later, make a NaN, an empty batch or a silent no-op; called before any work."""
    import agents
    from agents.registry import is_policy_path, resolve
    import envs

    if args.game not in envs.NAMES:
        raise SettingsError(f"--game {args.game!r} is not a game; choose from {list(envs.NAMES)}")
    try:
        config = json.loads(args.config)
    except json.JSONDecodeError:
        config = None
    if not isinstance(config, dict):
        raise SettingsError(f"--config must be a JSON object, got {args.config!r}")
    try:
        envs.make_game(args.game, **config)
    except ValueError as exc:  # the game's ConfigError names the allowed values
        raise SettingsError(f"--config: {exc}") from exc
    kinds = [k.split("/", 1)[1] for k in agents.available(args.game)]
    if not args.opponents:
        raise SettingsError(f"--opponents needs at least one kind: {SELF!r} or one of {kinds}")
    for kind in args.opponents:
        if kind in REMOVED_KINDS and not is_policy_path(kind):
            raise SettingsError(f"the opponent kind {kind!r} in --opponents is gone: {REMOVED_KINDS[kind]}")
        if kind != SELF and kind not in kinds and not is_policy_path(kind):
            raise SettingsError(f"unknown agent kind {kind!r} in --opponents for {args.game}; use {SELF!r}, one of "
                                f"{kinds} or the path of a policy folder")
        if is_policy_path(kind):
            try:
                resolve(args.game, kind)
            except ValueError as exc:
                raise SettingsError(f"--opponents: {exc}") from None
    for kind in getattr(args, "eval_opponents", ()):
        if kind not in kinds:
            hint = " ('self' is a training opponent only)" if kind == SELF else ""
            raise SettingsError(f"unknown agent kind {kind!r} in --eval-opponents for {args.game}{hint}; use one of {kinds}")
    for f in fields(args):
        value = getattr(args, f.name)
        if isinstance(value, float) and not math.isfinite(value):
            raise SettingsError(f"--{_flag(f.name)} must be a finite number, got {value}")
    _within(args, "learning_rate", low=0.0, strict=True)
    _within(args, "gamma", low=0.0, high=1.0, strict=True)
    _within(args, "gae_lambda", low=0.0, high=1.0)
    _within(args, "clip_coef", low=0.0, strict=True)
    _within(args, "ent_coef", low=0.0)
    _within(args, "vf_coef", low=0.0)
    _within(args, "max_grad_norm", low=0.0, strict=True,
            why="the gradient norm is clipped to it, and 0 would zero every gradient")
    for name, low in (("update_epochs", 1), ("num_minibatches", 1), ("snapshot_every", 0), ("snapshot_max", 1),
                      ("eval_games", 0)):
        _within(args, name, low=low)
    if isinstance(args, StepSettings):  # these trainers evaluate at the end of every run
        for name, low in (("total_timesteps", 1), ("num_envs", 1), ("num_steps", 1), ("eval_every", 0),
                          ("eval_games", 1)):
            _within(args, name, low=low)
        if not args.eval_opponents:
            raise SettingsError(f"--eval-opponents needs at least one agent kind of {args.game}: one of {kinds}")
        if args.device not in DEVICES:
            raise SettingsError(f"--device must be one of {list(DEVICES)}, got {args.device!r}")
        resolve_device(args.device)
    check_minibatches(args)
    if isinstance(args, Registers) and args.register:
        check_new_checkpoint_id(args.game, args.register)


def check_minibatches(args: Settings) -> None:
    """Minibatches split the rollout evenly, :data:`MIN_MINIBATCH` decisions or more each (a lone
    decision's advantage has a NaN standard deviation, and one update with it ruins every weight)."""
    rollout = args.rollout_size()
    fit = minibatch_counts_that_fit(rollout)
    if args.num_minibatches in fit:
        return
    if not fit:
        raise SettingsError(f"a rollout of {args.rollout_text()} = {rollout} decision(s) cannot make minibatches "
                            f"of {MIN_MINIBATCH} or more; give a larger rollout")
    if rollout % args.num_minibatches:
        why = f"does not split the rollout of {args.rollout_text()} = {rollout} decisions evenly"
    else:
        why = (f"would make minibatches of {rollout // args.num_minibatches} decision(s) from the rollout of "
               f"{args.rollout_text()} = {rollout}; each needs {MIN_MINIBATCH} or more")
    raise SettingsError(f"--num-minibatches {args.num_minibatches} {why}; values that fit: {_listed(fit)}")


def minibatch_size(args: Settings) -> int:
    """Decisions per minibatch of a validated ``args``."""
    return args.rollout_size() // args.num_minibatches


def check_new_checkpoint_id(game: str, checkpoint_id: str) -> None:
    """``checkpoint_id`` can name a new checkpoint of ``game``: ``<game>/<name>-v<N>`` and not taken
    (an id keeps meaning the same weights)."""
    import re

    import agents
    from agents.checkpoint import read_index

    if not re.fullmatch(rf"{re.escape(game)}/[a-z0-9_.-]+-v[0-9]+", checkpoint_id):
        raise SettingsError(f"--register takes a new versioned id like {game}/ppo-v2, got {checkpoint_id!r}")
    taken = set(agents.available(game)) | {e["id"] for e in read_index()}
    if checkpoint_id in taken:
        family = checkpoint_id.rsplit("-v", 1)[0]
        versions = [int(i.rsplit("-v", 1)[1]) for i in taken if i.rsplit("-v", 1)[0] == family]
        raise SettingsError(
            f"--register {checkpoint_id!r} exists already; an id keeps meaning the same weights, so register the new "
            f"policy as {family}-v{max(versions) + 1}, the next free version"
        )


def _within(args: Settings, name: str, *, low: float | None = None, high: float | None = None,
            strict: bool = False, why: str = "") -> None:
    value = getattr(args, name)
    too_low = low is not None and (value <= low if strict else value < low)
    if too_low or (high is not None and value > high):
        lower = f"above {low}" if strict else f"{low} or more"
        allowed = f"{lower} and at most {high}" if high is not None else lower
        raise SettingsError(f"--{_flag(name)} must be {allowed}, got {value}" + (f" ({why})" if why else ""))


def _flag(name: str) -> str:
    return name.replace("_", "-")


def _listed(values: Sequence[int], most: int = 24) -> str:
    shown = ", ".join(map(str, values[:most]))
    return shown + (f", ... ({len(values)} in all)" if len(values) > most else "")


# ----------------------------------------------------------------------------------------------
# The command line

S = TypeVar("S", bound=Settings)


def refuse_removed(argv: Iterable[str], removed: Mapping[str, str]) -> None:
    """Raise :class:`SettingsError` for the first flag of ``argv`` that is in ``removed`` (flag -> what to
    give instead); a removed flag with another meaning now is refused rather than guessed at."""
    for arg in argv:
        flag = arg.split("=", 1)[0]
        if flag in removed:
            raise SettingsError(f"{flag} is gone: {removed[flag]}")


def given_flags(parser: argparse.ArgumentParser, argv: Sequence[str]) -> set[str]:
    """The fields that ``argv`` sets explicitly."""
    words = {a.split("=", 1)[0] for a in argv if a.startswith("--")}
    return {a.dest for a in parser._actions if words & set(a.option_strings)}


def parse_settings(parser: argparse.ArgumentParser, cls: type[S], argv: Sequence[str] | None = None, *,
                   removed: Mapping[str, str] | None = None, check: bool = True) -> tuple[S, set[str]]:
    """Parse ``argv`` (default: the command line) into ``cls`` and return it with the fields given.

    The ``removed`` flags are refused before parsing; with ``check`` the settings are validated
    (:func:`check_settings`). Every refusal is a usage error of ``parser`` (exit status 2)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        refuse_removed(argv, removed or {})
    except SettingsError as exc:
        parser.error(str(exc))
    args = cls(**vars(parser.parse_args(argv)))
    if check:
        settle(parser, args)
    return args, given_flags(parser, argv)


def settle(parser: argparse.ArgumentParser, args: Settings) -> None:
    """:func:`check_settings`, a refusal being a usage error of ``parser``."""
    try:
        check_settings(args)
    except SettingsError as exc:
        parser.error(str(exc))


# ----------------------------------------------------------------------------------------------
# Seeding and the device


def seed_everything(seed: int, *, torch_threads: int | None = 1) -> None:
    """Seed Python's ``random``, numpy's global generator and torch (CPU and every CUDA device) with
    ``seed``; ``torch_threads`` sets torch's intra-op threads (one keeps runs repeatable and their CPU
    time comparable; ``None`` leaves torch's choice)."""
    random.seed(seed)
    np.random.seed(seed % 2**32)
    try:
        import torch
    except ImportError:  # a run without torch has nothing more to seed
        return
    if torch_threads is not None:
        torch.set_num_threads(torch_threads)
    torch.manual_seed(seed)  # seeds every CUDA device too


def resolve_device(device: str = "auto") -> Any:
    """The ``torch.device`` for ``device`` (``cpu``, ``cuda`` or ``auto``); ``cuda`` without a CUDA device
    torch can use is a :class:`SettingsError` that says so (``auto`` then falls back to the CPU)."""
    if device not in DEVICES:
        raise SettingsError(f"--device must be one of {list(DEVICES)}, got {device!r}")
    import torch

    available = torch.cuda.is_available()
    if device == "cuda" and not available:
        build = f"torch {torch.__version__}" + (" built without CUDA" if torch.version.cuda is None else "")
        raise SettingsError(f"--device cuda: torch sees no CUDA device here ({build}); use --device cpu or auto")
    if device == "auto":
        device = "cuda" if available else "cpu"
    return torch.device(device)
