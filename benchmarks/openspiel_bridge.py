"""Costs of the OpenSpiel bridge: a clone, and a move of ``<game>/ismcts-v0``, per game.

    python -m benchmarks.openspiel_bridge [--positions 5] [--seed 0]

Needs the ``openspiel`` extra. For each game (default config), a clone of an OpenSpiel state is
timed two ways: the bridge's (through the engine's ``clone()``) and what OpenSpiel's generic copy
of a Python state would cost if the bridge kept the engine state as a plain attribute (a fresh
initial state, here a deal, then ``copy.deepcopy`` of the engine state). Then ``ismcts-v0`` chooses
a move at ``--positions`` positions of a seeded random game (every few actions, where the seat has
more than one legal action); the median and the longest choice are reported. Wall-clock times on
this machine, one process.
"""

from __future__ import annotations

import argparse
import copy
import random
import statistics
import time

import agents
import envs
from envs import openspiel


def time_call(fn, repeat: int) -> float:
    """Mean seconds of ``fn()`` over ``repeat`` calls (after one warm-up call)."""
    fn()
    start = time.perf_counter()
    for _ in range(repeat):
        fn()
    return (time.perf_counter() - start) / repeat


def positions(name: str, count: int, seed: int) -> list:
    """Engine states of one seeded random game where the seat to act has a choice."""
    game = envs.make_game(name)
    state = game.new_initial_state(seed)
    rng = random.Random(seed)
    found = []
    step = 0
    while not state.is_terminal() and len(found) < count and step < 5000:
        legal = state.legal_actions()
        if step % 7 == 3 and len(legal) > 1:
            found.append(state.clone())
        state.apply_action(legal[rng.randrange(len(legal))])
        step += 1
    return found


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--positions", type=int, default=5, help="positions timed per game (default: 5)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random games (default: 0)")
    args = parser.parse_args(argv)
    if args.positions < 1:
        parser.error(f"--positions must be >= 1, got {args.positions}")
    print(f"{'game':<17} {'clone (bridge)':>15} {'deal + deepcopy':>16} {'ismcts-v0 move: median':>23} {'max':>7}")
    for name in envs.NAMES:
        game = openspiel.load(envs.make_game(name), seed=args.seed)
        state = game.new_initial_state()
        rng = random.Random(args.seed)
        for _ in range(10):
            if not state.is_terminal():
                state.apply_action(rng.choice(state.legal_actions()))
        bridge = time_call(state.clone, 200)
        generic = time_call(lambda g=game.engine_game, e=state.engine: (g.new_initial_state(0), copy.deepcopy(e)), 50)
        times = []
        for position in positions(name, args.positions, args.seed):
            seat = position.current_player()
            bot = agents.make(f"{name}/ismcts-v0", seed=args.seed)
            bot.reset(seat, position.game)
            observation, view = position.seat_observation(seat), position.player_view(seat)
            start = time.perf_counter()
            bot.act(observation, view)
            times.append(time.perf_counter() - start)
        print(f"{name:<17} {bridge * 1e6:>12.0f} µs {generic * 1e6:>13.0f} µs "
              f"{statistics.median(times):>21.2f} s {max(times):>5.2f} s", flush=True)


if __name__ == "__main__":
    import sys

    from agents.errors import run_command

    sys.exit(run_command(main, "python -m benchmarks.openspiel_bridge"))
