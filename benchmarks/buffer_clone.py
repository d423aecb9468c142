"""Clone a run's saved search labels into a network offline, to see what the labels alone teach.

    python -m benchmarks.buffer_clone runs/ppo/pans_trial_v0-exit-t05 --init pans_trial_v0/ppo-v4 \\
        --labels confident --confidence 0.9 --steps 768 --out runs/exit/offline/confident-768
    python -m training.ppo --evaluate runs/exit/offline/confident-768 --eval-opponents heuristic-v1 --eval-games 400

An expert-iteration run (``training.ppo --teacher search-v1 --teacher-targets improved``) keeps its newest
labels in its checkpoint (``RUN/checkpoint/bc_buffer.safetensors``): each decision's observation, legal
moves, the search's choice and the improved target. This tool starts a network afresh from ``--init``
(a checkpoint id, a policy folder or a run folder) and fits it to those labels with nothing else in the
loop: no new games, no new teacher. So it separates what the labels teach from what the run around them
does (its DAgger positions, its rounds of teachers over a changing network). ``--labels``:

- ``target``: the improved targets, as the run fits them;
- ``choice``: the search's chosen move, one-hot;
- ``confident``: the search's choice where the improved target gives it at least ``--confidence`` of its
  mass (the search is sure of it), and the starting network's own greedy move everywhere else, so the
  network keeps its play where the search is unsure.

The fit is the trainer's cloning step: Adam (epsilon 1e-5) at ``--learning-rate``, minibatches of
``--batch`` drawn from the whole buffer with ``--seed``, gradients clipped at 0.5, the policy's
cross-entropy only. The run's ``--bc-batches`` per ``num-envs x num-steps`` labels gives the step count
that matches it (8 per 512 labels: 768 steps for 49,152 labels). The result is a policy folder, with
this tool's settings and provenance in its ``policy.json``; evaluate it as any policy.
"""

from __future__ import annotations

import argparse
import pathlib
import sys
from typing import Any, Sequence

import torch

from agents.checkpoint import policy_folder
from agents.policy_io import CheckpointError, load_policy, save_policy
from envs.provenance import provenance
from training.ppo.algo import masked_log_probs
from training.ppo.cloning import ReplayBuffer
from training.ppo.targets import confident_choice

LABELS = ("target", "choice", "confident")


def greedy_moves(net: torch.nn.Module, buffer: ReplayBuffer, chunk: int = 4096) -> torch.Tensor:
    """The network's most likely legal move at every decision of ``buffer``."""
    out = []
    with torch.no_grad():
        for start in range(0, buffer.size, chunk):
            logits, _ = net.logits_and_value(buffer.obs[start:start + chunk].float())
            out.append(masked_log_probs(logits, buffer.mask[start:start + chunk]).argmax(-1))
    return torch.cat(out) if out else torch.zeros(0, dtype=torch.long)


def confident_labels(buffer: ReplayBuffer, own: torch.Tensor, confidence: float) -> tuple[torch.Tensor, torch.Tensor]:
    """``(labels, sure)``: the trainer's ``--teacher-confidence`` rule
    (:func:`training.ppo.targets.confident_choice`) over the buffer's improved targets, ``own`` being the
    starting network's moves; ``sure`` marks the decisions where the search's choice was kept."""
    assert buffer.target is not None
    n = buffer.size
    return confident_choice(buffer.target[:n], buffer.teacher[:n], own, confidence)


def fit(net: torch.nn.Module, buffer: ReplayBuffer, labels: str, hard: torch.Tensor | None, steps: int, batch: int,
        learning_rate: float, seed: int, every: int = 200) -> dict[str, float]:
    """``steps`` cloning steps on ``buffer``; returns the last hundred steps' mean loss and how often the
    network's greedy move was the search's choice."""
    generator = torch.Generator().manual_seed(seed)
    optimizer = torch.optim.Adam(net.parameters(), lr=learning_rate, eps=1e-5)
    net.train()
    losses: list[float] = []
    agree: list[float] = []
    for step in range(steps):
        mb = torch.randint(0, buffer.size, (batch,), generator=generator)
        logits, _ = net.logits_and_value(buffer.obs[mb].float())
        logp = masked_log_probs(logits, buffer.mask[mb])
        if labels == "target":
            assert buffer.target is not None
            loss = -(buffer.target[mb].float() * logp).sum(-1).mean()
        else:
            assert hard is not None
            loss = -logp.gather(1, hard[mb][:, None]).mean()
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(net.parameters(), 0.5)
        optimizer.step()
        losses.append(float(loss.detach()))
        agree.append(float((logp.detach().argmax(-1) == buffer.teacher[mb]).float().mean()))
        if (step + 1) % every == 0 or step + 1 == steps:
            tail = slice(-min(len(losses), 100), None)
            print(f"step {step + 1}/{steps}: loss {sum(losses[tail]) / len(losses[tail]):.4f}, greedy move = the "
                  f"search's choice {sum(agree[tail]) / len(agree[tail]):.3f}", file=sys.stderr, flush=True)
    tail = slice(-min(len(losses), 100), None)
    return {"loss": sum(losses[tail]) / len(losses[tail]), "search_choice_agreement": sum(agree[tail]) / len(agree[tail])}


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run", type=pathlib.Path, help="a training.ppo run folder whose checkpoint holds a cloning buffer")
    parser.add_argument("--init", required=True, help="the network to start from: a checkpoint id, a policy folder "
                                                      "or a run folder")
    parser.add_argument("--labels", choices=LABELS, default="target")
    parser.add_argument("--confidence", type=float, default=0.9,
                        help="--labels confident: the least share of the target on the search's choice (0 to 1)")
    parser.add_argument("--steps", type=int, default=768)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--learning-rate", type=float, default=1e-4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=pathlib.Path, required=True, help="the policy folder to write")
    args = parser.parse_args(argv)
    if args.steps < 1 or args.batch < 1:
        parser.error(f"--steps and --batch must be at least 1, got {args.steps} and {args.batch}")
    if not args.learning_rate > 0:
        parser.error(f"--learning-rate must be positive, got {args.learning_rate}")
    if not 0.0 < args.confidence <= 1.0:
        parser.error(f"--confidence is a share of the target in (0, 1], got {args.confidence}")
    path = args.run / "checkpoint" / "bc_buffer.safetensors"
    if not path.is_file():
        parser.error(f"{path} does not exist: RUN must be a training.ppo run folder whose last checkpoint was taken "
                     "while cloning (--bc-steps)")
    try:
        folder = policy_folder(args.init)
        net, spec = load_policy(folder)
    except (CheckpointError, ValueError) as exc:
        parser.error(f"--init: {exc}")
    from safetensors import safe_open

    try:
        with safe_open(str(path), framework="pt") as f:
            soft = "target" in f.keys()
            size = f.get_slice("teacher").get_shape()[0] if "teacher" in f.keys() else 0
    except Exception as exc:  # a file that is not a safetensors file at all
        parser.error(f"{path} is not a readable cloning buffer: {exc}")
    if args.labels != "choice" and not soft:
        parser.error(f"--labels {args.labels} needs improved targets, and {args.run} cloned the teacher's choices "
                     "(--teacher-targets choice): use --labels choice")
    buffer = ReplayBuffer.load(path, max(1, size), tuple(spec["observation_shape"]), int(spec["num_actions"]), soft=soft)
    if buffer.size == 0:
        parser.error(f"{path} holds no labels")
    torch.manual_seed(args.seed)
    hard: torch.Tensor | None = None
    summary: dict[str, Any] = {"labels_in_buffer": buffer.size}
    own = greedy_moves(net, buffer)
    choice = buffer.teacher[:buffer.size]
    agree = own == choice
    summary["search_choice_agreement_before"] = float(agree.float().mean())
    print(f"before fitting, the network's greedy move is the search's choice at "
          f"{summary['search_choice_agreement_before']:.1%} of the labels", file=sys.stderr)
    if args.labels == "choice":
        hard = choice
    elif args.labels == "confident":
        hard, sure = confident_labels(buffer, own, args.confidence)
        summary["search_sure"] = float(sure.float().mean())
        summary["labels_changing_the_move"] = float((sure & ~agree).float().mean())
        print(f"the search is sure of {summary['search_sure']:.1%} of the labels; "
              f"{summary['labels_changing_the_move']:.1%} ask for another move than the network's", file=sys.stderr)
    summary.update(fit(net, buffer, args.labels, hard, args.steps, args.batch, args.learning_rate, args.seed))
    settings = {k: (str(v) if isinstance(v, pathlib.Path) else v) for k, v in vars(args).items()}
    save_policy(args.out, net, arch=spec["arch"], arch_kwargs=spec["arch_kwargs"], game=spec["game"],
                config=spec.get("config", {}), observation_shape=tuple(spec["observation_shape"]),
                num_actions=int(spec["num_actions"]),
                meta={"trainer": "benchmarks.buffer_clone", "init": str(folder), "settings": settings,
                      "summary": summary, "provenance": provenance([spec["game"]])})
    print(f"wrote {args.out}; evaluate it with python -m training.ppo --evaluate {args.out} "
          "--eval-opponents heuristic-v1 --eval-games 400")
    return summary


if __name__ == "__main__":
    main()
