"""Every win rate an index description quotes is the one its ``eval.json`` measured.

Descriptions are what ``agents.describe(id)`` returns and the documentation's checkpoint tables show next to an id,
so a number there that drifts from the evaluation (a re-run, a copy from the wrong line) would be a
claim nobody measured. A claim is a percentage followed, within a few words, by ``vs``, ``against``
or ``among three/five`` and an opponent id (``heuristic-v1``); it must match the checkpoint's own
rate in a lineup with that opponent: to the precision quoted (as the evaluation prints it,
interval included), or within one point when it says "about".
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from tests.checkpoint_helpers import REPO

ROOT = REPO / "checkpoints"
NUMBER = r"\d+(?:\.\d+)?"
CLAIM = re.compile(
    rf"(?P<about>[Aa]bout )?(?P<rate>{NUMBER})%(?: \[(?P<low>{NUMBER}), (?P<high>{NUMBER})\])?"
    r"[^%;:()]{0,40}?\b(?:vs|against|among (?:three|five)) (?:an? )?(?P<opponent>[a-z]+(?:-[a-z]+)*-v\d+)"
)


def _entries() -> list[dict[str, Any]]:
    return json.loads((ROOT / "index.json").read_text())["checkpoints"]


def measured_rates(evaluation: Any, agent: str) -> list[tuple[set[str], float, list[float] | None]]:
    """``(opponent kinds at the table, win rate, Wilson interval)`` of every line of ``agent``."""
    found: list[tuple[set[str], float, list[float] | None]] = []

    def walk(node: Any, table: set[str]) -> None:
        if isinstance(node, dict):
            teams = node.get("teams")
            if isinstance(teams, list):
                members = [m for t in teams for m in (t if isinstance(t, list) else [t])]
                table = {m.split("/")[-1] for m in members if isinstance(m, str)}
            if node.get("agent") == agent and "win_rate" in node:
                found.append((table, node["win_rate"], node.get("win_rate_ci95")))
            for value in node.values():
                walk(value, table)
        elif isinstance(node, list):
            for value in node:
                walk(value, table)

    walk(evaluation, set())
    return found


def _decimals(text: str) -> int:
    return len(text.split(".")[1]) if "." in text else 0


def _as_quoted(fraction: float, like: str) -> str:
    return f"{fraction:.{_decimals(like)}%}".rstrip("%")


def _claims() -> list[tuple[str, re.Match[str]]]:
    return [(e["id"], m) for e in _entries() for m in CLAIM.finditer(e.get("description", ""))]


def test_the_descriptions_quote_enough_rates_for_this_check_to_mean_something():
    claims = _claims()
    assert len(claims) >= 20
    assert {agent.split("/")[0] for agent, _ in claims} == {"sequence_v0", "pans_trial_v0", "dojo_v0", "wizard_arena_v0"}


@pytest.mark.parametrize("agent,claim", _claims(), ids=lambda x: x if isinstance(x, str) else x.group(0)[:40])
def test_a_quoted_rate_is_the_measured_one(agent, claim):
    entry = next(e for e in _entries() if e["id"] == agent)
    evaluation = json.loads((ROOT / entry["eval"]).read_text())
    lines = [(rate, ci) for table, rate, ci in measured_rates(evaluation, agent) if claim["opponent"] in table]
    assert lines, f"{agent}: its eval.json has no line against {claim['opponent']}"
    quoted = float(claim["rate"])
    if claim["about"]:
        ok = [rate for rate, _ in lines if abs(100 * rate - quoted) <= 1.0]
    else:
        ok = [rate for rate, ci in lines if _as_quoted(rate, claim["rate"]) == claim["rate"] and (
            claim["low"] is None
            or (ci is not None and [_as_quoted(ci[0], claim["low"]), _as_quoted(ci[1], claim["high"])]
                == [claim["low"], claim["high"]])
        )]
    measured = [f"{rate:.1%} {[round(100 * c, 1) for c in ci or []]}" for rate, ci in lines]
    assert ok, f"{agent}: the description says {claim.group(0)!r}; eval.json measured {measured}"


def test_the_check_catches_a_wrong_number():
    evaluation = {"lineups": [{"teams": ["g/ppo-v1", "g/heuristic-v1"], "agents": [
        {"agent": "g/ppo-v1", "win_rate": 0.2475, "win_rate_ci95": [0.2077, 0.2921]}]}]}
    ((table, rate, ci),) = measured_rates(evaluation, "g/ppo-v1")
    assert table == {"ppo-v1", "heuristic-v1"}
    claim = CLAIM.search("first place 24.8% [20.8, 29.2] among three heuristic-v1")
    assert claim and claim["opponent"] == "heuristic-v1"
    assert _as_quoted(rate, claim["rate"]) == "24.8"  # 99 of 400, as the evaluation prints it
    assert _as_quoted(ci[1], claim["high"]) == "29.2"
    assert _as_quoted(rate, "25") == "25" and _as_quoted(rate, "24.70") == "24.75"
    assert CLAIM.search("wins 61% against heuristic-v1")["rate"] == "61"
