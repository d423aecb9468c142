"""The one evaluation and the one report every trainer uses (training/evaluation.py, training/report.py)."""

from __future__ import annotations

import copy

import pytest
import torch

import envs
from agents.nets import default_arch
from agents.architectures import build_architecture
from training import sb3
from training.evaluation import NOTE, evaluate_and_write, evaluate_module, opponent_summary
from training.vector_env import Outcome
from training.report import curve_row, make_report, validate_report


def tiny_net(game_name: str, config: dict) -> torch.nn.Module:
    torch.manual_seed(0)
    game = envs.make_game(game_name, **config)
    arch, kwargs = default_arch(game, "mlp_ac", conv_channels=4, conv_layers=1, hidden=16)
    return build_architecture(arch, **kwargs)


class Counting(torch.nn.Module):
    """Wraps a network and counts the decisions it is asked for."""

    def __init__(self, net: torch.nn.Module) -> None:
        super().__init__()
        self.net = net
        self.decisions = 0

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        self.decisions += obs.shape[0]
        return self.net(obs)


def test_outcomes_are_counted_as_the_harness_counts_them():
    outcomes = [
        Outcome("random-v0", 1.0, won=True, draw=False, rank=1.0, truncated=False, length=10, side=0),
        Outcome("random-v0", -1.0, won=False, draw=False, rank=2.0, truncated=False, length=20, side=1),
        Outcome("random-v0", 0.0, won=False, draw=True, rank=1.5, truncated=True, length=30, side=0),
        Outcome("random-v0", 1.0, won=True, draw=False, rank=1.0, truncated=False, length=40, side=1),
    ]
    s = opponent_summary(outcomes, "random-v0", 2)
    assert (s["games"], s["wins"], s["draws"], s["losses"]) == (4, 2, 1, 1)
    assert s["win_rate"] == 0.5 and s["mean_length"] == 25 and s["mean_rank"] == pytest.approx(1.375)
    assert s["games_by_side"] == [2, 2] and s["wins_by_side"] == [1, 1]
    low, high = s["win_rate_ci95"]
    assert 0.1 < low < 0.5 < high < 0.9  # Wilson 95% for 2 of 4
    assert s["opponent"] == "random-v0"


def test_the_policy_plays_every_seat_of_its_team_and_teams_rotate():
    config = {"players_per_team": 2}
    module = Counting(tiny_net("sequence_v0", config))
    result = evaluate_module(module, "sequence_v0", config, ["random-v0"], games=4, seed=5, max_actions=80)
    r = result["random-v0"]
    assert r["games"] == 4 and r["wins"] + r["draws"] + r["losses"] == 4
    assert r["games_by_side"] == [2, 2]  # game g: the policy's team is g % 2
    # Seats alternate between the two teams, so the policy's team (both of its seats) takes half the
    # actions of every game; one seat alone would take a quarter, with its team mate an opponent.
    actions = round(r["mean_length"] * r["games"])
    assert abs(module.decisions - actions / 2) <= r["games"]


def test_every_trainer_gets_the_same_counts_for_the_same_policy():
    net = tiny_net("pans_trial_v0", {})
    ours = evaluate_module(copy.deepcopy(net), "pans_trial_v0", {}, ["random-v0"], games=6, seed=11)
    args = sb3.parse_args(["--game", "pans_trial_v0", "--eval-opponents", "random-v0"])
    theirs = sb3.evaluate_policy(copy.deepcopy(net), args, {}, games=6, seed=11)
    assert ours == theirs


def good_report() -> dict:
    results = {"random-v0": opponent_summary(
        [Outcome("random-v0", 1.0, True, False, 1.0, False, 5, 0), Outcome("random-v0", -1.0, False, False, 2.0, False, 7, 1)],
        "random-v0", 2)}
    return make_report(trainer="training.ppo", args={"seed": 1}, game="dojo_v0", config={}, policy="runs/x",
                       samples=128, cpu_seconds=1.5, seed=0, games=2, note=NOTE, results=results)


def test_the_report_schema_accepts_a_report_and_names_what_is_wrong():
    report = good_report()
    validate_report(report)
    assert {"package", "version", "commit", "dirty"} <= set(report["provenance"])
    for change, message in (
        (lambda r: r.pop("provenance"), "lacks 'provenance'"),
        (lambda r: r.update(trainer="my_trainer"), "is not one of"),
        (lambda r: r.update(provenance={"package": "x"}), "provenance"),
        (lambda r: r["results"]["random-v0"].pop("win_rate_ci95"), "lacks 'win_rate_ci95'"),
        (lambda r: r["results"]["random-v0"].update(wins=2), "wins \\+ draws \\+ losses"),
        (lambda r: r["results"]["random-v0"].update(win_rate_ci95=[0.9, 1.0]), "does not hold win_rate"),
        (lambda r: r.update(samples="many"), "expected"),
        (lambda r: r.update(results={}), "no results"),
    ):
        bad = good_report()
        change(bad)
        with pytest.raises(ValueError, match=message):
            validate_report(bad)


def test_a_curve_row_has_one_column_per_opponent_and_bound():
    row = curve_row(64, good_report()["results"], mean_return=0.1)
    assert row["step"] == 64 and row["mean_return"] == 0.1
    low, high = good_report()["results"]["random-v0"]["win_rate_ci95"]
    assert (row["win_rate_vs_random-v0"], row["win_low_vs_random-v0"], row["win_high_vs_random-v0"]) == (0.5, low, high)


def test_evaluate_and_write_leaves_a_valid_report_with_the_evaluation_in_it(tmp_path):
    """What a trainer calls at the end of a run: the same counts as evaluate_module, written as
    eval.json in the one schema beside the policy."""
    import json

    net = tiny_net("sequence_v0", {})
    expected = evaluate_module(copy.deepcopy(net), "sequence_v0", {}, ["random-v0"], games=4, seed=3, max_actions=80)
    report = evaluate_and_write(tmp_path, copy.deepcopy(net), trainer="training.ppo", args={"seed": 1},
                                game="sequence_v0", config={}, samples=256, cpu_seconds=2.0,
                                opponents=["random-v0"], games=4, seed=3, max_actions=80, curve=[])
    written = json.loads((tmp_path / "eval.json").read_text())
    validate_report(written)
    assert written == report and written["results"] == expected
    assert written["written_to"] == str(tmp_path / "eval.json") and written["policy"] == str(tmp_path)
    assert written["evaluation"] == {"seed": 3, "games_per_opponent": 4, "note": NOTE} and written["curve"] == []


def test_a_policy_folder_names_the_trainer_that_made_it():
    from training.evaluation import trainer_of

    assert trainer_of({"trainer": "training.rllib (RLlib PPO, new API stack)"}) == "training.rllib"
    assert trainer_of({"trainer": "training.sb3"}) == "training.sb3"
    assert trainer_of({}) == "training.ppo"
    assert trainer_of({"trainer": "something else"}) == "training.ppo"
