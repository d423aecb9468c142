"""Game-design simulator: play many seeded games and report how the rules behave.

    python -m training.simulate dojo --games 200 --players 4 --agents heuristic \
        --switches all --out dojo_sim.png

Plays ``--games`` seeded games per configuration with the chosen agents (``heuristic`` =
``dojo_v0/heuristic-v1``, the greedy walker; ``random`` = ``dojo_v0/random-v0``; or a comma list,
one per seat), the player count and any ``--set key=value`` switches, and reports:

* turns and rounds per game (mean, median, standard deviation, 10th-90th percentile);
* win rate by seat with 95% Wilson intervals, and how many games hit the turn cap;
* Final Exam attempts per game and their success rate;
* mean track (belt = track // 3) after each round;
* with ``--switches``, each rule switch's effect against the default (same seeds), including the
  seed's one published figure: ``short_game`` (everyone starts on Yellow) should save "about a
  fifth of the playing time".

The table goes to stdout (and ``--json`` if given), the plot (matplotlib, Agg) to ``--out``.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from dataclasses import dataclass, field
from typing import Any

import agents
import envs

GAMES = {"dojo": "dojo_v0"}
AGENT_ALIASES = {"heuristic": "heuristic-v1", "greedy": "heuristic-v1", "random": "random-v0"}
#: The seed's tested alternatives and the shorter game, each against the default.
SWITCHES: dict[str, dict[str, Any]] = {
    "short_game": {"short_game": True},
    "exam_ties_to_defender": {"exam_ties_to_defender": True},
    "exam_best_of_three": {"exam_best_of_three": True},
    "exam_defender_own_belt": {"exam_defender_own_belt": True},
    "kiai_bonus=1": {"kiai_bonus": 1},
    "failed_exam_cost=0": {"failed_exam_cost": 0},
    "failed_exam_cost=1": {"failed_exam_cost": 1},
    "fatica_on_stop_only": {"fatica_on_stop_only": True},
    "kumite_first_round": {"kumite_first_round": True},
    "first_player_extra_stripe": {"first_player_extra_stripe": True},
}


@dataclass
class Args:
    game: str = "dojo"
    """game to simulate (only ``dojo`` so far)"""
    games: int = 100
    """games per configuration"""
    players: int = 4
    """number of players (2-8)"""
    agents: str = "heuristic"
    """``heuristic``, ``random`` or a comma list with one entry per seat"""
    seed: int = 0
    """first game seed; game i uses seed + i (the same seeds for every configuration)"""
    set: list[str] = field(default_factory=list)
    """extra config switches for every run, e.g. ``--set short_game=true``"""
    switches: str = "none"
    """``all``, ``none`` or a comma list of names from SWITCHES to compare against the default"""
    max_cycles: int | None = None
    """turn cap in cycles (default: the game's default_max_cycles); capped games have no winner"""
    out: str = "dojo_simulation.png"
    """where the plot goes"""
    json: str | None = None
    """optional path for the full report as JSON"""
    progress: bool = True
    """show a tqdm progress bar"""


def parse_args(argv: list[str] | None = None) -> Args:
    parser = argparse.ArgumentParser(prog="python -m training.simulate", description=__doc__.split("\n\n")[0])
    parser.add_argument("game", choices=sorted(GAMES))
    defaults = Args()
    for name in ("games", "players", "seed", "max_cycles"):
        parser.add_argument(f"--{name.replace('_', '-')}", type=int, default=getattr(defaults, name))
    for name in ("agents", "switches", "out", "json"):
        parser.add_argument(f"--{name}", type=str, default=getattr(defaults, name))
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--no-progress", dest="progress", action="store_false")
    ns = parser.parse_args(argv)
    return Args(**vars(ns))


def parse_value(text: str) -> Any:
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    try:
        return int(text)
    except ValueError:
        return text


def wilson(wins: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """95% Wilson score interval for a proportion."""
    if n == 0:
        return (0.0, 1.0)
    p = wins / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def spread(values: list[float]) -> dict[str, float]:
    if not values:
        return {"mean": float("nan"), "median": float("nan"), "std": float("nan"), "p10": float("nan"),
                "p90": float("nan")}
    ordered = sorted(values)
    pick = lambda q: ordered[min(len(ordered) - 1, int(q * len(ordered)))]  # noqa: E731
    return {
        "mean": statistics.fmean(values),
        "median": statistics.median(values),
        "std": statistics.pstdev(values),
        "p10": pick(0.1),
        "p90": pick(0.9),
    }


def make_agents(spec: str, game_name: str, n: int, seed: int) -> list[agents.Agent]:
    names = spec.split(",")
    if len(names) == 1:
        names = names * n
    if len(names) != n:
        raise SystemExit(f"--agents lists {len(names)} agents for {n} players")
    out = []
    for seat, name in enumerate(names):
        kind = AGENT_ALIASES.get(name, name)
        out.append(agents.make(f"{game_name}/{kind}", seed=seed * 100 + seat))
    return out


def play_one(game, seats, seed: int, max_actions: int) -> dict[str, Any]:
    """One game straight on the engine (the agents still see only observation + view)."""
    state = game.new_initial_state(seed)
    n = game.num_players
    for seat, agent in enumerate(seats):
        agent.reset(seat, game.config)
    tracks_by_round: list[list[int]] = []
    actions = 0
    while not state.is_terminal() and actions < max_actions:
        p = state.current_player()
        obs = {"observation": game.observe(state, p), "action_mask": state.legal_mask()}
        state.apply_action(seats[p].act(obs, state.player_view(p)))
        actions += 1
        turns = state.stats["turns"]
        if turns and turns % n == 0 and len(tracks_by_round) < turns // n:
            tracks_by_round.append(list(state.track))
    turns = state.stats["turns"]
    return {
        "seed": seed,
        "winner": state.winner if state.is_terminal() else None,
        "turns": turns,
        "rounds": turns / n,
        "actions": actions,
        "exam_attempts": state.stats["exam_attempts"],
        "kumite": state.stats["kumite"],
        "cards": state.stats["cards"],
        "tracks_by_round": tracks_by_round,
    }


def run_config(args: Args, config: dict[str, Any], label: str, bar=None) -> dict[str, Any]:
    game_name = GAMES[args.game]
    game = envs.make_game(game_name, **config)
    n = game.num_players
    cycles = args.max_cycles or type(game).default_max_cycles
    games = []
    for i in range(args.games):
        seats = make_agents(args.agents, game_name, n, args.seed + i)
        games.append(play_one(game, seats, args.seed + i, cycles * n))
        if bar is not None:
            bar.update(1)
    finished = [g for g in games if g["winner"] is not None]
    wins = [sum(1 for g in finished if g["winner"] == s) for s in range(n)]
    attempts = sum(g["exam_attempts"] for g in games)
    longest = max((len(g["tracks_by_round"]) for g in games), default=0)
    mean_track = []
    for r in range(longest):
        values = [t for g in games for t in (g["tracks_by_round"][r] if r < len(g["tracks_by_round"]) else [])]
        if len(values) < n * max(1, len(games) // 4):
            break  # too few games still running for a meaningful mean
        mean_track.append(statistics.fmean(values))
    return {
        "label": label,
        "config": game.config,
        "games": len(games),
        "finished": len(finished),
        "truncated": len(games) - len(finished),
        "turns": spread([g["turns"] for g in finished]),
        "rounds": spread([g["rounds"] for g in finished]),
        "win_rate_by_seat": [
            {"seat": s, "wins": wins[s], "rate": wins[s] / len(finished) if finished else float("nan"),
             "ci95": wilson(wins[s], len(finished))}
            for s in range(n)
        ],
        "exam_attempts_per_game": attempts / len(games) if games else float("nan"),
        "exam_success_rate": len(finished) / attempts if attempts else float("nan"),
        "exam_success_ci95": wilson(len(finished), attempts) if attempts else (0.0, 1.0),
        "kumite_per_game": statistics.fmean(g["kumite"] for g in games) if games else float("nan"),
        "cards_per_game": statistics.fmean(g["cards"] for g in games) if games else float("nan"),
        "mean_track_by_round": mean_track,
    }


def format_report(base: dict[str, Any], variants: list[dict[str, Any]]) -> str:
    lines = []
    b = base
    lines.append(f"== {b['label']}: {b['games']} games, {b['finished']} finished, {b['truncated']} hit the turn cap")
    for key in ("turns", "rounds"):
        s = b[key]
        lines.append(f"{key:>7} per game: mean {s['mean']:.1f}  median {s['median']:.1f}  sd {s['std']:.1f}  "
                     f"p10-p90 {s['p10']:.0f}-{s['p90']:.0f}")
    lines.append("win rate by seat (95% Wilson):")
    for w in b["win_rate_by_seat"]:
        lo, hi = w["ci95"]
        lines.append(f"  player_{w['seat']}: {w['rate']:.3f}  [{lo:.3f}, {hi:.3f}]  ({w['wins']} wins)")
    lo, hi = b["exam_success_ci95"]
    lines.append(f"Final Exam: {b['exam_attempts_per_game']:.2f} attempts per game, success rate "
                 f"{b['exam_success_rate']:.3f} [{lo:.3f}, {hi:.3f}]; per game: {b['kumite_per_game']:.1f} Kumite, "
                 f"{b['cards_per_game']:.1f} cards drawn")
    track = b["mean_track_by_round"]
    if track:
        marks = [f"r{r + 1}:{track[r]:.1f}" for r in range(0, len(track), max(1, len(track) // 8))]
        lines.append("mean track after round: " + "  ".join(marks))
    if variants:
        lines.append("")
        lines.append(f"{'switch':<28}{'rounds':>8}{'vs default':>12}{'exam att.':>10}{'exam win':>10}"
                     f"{'capped':>8}{'seat0 win':>10}")
        base_rounds = b["rounds"]["mean"]
        for v in [b] + variants:
            r = v["rounds"]["mean"]
            change = (r - base_rounds) / base_rounds if base_rounds else float("nan")
            lines.append(f"{v['label']:<28}{r:>8.1f}{change:>+11.1%} {v['exam_attempts_per_game']:>9.2f}"
                         f"{v['exam_success_rate']:>10.3f}{v['truncated']:>8d}"
                         f"{v['win_rate_by_seat'][0]['rate']:>10.3f}")
        short = [v for v in variants if v["label"] == "short_game"]
        if short and base_rounds:
            saved = 1 - short[0]["rounds"]["mean"] / base_rounds
            lines.append(f"\nshort_game (everyone starts on Yellow) saves {saved:.1%} of the playing time "
                         f"(rounds); the rules draft (v0.9) estimates about 20%.")
    return "\n".join(lines)


def plot(base: dict[str, Any], variants: list[dict[str, Any]], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(13, 5))
    ax = axes[0]
    for v in [base] + [v for v in variants if v["label"] in ("short_game", "fatica_on_stop_only")]:
        track = v["mean_track_by_round"]
        ax.plot(range(1, len(track) + 1), [t / 3 for t in track], label=v["label"])
    ax.set_xlabel("round")
    ax.set_ylabel("mean belt (track / 3; 5 = Brown)")
    ax.set_title("Belt over time")
    ax.axhline(5, color="grey", lw=0.5)
    ax.legend()
    ax = axes[1]
    rows = [base] + variants
    means = [v["rounds"]["mean"] for v in rows]
    errs = [1.96 * v["rounds"]["std"] / math.sqrt(max(1, v["finished"])) for v in rows]
    ax.barh(range(len(rows)), means, xerr=errs, color=["#555"] + ["#8ab"] * len(variants))
    ax.set_yticks(range(len(rows)), [v["label"] for v in rows])
    ax.invert_yaxis()
    ax.set_xlabel("rounds per finished game (mean, 95% CI)")
    ax.set_title("Switch effects")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    args = parse_args(argv)
    base_config: dict[str, Any] = {"num_players": args.players}
    for item in args.set:
        key, _, value = item.partition("=")
        base_config[key] = parse_value(value)
    if args.switches == "all":
        chosen = list(SWITCHES)
    elif args.switches in ("none", ""):
        chosen = []
    else:
        chosen = args.switches.split(",")
        unknown = [c for c in chosen if c not in SWITCHES]
        if unknown:
            raise SystemExit(f"unknown switch(es) {unknown}; choose from {list(SWITCHES)}")
    bar = None
    if args.progress:
        from tqdm import tqdm

        bar = tqdm(total=args.games * (1 + len(chosen)), desc="games", unit="game", file=sys.stderr)
    start = time.time()
    base = run_config(args, base_config, "default", bar)
    variants = [run_config(args, {**base_config, **SWITCHES[name]}, name, bar) for name in chosen]
    if bar is not None:
        bar.close()
    report = format_report(base, variants)
    print(report)
    print(f"\n({time.time() - start:.1f}s; agents {args.agents}; plot written to {args.out})")
    plot(base, variants, args.out)
    result = {"args": vars(args), "default": base, "switches": variants, "text": report}
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(result, fh, indent=1)
    return result


if __name__ == "__main__":
    main()
