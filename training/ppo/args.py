"""The options of ``python -m training.ppo``: the ``Args`` dataclass (each field documents itself, as in
CleanRL), the checks that refuse a bad combination with what is allowed, and what a resume may change."""

from __future__ import annotations

import argparse
import hashlib
import json
import pathlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch

import agents
from agents.registry import qualify, resolve
import envs
import envs.vector
from agents.checkpoint import policy_folder
from agents.nets import default_arch
from agents.policy_io import CheckpointError, load_policy, read_policy_spec
from training.cli import dataclass_parser
from training.settings import SELF, Registers, SettingsError, StepSettings, check_settings, parse_settings
from training.ppo.critic import CRITICS
from training.ppo.run_state import migrate_saved_args, read_json, recover_checkpoint


@dataclass
class Args(Registers, StepSettings):
    """``training.ppo``'s options: the shared settings (:class:`training.settings.StepSettings`) and its own."""

    opponents: list[str] = field(default_factory=lambda: ["heuristic-v1", SELF, "random-v0"])
    """league: opponent kinds drawn per game (agent kinds of the game, or 'self' for a frozen earlier copy of the
    learner: the newest half the time, otherwise any kept one); a league by default, as this trainer is for long runs"""
    learning_rate: float = 1e-3
    """Adam learning rate (1e-3 measured best for this trainer: the guide's PPO reference page; after
    cloning use ~1e-4)"""
    update_epochs: int = 2
    """passes over each rollout (2 at learning rate 1e-3: the win rates of 4 at half the update's CPU time,
    measured on the guide's PPO reference page)"""
    num_minibatches: int = 8
    """minibatches per pass over a rollout; they split it evenly (8 of 256 decisions from the default rollout)"""
    compile: bool = False
    """compile the update's forward pass and loss with torch.compile (needs a working C++ compiler; where it
    cannot compile, the update runs uncompiled, with one warning; the first update pays for the compiling)"""
    update_dtype: str = "float32"
    """arithmetic of the update's forward and backward passes: float32, or bf16 (bfloat16 autocast, the loss
    in float32; needs native bfloat16, e.g. AVX512-BF16 or AMX on a CPU: without it, float32 with one warning)"""
    total_timesteps: int = 2_000_000
    """learner decisions to train on (behaviour cloning steps included)"""
    num_envs: int = 64
    """games stepped together (the learner's batch per forward); many, as this trainer batches its tables"""
    num_steps: int = 32
    """learner decisions per table per rollout (rollout size = num_envs * num_steps)"""
    eval_every: int = 100_000
    """evaluate the greedy policy every N steps (0: only at the end); longer runs than the other trainers'"""
    eval_opponents: list[str] = field(default_factory=lambda: ["heuristic-v1", "random-v0"])
    """opponent kinds the policy is evaluated against (the rule-based agent as well as random by default)"""
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
    temperature: float = 1.0
    """PPO samples and trains softmax(logits / T); below 1 it plays closer to greedy (teacher term, evaluation: untempered)"""
    net: str = "auto"
    """network: auto (board_conv where the game declares a board_layout, else mlp_ac), board_conv, mlp_ac or
    table_entity (a shared encoder over the rows of the game's table_layout)"""
    conv_channels: int = 16
    """board_conv: channels of each convolution"""
    conv_layers: int = 2
    """board_conv: number of convolutions"""
    first_kernel: int = 3
    """board_conv: kernel size of the first convolution (3, 5 or 7; the others are 3x3)"""
    focus: bool = False
    """board_conv: also feed the trunk the board features at the squares the game declares as focus (Pan's Trial:
    the seat's own and the opponent's) and at their four neighbours, so moves relative to them are easy to learn"""
    hidden: int = 128
    """width of the hidden layers (board_conv trunk; mlp_ac uses two layers of this width; table_entity trunk,
    its row encoder a quarter as wide)"""
    opponent_weights: list[float] = field(default_factory=list)
    """relative probability of each --opponents entry (default: equal)"""
    teacher: str = "heuristic-v1"
    """teacher agent kind for behaviour cloning and the kickstarting term ('' for none)"""
    teacher_base: str = ""
    """base agent of a search teacher (--teacher search-v1): an agent kind, a checkpoint id, a policy folder, a run
    folder, or self: the network being trained, taken afresh at every checkpoint (expert iteration, one round a
    --checkpoint-every); '' keeps the teacher's own (heuristic-v1)"""
    teacher_search: list[str] = field(default_factory=list)
    """a search teacher's settings over its shipped ones, as KEY=VALUE (simulations=8 margin=0.1; the settings
    of agents.rollout_search: simulations, time_ms, horizon, turns, max_candidates, margin)"""
    teacher_targets: str = "choice"
    """what cloning fits: choice (the teacher's action) or improved (a search teacher: the network's own policy,
    its mass on the moves the search tried shifted toward the better ones, in proportion to exp(value / T))"""
    teacher_temperature: float = 0.1
    """T of --teacher-targets improved, in the game's return units (a move worth T more gets e times the share)"""
    teacher_confidence: float = 0.0
    """with --teacher-targets improved, above 0: fit one move a decision instead, the search's choice where its
    improved target gives it at least this share (the search is sure of it), the network's own greedy move
    elsewhere; 0 fits the improved targets themselves"""
    bc_steps: int = 0
    """learner decisions played by the teacher and cloned before PPO starts (0: no cloning)"""
    bc_buffer: int = 65536
    """cloning keeps the newest N teacher decisions (a replay buffer, checkpointed while cloning runs) to draw minibatches from"""
    bc_learner_share: float = 0.0
    """while cloning, the share of decisions the network plays itself, each still labelled by the teacher (DAgger)"""
    teacher_workers: int = 0
    """extra processes computing the teacher's labels (0: none); each labels fixed tables, so labels do not depend on it"""
    mix_teachers: bool = False
    """on --resume, let a teacher other than the one whose labels the cloning buffer holds add its labels to them
    (without it such a resume is refused, naming both teachers)"""
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
    eval_seed: int = 10**6
    """first deal seed of the evaluation games (the same games every evaluation)"""
    checkpoint_every: int = 50_000
    """write a resumable checkpoint every N steps"""
    max_actions: int = 0
    """cut a game after this many actions (0: the game's default cycle cap x players); a cut game gives 0"""
    critic: str = "seat"
    """value network: seat (the actor network's own value head, from the seat's observation) or state (a
    centralised critic: an MLP of --hidden width over the whole position, Game.encode_state, hidden
    information included; the actor still sees only its seat and is all the policy exports)"""
    backend: str = "auto"
    """envs.vector backend the training tables run on: auto (the game's fastest; the reference engines where an
    opponent or the teacher reads the player view), python (the reference engines) or one the game registers
    (numpy for sequence_v0); every backend plays the same games"""


#: The arithmetic the update may run in (``--update-dtype``).
UPDATE_DTYPES = ("float32", "bf16")

#: What cloning fits (``--teacher-targets``).
TEACHER_TARGETS = ("choice", "improved")

#: The arguments that shape the network (an --init-policy must have been trained with the same).
NET_ARGS = ("net", "conv_channels", "conv_layers", "first_kernel", "hidden", "focus")

#: Arguments a resumed run may change (everything else — game, network, seeds, what cloning fits — is
#: fixed). The cloning schedule may change: ``--bc-steps`` below the run's step ends cloning there and PPO
#: starts, with the teacher term (``--kl-coef``) decaying from that step. The teacher may change (expert
#: iteration from a run that cloned a heuristic: its buffer keeps the old teacher's labels, the new
#: teacher's replace them as they come), and so may the buffer's size (a smaller one keeps the newest).
RESUME_CHANGEABLE = frozenset(
    {
        "register",
        "total_timesteps",
        "bc_steps",
        "bc_buffer",
        "bc_learner_share",
        "teacher",
        "teacher_base",
        "teacher_search",
        "teacher_temperature",
        "teacher_confidence",
        "teacher_workers",
        "mix_teachers",
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
        "num_minibatches",
        "compile",
        "update_dtype",
        "opponents",
        "opponent_weights",
        "snapshot_every",
        "snapshot_max",
        "backend",
        "device",
    }
)


#: Flags that are gone, refused before parsing: flag -> what to give instead.
REMOVED = {
    "--minibatch-size": "give --num-minibatches (minibatch = num_envs * num_steps / num_minibatches)",
    "--total-steps": "give --total-timesteps",
}


def build_parser() -> argparse.ArgumentParser:
    from training import ppo

    return dataclass_parser(Args, prog="python -m training.ppo", description=ppo.__doc__.split("\n\n")[0],
                            list_nargs="*")


def parse_args(argv: list[str] | None = None) -> Args:
    parser = build_parser()
    args, given = parse_settings(parser, Args, argv, removed=REMOVED, check=False)
    if args.resume:
        saved = migrate_saved_args(read_json(recover_checkpoint(pathlib.Path(args.resume)) / "state.json")["args"])
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
            raise CheckpointError(f"--evaluate: {exc}") from None  # a file's fault: one line, as for any damaged file
        if "game" in given and args.game != spec["game"]:
            parser.error(f"--evaluate: {args.evaluate} holds a policy for {spec['game']!r}, not --game {args.game!r}")
        args.game, args.config = spec["game"], json.dumps(spec["config"])
    check_args(args, parser.error)
    return args


def check_args(args: Args, fail: Callable[[str], Any]) -> None:
    """Refuse anything wrong with a message that says what is allowed: the shared settings
    (:func:`training.settings.check_settings`), then this trainer's own."""
    try:
        check_settings(args)
    except SettingsError as exc:
        fail(str(exc))
    known = set(agents.available(args.game))
    if args.teacher == SELF:
        fail("'self' is a training opponent only; --teacher needs a fixed agent")
    if args.teacher and f"{args.game}/{args.teacher}" not in known:
        try:
            resolve(args.game, args.teacher)
        except ValueError as exc:
            fail(f"--teacher: {exc}")
    if args.teacher_targets not in TEACHER_TARGETS:
        fail(f"--teacher-targets must be one of {list(TEACHER_TARGETS)}, got {args.teacher_targets!r}")
    if not 1e-4 <= args.teacher_temperature <= 100.0:
        fail(f"--teacher-temperature is in return units and must lie in [0.0001, 100], got {args.teacher_temperature}")
    if not 0.0 <= args.teacher_confidence <= 1.0:
        fail(f"--teacher-confidence is a share of the improved target in [0, 1] (0: off), got {args.teacher_confidence}")
    if args.teacher_confidence > 0 and args.teacher_targets != "improved":
        fail("--teacher-confidence reads the search's improved targets: give --teacher-targets improved too")
    if args.teacher_base or args.teacher_search or args.teacher_targets == "improved":
        check_search_teacher(args, fail)
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
    backends = envs.vector.available_backends(args.game)
    if args.backend != "auto" and args.backend not in backends:
        fail(f"--backend {args.backend!r} is not available for {args.game}; choose auto or one of {backends}")
    if args.critic not in CRITICS:
        fail(f"--critic must be one of {list(CRITICS)}, got {args.critic!r}")
    if args.critic == "state" and args.backend not in ("auto", "python"):
        fail(f"--critic state reads each table's whole position from the reference engines; --backend "
             f"{args.backend!r} keeps none (it would save and load every table at every decision): use --backend "
             "python or auto")
    if args.update_dtype not in UPDATE_DTYPES:
        fail(f"--update-dtype must be one of {list(UPDATE_DTYPES)}, got {args.update_dtype!r}")
    if args.net not in ("auto", "board_conv", "mlp_ac", "table_entity"):
        fail(f"--net must be auto, board_conv, mlp_ac or table_entity, got {args.net!r}")
    if args.focus and not args.evaluate:
        try:
            arch_of(args, envs.make_game(args.game, **json.loads(args.config)))
        except ValueError as exc:
            fail(f"--focus: {exc}")
    if args.init_policy and not args.resume:
        try:
            load_init_policy(args)
        except (CheckpointError, ValueError) as exc:
            raise CheckpointError(f"--init-policy: {exc}") from None  # a file's fault: one line, as for any damaged file


def teacher_kwargs(args: Args) -> dict[str, Any]:
    """What a search teacher is made with beyond its id: its base agent and settings (none for other teachers)."""
    from envs.core.config import parse_key_values

    out: dict[str, Any] = {}
    if args.teacher_base and args.teacher_base != SELF:  # 'self' is filled in by the trainer (its network's folder)
        out["base"] = args.teacher_base
    if args.teacher_search:
        out["search"] = parse_key_values(args.teacher_search, "--teacher-search")
    return out


def teacher_identity(args: Args) -> dict[str, Any] | None:
    """Who makes a run's labels: the teacher's id, its base (with a fingerprint of the base's weights where
    the base is a policy: a run folder that went on training is another teacher) and its search settings.
    ``None`` without a teacher. A run keeps it in its checkpoint; a resume whose teacher differs while the
    cloning buffer holds the old one's labels is refused unless ``--mix-teachers`` is given."""
    if not args.teacher:
        return None
    out: dict[str, Any] = {"teacher": qualify(args.game, args.teacher)}
    base = args.teacher_base
    if base == SELF:
        out["base"] = "self (the network being trained)"
    elif base:
        out["base"] = base
        try:
            folder = policy_folder(base if "/" in base or pathlib.Path(base).exists() else qualify(args.game, base))
        except CheckpointError:
            folder = None  # an agent kind such as heuristic-v1: its id says what it is
        if folder is not None and (folder / "policy.safetensors").is_file():
            out["weights"] = hashlib.sha256((folder / "policy.safetensors").read_bytes()).hexdigest()[:16]
    search = teacher_kwargs(args).get("search")
    if search:
        out["search"] = search
    return out


def describe_teacher(identity: dict[str, Any] | None) -> str:
    """One teacher identity (:func:`teacher_identity`) in words."""
    if not identity:
        return "no teacher"
    words = identity["teacher"]
    if identity.get("base"):
        words += f" over {identity['base']}"
        if identity.get("weights"):
            words += f" (weights {identity['weights']})"
    if identity.get("search"):
        words += " with " + " ".join(f"{k}={v}" for k, v in sorted(identity["search"].items()))
    return words


def check_same_teacher(run_dir: pathlib.Path, before: dict[str, Any] | None, now: dict[str, Any] | None,
                       args: Args) -> None:
    """A cloning buffer holds one teacher's labels (``before``, :func:`teacher_identity`): a resume whose
    teacher ``now`` (its id, base, the base's weights or its search settings) is another is refused, naming
    both, unless ``--mix-teachers`` asks for the mix."""
    if before is None or now == before or args.mix_teachers:
        return
    raise CheckpointError(
        f"{run_dir}: its cloning buffer holds labels of {describe_teacher(before)}; this resume's teacher is "
        f"{describe_teacher(now)}. Give --mix-teachers to add the new labels to the old, or start a new run "
        f"from this one's network with --init-policy {run_dir}"
    )


def check_search_teacher(args: Args, fail: Callable[[str], Any]) -> None:
    """``--teacher-base`` and ``--teacher-search`` need a teacher that searches over a base agent, a base
    that plays this game and settings in range."""
    from agents.rollout_search import RolloutSearchAgent

    flag = ("--teacher-base" if args.teacher_base else "--teacher-search" if args.teacher_search
            else "--teacher-targets improved")
    if not args.teacher:
        fail(f"{flag} sets up a search teacher; give --teacher too (e.g. search-v1)")
    try:
        teacher = agents.make(qualify(args.game, args.teacher), seed=0, **teacher_kwargs(args))
    except TypeError:
        teacher = None
    except (ValueError, SystemExit) as exc:
        fail(f"{flag}: {exc}")
    if not isinstance(teacher, RolloutSearchAgent):
        kinds = [k.split("/")[1] for k in agents.available(args.game)]
        searchers = ", ".join(k for k in kinds if k.startswith("search-")) or f"none for {args.game}"
        fail(f"{flag} needs a teacher that searches over a base agent ({searchers}); {args.teacher!r} is not one")


def arch_of(args: Args, game: Any) -> tuple[str, dict[str, Any]]:
    return default_arch(game, args.net, conv_channels=args.conv_channels, conv_layers=args.conv_layers,
                        hidden=args.hidden, first_kernel=args.first_kernel, focus=args.focus)


def _flag(key: str, value: Any) -> str:
    name = "--" + key.replace("_", "-")
    if isinstance(value, bool):
        return name if value else "--no-" + name[2:]
    return f"{name} {value}"


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
    arch, arch_kwargs = arch_of(args, game)
    if (arch, arch_kwargs) != (spec["arch"], spec["arch_kwargs"]):
        saved = spec["meta"].get("args") if isinstance(spec["meta"].get("args"), dict) else {}
        flags = " ".join(_flag(k, saved[k]) for k in NET_ARGS if k in saved)
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


