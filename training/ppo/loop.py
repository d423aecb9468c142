"""The training loop and the command: ``Trainer`` deals games, collects a rollout, updates (cloning
or PPO), keeps the league of snapshots, evaluates, logs and checkpoints, until ``total_timesteps``."""

from __future__ import annotations

import copy
import dataclasses
import json
import pathlib
import random
import time
from typing import Any

import numpy as np
import torch

import agents
from agents.registry import qualify
import envs
import envs.vector
from envs.provenance import provenance
from agents.architectures import build_architecture
from agents.checkpoint import CheckpointError, checkpoint_dir, register_checkpoint
from agents.policy_io import save_policy
from training.ppo import run_state
from training.ppo.run_state import TrainerState
from training.settings import SELF, check_finite, resolve_device, seed_everything
from training.ppo.algo import collect_rollout, policy_log_probs, ppo_update, sample
from training.ppo.args import (RESUME_CHANGEABLE, Args, arch_of, check_same_teacher, load_init_policy, parse_args,
                              teacher_identity, teacher_kwargs)
from training.ppo.critic import build_state_critic
from training.ppo.cloning import ReplayBuffer, buffer_capacity, clone_update
from training.evaluation import NOTE, evaluate_folder, evaluate_module
from training.report import curve_row, log_scalars, make_report, tensorboard_writer, write_args, write_curve, write_report
from training.league.output import side_rates
from training.teachers import TeacherLabels
from training.vector_env import Outcome, Tables

#: The parts a run's CPU time is split into (env = engines, observations, masks, resets).
CPU_PARTS = ("env", "learner_forward", "teacher", "opponents", "snapshots", "update", "total", "steps")


class CpuAccount:
    """All of the run's CPU-time accounting: ``breakdown`` adds up each part over the run (saved in
    the checkpoint), :meth:`add` books one rollout and update and returns its shares for the log."""

    def __init__(self, breakdown: dict[str, float]) -> None:
        self.breakdown = breakdown  # the run state's own dict: what is added here is saved with it
        for part in CPU_PARTS:
            breakdown.setdefault(part, 0.0)

    def add(self, timing: dict[str, float], update: float, total: float, steps: int) -> dict[str, float]:
        teacher = timing["teacher"] + timing["teacher_workers"]
        parts = {
            "env": timing["env"],
            "learner_forward": timing["learner"],
            "teacher": teacher,
            "opponents": timing["opponents"],
            "snapshots": timing["snapshots"],
            "update": update,
            "total": total,
            "steps": steps,
        }
        for key, val in parts.items():
            self.breakdown[key] += val
        share = max(1e-9, total)
        return {
            "steps_per_cpu_s": steps / share,
            "env_share": timing["env"] / share,
            "teacher_share": teacher / share,
            "opponent_share": timing["opponents"] / share,
            "snapshot_share": timing["snapshots"] / share,
            "learner_forward_share": timing["learner"] / share,
            "update_share": update / share,
        }

    def throughput(self) -> dict[str, float]:
        """The whole run's steps per CPU second and each part's share."""
        b = self.breakdown
        return {
            "learner_steps_per_cpu_second": round(b["steps"] / max(1e-9, b["total"]), 1),
            **{f"{k}_share": round(b[k] / max(1e-9, b["total"]), 3) for k in b if k not in ("total", "steps")},
        }


def conv_memory_format(arch_kwargs: dict[str, Any]) -> torch.memory_format:
    """The layout of the convolution weights: channels-last where the board arrives plane by plane
    (oneDNN's faster layout there: Sequence's update 1.2x faster), the default where it arrives square
    by square (already channels-last in memory: Pan's Trial's update was 5% slower with it)."""
    return torch.channels_last if arch_kwargs.get("layout") == "planes" else torch.contiguous_format


def table_backend(args: Args) -> str:
    """The ``envs.vector`` backend for ``--backend``: ``auto`` is the game's fastest, except where an
    opponent or the teacher reads the player view, which a backend without engine states builds through
    a save and a load at every decision (Sequence against heuristic-noisy-v1: 1.5x the CPU time on the
    numpy engine, measured); there it is the reference engines."""
    if args.backend != "auto":
        return args.backend
    if args.critic == "state":  # the whole position comes from the reference engines' states
        return "python"
    kinds = {kind for kind in [*args.opponents, args.teacher] if kind and kind != SELF}
    if any(agents.make(qualify(args.game, kind), seed=0).reads_view for kind in sorted(kinds)):
        return "python"
    return envs.vector.available_backends(args.game)[0]


class Trainer:
    """The whole training loop; ``run()`` trains until ``args.total_timesteps``."""

    def __init__(self, args: Args) -> None:
        self.args = args
        self.config = json.loads(args.config)
        self.game = envs.make_game(args.game, **self.config)
        self.run_dir = pathlib.Path(args.run_dir or f"runs/ppo/{args.game}-{args.name}")
        self.obs_shape = tuple(self.game.observation_shape)
        self.num_actions = self.game.num_actions
        self.arch, self.arch_kwargs = arch_of(args, self.game)
        self.max_actions = args.max_actions or self.game.default_max_cycles * self.game.num_players

        # -- seeding, in one place
        seed_everything(args.seed)
        self.rng = random.Random(args.seed)

        # The update runs on the device (network and optimizer); rollouts, snapshots and evaluations on
        # the CPU, where a batch of a few dozen positions is fastest, with the actor, a CPU copy of the
        # network brought up to date after every update.
        self.device = resolve_device(args.device)
        self.memory_format = conv_memory_format(self.arch_kwargs)
        self.net = build_architecture(self.arch, **self.arch_kwargs).to(memory_format=self.memory_format)
        self.actor = copy.deepcopy(self.net).requires_grad_(False)
        self.net.to(self.device)
        #: --critic state: the value network over the whole position (on the device) and its CPU copy for
        #: rollouts; None with the seat's own value head
        self.critic: torch.nn.Module | None = None
        self.critic_cpu: torch.nn.Module | None = None
        params: list[Any] = list(self.net.parameters())
        if args.critic == "state":
            self.critic = build_state_critic(self.game, args.hidden)
            self.critic_cpu = copy.deepcopy(self.critic).requires_grad_(False)
            self.critic.to(self.device)
            params = [{"params": params}, {"params": list(self.critic.parameters())}]
        self.optimizer = torch.optim.Adam(params, lr=args.learning_rate, eps=1e-5)
        self.snapshots: list[torch.nn.Module] = []
        #: the cloning replay buffer (made at the first cloning update, or restored on resume)
        self.bc: ReplayBuffer | None = None

        #: the counters and records a checkpoint saves beside the tensors (see TrainerState)
        self.state = TrainerState(next_eval=args.eval_every, next_checkpoint=args.checkpoint_every,
                                  next_snapshot=args.snapshot_every)
        # Who makes this process's labels, read once (a base policy's weights are hashed): the checkpoints
        # record it, so that a resume can tell whether its teacher is the one that filled the cloning buffer.
        teacher = teacher_identity(args)
        if args.resume:
            self.state = run_state.restore(self, dataclasses.asdict(Args()), RESUME_CHANGEABLE)
            if self.bc is not None:  # the cloning goes on in a buffer of one teacher's labels
                check_same_teacher(self.run_dir, self.state.teacher, teacher, args)
        else:
            if (self.run_dir / "checkpoint" / "state.json").exists():
                raise SystemExit(
                    f"{self.run_dir} already holds a run; continue it with --resume {self.run_dir} or choose another --name"
                )
            if args.init_policy:
                weights, self.state.init_origin = load_init_policy(args)
                self.net.load_state_dict(weights)
                self.sync_actor()
            self.snapshots.append(self._frozen())  # 'self' before the first snapshot: the starting network
            self.state.snapshot_steps.append(0)
        self.state.teacher = teacher

        self.cpu = CpuAccount(self.state.cpu_breakdown)
        #: (step, results) of the latest evaluation this process made (the final one goes to eval.json)
        self.last_eval: tuple[int, dict[str, dict[str, Any]]] | None = None
        self.kinds = list(args.opponents)
        self.weights = list(args.opponent_weights) or [1.0] * len(self.kinds)
        self.teachers: TeacherLabels | None = None  # made when a rollout first needs the teacher
        self.tables = Tables(self.game, args.num_envs, self._deal, self.max_actions, first_game=self.state.games_dealt,
                             backend=table_backend(args))
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
        snap = copy.deepcopy(self.actor)
        for p in snap.parameters():
            p.requires_grad_(False)
        return snap.eval()

    def _snapshot_act(self, index: int, rows: list[int]) -> list[int]:
        obs, mask = self.tables.observe(rows)
        with torch.no_grad():
            logits = self.snapshots[index](torch.from_numpy(obs))
            logp = policy_log_probs(logits, torch.from_numpy(mask), self.args.temperature)
        return sample(logp).tolist()

    def _teacher_labels(self) -> TeacherLabels:
        if self.teachers is None:
            a = self.args
            kwargs = teacher_kwargs(a)
            if a.teacher_base == SELF:
                # Expert iteration: the search over the network as it is now (this round's), written where the
                # teacher's processes load it; a checkpoint ends the round (see save_checkpoint).
                kwargs["base"] = str(self.save_policy(self.run_dir / "teacher_base"))
            self.teachers = TeacherLabels(a.game, self.config, a.teacher, a.seed, workers=a.teacher_workers,
                                          kwargs=kwargs)
        return self.teachers

    def _teacher_actions(self, rows: list[int]) -> list[int]:
        return self._teacher_labels().actions(self.tables.seat_inputs(rows))

    def _teacher_values(self, rows: list[int], learner: list[int]) -> list[tuple[int, list[tuple[int, float]]]]:
        """The search teacher's label and values at each row, the network's greedy choice ``learner`` among
        the moves it values."""
        jobs = [(*job, (act,)) for job, act in zip(self.tables.seat_inputs(rows), learner)]
        return self._teacher_labels().labels(jobs, values=True)

    @property
    def soft_targets(self) -> bool:
        """Whether cloning fits improved targets (``--teacher-targets improved``) rather than the teacher's choice."""
        return self.args.teacher_targets == "improved"

    def _reindex_snapshot_tables(self) -> None:
        """After the oldest snapshot was dropped, tables that played it get the next one."""
        for i, opp in enumerate(self.tables.opp):
            if isinstance(opp, tuple):
                self.tables.opp[i] = ("snapshot", max(0, opp[1] - 1))

    # -- the schedule
    @property
    def cloning(self) -> bool:
        """Whether the run is still in its cloning stage (the first ``bc_steps`` learner decisions)."""
        return self.state.step < self.args.bc_steps

    def kl_weight(self) -> float:
        a = self.args
        if not a.kl_coef:
            return 0.0
        into = self.state.step - a.bc_steps
        return a.kl_coef * max(0.0, 1.0 - max(0, into) / max(1, a.kl_decay_steps))

    def bc_capacity(self) -> int:
        return buffer_capacity(self.args)

    # -- one rollout, one update
    def collect(self) -> dict[str, Any]:
        cloning = self.cloning
        batch = collect_rollout(
            self.actor,
            self.tables,
            self.args,
            cloning=cloning,
            want_teacher=cloning or self.kl_weight() > 0,
            teacher_actions=self._teacher_actions,
            snapshot_act=self._snapshot_act,
            critic=self.critic_cpu,
            # a soft-target run keeps fitting its improved targets in the PPO stage's teacher term (--kl-coef)
            teacher_values=self._teacher_values if self.soft_targets else None,
            improve_temperature=self.args.teacher_temperature,
            improve_confidence=self.args.teacher_confidence,
        )
        batch["timing"]["teacher_workers"] = self.teachers.take_worker_seconds() if self.teachers else 0.0
        return batch

    def clone_update(self, batch: dict[str, Any]) -> dict[str, float]:
        if self.bc is None:
            self.bc = ReplayBuffer(self.bc_capacity(), self.obs_shape, self.num_actions, soft=self.soft_targets)
        stats = clone_update(self.net, self.optimizer, self.bc, batch, self.args, self.device)
        self.state.updates += 1
        self.sync_actor()
        return stats

    def update(self, batch: dict[str, Any]) -> dict[str, float]:
        if batch["cloning"]:
            return self.clone_update(batch)
        # The PPO stage has begun: the teacher's decisions are no longer fitted, nor saved.
        self.bc = None
        stats = ppo_update(self.net, self.optimizer, batch, self.args, self.kl_weight(), self.device, critic=self.critic)
        self.state.updates += 1
        self.sync_actor()
        return stats

    def sync_actor(self) -> None:
        """The actor (the CPU copy that plays rollouts and evaluations) takes the trained weights."""
        with torch.no_grad():
            for mine, trained in zip(self.actor.state_dict().values(), self.net.state_dict().values()):
                mine.copy_(trained)
            if self.critic is not None:
                for mine, trained in zip(self.critic_cpu.state_dict().values(), self.critic.state_dict().values()):
                    mine.copy_(trained)

    # -- evaluation, saving, logging
    def evaluate(self, games: int, kinds: list[str], seed: int | None = None) -> dict[str, dict[str, Any]]:
        a = self.args
        return evaluate_module(self.actor, a.game, self.config, kinds, games, a.eval_seed if seed is None else seed,
                               min(a.num_envs, games), self.max_actions)

    def save_checkpoint(self) -> None:
        self.state.games_dealt = self.tables.dealt
        run_state.save(self)
        self.save_policy()
        if self.args.teacher_base == SELF and self.teachers is not None:
            # the round ends: the next labels come from a search over the network saved here (a resume from
            # this checkpoint starts its round from the same weights)
            self.teachers.close()
            self.teachers = None

    def save_policy(self, folder: pathlib.Path | None = None) -> pathlib.Path:
        latest = self.state.curve[-1] if self.state.curve else {}
        return save_policy(
            folder or self.run_dir / "policy",
            self.actor,
            arch=self.arch,
            arch_kwargs=self.arch_kwargs,
            game=self.args.game,
            config=self.game.config,
            observation_shape=self.obs_shape,
            num_actions=self.num_actions,
            meta={
                "trainer": "training.ppo",
                "steps": self.state.step,
                "cpu_seconds": round(self.state.cpu_seconds, 1),
                "args": dataclasses.asdict(self.args),
                **({"init_origin": self.state.init_origin} if self.state.init_origin else {}),
                "latest_eval": latest,
                "provenance": provenance([self.args.game]),
            },
        )

    def log_eval(self, result: dict[str, dict[str, Any]], train: dict[str, float]) -> None:
        self.last_eval = (self.state.step, result)
        row = curve_row(self.state.step, result, cpu_seconds=round(self.state.cpu_seconds, 1), **train)
        if self.writer:  # the training values were logged at this step already
            log_scalars(self.writer, {k: v for k, v in row.items() if k == "step" or k.startswith("win_")})
        self.state.curve.append(row)
        write_curve(self.state.curve, self.run_dir, f"{self.args.game}: training.ppo's greedy policy against fixed opponents",
                    self.args.game)

    def write_report(self) -> pathlib.Path:
        """``eval.json`` in the run folder: the evaluation at the run's last step, in the one report schema
        every trainer writes (:mod:`training.report`)."""
        step, result = self.last_eval if self.last_eval else (None, None)
        if step != self.state.step:  # a resumed run with nothing left to train: evaluated afresh
            result = self.evaluate(self.args.eval_games, self.args.eval_opponents)
        a = self.args
        return write_report(self.run_dir, make_report(
            trainer="training.ppo", args=dataclasses.asdict(a), game=a.game, config=self.game.config,
            policy=str(self.run_dir / "policy"), samples=self.state.step, cpu_seconds=self.state.cpu_seconds,
            seed=a.eval_seed, games=a.eval_games, note=NOTE, results=result, curve=self.state.curve,
            checkpoint_id=a.register or None,
            **({"init_origin": self.state.init_origin} if self.state.init_origin else {}),
        ))

    def _log_train(self, train: dict[str, float], recent: list[Outcome]) -> None:
        log_scalars(self.writer, {"step": self.state.step, **train})
        for kind in {o.kind for o in recent}:
            won = [o.won for o in recent if o.kind == kind]
            self.writer.add_scalar(f"league/win_rate_vs_{kind}", float(np.mean(won)), self.state.step)

    def _add_snapshot(self) -> None:
        self.snapshots.append(self._frozen())
        self.state.snapshot_steps.append(self.state.step)
        if len(self.snapshots) > self.args.snapshot_max:
            self.snapshots.pop(0)
            self.state.snapshot_steps.pop(0)
            self._reindex_snapshot_tables()

    # -- the loop
    def run(self) -> pathlib.Path:
        from agents.progress import progress_bar

        a = self.args
        self.run_dir.mkdir(parents=True, exist_ok=True)
        # the settings now, and what resumes changed
        write_args(self.run_dir, dataclasses.asdict(a), a.game, resumes=self.state.resumes)
        # On a resume, TensorBoard drops whatever the run logged past its checkpoint (steps a stopped
        # process took and the checkpoint never saw; a fork's parent beyond the fork), for every tag.
        self.writer = tensorboard_writer(self.run_dir / "tb", a.game, purge_step=self.state.step or None)
        bar = progress_bar(total=a.total_timesteps, initial=self.state.step, unit="step", disable=not a.progress,
                           dynamic_ncols=True, mininterval=5)
        recent: list[Outcome] = []
        train: dict[str, float] = {}
        while self.state.step < a.total_timesteps:
            w0, c0 = time.perf_counter(), time.process_time()
            batch = self.collect()
            c1 = time.process_time()
            losses = self.update(batch)
            w1, c2 = time.perf_counter(), time.process_time()
            n = batch["action"].shape[0]
            # A NaN or infinite loss stops the run here, before anything is saved: the last checkpoint
            # (from before this update) is the run's last good state.
            check_finite(losses, self.state.step + n)
            self.state.step += n
            # CPU time of this process plus the teacher workers' (so steps per CPU-second stays per core)
            cpu = c2 - c0 + batch["timing"]["teacher_workers"]
            self.state.cpu_seconds += cpu
            shares = self.cpu.add(batch["timing"], update=c2 - c1, total=cpu, steps=n)
            recent = (recent + self.tables.finished)[-2000:]
            self.tables.finished = []
            train = {
                "steps_per_cpu_s": shares.pop("steps_per_cpu_s"),
                "steps_per_wall_s": n / max(1e-9, w1 - w0),
                **shares,
                "kl_coef": self.kl_weight(),
                "cloning": float(batch["cloning"]),
                **losses,
            }
            self._log_train(train, recent)
            bar.update(n)
            bar.set_postfix(
                sps=f"{train['steps_per_cpu_s']:.0f}",
                env=f"{train['env_share']:.0%}",
                win=f"{np.mean([o.won for o in recent]) if recent else 0:.2f}",
                ent=f"{losses['entropy']:.2f}",
                bc=int(batch["cloning"]),
            )
            if a.snapshot_every and self.state.step >= self.state.next_snapshot and not batch["cloning"]:
                self.state.next_snapshot = self.state.step + a.snapshot_every
                self._add_snapshot()
            if a.eval_every and self.state.step >= self.state.next_eval:
                self.state.next_eval = self.state.step + a.eval_every
                self.log_eval(self.evaluate(a.eval_games, a.eval_opponents), train)
            if a.checkpoint_every and self.state.step >= self.state.next_checkpoint:
                self.state.next_checkpoint = self.state.step + a.checkpoint_every
                self.save_checkpoint()
        bar.close()
        if self.teachers is not None:
            self.teachers.close()
            self.teachers = None
        if not self.state.curve or self.state.curve[-1]["step"] != self.state.step:
            self.log_eval(self.evaluate(a.eval_games, a.eval_opponents), train)
        self.save_checkpoint()
        self.write_report()
        self.writer.close()
        summary = {"run_dir": str(self.run_dir), "step": self.state.step, "throughput": self.cpu.throughput(),
                   "latest": self.state.curve[-1]}
        if a.register:
            summary["registered"] = self.register()
        print(json.dumps(summary, indent=1))
        return self.run_dir

    def register(self) -> dict[str, str]:
        """Add the run's policy (with its args, evaluation and curve) to the checkpoint index as
        ``--register``'s id; the id was checked before training, and is checked again here."""
        policy = self.run_dir / "policy"
        for name in ("args.json", "eval.json", "curve.csv", "curve.png"):  # the checkpoint keeps them beside it
            if (self.run_dir / name).is_file():
                (policy / name).write_bytes((self.run_dir / name).read_bytes())
        a = self.args
        description = (f"training.ppo: {self.arch} network against {', '.join(a.opponents)}"
                       + (f", teacher {a.teacher}" if a.teacher else "") + f", {self.state.step:,} steps")
        try:
            entry = register_checkpoint(a.register, policy, description=description)
        except CheckpointError as exc:
            raise SystemExit(f"the policy is saved in {policy} but was not registered: {exc}") from exc
        return {"id": entry["id"], "folder": str(checkpoint_dir() / entry["path"])}


def main(argv: list[str] | None = None) -> Any:
    args = parse_args(argv)
    if args.evaluate:
        torch.set_num_threads(1)
        report = evaluate_folder(pathlib.Path(args.evaluate), args)
        for kind, r in report["results"].items():
            print(
                f"vs {kind}: {r['wins']}/{r['games']} wins = {r['win_rate']:.1%} "
                f"[{r['win_rate_ci95'][0]:.1%}, {r['win_rate_ci95'][1]:.1%}], draws {r['draws']}; "
                f"win % by side (1st = team 0, player_0's): {side_rates(r)}"
            )
        print(f"wrote {report['written_to']}")
        return report
    return Trainer(args).run()
