"""Everything a run keeps between sittings, in one place: the checkpoint folder (network, optimizer,
snapshots, the cloning buffer and the torch RNG as safetensors; :class:`TrainerState` and the other RNG
states as JSON; never pickle), how a save survives being cut off, and how a resume puts it all back.

``save`` writes ``checkpoint.tmp`` (``state.json`` last), moves ``checkpoint`` to ``checkpoint.old``
and then ``checkpoint.tmp`` to ``checkpoint``; :func:`recover_checkpoint` finishes a save that was
cut off between the renames. ``trainer`` below is a ``training.ppo.loop.Trainer`` (not imported:
the loop imports this module).
"""

from __future__ import annotations

import dataclasses
import json
import pathlib
import random
import shutil
import sys
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import torch

from agents.architectures import build_architecture
from agents.policy_io import CheckpointError
from envs.provenance import provenance
from training.ppo.cloning import ReplayBuffer

FORMAT = "tabletop-rl/ppo-run"


@dataclass
class TrainerState:
    """The trainer's own state between updates (everything but tensors, RNG states and the settings):
    saved in ``state.json`` field by field, at its top level, and restored as one object."""

    step: int = 0
    """learner decisions trained on"""
    updates: int = 0
    """updates made (cloning and PPO)"""
    games_dealt: int = 0
    """training games dealt so far (the next game's number; its seed follows from it)"""
    cpu_seconds: float = 0.0
    """CPU seconds of training so far (evaluation left out)"""
    curve: list[dict[str, Any]] = field(default_factory=list)
    """one row per evaluation (what ``curve.csv`` holds)"""
    next_eval: int = 0
    """the step at or after which the next evaluation runs"""
    next_checkpoint: int = 0
    """the step at or after which the next checkpoint is written"""
    next_snapshot: int = 0
    """the step at or after which the next snapshot joins the league"""
    snapshot_steps: list[int] = field(default_factory=list)
    """the step each kept snapshot was taken at, oldest first (the snapshots' weights are files)"""
    cpu_breakdown: dict[str, float] = field(default_factory=dict)
    """CPU seconds by part over the run (``training.ppo.loop.CPU_PARTS``)"""
    resumes: list[dict[str, Any]] = field(default_factory=list)
    """settings changed on each resume: ``[{"step": N, "changed": {name: [before, after]}}]``"""
    init_origin: dict[str, Any] | None = None
    """where the starting weights came from (``--init-policy``): the policy, its own steps and CPU seconds"""
    teacher: dict[str, Any] | None = None
    """who made the labels in the cloning buffer (``training.ppo.args.teacher_identity``)"""

    #: Fields a checkpoint may lack (written before they existed); the others it must have.
    OPTIONAL: ClassVar[tuple[str, ...]] = ("cpu_breakdown", "resumes", "init_origin", "teacher")

    @classmethod
    def from_saved(cls, saved: dict[str, Any], where: pathlib.Path) -> TrainerState:
        """The state a ``state.json`` holds; a clear refusal if it is not a training.ppo checkpoint or
        lacks a field this trainer needs."""
        if saved.get("format") != FORMAT:
            raise CheckpointError(f"{where} is not a training.ppo checkpoint (format {saved.get('format')!r}, expected "
                             f"{FORMAT!r}); it cannot be resumed")
        names = [f.name for f in dataclasses.fields(cls)]
        missing = [n for n in names if n not in saved and n not in cls.OPTIONAL]
        if missing:
            raise CheckpointError(f"{where} was written by a training.ppo too old to resume from: it lacks {missing}; "
                             "start a new run, or --init-policy from its policy")
        return cls(**{n: saved[n] for n in names if n in saved})


def migrate_saved_args(saved: dict[str, Any]) -> dict[str, Any]:
    """A run's saved arguments under today's names: ``total_steps`` became ``total_timesteps``, and
    ``minibatch_size`` became ``num_minibatches`` (the number of minibatches it made of a rollout)."""
    saved = dict(saved)
    if "total_steps" in saved:
        saved["total_timesteps"] = saved.pop("total_steps")
    if "minibatch_size" in saved:
        rollout = saved.get("num_envs", 64) * saved.get("num_steps", 32)
        saved["num_minibatches"] = max(1, -(-rollout // saved.pop("minibatch_size")))
    return saved


def recover_checkpoint(run_dir: pathlib.Path) -> pathlib.Path:
    """The run's ``checkpoint`` folder, after finishing a save that was cut off between its renames.

    ``save_checkpoint`` writes ``checkpoint.tmp`` (``state.json`` last), moves ``checkpoint`` to
    ``checkpoint.old`` and then ``checkpoint.tmp`` to ``checkpoint``. A process killed between the
    two renames leaves no ``checkpoint``: the complete ``checkpoint.tmp`` (the newer one) or else
    ``checkpoint.old`` becomes it again, and the run resumes from there.
    """
    ckpt = run_dir / "checkpoint"
    if ckpt.exists():
        return ckpt
    for name in ("checkpoint.tmp", "checkpoint.old"):
        candidate = run_dir / name
        try:
            json.loads((candidate / "state.json").read_text())
        except (OSError, ValueError):
            continue  # absent, or cut off while state.json was written: not a complete checkpoint
        candidate.rename(ckpt)
        print(f"{run_dir}: the last save was cut off between its renames; resuming from {name}", file=sys.stderr)
        return ckpt
    return ckpt


def read_json(path: pathlib.Path) -> dict[str, Any]:
    """A run's JSON file, or a :class:`~agents.policy_io.CheckpointError` naming it."""
    if not path.is_file():
        raise CheckpointError(f"{path} does not exist: is this a run folder with a checkpoint?")
    try:
        data = json.loads(path.read_text())
    except (UnicodeDecodeError, ValueError) as exc:
        raise CheckpointError(f"{path} is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise CheckpointError(f"{path} must hold a JSON object")
    return data


def load_tensors(path: pathlib.Path) -> dict[str, torch.Tensor]:
    """A run's safetensors file, or a :class:`~agents.policy_io.CheckpointError` naming it."""
    from safetensors.torch import load_file

    try:
        return load_file(str(path))
    except FileNotFoundError:
        raise CheckpointError(f"{path} does not exist: the run's checkpoint is incomplete") from None
    except Exception as exc:  # safetensors raises its own error type for a damaged file
        raise CheckpointError(f"{path} is not a valid safetensors file: {exc}") from None


def _load_into(module: torch.nn.Module, path: pathlib.Path) -> None:
    try:
        module.load_state_dict(load_tensors(path))
    except RuntimeError as exc:  # shapes or names that do not fit the run's network
        raise CheckpointError(f"{path} does not fit the run's network: {' '.join(str(exc).split())}") from None




def flatten_optimizer(opt: torch.optim.Optimizer) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    sd = opt.state_dict()
    tensors, scalars = {}, {}
    for idx, st in sd["state"].items():
        for key, value in st.items():
            if torch.is_tensor(value):
                tensors[f"state.{idx}.{key}"] = value.detach().cpu().clone().contiguous()
            else:
                scalars[f"{idx}.{key}"] = value
    return tensors, {"param_groups": sd["param_groups"], "scalars": scalars}


def unflatten_optimizer(tensors: dict[str, torch.Tensor], meta: dict[str, Any]) -> dict[str, Any]:
    state: dict[int, dict[str, Any]] = {}
    for name, value in tensors.items():
        _, idx, key = name.split(".", 2)
        state.setdefault(int(idx), {})[key] = value
    for name, value in meta["scalars"].items():
        idx, key = name.split(".", 1)
        state.setdefault(int(idx), {})[key] = value
    return {"state": state, "param_groups": meta["param_groups"]}


def _rng_to_json(state: Any) -> Any:
    if isinstance(state, tuple):
        return [_rng_to_json(x) for x in state]
    return state


def _rng_from_json(state: Any) -> Any:
    if isinstance(state, list):
        return tuple(_rng_from_json(x) for x in state)
    return state


def save(trainer: Any) -> None:
    """Write the trainer's resumable state to ``<run>/checkpoint`` (atomically, see the module): its
    :class:`TrainerState` (``trainer.state``), weights (and the state critic's), optimizer, snapshots, cloning buffer and RNGs."""
    from safetensors.torch import save_file

    run_dir = trainer.run_dir
    ckpt, tmp, old = run_dir / "checkpoint", run_dir / "checkpoint.tmp", run_dir / "checkpoint.old"
    if tmp.exists():  # left by a save that was cut off: none of its files may outlive it
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    save_file({k: v.cpu().contiguous() for k, v in trainer.net.state_dict().items()}, str(tmp / "model.safetensors"))
    if trainer.critic is not None:
        save_file({k: v.cpu().contiguous() for k, v in trainer.critic.state_dict().items()},
                  str(tmp / "critic.safetensors"))
    opt_t, opt_meta = flatten_optimizer(trainer.optimizer)
    save_file(opt_t, str(tmp / "optimizer.safetensors"))
    for k, snap in enumerate(trainer.snapshots):
        save_file({n: v.contiguous() for n, v in snap.state_dict().items()}, str(tmp / f"snapshot_{k}.safetensors"))
    save_file({"torch": torch.get_rng_state()}, str(tmp / "rng.safetensors"))
    if trainer.bc is not None:  # cloning, or cloning just ended (a longer cloning may resume from it)
        save_file(trainer.bc.in_order(), str(tmp / "bc_buffer.safetensors"))
    numpy_rng = _rng_to_json(np.random.get_state())
    state = {
        "format": FORMAT,
        "args": dataclasses.asdict(trainer.args),
        "arch": trainer.arch,
        "arch_kwargs": trainer.arch_kwargs,
        **dataclasses.asdict(trainer.state),
        "snapshots": len(trainer.snapshots),
        "optimizer": opt_meta,
        "python_rng": _rng_to_json(trainer.rng.getstate()),
        "python_global_rng": _rng_to_json(random.getstate()),
        "numpy_rng": [numpy_rng[0], np.asarray(numpy_rng[1]).tolist(), *numpy_rng[2:]],
        "provenance": provenance([trainer.args.game]),
    }
    (tmp / "state.json").write_text(json.dumps(state, indent=1))
    if ckpt.exists():
        if old.exists():
            shutil.rmtree(old)
        ckpt.rename(old)
    tmp.rename(ckpt)
    if old.exists():
        shutil.rmtree(old)


def restore(trainer: Any, defaults: dict[str, Any], changeable: frozenset[str]) -> TrainerState:
    """Put a saved run's tensors and RNG states back into ``trainer`` (built from the resumed args):
    weights, optimizer, snapshots, RNG states and the cloning buffer; returns its :class:`TrainerState`,
    which records which ``changeable`` settings differ from the run's (``defaults`` fills settings newer
    than its checkpoint)."""
    args = trainer.args
    ckpt = recover_checkpoint(trainer.run_dir)
    state = read_json(ckpt / "state.json")
    restored = TrainerState.from_saved(state, ckpt / "state.json")
    _load_into(trainer.net, ckpt / "model.safetensors")
    if trainer.critic is not None:
        _load_into(trainer.critic, ckpt / "critic.safetensors")
    trainer.sync_actor()
    opt_t = load_tensors(ckpt / "optimizer.safetensors") if (ckpt / "optimizer.safetensors").exists() else {}
    trainer.optimizer.load_state_dict(unflatten_optimizer(opt_t, state["optimizer"]))
    for k in range(state["snapshots"]):
        snap = build_architecture(trainer.arch, **trainer.arch_kwargs).to(memory_format=trainer.memory_format)
        _load_into(snap, ckpt / f"snapshot_{k}.safetensors")
        trainer.snapshots.append(snap.eval())
    # A setting newer than the run's checkpoint was at its default there (as parse_args reads it).
    before, now = {**defaults, **migrate_saved_args(state["args"])}, dataclasses.asdict(args)
    changed = {k: [before[k], now[k]] for k in sorted(changeable - {"progress"}) if before[k] != now[k]}
    if changed:  # the run's history of resumes with changed settings (what args.json alone would lose)
        restored.resumes.append({"step": restored.step, "changed": changed})
    trainer.rng.setstate(_rng_from_json(state["python_rng"]))
    random.setstate(_rng_from_json(state["python_global_rng"]))
    np.random.set_state(_rng_from_json(state["numpy_rng"]))
    torch.set_rng_state(load_tensors(ckpt / "rng.safetensors")["torch"])
    if restored.step < args.bc_steps:  # still cloning, or cloning for longer than the run did
        if (ckpt / "bc_buffer.safetensors").exists():
            trainer.bc = ReplayBuffer.load(ckpt / "bc_buffer.safetensors", trainer.bc_capacity(), trainer.obs_shape,
                                           trainer.num_actions, soft=trainer.soft_targets)
        elif restored.step > 0 and state["args"]["bc_steps"] > 0:
            print(f"{trainer.run_dir}: cloning goes on from step {restored.step} to {args.bc_steps} with an empty "
                  f"buffer: its checkpoint keeps no cloning buffer (none is kept once a run's PPO stage begins)",
                  file=sys.stderr)
    # A changed interval counts from here.
    if args.eval_every != state["args"]["eval_every"]:
        restored.next_eval = restored.step + args.eval_every
    if args.checkpoint_every != state["args"]["checkpoint_every"]:
        restored.next_checkpoint = restored.step + args.checkpoint_every
    if args.snapshot_every != state["args"]["snapshot_every"]:
        restored.next_snapshot = restored.step + args.snapshot_every
    return restored
