"""Fit a leaf value for the rollout search on games of heuristic-v1: who wins, read from a few features a seat.

    python -m benchmarks.fit_value dojo_v0 --games 300 --out runs/fit/dojo_v0.json
    python -m benchmarks.fit_value wizard_arena_v0 --games 3000 --every 20 --out runs/fit/wizard_arena_v0.json

Every seat plays ``heuristic-v1`` (game ``g`` dealt with seed ``seed + g``, seat ``s`` of it seeded
``10 g + s``); every ``every`` actions (from action ``offset``) each seat's features are read
(:data:`agents.rollout_search.VALUE_FEATURES`), and each position is labelled with the game's final
returns. Two models, both linear in the features with one weight vector shared by the seats:

- ``win``: a conditional logit, P(seat wins) = softmax over the seats of w . f(seat), fitted by maximum
  likelihood on the positions of games with a sole winner (what ``dojo_fitted_value`` uses);
- ``rank``: each other seat finishes ahead with probability sigmoid(w . f(it) - w . f(seat)), and the
  expected ranking return 1 - 2 E[seats ahead] / (n - 1) is fitted to the final return by least squares
  (the form of ``wizard_arena_value``).

The last fifth of the games is held out: the report gives the held-out negative log-likelihood of the
winner (against a uniform guess, log n) and the held-out squared error of the return (against always
guessing 0), for both fits and for the game's hand-written value where it has one. The JSON written to
``--out`` carries the weights, the metrics, the settings and the provenance. The search reads it as its
leaf value: ``RolloutSearchAgent(..., value="runs/fit/dojo_v0.json")`` (the ``win`` fit) or
``value="runs/fit/dojo_v0.json:rank"``, and ``python -m benchmarks.search_eval ... --value FILE.json``.
"""

from __future__ import annotations

import argparse
import json
import math
import pathlib
import sys
import time
from typing import Any, Sequence

import numpy as np
import torch

import agents
import envs
from agents.rollout_search import VALUE_FEATURES
from agents.runner import seat_inputs
from envs.provenance import provenance


def collect(game_name: str, games: int, seed: int, every: int, offset: int,
            progress: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Features ``[positions, seats, features]``, final returns ``[positions, seats]`` and the game index of
    each position, from ``games`` games of heuristic-v1 at every seat."""
    features = VALUE_FEATURES[game_name]
    game = envs.make_game(game_name)
    n = game.num_players
    xs: list[list[list[float]]] = []
    rs: list[list[float]] = []
    gs: list[int] = []
    start = time.perf_counter()
    for g in range(games):
        state = game.new_initial_state(seed + g)
        bots = [agents.make(f"{game_name}/heuristic-v1", seed=10 * g + s) for s in range(n)]
        for s, bot in enumerate(bots):
            bot.reset(s, game)
        found = []
        k = 0
        while not state.is_terminal():
            if k >= offset and (k - offset) % every == 0:
                found.append([features(state, p) for p in range(n)])
            p = state.current_player()
            state.apply_action(bots[p].act(*seat_inputs(state, p)))
            k += 1
        returns = [float(r) for r in state.returns()]
        xs.extend(found)
        rs.extend([returns] * len(found))
        gs.extend([g] * len(found))
        if progress and (g + 1) % max(1, games // 20) == 0:
            print(f"{g + 1}/{games} games, {len(xs)} positions, {time.perf_counter() - start:.0f} s",
                  file=sys.stderr, flush=True)
    return np.asarray(xs, np.float32), np.asarray(rs, np.float32), np.asarray(gs)


def expected_rank_return(scores: torch.Tensor) -> torch.Tensor:
    """``[positions, seats]`` keys -> the expected ranking return of each seat (pairwise sigmoids)."""
    n = scores.shape[1]
    ahead = torch.sigmoid(scores.unsqueeze(1) - scores.unsqueeze(2)).sum(2) - 0.5  # [b, i] = sum_j s(k_j - k_i)
    return 1.0 - 2.0 * ahead / (n - 1)


def metrics(scores: torch.Tensor, returns: torch.Tensor) -> dict[str, float]:
    """Held-out winner NLL (positions with a sole winner) and return MSE of one set of keys."""
    sole = (returns == 1.0).sum(1) == 1
    winner = (returns == 1.0).float().argmax(1)
    nll = torch.nn.functional.cross_entropy(scores[sole], winner[sole]) if bool(sole.any()) else torch.tensor(math.nan)
    mse = ((expected_rank_return(scores) - returns) ** 2).mean()
    return {"winner_nll": round(float(nll), 4), "return_mse": round(float(mse), 4)}


def fit(x: torch.Tensor, returns: torch.Tensor, target: str, iterations: int = 300) -> torch.Tensor:
    """The weights of one model (``win`` or ``rank``) by L-BFGS from zero."""
    w = torch.zeros(x.shape[2], dtype=torch.float64, requires_grad=True)
    x, returns = x.double(), returns.double()
    sole = (returns == 1.0).sum(1) == 1
    winner = (returns == 1.0).double().argmax(1)
    if target == "win" and not bool(sole.any()):
        raise ValueError("no game with a sole winner among the training games: play more games")
    opt = torch.optim.LBFGS([w], max_iter=iterations, line_search_fn="strong_wolfe")

    def closure() -> torch.Tensor:
        opt.zero_grad()
        scores = x @ w
        if target == "win":
            loss = torch.nn.functional.cross_entropy(scores[sole], winner[sole])
        else:
            loss = ((expected_rank_return(scores) - returns) ** 2).mean()
        loss.backward()
        return loss

    opt.step(closure)
    return w.detach().float()


def hand_keys(game_name: str, x: torch.Tensor) -> torch.Tensor | None:
    """The hand-written values' keys in the same form, where the features allow it."""
    if game_name == "wizard_arena_v0":  # wizard_arena_value: score + 0.03 strength (tenths) + 0.1 HP, -1 if fallen
        alive = x[:, :, 3] > 0
        return 10 * x[:, :, 0] + 3 * x[:, :, 1] + torch.where(alive, x[:, :, 2], torch.full_like(x[:, :, 2], -1.0))
    if game_name == "dojo_v0":  # dojo_value: exp(0.45 track), the track being feature 0 x 17
        return 0.45 * 17 * x[:, :, 0]
    return None


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.fit_value", description=__doc__.split("\n\n")[0])
    parser.add_argument("game", choices=sorted(VALUE_FEATURES), help="the game whose value to fit")
    parser.add_argument("--games", type=int, default=300, help="games of heuristic-v1 to read (default 300)")
    parser.add_argument("--seed", type=int, default=900000, help="first deal seed (default 900000)")
    parser.add_argument("--every", type=int, default=15, help="read the seats every this many actions (default 15)")
    parser.add_argument("--offset", type=int, default=-1, help="first action read (default every // 2)")
    parser.add_argument("--out", type=pathlib.Path, required=True, help="JSON file to write")
    args = parser.parse_args(argv)
    if args.games < 5:
        parser.error(f"--games must be 5 or more (a fifth is held out), got {args.games}")
    if args.every < 1:
        parser.error(f"--every must be 1 or more, got {args.every}")
    offset = args.every // 2 if args.offset < 0 else args.offset
    torch.set_num_threads(1)
    xs, rs, gs = collect(args.game, args.games, args.seed, args.every, offset)
    if len(xs) == 0:
        raise SystemExit(f"no positions read: games shorter than {offset} actions; lower --offset or --every")
    x, r = torch.from_numpy(xs), torch.from_numpy(rs)
    train = torch.from_numpy(gs < args.games - args.games // 5)
    test = ~train
    report: dict[str, Any] = {"fits": {}}
    for target in ("win", "rank"):
        w = fit(x[train], r[train], target)
        report["fits"][target] = {"weights": [round(float(v), 4) for v in w], **metrics(x[test] @ w, r[test])}
    hand = hand_keys(args.game, x[test])
    n = xs.shape[1]
    report["held_out_baselines"] = {
        "uniform_winner_nll": round(math.log(n), 4),
        "zero_return_mse": round(float((r[test] ** 2).mean()), 4),
        **({"hand_written": metrics(hand, r[test])} if hand is not None else {}),
    }
    result = {"game": args.game, "features": VALUE_FEATURES[args.game].__name__, "games": args.games, "seed": args.seed,
              "every": args.every, "offset": offset, "positions": int(len(xs)),
              "held_out_positions": int(test.sum()), **report, "provenance": provenance(args.game)}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps({k: v for k, v in result.items() if k != "provenance"}, indent=1))
    return result


if __name__ == "__main__":
    import sys

    from agents.errors import run_command

    sys.exit(run_command(main, "python -m benchmarks.fit_value"))
