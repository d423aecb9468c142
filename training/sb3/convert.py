"""Convert a MaskablePPO ``model.zip`` that you trained yourself into the safe policy format.

    python -m training.sb3.convert MODEL.zip OUT_FOLDER --game sequence_v0 [--config '{...}']

The library never loads Stable-Baselines3 zips: ``MaskablePPO.load`` unpickles objects stored in the
zip, and unpickling runs whatever code the file's author put there. This tool reads only the parts of
the zip that are data — the ``data`` JSON (for ``policy_kwargs``; pickled values in it are skipped,
never decoded) and the policy weights ``policy.pth`` through torch's restricted
``torch.load(weights_only=True)`` — and writes the actor (``mlp_extractor.policy_net`` +
``action_net``) as ``policy.json`` + ``policy.safetensors`` with the built-in ``"mlp"`` architecture.

``--verify N`` additionally compares the converted policy with the original on N observations from
played games. Nothing runs this tool implicitly.

.. warning::
   ``--verify`` loads the zip with ``MaskablePPO.load``, which unpickles it and can run code stored in
   the file: use it only on zips you made yourself.
"""

from __future__ import annotations

import argparse
import io
import json
import pathlib
import sys
import zipfile
from typing import Any

import numpy as np

import envs
from agents.registry import qualify
from agents.architectures import build_architecture
from agents.policy_io import CheckpointError, save_policy

ACTIVATIONS = {"Tanh": "tanh", "ReLU": "relu"}


def mlp_actor_from_state(state: dict[str, Any], activation: str = "tanh"):
    """The ``"mlp"`` module and its ``arch_kwargs`` for an SB3 ``MlpPolicy`` state dict's actor.

    Accepts the policy's ``state_dict()`` (keys ``mlp_extractor.policy_net.<i>.weight``,
    ``action_net.weight`` ...); the value network is left out. Refuses anything else: shared layers,
    another feature extractor, missing tensors.
    """
    import torch

    layers = sorted(
        {int(k.split(".")[2]) for k in state if k.startswith("mlp_extractor.policy_net.") and k.endswith(".weight")}
    )
    if "action_net.weight" not in state or "action_net.bias" not in state:
        raise CheckpointError("the policy has no action_net (not an SB3 actor-critic MlpPolicy)")
    if any(k.startswith("mlp_extractor.shared_net.") for k in state) or any(
        k.startswith(("features_extractor.", "pi_features_extractor.")) for k in state
    ):
        raise CheckpointError(
            "shared layers or a learned feature extractor cannot be converted to the 'mlp' architecture"
        )
    if layers != list(range(0, 2 * len(layers), 2)):
        raise CheckpointError(f"unexpected policy_net layout {layers}; expected Linear/activation pairs")
    weights = [state[f"mlp_extractor.policy_net.{i}.weight"] for i in layers]
    obs_dim = int(weights[0].shape[1]) if weights else int(state["action_net.weight"].shape[1])
    hidden = [int(w.shape[0]) for w in weights]
    num_actions = int(state["action_net.weight"].shape[0])
    arch_kwargs = {"obs_dim": obs_dim, "hidden": hidden, "num_actions": num_actions, "activation": activation}
    module = build_architecture("mlp", **arch_kwargs)
    mapped = {}
    for n, i in enumerate(layers):
        mapped[f"body.{2 * n}.weight"] = state[f"mlp_extractor.policy_net.{i}.weight"]
        mapped[f"body.{2 * n}.bias"] = state[f"mlp_extractor.policy_net.{i}.bias"]
    mapped["head.weight"] = state["action_net.weight"]
    mapped["head.bias"] = state["action_net.bias"]
    module.load_state_dict({k: torch.as_tensor(v).float() for k, v in mapped.items()}, strict=True)
    module.eval()
    return module, arch_kwargs


def actor_of(sb3_model: Any):
    """A frozen copy of a live (in-memory) MaskablePPO model's actor as the ``"mlp"`` architecture."""
    kwargs = getattr(sb3_model.policy, "net_arch", None)
    activation_fn = getattr(sb3_model.policy, "activation_fn", None)
    name = getattr(activation_fn, "__name__", "")
    if name not in ACTIVATIONS:
        raise CheckpointError(
            f"activation {name!r} has no counterpart in the 'mlp' architecture ({sorted(ACTIVATIONS)})"
        )
    if isinstance(kwargs, dict) and "shared" in kwargs:
        raise CheckpointError("shared layers cannot be converted")
    state = {k: v.detach().cpu() for k, v in sb3_model.policy.state_dict().items()}
    return mlp_actor_from_state(state, ACTIVATIONS[name])


def read_sb3_zip(path: pathlib.Path, activation: str | None = None):
    """``(state_dict, activation)`` from an SB3 zip, reading data only (nothing is unpickled)."""
    import torch

    if not zipfile.is_zipfile(path):
        raise CheckpointError(f"{path} is not a zip archive")
    with zipfile.ZipFile(path) as archive:
        names = set(archive.namelist())
        if "policy.pth" not in names:
            raise CheckpointError(f"{path} holds no policy.pth (not a Stable-Baselines3 model)")
        kwargs: Any = {}
        if "data" in names:
            try:
                kwargs = json.loads(archive.read("data").decode("utf-8")).get("policy_kwargs", {})
            except (UnicodeDecodeError, json.JSONDecodeError, AttributeError):
                kwargs = {}
        raw = archive.read("policy.pth")
    if not isinstance(kwargs, dict) or ":serialized:" in kwargs:
        if activation is None:
            raise CheckpointError(
                f"{path}: policy_kwargs are stored pickled, which this tool does not decode; "
                "say the actor's activation with --activation"
            )
    elif "activation_fn" in kwargs and activation is None:
        raise CheckpointError(f"{path}: a custom activation_fn was used; say which with --activation")
    try:
        state = torch.load(io.BytesIO(raw), map_location="cpu", weights_only=True)
    except Exception as exc:  # torch refuses anything but tensors and plain containers
        raise CheckpointError(f"{path}: policy.pth is not a plain tensor file: {type(exc).__name__}: {exc}") from exc
    if not isinstance(state, dict):
        raise CheckpointError(f"{path}: policy.pth holds a {type(state).__name__}, not a state dict")
    return state, activation or "tanh"  # SB3's default MlpPolicy activation is Tanh


def convert(zip_path: pathlib.Path, out: pathlib.Path, game: str, config: dict[str, Any],
            activation: str | None = None, meta: dict[str, Any] | None = None):
    """Write ``out/policy.json`` + ``out/policy.safetensors`` from ``zip_path``; returns the module."""
    state, act = read_sb3_zip(zip_path, activation)
    module, arch_kwargs = mlp_actor_from_state(state, act)
    env = envs.make(game, raw=True, **config)
    agent0 = env.possible_agents[0]
    shape = tuple(env.observation_space(agent0)["observation"].shape)
    n = int(env.action_space(agent0).n)
    if int(np.prod(shape)) != arch_kwargs["obs_dim"] or arch_kwargs["num_actions"] != n:
        raise CheckpointError(
            f"{zip_path}: the network takes {arch_kwargs['obs_dim']} inputs and gives {arch_kwargs['num_actions']} "
            f"actions, but {game} with config {config} has observations {shape} and {n} actions"
        )
    save_policy(out, module, arch="mlp", arch_kwargs=arch_kwargs, game=game,
                config=envs.make_game(game, **config).config, observation_shape=shape, num_actions=n,
                meta={"converted_from": "Stable-Baselines3 MaskablePPO MlpPolicy (actor only)", **(meta or {})})
    return module


def agreement(zip_path: pathlib.Path, out: pathlib.Path, game: str, config: dict[str, Any],
              observations: int, seed: int = 0, opponents: tuple[str, ...] = ("random-v0",)) -> dict[str, Any]:
    """Decisions of the converted policy vs the original SB3 model on observations from played games.

    UNPICKLES ``zip_path`` (``MaskablePPO.load``): only for zips you made yourself. The original model
    (deterministic) plays one seat, rotated game by game, against ``opponents``; at every decision of
    every seat both policies choose for that observation (deterministic, masked) and are compared.
    """
    import torch
    from sb3_contrib import MaskablePPO

    import agents
    from agents.base import Agent
    from agents.checkpoint import PolicyAgent

    torch.set_num_threads(1)
    model = MaskablePPO.load(str(zip_path), device="cpu")
    converted = PolicyAgent(game, path=out, config=config)
    tally = {"observations": 0, "same_action": 0, "disagreements": []}

    class Compare(Agent):
        """Plays ``inner`` (or the SB3 model when None) and compares both policies on every observation."""

        def __init__(self, inner: Agent | None) -> None:
            super().__init__(game)
            self.inner = inner

        def reset(self, seat, game) -> None:
            super().reset(seat, game)
            if self.inner is not None:
                self.inner.reset(seat, game)

        def act(self, obs, view) -> int:
            mask = obs["action_mask"].astype(bool)
            theirs = int(model.predict(obs["observation"], action_masks=mask, deterministic=True)[0])
            ours = converted.act(obs, view)
            tally["observations"] += 1
            tally["same_action"] += int(theirs == ours)
            if theirs != ours and len(tally["disagreements"]) < 10:
                tally["disagreements"].append({"sb3": theirs, "converted": ours})
            return theirs if self.inner is None else self.inner.act(obs, view)

    num_seats = len(envs.make(game, raw=True, **config).possible_agents)
    games = 0
    while tally["observations"] < observations:
        sb3_seat = games % num_seats
        seats = [Compare(None if i == sb3_seat else
                         agents.make(qualify(game, opponents[(games + i) % len(opponents)]), seed=seed + 1000 * games + i))
                 for i in range(num_seats)]
        agents.play_game(game, seats, seed=seed + games, config=config)
        games += 1
    return {**tally, "games": games, "agreement": tally["same_action"] / tally["observations"],
            "opponents": list(opponents)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m training.sb3.convert", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("zip", type=pathlib.Path, help="the MaskablePPO model.zip to convert (one you made yourself)")
    parser.add_argument("out", type=pathlib.Path,
                        help="folder to write policy.json + policy.safetensors into (must not hold a policy yet)")
    parser.add_argument("--game", required=True, choices=list(envs.NAMES), help="the game the model was trained for")
    parser.add_argument("--config", default="{}", help="the game config it was trained with, as JSON (default: {})")
    parser.add_argument("--activation", choices=sorted(ACTIVATIONS.values()), default=None,
                        help="the actor's activation, needed only when the zip's policy_kwargs are pickled "
                             "(default: read from the zip; SB3's default is tanh)")
    parser.add_argument("--verify", type=int, default=0, metavar="N",
                        help="compare with the original on N observations from played games; UNPICKLES the zip "
                             "(runs code stored in it): only for zips you made yourself (default: 0, off)")
    parser.add_argument("--opponents", nargs="+", default=["random-v0"],
                        help="opponent kinds for the --verify games (default: random-v0)")
    args = parser.parse_args(argv)
    try:
        config = json.loads(args.config)
    except ValueError:
        config = None
    if not isinstance(config, dict):
        parser.error(f"--config must be a JSON object, got {args.config!r}")
    if (args.out / "policy.json").exists():
        parser.error(f"{args.out} already holds a policy; choose a new folder")
    convert(args.zip, args.out, args.game, config, args.activation)
    print(f"wrote {args.out / 'policy.json'} and {args.out / 'policy.safetensors'}")
    if args.verify:
        print("WARNING: --verify loads the zip with MaskablePPO.load, which unpickles it and can run code "
              "stored in the file. Use it only on zips you made yourself.", file=sys.stderr)
        result = agreement(args.zip, args.out, args.game, config, args.verify, opponents=tuple(args.opponents))
        print(json.dumps(result, indent=2))
        return 0 if result["same_action"] == result["observations"] else 1
    return 0


if __name__ == "__main__":
    from agents.errors import run_command

    sys.exit(run_command(main, "python -m training.sb3.convert"))
