"""Small statistics for evaluation: Wilson intervals and Bradley–Terry (Elo-scale) ratings.

Pure Python and numpy, no game knowledge; ``training/evaluate.py`` and the tests use them.
"""

from __future__ import annotations

import math
from typing import Iterable, Mapping, Sequence

Z95 = 1.959963984540054  # two-sided 95% normal quantile

ELO_SCALE = 400.0 / math.log(10.0)  # rating points per natural-log unit of strength
ELO_MEAN = 1500.0


def wilson_interval(successes: float, trials: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion (default 95%).

    ``wilson_interval(0, 0)`` is ``(0.0, 1.0)``: no games, no information.
    """
    if trials < 0 or successes < 0 or successes > trials:
        raise ValueError(f"need 0 <= successes <= trials, got {successes} of {trials}")
    if trials == 0:
        return 0.0, 1.0
    p = successes / trials
    z2 = z * z
    denom = 1.0 + z2 / trials
    centre = (p + z2 / (2 * trials)) / denom
    half = z * math.sqrt(p * (1 - p) / trials + z2 / (4 * trials * trials)) / denom
    lo = 0.0 if successes == 0 else max(0.0, centre - half)
    hi = 1.0 if successes == trials else min(1.0, centre + half)
    return lo, hi


def bradley_terry(
    names: Sequence[str],
    outcomes: Iterable[tuple[str, str, float]],
    prior_games: float = 1.0,
    iterations: int = 10_000,
    tol: float = 1e-10,
) -> dict[str, float]:
    """Bradley–Terry maximum-likelihood ratings on the Elo scale (mean ``ELO_MEAN``).

    ``outcomes`` holds ``(a, b, score_of_a)`` with score 1 (a won), 0 (b won) or 0.5 (draw); a
    draw counts as half a win for each side. Strengths are fitted with Hunter's (2004)
    minorise–maximise iteration ``p_i <- W_i / sum_j n_ij / (p_i + p_j)``. To keep ratings finite
    when an agent wins every game, each pair that met receives ``prior_games`` virtual games split
    evenly (a mild shrink toward equal strength; set 0 to disable). Ratings are
    ``ELO_MEAN + 400 log10(p_i / geometric mean p)``, so a 200-point gap means the stronger side is
    expected to score about 76%.
    """
    names = list(names)
    index = {n: i for i, n in enumerate(names)}
    k = len(names)
    wins = [[0.0] * k for _ in range(k)]  # wins[i][j]: points i scored against j
    for a, b, score in outcomes:
        i, j = index[a], index[b]
        if i == j:
            continue
        wins[i][j] += score
        wins[j][i] += 1.0 - score
    games = [[wins[i][j] + wins[j][i] for j in range(k)] for i in range(k)]
    if prior_games:
        for i in range(k):
            for j in range(k):
                if i != j and games[i][j] > 0:
                    wins[i][j] += prior_games / 2
                    games[i][j] += prior_games
    total_wins = [sum(row) for row in wins]
    p = [1.0] * k
    for _ in range(iterations):
        new = []
        for i in range(k):
            denom = sum(games[i][j] / (p[i] + p[j]) for j in range(k) if j != i and games[i][j] > 0)
            new.append(total_wins[i] / denom if denom > 0 else p[i])
        # Normalise (the scale is free) and keep strengths positive.
        floor = 1e-12
        new = [max(v, floor) for v in new]
        log_mean = sum(math.log(v) for v in new) / k
        new = [v / math.exp(log_mean) for v in new]
        change = max(abs(math.log(a) - math.log(b)) for a, b in zip(new, p))
        p = new
        if change < tol:
            break
    return {n: ELO_MEAN + ELO_SCALE * math.log(p[index[n]]) for n in names}


def expected_score(rating_a: float, rating_b: float) -> float:
    """Elo expectation of a against b (the Bradley–Terry win probability, draws as halves)."""
    return 1.0 / (1.0 + 10 ** ((rating_b - rating_a) / 400.0))


def pairwise_table(names: Sequence[str], outcomes: Iterable[tuple[str, str, float]]) -> dict[str, Mapping[str, float]]:
    """``table[a][b]`` = a's mean score against b over all their pairwise comparisons."""
    points: dict[tuple[str, str], float] = {}
    counts: dict[tuple[str, str], int] = {}
    for a, b, score in outcomes:
        for x, y, s in ((a, b, score), (b, a, 1.0 - score)):
            points[(x, y)] = points.get((x, y), 0.0) + s
            counts[(x, y)] = counts.get((x, y), 0) + 1
    return {
        a: {b: points[(a, b)] / counts[(a, b)] for b in names if (a, b) in counts} for a in names
    }
