"""Who won a game: one scoring rule for evaluation, training and tournaments.

A game's per-seat returns become per-team results with :meth:`Game.team_returns` (the mean over
each team's seats); :func:`score_teams` then names the winning teams and ranks every team:

* two teams: a team whose return is > 0 wins; a game with no such team (a draw) has no winner;
* three or more teams: the teams with the highest return win, unless every team ties (then nobody
  wins);
* ranks are fractional (1 = best; tied teams share the mean of the places they span);
* a game that was cut short and whose returns say nothing (``decided=False``, for example a
  truncated Sequence game) has no winner and gives every team the middle rank.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from agents.runner import GameRecord
from envs.core.game import Game


@dataclass(frozen=True)
class TeamScore:
    """One game scored by team: returns, winning teams (possibly none) and fractional ranks."""

    team_returns: list[float]
    winners: list[int]
    ranks: list[float]


def score_teams(team_returns: Sequence[float], decided: bool = True) -> tuple[list[int], list[float]]:
    """Winning teams and fractional ranks (1 = best) of one game; see the module docstring."""
    n = len(team_returns)
    if not decided:
        return [], [(n + 1) / 2] * n
    ranks = []
    for r in team_returns:
        above = sum(1 for x in team_returns if x > r)
        tied = sum(1 for x in team_returns if x == r)
        ranks.append(above + (tied + 1) / 2)
    if n == 2:
        winners = [t for t, r in enumerate(team_returns) if r > 0]
    else:
        best = max(team_returns)
        winners = [] if all(r == best for r in team_returns) else [t for t, r in enumerate(team_returns) if r == best]
    return winners, ranks


def score_game(game: Game, record: GameRecord, truncation_decides: bool = False) -> TeamScore:
    """Score a played game by team. A truncated game counts as undecided unless
    ``truncation_decides`` (for games whose cap pays a ranking, such as Wizard Arena tournaments)."""
    team_returns = game.team_returns(record.returns)
    winners, ranks = score_teams(team_returns, decided=truncation_decides or not record.truncated)
    return TeamScore(team_returns, winners, ranks)
