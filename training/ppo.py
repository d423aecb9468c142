"""Masked PPO for every game, many tables stepped in one process, with kickstarting and a league.

    python -m training.ppo --game sequence_v0 --name kick --total-steps 3000000
    python -m training.ppo --resume runs/ppo/sequence_v0-kick          # continue the same run
    python -m training.ppo --evaluate runs/ppo/sequence_v0-kick --eval-games 400
    python -m training.ppo --game pans_trial_v0 --name tune --init-policy pans_trial_v0/ppo-v3 \
        --conv-channels 32 --hidden 256                               # a new run from a shipped policy

Reads top to bottom (CleanRL's shape): the ``Args`` dataclass documents every option, seeding
happens in one place (``main``), the loop collects a rollout then updates.

* **Tables.** ``num_envs`` games are stepped directly on the engines (not through the AEC env). The
  learner's team — one seat, or every seat of one team (Sequence with teams) — is drawn per game so
  every seat is learnt. All tables waiting for a learner decision get one batched forward; every
  other seat is played inside the step until the learner is to act again (conventions, point 11):
  heuristic and random opponents one decision at a time, frozen snapshots of the learner batched per
  snapshot. The learner receives only its own team's final return.
* **Kickstarting.** The first ``bc_steps`` learner decisions are played by the teacher
  (``--teacher``, a heuristic) and the network learns them by cross-entropy (behaviour cloning) while
  its value head learns the teacher's returns; the decisions go to a replay buffer (``bc_buffer``)
  and each rollout is followed by ``bc_batches`` minibatches drawn from it. With ``bc_learner_share``
  above 0 (DAgger) that share of the decisions is played by the network itself while the teacher
  still labels every one, so the network also learns the answer in positions its own play leads to.
  PPO then starts from that network, with a
  cross-entropy term toward the teacher's choice at each learner decision, weighted ``kl_coef`` and
  decaying linearly to zero over ``kl_decay_steps``.
* **League.** Each game draws its opponent kind from ``--opponents`` (agent kinds such as
  ``heuristic-v1``, ``random-v0``, or ``self`` for a frozen past snapshot of the learner; a snapshot
  is taken every ``snapshot_every`` steps and the newest ``snapshot_max`` are kept).
* **Runs outlive a sitting.** Everything goes to the run folder (default ``runs/ppo/<game>-<name>``):
  ``checkpoint/`` (network, optimizer, snapshots, RNG states and counters as safetensors + JSON —
  no pickle), ``tb/`` TensorBoard logs, ``curve.csv`` and ``curve.png``, and ``policy/``, the
  current policy in the safe policy format (:func:`agents.policy_io.save_policy`), loadable by
  ``agents.policy_io.load_policy``. ``--resume RUN_DIR`` continues from the last checkpoint
  (games in progress are not saved: the resumed run deals new games; the cloning buffer is, as
  ``bc_buffer.safetensors``, while cloning is still to run); it may
  change the settings in :data:`RESUME_CHANGEABLE` (budget, evaluation, league, update and learning rates,
  teacher workers), nothing else.
* **Starting from a saved policy.** ``--init-policy`` starts a new run (its own folder, step 0, a
  fresh optimizer) from the weights of a shipped checkpoint id, a policy folder or another run's
  policy, loaded through the same validating loader as any checkpoint. Its game, config and network
  must be this run's; a mismatch is refused with the flags its run used. The origin (and its own
  steps and CPU seconds) is kept in the run's state and in every policy it writes, so a report can
  add up the compute.
* **Evaluation.** Every ``eval_every`` steps the greedy policy (most likely legal action) plays
  ``eval_games`` seeded games against each of ``eval_opponents``, seats rotated; a win is first
  place for the learner's team (ties shared first place count, as in ``training.evaluate``).
"""

from __future__ import annotations

import argparse
import copy
import csv
import dataclasses
import json
import math
import pathlib
import random
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

import agents
import envs
from agents.nets import default_arch
from agents.runner import seat_inputs
from agents.checkpoint import checkpoint_dir, policy_folder
from agents.architectures import build_architecture
from agents.policy_io import CheckpointError, load_policy, read_policy_spec, save_policy
from agents.scoring import score_teams
from training.cli import dataclass_parser
from training.matches import side_summary
from training.reporting import side_rates
from agents.stats import wilson_interval
from training.teachers import TeacherLabels

NEG = -1e9
"""Logit given to illegal actions (``logits.masked_fill(~mask, NEG)``)."""


@dataclass
class Args:
    game: str = "sequence_v0"
    """game module name (one of envs.NAMES)"""
    config: str = "{}"
    """game config as JSON, e.g. '{"players_per_team": 2}'"""
    name: str = "run"
    """run name; the run folder is runs/ppo/<game>-<name> unless --run-dir is given"""
    run_dir: str = ""
    """run folder (checkpoints, logs, curve, policy); never put it under checkpoints/"""
    resume: str = ""
    """continue this run folder from its last checkpoint (only budget, eval, league, update settings may change)"""
    init_policy: str = ""
    """start a new run from a saved policy's weights: a checkpoint id (e.g. pans_trial_v0/ppo-v3), a policy
    folder or a run folder; its game, config and network must be this run's (a mismatch names the flags)"""
    evaluate: str = ""
    """only evaluate the policy of this run folder (or a policy folder, or a checkpoint id) against --eval-opponents and exit"""
    seed: int = 1
    """seed of everything: torch, numpy, Python's random, deals, opponents"""
    total_steps: int = 2_000_000
    """learner decisions to train on (behaviour cloning steps included)"""
    num_envs: int = 64
    """games stepped together (the learner's batch per forward)"""
    num_steps: int = 32
    """learner decisions per table per rollout (rollout size = num_envs * num_steps)"""
    learning_rate: float = 3e-4
    """Adam learning rate"""
    gamma: float = 0.995
    """discount factor"""
    gae_lambda: float = 0.95
    """GAE lambda"""
    update_epochs: int = 3
    """passes over each rollout"""
    minibatch_size: int = 1024
    """learner decisions per gradient step"""
    clip_coef: float = 0.2
    """PPO clipping of the probability ratio"""
    ent_coef: float = 0.01
    """entropy bonus weight"""
    temperature: float = 1.0
    """PPO samples and trains softmax(logits / T); below 1 it plays closer to greedy (teacher term, evaluation: untempered)"""
    vf_coef: float = 0.5
    """value loss weight"""
    max_grad_norm: float = 0.5
    """gradient norm clip"""
    net: str = "auto"
    """network: auto (board_conv where the game declares a board_layout, else mlp_ac), board_conv, mlp_ac or
    table_entity (a shared encoder over the rows of the game's table_layout)"""
    conv_channels: int = 16
    """board_conv: channels of each convolution"""
    conv_layers: int = 2
    """board_conv: number of convolutions"""
    first_kernel: int = 3
    """board_conv: kernel size of the first convolution (3, 5 or 7; the others are 3x3)"""
    hidden: int = 128
    """width of the hidden layers (board_conv trunk; mlp_ac uses two layers of this width; table_entity trunk,
    its row encoder a quarter as wide)"""
    opponents: list[str] = field(default_factory=lambda: ["heuristic-v1", "self", "random-v0"])
    """league: opponent kinds drawn per game (agent kinds of the game, or 'self' for a past snapshot)"""
    opponent_weights: list[float] = field(default_factory=list)
    """relative probability of each --opponents entry (default: equal)"""
    snapshot_every: int = 100_000
    """add a frozen copy of the learner to the 'self' pool every N steps"""
    snapshot_max: int = 8
    """keep the newest N snapshots"""
    teacher: str = "heuristic-v1"
    """teacher agent kind for behaviour cloning and the kickstarting term ('' for none)"""
    bc_steps: int = 0
    """learner decisions played by the teacher and cloned before PPO starts (0: no cloning)"""
    bc_buffer: int = 65536
    """cloning keeps the newest N teacher decisions (a replay buffer, checkpointed while cloning runs) to draw minibatches from"""
    bc_learner_share: float = 0.0
    """while cloning, the share of decisions the network plays itself, each still labelled by the teacher (DAgger)"""
    teacher_workers: int = 0
    """extra processes computing the teacher's labels (0: none); each labels fixed tables, so labels do not depend on it"""
    bc_batches: int = 32
    """gradient steps on the cloning buffer after each cloning rollout"""
    bc_minibatch_size: int = 256
    """teacher decisions per cloning gradient step"""
    bc_learning_rate: float = 1e-3
    """Adam learning rate while cloning"""
    kl_coef: float = 0.0
    """initial weight of the cross-entropy toward the teacher's choice during PPO (0: off)"""
    kl_decay_steps: int = 1_000_000
    """PPO steps over which kl_coef decays linearly to zero"""
    eval_every: int = 100_000
    """evaluate the greedy policy every N steps (0: only at the end)"""
    eval_games: int = 100
    """seeded games per evaluation opponent (seats rotated)"""
    eval_opponents: list[str] = field(default_factory=lambda: ["heuristic-v1", "random-v0"])
    """opponent kinds the policy is evaluated against"""
    eval_seed: int = 10**6
    """first deal seed of the evaluation games (the same games every evaluation)"""
    checkpoint_every: int = 50_000
    """write a resumable checkpoint every N steps"""
    max_actions: int = 0
    """cut a game after this many actions (0: the game's default cycle cap x players); a cut game gives 0"""
    progress: bool = True
    """show a progress bar"""


#: The arguments that shape the network (an --init-policy must have been trained with the same).
NET_ARGS = ("net", "conv_channels", "conv_layers", "first_kernel", "hidden")

#: Arguments a resumed run may change (everything else — game, network, seeds, teacher — is fixed).
#: The cloning schedule may change: ``--bc-steps`` below the run's step ends cloning there and PPO
#: starts, with the teacher term (``--kl-coef``) decaying from that step.
RESUME_CHANGEABLE = frozenset(
    {
        "total_steps",
        "bc_steps",
        "bc_learner_share",
        "teacher_workers",
        "kl_coef",
        "kl_decay_steps",
        "progress",
        "eval_every",
        "eval_games",
        "eval_opponents",
        "checkpoint_every",
        "learning_rate",
        "bc_learning_rate",
        "ent_coef",
        "temperature",
        "update_epochs",
        "minibatch_size",
        "opponents",
        "opponent_weights",
        "snapshot_every",
        "snapshot_max",
    }
)


# -------------------------------------------------------------------------------------------------
# Arguments
def build_parser() -> argparse.ArgumentParser:
    return dataclass_parser(Args, prog="python -m training.ppo", description=__doc__.split("\n\n")[0], list_nargs="*")


def parse_args(argv: list[str] | None = None) -> Args:
    parser = build_parser()
    ns = parser.parse_args(argv)
    given = {
        a.dest
        for a in parser._actions
        if any(o in (argv if argv is not None else sys.argv[1:]) for o in a.option_strings)
    }
    args = Args(**vars(ns))
    if args.resume:
        saved = _read_json(recover_checkpoint(pathlib.Path(args.resume)) / "state.json")["args"]
        changeable = RESUME_CHANGEABLE | {"resume"}
        changed = sorted(k for k in given if k not in changeable)
        if changed:
            parser.error(f"--resume uses the run's saved args; these cannot be changed: {changed}")
        keep = {k: getattr(args, k) for k in changeable if k in given or k == "resume"}
        args = Args(**{**saved, **keep})
        args.run_dir = str(pathlib.Path(args.resume))
    elif args.evaluate:
        # The policy says which game and config it plays: its evaluation opponents are checked against those.
        try:
            spec = read_policy_spec(policy_folder(args.evaluate))
        except CheckpointError as exc:
            parser.error(f"--evaluate: {exc}")
        if "game" in given and args.game != spec["game"]:
            parser.error(f"--evaluate: {args.evaluate} holds a policy for {spec['game']!r}, not --game {args.game!r}")
        args.game, args.config = spec["game"], json.dumps(spec["config"])
    check_args(args, parser.error)
    return args


def check_args(args: Args, fail: Callable[[str], Any]) -> None:
    """Refuse anything wrong with a message that says what is allowed."""
    if args.game not in envs.NAMES:
        fail(f"--game {args.game!r} is not a game; choose from {list(envs.NAMES)}")
    try:
        config = json.loads(args.config)
    except json.JSONDecodeError:
        config = None
    if not isinstance(config, dict):
        fail(f"--config must be a JSON object, got {args.config!r}")
    envs.make_game(args.game, **config)  # raises ConfigError naming the allowed values
    known = set(agents.available(args.game))
    for kind in [*args.opponents, *args.eval_opponents, *([args.teacher] if args.teacher else [])]:
        if kind != "self" and f"{args.game}/{kind}" not in known:
            fail(
                f"unknown agent kind {kind!r} for {args.game}; available: {sorted(k.split('/')[1] for k in known)} or 'self'"
            )
    if "self" in args.eval_opponents or args.teacher == "self":
        fail("'self' is a training opponent only; --eval-opponents and --teacher need fixed agents")
    if not args.opponents:
        fail("--opponents needs at least one kind")
    if args.opponent_weights and (
        len(args.opponent_weights) != len(args.opponents)
        or min(args.opponent_weights) < 0
        or sum(args.opponent_weights) <= 0
    ):
        fail("--opponent-weights needs one non-negative weight per --opponents entry, not all zero")
    if not 0.0 <= args.bc_learner_share <= 1.0:
        fail(f"--bc-learner-share is a share of decisions in [0, 1], got {args.bc_learner_share}")
    if not 0.05 <= args.temperature <= 20.0:
        fail(f"--temperature divides the logits and must lie in [0.05, 20], got {args.temperature}")
    if args.teacher_workers < 0:
        fail(f"--teacher-workers is a number of extra processes (0 or more), got {args.teacher_workers}")
    if (args.bc_steps or args.kl_coef) and not args.teacher:
        fail("--bc-steps and --kl-coef need a --teacher")
    for name in ("num_envs", "num_steps", "update_epochs", "minibatch_size", "total_steps"):
        if getattr(args, name) <= 0:
            fail(f"--{name.replace('_', '-')} must be positive, got {getattr(args, name)}")
    if args.net not in ("auto", "board_conv", "mlp_ac", "table_entity"):
        fail(f"--net must be auto, board_conv, mlp_ac or table_entity, got {args.net!r}")
    if args.init_policy and not args.resume:
        try:
            load_init_policy(args)
        except (CheckpointError, ValueError) as exc:
            fail(f"--init-policy: {exc}")


def _arch_of(args: Args, game: Any) -> tuple[str, dict[str, Any]]:
    return default_arch(game, args.net, conv_channels=args.conv_channels, conv_layers=args.conv_layers,
                        hidden=args.hidden, first_kernel=args.first_kernel)


def load_init_policy(args: Args) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    """The weights of ``args.init_policy`` and where they came from, or a ``CheckpointError`` saying why
    they cannot start this run (another game, config or network; the flags of its network are named)."""
    folder = policy_folder(args.init_policy)
    game = envs.make_game(args.game, **json.loads(args.config))
    module, spec = load_policy(folder, game=args.game)
    theirs = envs.make_game(spec["game"], **spec["config"]).config
    if theirs != game.config:
        raise CheckpointError(f"{folder} was trained at config {theirs}, this run plays {game.config}; pass --config "
                              f"{json.dumps(spec['config'])!r}")
    arch, arch_kwargs = _arch_of(args, game)
    if (arch, arch_kwargs) != (spec["arch"], spec["arch_kwargs"]):
        saved = spec["meta"].get("args") if isinstance(spec["meta"].get("args"), dict) else {}
        flags = " ".join(f"--{k.replace('_', '-')} {saved[k]}" for k in NET_ARGS if k in saved)
        theirs_kw, ours_kw = spec["arch_kwargs"], arch_kwargs
        if spec["arch"] != arch:
            differ = f"it is {spec['arch']}, these flags build {arch}"
        else:
            keys = sorted(k for k in set(theirs_kw) | set(ours_kw) if theirs_kw.get(k) != ours_kw.get(k))
            differ = ", ".join(f"{k} {theirs_kw.get(k)} (these flags: {ours_kw.get(k)})" for k in keys)
        raise CheckpointError(
            f"{folder} holds another {spec['arch']} network than this run's: {differ}; "
            + (f"its run used {flags}" if flags else "choose --net and its size flags to match")
        )
    meta = spec["meta"]
    origin = {"policy": str(folder), "steps": meta.get("steps"), "cpu_seconds": meta.get("cpu_seconds")}
    return module.state_dict(), origin


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


def _read_json(path: pathlib.Path) -> dict[str, Any]:
    if not path.is_file():
        raise SystemExit(f"{path} does not exist: is this a run folder with a checkpoint?")
    return json.loads(path.read_text())


# -------------------------------------------------------------------------------------------------
# Policies: masked log-probabilities and agents
def masked_log_probs(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Log-probabilities over the legal actions (``mask`` True); illegal ones get about -1e9."""
    return torch.log_softmax(logits.masked_fill(~mask, NEG), dim=-1)


def sample(logp: torch.Tensor, greedy: bool = False) -> torch.Tensor:
    """One action per row: the argmax, or a draw (Gumbel-max) from ``exp(logp)``."""
    if greedy:
        return logp.argmax(dim=-1)
    u = torch.rand_like(logp).clamp_(1e-20, 1.0)
    return (logp - torch.log(-torch.log(u))).argmax(dim=-1)


# -------------------------------------------------------------------------------------------------
# Tables: many games stepped together
class Tables:
    """``n`` games in which one team is the learner and every other seat an opponent.

    ``deal(g) -> (seed, kind, opponent, team)`` sets up the ``g``-th game dealt (counting from
    ``first_game``): its deal seed, the opponent kind's name, the opponent (a factory
    ``seed -> Agent`` or ``("snapshot", index)``) and the learner's team. :meth:`advance` plays every
    non-learner seat until each table awaits a learner decision. A finished game is recorded in
    ``self.finished`` as ``(kind, learner return, won, truncated, length, learner's team side)`` and replaced by a new
    one, until ``max_games`` have been dealt (then the table goes idle).
    """

    def __init__(
        self,
        game: Any,
        n: int,
        deal: Callable[[int], tuple[int, str, Any, int]],
        max_actions: int,
        first_game: int = 0,
        max_games: int | None = None,
    ) -> None:
        self.game = game
        self.n = n
        self.deal = deal
        self.max_actions = max_actions
        self.dealt = first_game
        self.max_games = max_games
        self.num_players = game.num_players
        self.states: list[Any] = [None] * n
        self.learner: list[frozenset[int]] = [frozenset()] * n
        self.team: list[int] = [0] * n
        self.kind: list[str] = [""] * n
        self.opp: list[Any] = [None] * n  # dict seat -> Agent, or ("snapshot", index)
        self.length = [0] * n
        self.active = [True] * n
        self.finished: list[tuple[str, float, bool, bool, int, int]] = []
        self.agent_cache: dict[tuple[int, str, int], agents.Agent] = {}
        #: CPU seconds spent in agent opponents' decisions (views included) and snapshot forwards.
        self.opponent_seconds = 0.0
        self.snapshot_seconds = 0.0
        for i in range(n):
            self._new_game(i)

    def _new_game(self, i: int) -> None:
        if self.max_games is not None and self.dealt >= self.max_games:
            self.active[i] = False
            return
        seed, kind, opponent, team = self.deal(self.dealt)
        self.dealt += 1
        self.states[i] = self.game.new_initial_state(seed)
        self.team[i] = team
        self.learner[i] = frozenset(s for s in range(self.num_players) if self.game.team_of(s) == team)
        self.kind[i] = kind
        self.length[i] = 0
        if callable(opponent):  # an agent factory: one agent per opponent seat, reused between games
            seats = {}
            for s in range(self.num_players):
                if s in self.learner[i]:
                    continue
                key = (i, kind, s)
                agent = self.agent_cache.get(key)
                if agent is None:
                    agent = self.agent_cache[key] = opponent(seed * 31 + s)
                else:
                    agent.rng.seed(seed * 31 + s)
                agent.reset(s, self.game)
                seats[s] = agent
            self.opp[i] = seats
        else:
            self.opp[i] = opponent

    def learner_seat(self, i: int) -> int:
        return self.states[i].current_player()

    def _finish(self, i: int) -> tuple[float, bool]:
        """Record game ``i``; returns (learner reward, done)."""
        state = self.states[i]
        truncated = not state.is_terminal()
        returns = state.truncation_returns() if truncated else state.returns()
        winners, _ = score_teams(self.game.team_returns(returns), decided=not truncated)
        reward = float(returns[min(self.learner[i])])
        self.finished.append((self.kind[i], reward, self.team[i] in winners, truncated, self.length[i], self.team[i]))
        self._new_game(i)
        return reward, True

    def _over(self, i: int) -> bool:
        return self.states[i].is_terminal() or self.length[i] >= self.max_actions

    def apply(self, i: int, action: int) -> None:
        self.states[i].apply_action(int(action))
        self.length[i] += 1

    def advance(self, snapshot_act: Callable[[int, list[int]], list[int]]) -> list[tuple[float, bool]]:
        """Play opponents everywhere; per table, the (reward, done) of the learner's last decision."""
        outcome = [(0.0, False)] * self.n
        pending = [i for i in range(self.n) if self.active[i]]
        while pending:
            waiting_snap: dict[int, list[int]] = {}
            still = []
            for i in pending:
                state = self.states[i]
                if self._over(i):
                    reward, done = self._finish(i)
                    if outcome[i][1] is False:
                        outcome[i] = (reward, done)
                    if self.active[i]:
                        still.append(i)
                    continue
                seat = state.current_player()
                if seat in self.learner[i]:
                    continue
                opp = self.opp[i]
                if isinstance(opp, dict):
                    t0 = time.process_time()
                    obs, view = seat_inputs(state, seat)
                    action = opp[seat].act(obs, view)
                    self.opponent_seconds += time.process_time() - t0
                    self.apply(i, action)
                    still.append(i)
                else:
                    waiting_snap.setdefault(opp[1], []).append(i)
            for index, tables in waiting_snap.items():
                t0 = time.process_time()
                actions = snapshot_act(index, tables)
                self.snapshot_seconds += time.process_time() - t0
                for i, a in zip(tables, actions):
                    self.apply(i, a)
                still.extend(tables)
            pending = still
        return outcome

    def observe(self, rows: list[int]) -> tuple[np.ndarray, np.ndarray]:
        obs = np.stack([self.game.observe(self.states[i], self.states[i].current_player()) for i in rows])
        mask = np.stack([self.states[i].legal_mask() for i in rows]).astype(bool)
        return obs, mask


# -------------------------------------------------------------------------------------------------
# Run folder: checkpoints without pickle
def flatten_optimizer(opt: torch.optim.Optimizer) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    sd = opt.state_dict()
    tensors, scalars = {}, {}
    for idx, st in sd["state"].items():
        for key, value in st.items():
            if torch.is_tensor(value):
                tensors[f"state.{idx}.{key}"] = value.detach().clone().contiguous()
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


# -------------------------------------------------------------------------------------------------
class Trainer:
    """The whole training loop; ``run()`` trains until ``args.total_steps``."""

    def __init__(self, args: Args) -> None:
        from safetensors.torch import load_file

        self.args = args
        self.config = json.loads(args.config)
        self.game = envs.make_game(args.game, **self.config)
        self.run_dir = pathlib.Path(args.run_dir or f"runs/ppo/{args.game}-{args.name}")
        self.obs_shape = tuple(self.game.observation_shape)
        self.num_actions = self.game.num_actions
        self.arch, self.arch_kwargs = _arch_of(args, self.game)
        self.max_actions = args.max_actions or self.game.default_max_cycles * self.game.num_players

        # -- seeding, in one place
        torch.set_num_threads(1)
        random.seed(args.seed)
        np.random.seed(args.seed)
        torch.manual_seed(args.seed)
        self.rng = random.Random(args.seed)

        self.net = build_architecture(self.arch, **self.arch_kwargs)
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=args.learning_rate, eps=1e-5)
        self.snapshots: list[torch.nn.Module] = []
        self.snapshot_steps: list[int] = []
        self.step = 0
        self.updates = 0
        self.games_dealt = 0
        self.started_wall = 0.0
        self.cpu_seconds = 0.0
        self.curve: list[dict[str, Any]] = []
        #: where the starting weights came from (--init-policy): the policy and its own steps and CPU seconds
        self.init_origin: dict[str, Any] | None = None
        #: settings changed on each resume: [{"step": N, "changed": {name: [before, after]}}]
        self.resumes: list[dict[str, Any]] = []
        #: CPU seconds of this run by part (env = engines, observations, masks, resets).
        self.cpu_breakdown = dict.fromkeys(
            ("env", "learner_forward", "teacher", "opponents", "snapshots", "update", "total", "steps"), 0.0
        )
        self.next_eval = args.eval_every
        self.next_checkpoint = args.checkpoint_every
        self.next_snapshot = args.snapshot_every

        #: the cloning replay buffer (made at the first cloning update, or restored on resume)
        self.bc: dict[str, Any] | None = None
        ckpt = self.run_dir / "checkpoint"
        if args.resume:
            recover_checkpoint(self.run_dir)
            state = _read_json(ckpt / "state.json")
            self.net.load_state_dict(load_file(str(ckpt / "model.safetensors")))
            opt_t = load_file(str(ckpt / "optimizer.safetensors")) if (ckpt / "optimizer.safetensors").exists() else {}
            self.optimizer.load_state_dict(unflatten_optimizer(opt_t, state["optimizer"]))
            for k in range(state["snapshots"]):
                snap = build_architecture(self.arch, **self.arch_kwargs)
                snap.load_state_dict(load_file(str(ckpt / f"snapshot_{k}.safetensors")))
                self.snapshots.append(snap.eval())
            self.snapshot_steps = state["snapshot_steps"]
            for key in (
                "step",
                "updates",
                "games_dealt",
                "cpu_seconds",
                "curve",
                "next_eval",
                "next_checkpoint",
                "next_snapshot",
            ):
                setattr(self, key, state[key])
            self.cpu_breakdown.update(state.get("cpu_breakdown", {}))
            self.init_origin = state.get("init_origin")
            # The run's history of resumes with changed settings (what args.json alone would lose).
            self.resumes = list(state.get("resumes", []))
            # A setting newer than the run's checkpoint was at its default there (as parse_args reads it).
            before, now = {**dataclasses.asdict(Args()), **state["args"]}, dataclasses.asdict(args)
            changed = {k: [before[k], now[k]] for k in sorted(RESUME_CHANGEABLE - {"progress"}) if before[k] != now[k]}
            if changed:
                self.resumes.append({"step": self.step, "changed": changed})
            self.rng.setstate(_rng_from_json(state["python_rng"]))
            random.setstate(_rng_from_json(state["python_global_rng"]))
            np.random.set_state(_rng_from_json(state["numpy_rng"]))
            torch.set_rng_state(load_file(str(ckpt / "rng.safetensors"))["torch"])
            if (ckpt / "bc_buffer.safetensors").exists() and self.cloning:
                self._load_bc_buffer(ckpt / "bc_buffer.safetensors")
            for every, nxt in (
                ("eval_every", "next_eval"),
                ("checkpoint_every", "next_checkpoint"),
                ("snapshot_every", "next_snapshot"),
            ):
                if getattr(args, every) != state["args"][every]:
                    setattr(self, nxt, self.step + getattr(args, every))
        else:
            if (ckpt / "state.json").exists():
                raise SystemExit(
                    f"{self.run_dir} already holds a run; continue it with --resume {self.run_dir} or choose another --name"
                )
            if args.init_policy:
                weights, self.init_origin = load_init_policy(args)
                self.net.load_state_dict(weights)
            self.snapshots.append(self._frozen())  # 'self' before the first snapshot: the starting network
            self.snapshot_steps.append(0)

        self.kinds = list(args.opponents)
        self.weights = list(args.opponent_weights) or [1.0] * len(self.kinds)
        self.teachers: TeacherLabels | None = None  # made when a rollout first needs the teacher
        self.tables = Tables(self.game, args.num_envs, self._deal, self.max_actions, first_game=self.games_dealt)
        self.tables.advance(self._snapshot_act)
        self.writer = None

    # -- opponents
    def _deal(self, g: int) -> tuple[int, str, Any, int]:
        """The ``g``-th training game: its seed, opponent kind, opponent and learner team."""
        kind = self.rng.choices(self.kinds, weights=self.weights)[0]
        team = self.rng.randrange(self.game.num_teams)
        seed = self.args.seed * 1_000_003 + g
        if kind == "self":
            # half the time the newest snapshot, otherwise any of the pool
            k = len(self.snapshots) - 1 if self.rng.random() < 0.5 else self.rng.randrange(len(self.snapshots))
            return seed, kind, ("snapshot", k), team
        agent_id = f"{self.args.game}/{kind}"
        return seed, kind, (lambda s: agents.make(agent_id, seed=s)), team

    def _frozen(self) -> torch.nn.Module:
        snap = copy.deepcopy(self.net)
        for p in snap.parameters():
            p.requires_grad_(False)
        return snap.eval()

    def _snapshot_act(self, index: int, rows: list[int]) -> list[int]:
        obs, mask = self.tables.observe(rows)
        with torch.no_grad():
            logp = self._policy_log_probs(self.snapshots[index](torch.from_numpy(obs)), torch.from_numpy(mask))
        return sample(logp).tolist()

    def _policy_log_probs(self, logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """The policy PPO samples and trains (learner and snapshots): the masked softmax at ``--temperature``."""
        return masked_log_probs(logits / self.args.temperature, mask)

    def _teacher_actions(self, tables: Tables, rows: list[int]) -> list[int]:
        if self.teachers is None:
            a = self.args
            self.teachers = TeacherLabels(a.game, self.config, a.teacher, a.seed, workers=a.teacher_workers)
        return self.teachers.actions(tables.states, rows)

    @property
    def cloning(self) -> bool:
        """Whether the run is still in its cloning stage (the first ``bc_steps`` learner decisions)."""
        return self.step < self.args.bc_steps

    def kl_weight(self) -> float:
        a = self.args
        if not a.kl_coef:
            return 0.0
        into = self.step - a.bc_steps
        return a.kl_coef * max(0.0, 1.0 - max(0, into) / max(1, a.kl_decay_steps))

    # -- one rollout
    def collect(self) -> dict[str, Any]:
        a, n, T = self.args, self.args.num_envs, self.args.num_steps
        cloning = self.cloning
        want_teacher = cloning or self.kl_weight() > 0
        obs_buf = torch.zeros((T, n, *self.obs_shape))
        mask_buf = torch.zeros((T, n, self.num_actions), dtype=torch.bool)
        act_buf = torch.zeros((T, n), dtype=torch.long)
        logp_buf = torch.zeros((T, n))
        val_buf = torch.zeros((T, n))
        rew_buf = torch.zeros((T, n))
        done_buf = torch.zeros((T, n))
        teach_buf = torch.full((T, n), -1, dtype=torch.long)
        rows = list(range(n))
        timing = {"env": 0.0, "learner": 0.0, "teacher": 0.0}
        opp0, snap0 = self.tables.opponent_seconds, self.tables.snapshot_seconds
        for t in range(T):
            t0 = time.process_time()
            obs, mask = self.tables.observe(rows)
            obs_t, mask_t = torch.from_numpy(obs), torch.from_numpy(mask)
            t1 = time.process_time()
            with torch.no_grad():
                logits, value = self.net.logits_and_value(obs_t)
                logp_all = self._policy_log_probs(logits, mask_t)
            t2 = time.process_time()
            if want_teacher:
                teacher = torch.tensor(self._teacher_actions(self.tables, rows))
                teach_buf[t] = teacher
            t3 = time.process_time()
            if not cloning:
                action = sample(logp_all)
            elif a.bc_learner_share > 0:  # DAgger: some decisions are the network's own, labelled by the teacher
                own = torch.rand(n) < a.bc_learner_share
                action = torch.where(own, logp_all.argmax(dim=-1), teacher)
            else:
                action = teacher
            obs_buf[t], mask_buf[t], act_buf[t], val_buf[t] = obs_t, mask_t, action, value
            logp_buf[t] = logp_all.gather(1, action[:, None]).squeeze(1)
            for i, act in enumerate(action.tolist()):
                self.tables.apply(i, act)
            outcome = self.tables.advance(self._snapshot_act)
            rew_buf[t] = torch.tensor([r for r, _ in outcome])
            done_buf[t] = torch.tensor([float(d) for _, d in outcome])
            t4 = time.process_time()
            timing["env"] += (t1 - t0) + (t4 - t3)
            timing["learner"] += t2 - t1
            timing["teacher"] += t3 - t2
        timing["teacher_workers"] = self.teachers.take_worker_seconds() if self.teachers else 0.0
        timing["opponents"] = self.tables.opponent_seconds - opp0
        timing["snapshots"] = self.tables.snapshot_seconds - snap0
        timing["env"] -= timing["opponents"] + timing["snapshots"]
        with torch.no_grad():
            obs, _ = self.tables.observe(rows)
            next_value = self.net.logits_and_value(torch.from_numpy(obs))[1]
        adv = torch.zeros((T, n))
        last = torch.zeros(n)
        for t in reversed(range(T)):
            nonterminal = 1.0 - done_buf[t]
            next_v = next_value if t == T - 1 else val_buf[t + 1]
            delta = rew_buf[t] + a.gamma * next_v * nonterminal - val_buf[t]
            last = delta + a.gamma * a.gae_lambda * nonterminal * last
            adv[t] = last
        return {
            "obs": obs_buf.reshape(T * n, *self.obs_shape),
            "mask": mask_buf.reshape(T * n, -1),
            "action": act_buf.reshape(-1),
            "logp": logp_buf.reshape(-1),
            "adv": adv.reshape(-1),
            "ret": (adv + val_buf).reshape(-1),
            "value": val_buf.reshape(-1),
            "teacher": teach_buf.reshape(-1),
            "cloning": cloning,
            "timing": timing,
        }

    # -- the cloning buffer
    def _bc_capacity(self) -> int:
        """The newest ``bc_buffer`` decisions (no more than cloning will see), and at least one rollout."""
        a = self.args
        return max(a.num_envs * a.num_steps, min(a.bc_buffer, a.bc_steps))

    def _empty_bc_buffer(self, cap: int) -> dict[str, Any]:
        return {
            "obs": torch.zeros((cap, *self.obs_shape), dtype=torch.float16),
            "mask": torch.zeros((cap, self.num_actions), dtype=torch.bool),
            "teacher": torch.zeros(cap, dtype=torch.long),
            "ret": torch.zeros(cap),
            "size": 0,
            "next": 0,
        }

    def _bc_add(self, obs: torch.Tensor, mask: torch.Tensor, teacher: torch.Tensor, ret: torch.Tensor) -> None:
        """Append decisions to the ring buffer (the oldest are overwritten once it is full)."""
        bc = self.bc
        assert bc is not None
        cap, n = bc["teacher"].shape[0], teacher.shape[0]
        if n > cap:  # only the newest fit
            obs, mask, teacher, ret = obs[-cap:], mask[-cap:], teacher[-cap:], ret[-cap:]
            n = cap
        idx = (bc["next"] + torch.arange(n)) % cap
        bc["obs"][idx], bc["mask"][idx], bc["teacher"][idx], bc["ret"][idx] = obs, mask, teacher, ret
        bc["next"] = int((bc["next"] + n) % cap)
        bc["size"] = min(cap, bc["size"] + n)

    def _bc_in_order(self) -> dict[str, torch.Tensor]:
        """The buffer's decisions, oldest first."""
        bc = self.bc
        assert bc is not None
        cap, size = bc["teacher"].shape[0], bc["size"]
        idx = (bc["next"] - size + torch.arange(size)) % cap
        return {k: bc[k][idx].contiguous() for k in ("obs", "mask", "teacher", "ret")}

    def _load_bc_buffer(self, path: pathlib.Path) -> None:
        """Refill the cloning buffer from a checkpoint, checking every tensor's shape and type; the
        capacity follows the resumed run's settings (only the newest decisions are kept if smaller)."""
        from safetensors.torch import load_file

        t = load_file(str(path))
        expected = {
            "obs": (torch.float16, tuple(self.obs_shape)),
            "mask": (torch.bool, (self.num_actions,)),
            "teacher": (torch.long, ()),
            "ret": (torch.float32, ()),
        }
        if set(t) != set(expected):
            raise SystemExit(f"{path}: expected tensors {sorted(expected)}, found {sorted(t)}")
        size = t["teacher"].shape[0]
        for name, (dtype, tail) in expected.items():
            if t[name].dtype != dtype or tuple(t[name].shape) != (size, *tail):
                raise SystemExit(
                    f"{path}: tensor {name!r} is {t[name].dtype} {tuple(t[name].shape)}, "
                    f"expected {dtype} {(size, *tail)} for this run's game and network"
                )
        if not bool(((t["teacher"] >= 0) & (t["teacher"] < self.num_actions)).all()):
            raise SystemExit(f"{path}: teacher actions must lie in [0, {self.num_actions})")
        if not bool(t["mask"].gather(1, t["teacher"][:, None]).all()):
            raise SystemExit(f"{path}: a saved teacher action is not legal under its saved mask")
        self.bc = self._empty_bc_buffer(self._bc_capacity())
        self._bc_add(t["obs"], t["mask"], t["teacher"], t["ret"])

    # -- one update
    def clone_update(self, batch: dict[str, Any]) -> dict[str, float]:
        """Behaviour cloning: add the rollout's teacher decisions to the buffer, then fit minibatches
        drawn from it (cross-entropy on the teacher's choice plus the value of the teacher's play)."""
        a = self.args
        if self.bc is None:
            self.bc = self._empty_bc_buffer(self._bc_capacity())
        self._bc_add(batch["obs"].half(), batch["mask"], batch["teacher"], batch["ret"])
        bc = self.bc
        for group in self.optimizer.param_groups:
            group["lr"] = a.bc_learning_rate
        stats: dict[str, list[float]] = {"teacher_ce": [], "value_loss": [], "teacher_accuracy": [], "entropy": []}
        for _ in range(a.bc_batches):
            mb = torch.randint(0, bc["size"], (a.bc_minibatch_size,))
            logits, value = self.net.logits_and_value(bc["obs"][mb].float())
            logp_all = masked_log_probs(logits, bc["mask"][mb])
            teacher = bc["teacher"][mb]
            ce = -logp_all.gather(1, teacher[:, None]).mean()
            v_loss = 0.5 * ((value - bc["ret"][mb]) ** 2).mean()
            self.optimizer.zero_grad()
            (ce + a.vf_coef * v_loss).backward()
            torch.nn.utils.clip_grad_norm_(self.net.parameters(), a.max_grad_norm)
            self.optimizer.step()
            with torch.no_grad():
                stats["teacher_ce"].append(float(ce))
                stats["value_loss"].append(float(v_loss))
                stats["teacher_accuracy"].append(float((logp_all.argmax(-1) == teacher).float().mean()))
                stats["entropy"].append(float(-(logp_all.exp() * logp_all).sum(-1).mean()))
        self.updates += 1
        return {k: float(np.mean(v)) for k, v in stats.items()}

    def update(self, batch: dict[str, Any]) -> dict[str, float]:
        if batch["cloning"]:
            return self.clone_update(batch)
        a = self.args
        for group in self.optimizer.param_groups:
            group["lr"] = a.learning_rate
        size = batch["action"].shape[0]
        kl_w = self.kl_weight()
        stats: dict[str, list[float]] = {
            k: [] for k in ("policy_loss", "value_loss", "entropy", "teacher_ce", "approx_kl", "clipfrac")
        }
        for _ in range(a.update_epochs):
            order = torch.randperm(size)
            for start in range(0, size, a.minibatch_size):
                mb = order[start : start + a.minibatch_size]
                logits, value = self.net.logits_and_value(batch["obs"][mb])
                logp_all = self._policy_log_probs(logits, batch["mask"][mb])
                newlogp = logp_all.gather(1, batch["action"][mb][:, None]).squeeze(1)
                entropy = -(logp_all.exp() * logp_all).sum(-1).mean()
                v_loss = 0.5 * ((value - batch["ret"][mb]) ** 2).mean()
                teacher = batch["teacher"][mb]
                has_t = teacher >= 0
                # The teacher term holds the untempered policy near the teacher: on the tempered one it
                # would undo the temperature (a cross-entropy to a teacher the network cannot match
                # exactly flattens the distribution it is computed on).
                raw = logp_all if a.temperature == 1.0 else masked_log_probs(logits, batch["mask"][mb])
                ce = -raw[has_t].gather(1, teacher[has_t][:, None]).mean() if has_t.any() else logits.new_zeros(())
                ratio = (newlogp - batch["logp"][mb]).exp()
                adv = batch["adv"][mb]
                adv = (adv - adv.mean()) / (adv.std() + 1e-8)
                pg_loss = torch.max(-adv * ratio, -adv * ratio.clamp(1 - a.clip_coef, 1 + a.clip_coef)).mean()
                loss = pg_loss - a.ent_coef * entropy + a.vf_coef * v_loss + kl_w * ce
                with torch.no_grad():
                    approx_kl = float(((ratio - 1) - (newlogp - batch["logp"][mb])).mean())
                    clipfrac = float(((ratio - 1).abs() > a.clip_coef).float().mean())
                self.optimizer.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(self.net.parameters(), a.max_grad_norm)
                self.optimizer.step()
                for key, val in (
                    ("policy_loss", pg_loss),
                    ("value_loss", v_loss),
                    ("entropy", entropy),
                    ("teacher_ce", ce),
                ):
                    stats[key].append(float(val.detach()))
                stats["approx_kl"].append(approx_kl)
                stats["clipfrac"].append(clipfrac)
        self.updates += 1
        return {k: float(np.mean(v)) for k, v in stats.items() if v}

    # -- evaluation
    def evaluate(self, games: int, kinds: list[str], seed: int | None = None) -> dict[str, dict[str, Any]]:
        return evaluate_module(
            self.net,
            self.args.game,
            self.config,
            kinds,
            games,
            self.args.eval_seed if seed is None else seed,
            min(self.args.num_envs, games),
            self.max_actions,
        )

    # -- saving
    def save_checkpoint(self) -> None:
        from safetensors.torch import save_file

        ckpt = self.run_dir / "checkpoint"
        tmp = self.run_dir / "checkpoint.tmp"
        if tmp.exists():  # left by a save that was cut off: none of its files may outlive it
            _rmtree(tmp)
        tmp.mkdir(parents=True)
        save_file({k: v.contiguous() for k, v in self.net.state_dict().items()}, str(tmp / "model.safetensors"))
        opt_t, opt_meta = flatten_optimizer(self.optimizer)
        save_file(opt_t, str(tmp / "optimizer.safetensors"))
        for k, snap in enumerate(self.snapshots):
            save_file({n: v.contiguous() for n, v in snap.state_dict().items()}, str(tmp / f"snapshot_{k}.safetensors"))
        save_file({"torch": torch.get_rng_state()}, str(tmp / "rng.safetensors"))
        if self.bc is not None and self.cloning:
            save_file(self._bc_in_order(), str(tmp / "bc_buffer.safetensors"))
        state = {
            "format": "tabletop-rl/ppo-run",
            "args": dataclasses.asdict(self.args),
            "arch": self.arch,
            "arch_kwargs": self.arch_kwargs,
            "step": self.step,
            "updates": self.updates,
            "games_dealt": self.tables.dealt,
            "cpu_seconds": self.cpu_seconds,
            "curve": self.curve,
            "next_eval": self.next_eval,
            "next_checkpoint": self.next_checkpoint,
            "next_snapshot": self.next_snapshot,
            "snapshots": len(self.snapshots),
            "snapshot_steps": self.snapshot_steps,
            "optimizer": opt_meta,
            "cpu_breakdown": self.cpu_breakdown,
            "resumes": self.resumes,
            "init_origin": self.init_origin,
            "python_rng": _rng_to_json(self.rng.getstate()),
            "python_global_rng": _rng_to_json(random.getstate()),
            "numpy_rng": _rng_to_json(np.random.get_state()),
        }
        state["numpy_rng"] = [
            state["numpy_rng"][0],
            np.asarray(state["numpy_rng"][1]).tolist(),
            *state["numpy_rng"][2:],
        ]
        (tmp / "state.json").write_text(json.dumps(state, indent=1))
        old = self.run_dir / "checkpoint.old"
        if ckpt.exists():
            if old.exists():
                _rmtree(old)
            ckpt.rename(old)
        tmp.rename(ckpt)
        if old.exists():
            _rmtree(old)
        self.save_policy()

    def save_policy(self, folder: pathlib.Path | None = None) -> pathlib.Path:
        latest = self.curve[-1] if self.curve else {}
        return save_policy(
            folder or self.run_dir / "policy",
            self.net,
            arch=self.arch,
            arch_kwargs=self.arch_kwargs,
            game=self.args.game,
            config=self.game.config,
            observation_shape=self.obs_shape,
            num_actions=self.num_actions,
            meta={
                "trainer": "training.ppo",
                "steps": self.step,
                "cpu_seconds": round(self.cpu_seconds, 1),
                "args": dataclasses.asdict(self.args),
                **({"init_origin": self.init_origin} if self.init_origin else {}),
                "latest_eval": latest,
            },
        )

    # -- logging
    def log_eval(self, result: dict[str, dict[str, Any]], train: dict[str, float]) -> None:
        row = {"step": self.step, "cpu_seconds": round(self.cpu_seconds, 1), **train}
        for kind, r in result.items():
            row[f"win_rate_vs_{kind}"] = r["win_rate"]
            row[f"win_low_vs_{kind}"] = r["wilson"][0]
            row[f"win_high_vs_{kind}"] = r["wilson"][1]
            if self.writer:
                self.writer.add_scalar(f"eval/win_rate_vs_{kind}", r["win_rate"], self.step)
        self.curve.append(row)
        write_curve(self.curve, self.run_dir, f"{self.args.game} {self.run_dir.name}")

    def run(self) -> pathlib.Path:
        from torch.utils.tensorboard import SummaryWriter
        from tqdm import tqdm

        a = self.args
        self.run_dir.mkdir(parents=True, exist_ok=True)
        run_args = dict(dataclasses.asdict(a), resumes=self.resumes)  # the settings now, and what resumes changed
        (self.run_dir / "args.json").write_text(json.dumps(run_args, indent=2) + "\n")
        # On a resume, TensorBoard drops whatever the run logged past its checkpoint (steps a stopped
        # process took and the checkpoint never saw; a fork's parent beyond the fork), for every tag.
        self.writer = SummaryWriter(str(self.run_dir / "tb"), purge_step=self.step or None)
        bar = tqdm(
            total=a.total_steps,
            initial=self.step,
            unit="step",
            disable=not a.progress,
            dynamic_ncols=True,
            mininterval=5,
        )
        recent: list[tuple[str, float, bool, bool, int, int]] = []
        train: dict[str, float] = {}
        while self.step < a.total_steps:
            w0, c0 = time.perf_counter(), time.process_time()
            batch = self.collect()
            c1 = time.process_time()
            losses = self.update(batch)
            w1, c2 = time.perf_counter(), time.process_time()
            n = batch["action"].shape[0]
            self.step += n
            timing = batch["timing"]
            # CPU time of this process plus the teacher workers' (so steps per CPU-second stays per core)
            cpu = c2 - c0 + timing["teacher_workers"]
            teacher = timing["teacher"] + timing["teacher_workers"]
            self.cpu_seconds += cpu
            recent = (recent + self.tables.finished)[-2000:]
            self.tables.finished = []
            for key, val in (
                ("env", timing["env"]),
                ("learner_forward", timing["learner"]),
                ("teacher", teacher),
                ("opponents", timing["opponents"]),
                ("snapshots", timing["snapshots"]),
                ("update", c2 - c1),
                ("total", cpu),
                ("steps", n),
            ):
                self.cpu_breakdown[key] += val
            train = {
                "steps_per_cpu_s": n / max(1e-9, cpu),
                "steps_per_wall_s": n / max(1e-9, w1 - w0),
                "env_share": timing["env"] / max(1e-9, cpu),
                "teacher_share": teacher / max(1e-9, cpu),
                "opponent_share": timing["opponents"] / max(1e-9, cpu),
                "snapshot_share": timing["snapshots"] / max(1e-9, cpu),
                "learner_forward_share": timing["learner"] / max(1e-9, cpu),
                "update_share": (c2 - c1) / max(1e-9, cpu),
                "kl_coef": self.kl_weight(),
                "cloning": float(batch["cloning"]),
                **losses,
            }
            for key, val in train.items():
                self.writer.add_scalar(f"train/{key}", val, self.step)
            for kind in {k for k, *_ in recent}:
                won = [w for k, _, w, *_ in recent if k == kind]
                self.writer.add_scalar(f"league/win_rate_vs_{kind}", float(np.mean(won)), self.step)
            bar.update(n)
            bar.set_postfix(
                sps=f"{train['steps_per_cpu_s']:.0f}",
                env=f"{train['env_share']:.0%}",
                win=f"{np.mean([w for _, _, w, *_ in recent]) if recent else 0:.2f}",
                ent=f"{losses['entropy']:.2f}",
                bc=int(batch["cloning"]),
            )
            if a.snapshot_every and self.step >= self.next_snapshot and not batch["cloning"]:
                self.next_snapshot = self.step + a.snapshot_every
                self.snapshots.append(self._frozen())
                self.snapshot_steps.append(self.step)
                if len(self.snapshots) > a.snapshot_max:
                    self.snapshots.pop(0)
                    self.snapshot_steps.pop(0)
                    self._reindex_snapshot_tables()
            if a.eval_every and self.step >= self.next_eval:
                self.next_eval = self.step + a.eval_every
                self.log_eval(self.evaluate(a.eval_games, a.eval_opponents), train)
            if a.checkpoint_every and self.step >= self.next_checkpoint:
                self.next_checkpoint = self.step + a.checkpoint_every
                self.save_checkpoint()
        bar.close()
        if self.teachers is not None:
            self.teachers.close()
            self.teachers = None
        if not self.curve or self.curve[-1]["step"] != self.step:
            self.log_eval(self.evaluate(a.eval_games, a.eval_opponents), train)
        self.save_checkpoint()
        self.writer.close()
        b = self.cpu_breakdown
        throughput = {
            "learner_steps_per_cpu_second": round(b["steps"] / max(1e-9, b["total"]), 1),
            **{f"{k}_share": round(b[k] / max(1e-9, b["total"]), 3) for k in b if k not in ("total", "steps")},
        }
        print(
            json.dumps(
                {"run_dir": str(self.run_dir), "step": self.step, "throughput": throughput, "latest": self.curve[-1]},
                indent=1,
            )
        )
        return self.run_dir

    def _reindex_snapshot_tables(self) -> None:
        """After the oldest snapshot was dropped, tables that played it get the next one."""
        for i, opp in enumerate(self.tables.opp):
            if isinstance(opp, tuple):
                self.tables.opp[i] = ("snapshot", max(0, opp[1] - 1))


def _rmtree(path: pathlib.Path) -> None:
    import shutil

    shutil.rmtree(path)


# -------------------------------------------------------------------------------------------------
def evaluate_module(
    module: torch.nn.Module,
    game_name: str,
    config: dict[str, Any],
    kinds: list[str],
    games: int,
    seed: int,
    batch: int = 64,
    max_actions: int = 0,
) -> dict[str, dict[str, Any]]:
    """Greedy ``module`` against each opponent kind over ``games`` seeded games, seats rotated.

    Game ``g`` is dealt with seed ``seed + g`` and the learner plays team ``g % num_teams``; every
    other seat is the opponent kind. Returns per kind: games, wins, draws (truncated or all tied),
    losses, win rate and its Wilson 95% interval, and games, wins and win rate by the learner's team
    side (side 0 moves first).
    """
    game = envs.make_game(game_name, **config)
    num_teams = game.num_teams
    max_actions = max_actions or game.default_max_cycles * game.num_players
    results = {}
    module.eval()

    def no_snapshots(_k: int, _rows: list[int]) -> list[int]:
        raise RuntimeError("evaluation games have no snapshot opponents")

    for kind in kinds:

        def deal(g: int, kind: str = kind) -> tuple[int, str, Any, int]:
            agent_id = f"{game_name}/{kind}"
            return seed + g, kind, (lambda s: agents.make(agent_id, seed=s)), g % num_teams

        tables = Tables(game, min(batch, games), deal, max_actions, max_games=games)
        tables.advance(no_snapshots)
        while any(tables.active):
            rows = [i for i in range(tables.n) if tables.active[i]]
            obs, mask = tables.observe(rows)
            with torch.no_grad():
                acts = masked_log_probs(module(torch.from_numpy(obs)), torch.from_numpy(mask)).argmax(-1).tolist()
            for i, act in zip(rows, acts):
                tables.apply(i, act)
            tables.advance(no_snapshots)
        outcomes = tables.finished
        wins = sum(1 for o in outcomes if o[2])
        draws = sum(1 for o in outcomes if not o[2] and (o[3] or o[1] == 0))
        low, high = wilson_interval(wins, len(outcomes))
        results[kind] = {
            "games": len(outcomes),
            "wins": wins,
            "draws": draws,
            "losses": len(outcomes) - wins - draws,
            "win_rate": wins / max(1, len(outcomes)),
            "wilson": [low, high],
            "mean_length": float(np.mean([o[4] for o in outcomes])) if outcomes else 0.0,
            **by_side(outcomes, num_teams),
        }
    module.train()
    return results


def by_side(outcomes: list[tuple], num_teams: int) -> dict[str, list]:
    """Games, wins and win rate by the learner's team side, from ``Tables.finished`` outcomes."""
    games, wins = [0] * num_teams, [0] * num_teams
    for o in outcomes:
        games[o[5]] += 1
        wins[o[5]] += bool(o[2])
    return side_summary(games, wins)


def write_curve(curve: list[dict[str, Any]], run_dir: pathlib.Path, title: str) -> None:
    """``curve.csv`` (one row per evaluation) and ``curve.png`` (win rates with Wilson bands)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    keys = sorted({k for row in curve for k in row}, key=lambda k: (k != "step", k != "cpu_seconds", k))
    with open(run_dir / "curve.csv", "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=keys)
        writer.writeheader()
        writer.writerows(curve)
    fig, ax = plt.subplots(figsize=(6.4, 3.8))
    steps = [row["step"] for row in curve]
    for key in sorted(k for k in keys if k.startswith("win_rate_vs_")):
        kind = key[len("win_rate_vs_") :]
        ax.plot(steps, [row.get(key, math.nan) for row in curve], marker="o", label=kind)
        ax.fill_between(
            steps,
            [row.get(f"win_low_vs_{kind}", math.nan) for row in curve],
            [row.get(f"win_high_vs_{kind}", math.nan) for row in curve],
            alpha=0.2,
        )
    ax.set_ylim(0, 1)
    ax.set_xlabel("learner steps")
    ax.set_ylabel("win rate (greedy policy)")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(run_dir / "curve.png", dpi=110)
    plt.close(fig)


def evaluate_folder(folder: pathlib.Path | str, args: Args) -> dict[str, Any]:
    """Evaluate the policy of a run folder (its ``policy/``), a policy folder or a checkpoint id; writes
    the report beside the policy, or under ``runs/ppo-evaluate/`` for one in the checkpoint folder (the
    package's data is never written to). The report's ``written_to`` says where."""
    policy = policy_folder(folder)
    module, spec = load_policy(policy)
    config = spec["config"]
    game = envs.make_game(spec["game"], **config)
    result = evaluate_module(
        module,
        spec["game"],
        config,
        args.eval_opponents,
        args.eval_games,
        args.eval_seed,
        min(args.num_envs, args.eval_games),
        args.max_actions or game.default_max_cycles * game.num_players,
    )
    report = {
        "policy": str(policy),
        "game": spec["game"],
        "config": config,
        "steps": spec["meta"].get("steps"),
        "eval_seed": args.eval_seed,
        "games_per_opponent": args.eval_games,
        "note": "greedy policy; game g dealt with seed eval_seed+g, learner team g % num_teams; Wilson 95%",
        "results": result,
    }
    out, shipped, where = policy, checkpoint_dir().resolve(), policy.resolve()
    if where.is_relative_to(shipped):
        out = pathlib.Path("runs/ppo-evaluate") / where.relative_to(shipped)
        out.mkdir(parents=True, exist_ok=True)
    path = out / f"eval-{args.eval_games}-seed{args.eval_seed}.json"
    report["written_to"] = str(path)
    path.write_text(json.dumps(report, indent=2) + "\n")
    return report


def main(argv: list[str] | None = None) -> Any:
    args = parse_args(argv)
    if args.evaluate:
        torch.set_num_threads(1)
        report = evaluate_folder(pathlib.Path(args.evaluate), args)
        for kind, r in report["results"].items():
            print(
                f"vs {kind}: {r['wins']}/{r['games']} wins = {r['win_rate']:.1%} "
                f"[{r['wilson'][0]:.1%}, {r['wilson'][1]:.1%}], draws {r['draws']}; "
                f"win % by side (side 0 moves first): {side_rates(r)}"
            )
        print(f"wrote {report['written_to']}")
        return report
    return Trainer(args).run()


if __name__ == "__main__":
    main()
