"""Small statistics for evaluation: Wilson intervals and Bradley–Terry (Elo-scale) ratings.

Pure Python and numpy, no game knowledge; ``training.league`` and the tests use them.
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
    ratings = fit_ratings(points_matrix(names, outcomes), prior_games, iterations, tol)
    return {n: float(r) for n, r in zip(names, ratings)}


def points_matrix(names: Sequence[str], outcomes: Iterable[tuple[str, str, float]]):
    """``W[i, j]``: the points ``names[i]`` scored against ``names[j]`` (a numpy array)."""
    import numpy as np

    index = {n: i for i, n in enumerate(names)}
    wins = np.zeros((len(names), len(names)))
    for a, b, score in outcomes:
        i, j = index[a], index[b]
        if i != j:
            wins[i, j] += score
            wins[j, i] += 1.0 - score
    return wins


def fit_ratings(wins, prior_games: float = 1.0, iterations: int = 10_000, tol: float = 1e-10):
    """Elo-scale Bradley–Terry ratings (numpy array) from a points matrix (:func:`points_matrix`);
    the fit behind :func:`bradley_terry`, described there."""
    import numpy as np

    wins = np.array(wins, dtype=float)
    games = wins + wins.T
    if prior_games:
        met = games > 0
        wins = wins + met * (prior_games / 2)
        games = games + met * prior_games
    total = wins.sum(axis=1)
    p = np.ones(len(wins))
    for _ in range(iterations):
        denom = (games / (p[:, None] + p[None, :])).sum(axis=1)
        new = np.where(denom > 0, total / np.where(denom > 0, denom, 1.0), p)
        new = np.maximum(new, 1e-12)  # keep strengths positive
        new = new / np.exp(np.log(new).mean())  # the scale is free: geometric mean 1
        change = np.abs(np.log(new) - np.log(p)).max() if len(p) else 0.0
        p = new
        if change < tol:
            break
    return ELO_MEAN + ELO_SCALE * np.log(p)


def bootstrap_elo_interval(
    names: Sequence[str],
    games: Sequence[Sequence[tuple[str, str, float]]],
    strata: Sequence[int] | None = None,
    resamples: int = 200,
    seed: int = 0,
    prior_games: float = 1.0,
    level: float = 0.95,
    anchor: tuple[str, float] | None = None,
) -> dict[str, list[float | None]]:
    """A ``level`` percentile-bootstrap interval of every agent's :func:`bradley_terry` rating.

    With ``anchor = (name, rating)`` every resample's ratings are shifted so that ``name`` has that
    rating (a ladder's reference agent), so the intervals say how well each rating is known relative
    to it, and the anchor's own interval is the single point ``rating``.

    ``games`` holds each game's pairwise outcomes. Games are resampled with replacement
    ``resamples`` times (within each stratum, e.g. a lineup, when ``strata`` gives one label per
    game, so every resample keeps the schedule's shape), the ratings refitted each time, and the
    interval read from the resampled ratings' percentiles. The generator is seeded: the same input
    gives the same interval.

    An agent that never lost a comparison has no finite maximum-likelihood rating (only the prior
    keeps it finite), and resampling its games cannot show that: its upper bound is ``None``
    (open-ended); one that never scored has a lower bound of ``None``.
    """
    import numpy as np

    names = list(names)
    if resamples < 1:
        raise ValueError(f"resamples must be at least 1, got {resamples}")
    if not 0 < level < 1:
        raise ValueError(f"level must lie strictly between 0 and 1, got {level}")
    strata = [0] * len(games) if strata is None else list(strata)
    if len(strata) != len(games):
        raise ValueError(f"strata names {len(strata)} games; there are {len(games)}")
    per_game = np.stack([points_matrix(names, g) for g in games]) if games else np.zeros((0, len(names), len(names)))
    full = per_game.sum(axis=0) if len(games) else np.zeros((len(names), len(names)))
    rng = np.random.default_rng(seed)
    groups = [np.flatnonzero(np.asarray(strata) == s) for s in dict.fromkeys(strata)]
    samples = np.empty((resamples, len(names)))
    for r in range(resamples):
        counts = np.zeros(len(games))
        for members in groups:
            np.add.at(counts, rng.choice(members, size=len(members)), 1.0)
        samples[r] = fit_ratings(np.tensordot(counts, per_game, axes=1), prior_games, tol=1e-7)
        if anchor is not None:
            samples[r] += anchor[1] - samples[r][names.index(anchor[0])]
    alpha = (1.0 - level) / 2
    lo, hi = np.quantile(samples, [alpha, 1 - alpha], axis=0) if len(games) else (samples[0], samples[0])
    scored, played = full.sum(axis=1), (full + full.T).sum(axis=1)
    out: dict[str, list[float | None]] = {}
    for i, name in enumerate(names):
        never_lost = played[i] > 0 and scored[i] >= played[i]
        never_scored = played[i] > 0 and scored[i] <= 0
        out[name] = [None if never_scored or not played[i] else float(lo[i]),
                     None if never_lost or not played[i] else float(hi[i])]
    return out


def expected_score(rating_a: float, rating_b: float) -> float:
    """Elo expectation of a against b (the Bradley–Terry win probability, draws as halves)."""
    return 1.0 / (1.0 + 10 ** ((rating_b - rating_a) / 400.0))


def pairwise_table(names: Sequence[str], outcomes: Iterable[tuple[str, str, float]]) -> dict[str, Mapping[str, float]]:
    """``table[a][b]`` = a's mean score against b over all their pairwise comparisons."""
    points, counts = _pairwise_sums(outcomes)
    return {
        a: {b: points[(a, b)] / counts[(a, b)] for b in names if (a, b) in counts} for a in names
    }


def pairwise_counts(names: Sequence[str], outcomes: Iterable[tuple[str, str, float]]) -> dict[str, Mapping[str, int]]:
    """``counts[a][b]`` = how many comparisons of a with b lie behind ``pairwise_table(...)[a][b]``."""
    _, counts = _pairwise_sums(outcomes)
    return {a: {b: counts[(a, b)] for b in names if (a, b) in counts} for a in names}


def _pairwise_sums(outcomes: Iterable[tuple[str, str, float]]) -> tuple[dict, dict]:
    points: dict[tuple[str, str], float] = {}
    counts: dict[tuple[str, str], int] = {}
    for a, b, score in outcomes:
        for x, y, s in ((a, b, score), (b, a, 1.0 - score)):
            points[(x, y)] = points.get((x, y), 0.0) + s
            counts[(x, y)] = counts.get((x, y), 0) + 1
    return points, counts
