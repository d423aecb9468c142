"""Policy files that are data, not code: weights in safetensors, everything else in JSON.

A policy folder holds two files written by :func:`save_policy`:

* ``policy.json`` — ``{"format": "tabletop-rl/policy", "format_version": 1, "arch": NAME,
  "arch_kwargs": {...}, "game": "sequence_v0", "config": {...}, "observation_shape": [...],
  "num_actions": N, "meta": {...}}``;
* ``policy.safetensors`` — the network's ``state_dict`` as float32 tensors.

Loading never unpickles anything: the JSON is parsed and validated field by field, the architecture
name must be one of :mod:`agents.architectures` (code that ships with this package or that you register),
and the weights are read with ``safetensors`` and must match the built network's parameter names and
shapes exactly. Anything else raises :class:`CheckpointError` naming the file and what is wrong.

A registered architecture is a builder ``builder(**arch_kwargs) -> torch.nn.Module`` whose module maps
a float32 batch of observations ``(B, *observation_shape)`` to action logits ``(B, num_actions)``.
The table of architectures, with the one way to build from it, is :mod:`agents.architectures`.
"""

from __future__ import annotations

import json
import math
import pathlib
from typing import Any

from agents.architectures import builder_of, is_architecture

FORMAT = "tabletop-rl/policy"
FORMAT_VERSION = 1
SPEC_FILE = "policy.json"
WEIGHTS_FILE = "policy.safetensors"
#: Refuse files larger than this before reading them (the biggest shipped policy is a few MB).
MAX_SPEC_BYTES = 1 << 20
MAX_WEIGHTS_BYTES = 512 << 20


class CheckpointError(ValueError):
    """A checkpoint file or index entry that is missing, corrupt or made for another game/config."""


# -------------------------------------------------------------------------------------------------
def _json_value_ok(value: Any, depth: int = 0) -> bool:
    """Plain JSON data only (no NaN/inf), bounded depth."""
    if depth > 8:
        return False
    if value is None or isinstance(value, (bool, str)):
        return True
    if isinstance(value, int):
        return True
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, list):
        return all(_json_value_ok(v, depth + 1) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _json_value_ok(v, depth + 1) for k, v in value.items())
    return False


def save_policy(
    folder: str | pathlib.Path,
    module: Any,
    *,
    arch: str,
    arch_kwargs: dict[str, Any],
    game: str,
    config: dict[str, Any],
    observation_shape: tuple[int, ...] | list[int],
    num_actions: int,
    meta: dict[str, Any] | None = None,
) -> pathlib.Path:
    """Write ``policy.json`` and ``policy.safetensors`` for ``module`` into ``folder``."""
    from safetensors.torch import save_file

    builder_of(arch)  # a ValueError naming the known architectures
    spec = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "arch": arch,
        "arch_kwargs": dict(arch_kwargs),
        "game": game,
        "config": dict(config),
        "observation_shape": [int(x) for x in observation_shape],
        "num_actions": int(num_actions),
        "meta": dict(meta or {}),
    }
    if not _json_value_ok(spec):
        raise ValueError("policy spec must be plain JSON data (no NaN, no objects)")
    folder = pathlib.Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    tensors = {k: v.detach().to("cpu").float().contiguous() for k, v in module.state_dict().items()}
    save_file(tensors, str(folder / WEIGHTS_FILE))
    (folder / SPEC_FILE).write_text(json.dumps(spec, indent=2, sort_keys=True) + "\n")
    return folder


def inside(root: pathlib.Path, relative: Any, what: str) -> pathlib.Path:
    """``root / relative`` after checking that it stays inside ``root`` (symlinks followed)."""
    if not isinstance(relative, str) or not relative:
        raise CheckpointError(f"{what} must be a non-empty relative path string, got {relative!r:.80}")
    candidate = pathlib.PurePosixPath(relative)
    if candidate.is_absolute() or pathlib.PureWindowsPath(relative).is_absolute() or "\\" in relative:
        raise CheckpointError(f"{what} {relative!r} is absolute; paths are relative to the checkpoint folder")
    if ".." in candidate.parts:
        raise CheckpointError(f"{what} {relative!r} contains '..'; paths must stay inside the checkpoint folder")
    root_resolved = root.resolve()
    path = (root / relative).resolve()
    if path != root_resolved and root_resolved not in path.parents:
        raise CheckpointError(
            f"{what} {relative!r} leads to {path}, outside the checkpoint folder {root_resolved} (a symlink?)"
        )
    return root / relative



def _read_regular_file(path: pathlib.Path, limit: int) -> bytes:
    if not path.exists():
        raise CheckpointError(f"checkpoint file {path} does not exist")
    if not path.is_file():
        raise CheckpointError(f"checkpoint file {path} is not a regular file")
    size = path.stat().st_size
    if size > limit:
        raise CheckpointError(f"checkpoint file {path} is {size} bytes; at most {limit} are accepted")
    return path.read_bytes()


def read_policy_spec(folder: str | pathlib.Path) -> dict[str, Any]:
    """The validated ``policy.json`` of ``folder``."""
    path = pathlib.Path(folder) / SPEC_FILE
    raw = _read_regular_file(path, MAX_SPEC_BYTES)
    try:
        spec = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CheckpointError(f"{path} is not valid UTF-8 JSON: {exc}") from exc
    if not isinstance(spec, dict):
        raise CheckpointError(f"{path} must hold a JSON object, got {type(spec).__name__}")
    if spec.get("format") != FORMAT:
        raise CheckpointError(f"{path}: format is {spec.get('format')!r}, expected {FORMAT!r}")
    if spec.get("format_version") != FORMAT_VERSION:
        raise CheckpointError(
            f"{path}: format_version is {spec.get('format_version')!r}; this library reads {FORMAT_VERSION}"
        )
    expected = {
        "arch": str,
        "arch_kwargs": dict,
        "game": str,
        "config": dict,
        "observation_shape": list,
        "num_actions": int,
        "meta": dict,
    }
    for key, kind in expected.items():
        if key not in spec:
            raise CheckpointError(f"{path}: missing key {key!r}")
        value = spec[key]
        if not isinstance(value, kind) or isinstance(value, bool):
            raise CheckpointError(f"{path}: {key} must be a {kind.__name__}, got {value!r:.80}")
    if not _json_value_ok(spec):
        raise CheckpointError(f"{path}: holds values that are not plain JSON data (NaN, inf or too deep)")
    shape = spec["observation_shape"]
    if not shape or not all(isinstance(x, int) and not isinstance(x, bool) and 0 < x <= 1 << 20 for x in shape):
        raise CheckpointError(f"{path}: observation_shape must be a list of positive integers, got {shape!r:.80}")
    if not 0 < spec["num_actions"] <= 1 << 20:
        raise CheckpointError(f"{path}: num_actions must be a positive integer, got {spec['num_actions']!r}")
    if not is_architecture(spec["arch"]):
        from agents.architectures import architecture_names

        raise CheckpointError(f"{path}: architecture {spec['arch']!r} is unknown; known: {architecture_names()}")
    return spec


def _build(folder: pathlib.Path, spec: dict[str, Any], held: int) -> Any:
    """The spec's network, built only once it is known to need no more values than the weights file holds.

    The builder first runs on torch's "meta" device (no memory) so a spec asking for a huge network is
    refused before anything is allocated; a builder that needs real data while building (computed index
    buffers) skips that pre-check and is bounded by the exact tensor comparison after it.
    """
    import torch

    builder, kwargs = builder_of(spec["arch"]), spec["arch_kwargs"]
    try:
        with torch.device("meta"):
            skeleton = builder(**kwargs)
    except CheckpointError:
        raise
    except (TypeError, ValueError) as exc:
        raise CheckpointError(f"{folder}: arch_kwargs do not fit {spec['arch']!r}: {exc}") from exc
    except Exception:  # noqa: BLE001 - only the pre-check is skipped; the real build below is checked
        skeleton = None
    if skeleton is not None:
        needed = sum(t.numel() for t in skeleton.state_dict().values())
        if needed > held:
            raise CheckpointError(
                f"{folder}: arch_kwargs describe a network of {needed} values, but {WEIGHTS_FILE} holds {held}"
            )
    try:
        return builder(**kwargs)
    except CheckpointError:
        raise
    except (TypeError, ValueError, RuntimeError, OverflowError, MemoryError) as exc:
        raise CheckpointError(f"{folder}: arch_kwargs do not fit {spec['arch']!r}: {exc}") from exc


def load_policy(
    folder: str | pathlib.Path,
    game: str | None = None,
    observation_shape: tuple[int, ...] | None = None,
    num_actions: int | None = None,
) -> tuple[Any, dict[str, Any]]:
    """Build the network of ``folder`` and load its weights; returns ``(module, spec)``.

    When ``game``, ``observation_shape`` or ``num_actions`` are given they must match the spec.
    """
    import torch
    from safetensors import SafetensorError
    from safetensors.torch import load as load_tensors

    folder = pathlib.Path(folder)
    spec = read_policy_spec(folder)
    if game is not None and spec["game"] != game:
        raise CheckpointError(f"{folder} holds a policy for {spec['game']!r}, not {game!r}")
    if observation_shape is not None and tuple(spec["observation_shape"]) != tuple(observation_shape):
        raise CheckpointError(
            f"{folder} expects observations of shape {tuple(spec['observation_shape'])}, "
            f"but the game gives {tuple(observation_shape)}"
        )
    if num_actions is not None and spec["num_actions"] != num_actions:
        raise CheckpointError(f"{folder} has {spec['num_actions']} actions, but the game has {num_actions}")
    raw = _read_regular_file(folder / WEIGHTS_FILE, MAX_WEIGHTS_BYTES)
    try:
        tensors = load_tensors(raw)
    except (SafetensorError, ValueError, RuntimeError, OSError) as exc:
        raise CheckpointError(f"{folder / WEIGHTS_FILE} is not a valid safetensors file: {exc}") from exc
    from agents.nets import skipping_initialisation

    with skipping_initialisation():  # every weight is overwritten below: builders may skip random initialisation
        module = _build(folder, spec, sum(t.numel() for t in tensors.values()))
    own = module.state_dict()
    missing = sorted(set(own) - set(tensors))
    extra = sorted(set(tensors) - set(own))
    if missing or extra:
        raise CheckpointError(
            f"{folder / WEIGHTS_FILE} does not fit architecture {spec['arch']!r}: "
            f"missing tensors {missing[:5]}, unexpected tensors {extra[:5]}"
        )
    for name, tensor in tensors.items():
        if tuple(tensor.shape) != tuple(own[name].shape):
            raise CheckpointError(
                f"{folder / WEIGHTS_FILE}: tensor {name!r} has shape {tuple(tensor.shape)}, "
                f"the architecture needs {tuple(own[name].shape)}"
            )
        if tensor.dtype != torch.float32:
            raise CheckpointError(f"{folder / WEIGHTS_FILE}: tensor {name!r} is {tensor.dtype}, expected float32")
        if not torch.isfinite(tensor).all():
            raise CheckpointError(f"{folder / WEIGHTS_FILE}: tensor {name!r} holds NaN or infinite values")
    module.load_state_dict(tensors, strict=True)
    module.eval()
    try:
        with torch.no_grad():
            probe = module(torch.zeros((1, *spec["observation_shape"]), dtype=torch.float32))
    except (RuntimeError, ValueError, TypeError, IndexError) as exc:
        raise CheckpointError(f"{folder}: the network fails on an observation of shape "
                              f"{tuple(spec['observation_shape'])}: {exc}") from exc
    if tuple(probe.shape) != (1, spec["num_actions"]):
        raise CheckpointError(
            f"{folder}: the network returns shape {tuple(probe.shape)} for one observation, "
            f"expected (1, {spec['num_actions']})"
        )
    return module, spec
