"""CPU per choice of a rollout search over a network: rollouts one at a time against lockstep rollouts.

    python -m benchmarks.lockstep_search --out runs/lockstep/pans_trial_v0.json

The search is :class:`agents.rollout_search.RolloutSearchAgent` over the network of a checkpoint whose
index entry carries a ``search`` block (``--checkpoint``, by default ``pans_trial_v0/ppo-search-v6``),
with that block's settings read as the rollout search's nearest ones: ``determinizations`` ->
``simulations``, ``top_k`` -> ``max_candidates`` (the base's choice and the best others one ply ahead,
where the network search takes its most likely moves), ``rollout_turns`` -> ``turns`` (the seat's
further turns, where the network search counts its further moves), ``max_plies`` -> ``horizon``;
``prior_weight`` has no counterpart, and the leaves are scored by the game's value function. Every
seat inside the rollouts plays the network. Each ``--scales`` entry multiplies the determinizations.

The positions: every ``--every``-th action of games of the network at every seat (greedy, deals seeded
from ``--seed``) where the seat to act has a choice, ``--positions`` of them. Each is searched by two
agents made from the same seed, ``lockstep=0`` (one rollout after the other) and ``lockstep=--lockstep``,
each search timed with the process's CPU clock, torch on one thread; one search of each kind on the
first position runs first, untimed (the network's first forward passes). The report gives per scale
the mean CPU seconds per choice of each, their ratio, and whether every choice and every candidate's
value came out the same; the counts and seeds are fixed, so a second run gives the same choices and
values, only the times differ.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
import time
from typing import Any, Sequence

import envs
from agents.rollout_search import SETTINGS, RolloutSearchAgent, agent_factory
from agents.runner import seat_inputs
from envs.core.game import Game, State
from envs.provenance import provenance

ROOT = pathlib.Path(__file__).resolve().parent.parent

#: A network search's setting -> the rollout search's nearest setting.
NEAREST = {"determinizations": "simulations", "top_k": "max_candidates", "rollout_turns": "turns",
                "max_plies": "horizon"}


def checkpoint_search(checkpoint: str) -> tuple[dict[str, Any], pathlib.Path, dict[str, Any]]:
    """``(entry, policy folder, rollout search settings)`` of an index entry with a ``search`` block."""
    index = json.loads((ROOT / "checkpoints" / "index.json").read_text(encoding="utf-8"))["checkpoints"]
    found = [e for e in index if e["id"] == checkpoint]
    with_search = [e["id"] for e in index if "search" in e]
    if not found or "search" not in found[0]:
        raise ValueError(f"--checkpoint must be an index entry with a search block, one of {with_search}; "
                         f"got {checkpoint!r}")
    entry = found[0]
    settings = {NEAREST[k]: v for k, v in entry["search"].items() if k in NEAREST}
    return entry, ROOT / "checkpoints" / entry["path"], settings


def positions(game: Game, base: str, count: int, every: int, seed: int) -> list[State]:
    """``count`` positions with a choice for the seat to act: every ``every``-th action of games of ``base``
    at every seat, deals ``seed``, ``seed + 1``, ..."""
    found: list[State] = []
    deal = seed
    while len(found) < count:
        if deal - seed > 10 * count:
            raise RuntimeError(f"{count} positions not found in {deal - seed} games")
        state = game.new_initial_state(deal)
        bots = [agent_factory(game.name, base)(deal * 10 + p) for p in range(game.num_players)]
        for p, bot in enumerate(bots):
            bot.reset(p, game)
        played = 0
        while not state.is_terminal() and len(found) < count:
            p = state.current_player()
            if played % every == every - 1 and int(state.legal_mask().sum()) > 1:
                found.append(state.clone())
            state.apply_action(bots[p].act(*seat_inputs(state, p)))
            played += 1
        deal += 1
    return found


def search_once(game: Game, state: State, base: str, settings: dict[str, Any], seed: int) -> dict[str, Any]:
    """One search of ``state``'s seat to act: its choice, values, counts and CPU seconds."""
    seat = state.current_player()
    bot = RolloutSearchAgent(game.name, seed=seed, base=base, search=settings)
    bot.reset(seat, game)
    observation, view = seat_inputs(state, seat)
    start = time.process_time()
    choice, values = bot.search_values(observation, view)
    cpu = time.process_time() - start
    return {"choice": choice, "values": values, "last_search": bot.last_search, "cpu_s": cpu}


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--checkpoint", default="pans_trial_v0/ppo-search-v6",
                        help="an index entry with a search block: its network and settings (default: %(default)s)")
    parser.add_argument("--scales", type=int, nargs="+", default=[1, 4],
                        help="multiples of its determinizations to measure (default: %(default)s)")
    parser.add_argument("--positions", type=int, default=12, help="positions searched (default: %(default)s)")
    parser.add_argument("--every", type=int, default=9, help="a position every this many actions (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=0, help="first deal seed (default: %(default)s)")
    parser.add_argument("--lockstep", type=int, default=4096,
                        help="rollouts advanced together in the lockstep search (default: %(default)s)")
    parser.add_argument("--out", type=pathlib.Path, required=True, help="the JSON report")
    args = parser.parse_args(argv)
    if args.positions < 1 or args.every < 1 or min(args.scales) < 1:
        parser.error(f"--positions, --every and --scales must be at least 1, got {args.positions}, {args.every}, "
                     f"{args.scales}")
    high = SETTINGS["lockstep"][2]
    if not 1 <= args.lockstep <= high:
        parser.error(f"--lockstep must be in [1, {high}] (0, one at a time, is what it is measured against), "
                     f"got {args.lockstep}")
    try:
        entry, folder, settings = checkpoint_search(args.checkpoint)
    except ValueError as exc:
        parser.error(str(exc))
    import torch

    torch.set_num_threads(1)
    game = envs.make_game(entry["game"], **entry.get("config", {}))
    base = str(folder)
    states = positions(game, base, args.positions, args.every, args.seed)
    report: dict[str, Any] = {
        "what": "CPU seconds per choice (time.process_time, torch on one thread) of RolloutSearchAgent over a "
                "network, rollouts one at a time (lockstep=0) against lockstep rollouts, on the same positions "
                "and seeds",
        "command": " ".join(["python -m benchmarks.lockstep_search", *(sys.argv[1:] if argv is None else argv)]),
        "checkpoint": args.checkpoint, "base": str(folder.relative_to(ROOT)), "search_block": entry["search"],
        "lockstep": args.lockstep, "positions": args.positions, "every": args.every, "seed": args.seed,
        "scales": [], "provenance": provenance(entry["game"]),
    }
    warm = {**settings, "simulations": 1}
    for rows in (0, args.lockstep):
        search_once(game, states[0], base, {**warm, "lockstep": rows}, seed=0)
    for scale in args.scales:
        scaled = {**settings, "simulations": settings["simulations"] * scale}
        if scaled["simulations"] > SETTINGS["simulations"][2]:
            parser.error(f"--scales {scale}: {scaled['simulations']} determinizations, more than the "
                         f"{SETTINGS['simulations'][2]} a search allows")
        measured = []
        for i, state in enumerate(states):
            one = search_once(game, state, base, {**scaled, "lockstep": 0}, seed=1000 + i)
            lock = search_once(game, state, base, {**scaled, "lockstep": args.lockstep}, seed=1000 + i)
            same = (one["choice"], one["values"], one["last_search"]) == (lock["choice"], lock["values"],
                                                                          lock["last_search"])
            measured.append({"position": i, "choice": one["choice"], "same": same,
                             "rollouts": one["last_search"]["rollouts"],
                             "one_at_a_time_cpu_s": round(one["cpu_s"], 4), "lockstep_cpu_s": round(lock["cpu_s"], 4)})
            print(f"x{scale} position {i + 1}/{len(states)}: {one['last_search']['rollouts']} rollouts, "
                  f"{one['cpu_s']:.3f} s one at a time, {lock['cpu_s']:.3f} s lockstep, "
                  f"{'same' if same else 'DIFFERENT'} choice and values", flush=True)
        one_s = sum(m["one_at_a_time_cpu_s"] for m in measured) / len(measured)
        lock_s = sum(m["lockstep_cpu_s"] for m in measured) / len(measured)
        report["scales"].append({
            "scale": scale, "settings": scaled, "one_at_a_time_cpu_s_per_choice": round(one_s, 4),
            "lockstep_cpu_s_per_choice": round(lock_s, 4), "ratio": round(one_s / lock_s, 2),
            "same_choice_and_values": sum(m["same"] for m in measured), "positions": measured,
        })
        print(f"x{scale}: {one_s:.3f} s a choice one at a time, {lock_s:.3f} s in lockstep: {one_s / lock_s:.1f}x less "
              f"CPU; {sum(m['same'] for m in measured)}/{len(measured)} the same choice and values", flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    return report


if __name__ == "__main__":
    from agents.errors import run_command

    sys.exit(run_command(main, "python -m benchmarks.lockstep_search"))
