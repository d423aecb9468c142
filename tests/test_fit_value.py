"""benchmarks.fit_value: the features, the two fits (checked on planted models) and what it writes."""

from __future__ import annotations

import json

import pytest
import torch

import envs
from agents.rollout_search import wizard_arena_features
from benchmarks import fit_value


def test_arena_features_of_a_fresh_deal():
    state = envs.make_game("wizard_arena_v0").new_initial_state(3)
    f = wizard_arena_features(state, 2)
    # score 0, strength 1.0, 10 HP, alive, a solo (no line), its side's strength its own, no rounds yet
    assert f == pytest.approx([0.0, 0.1, 1.0, 1.0, 0.0, 0.0, 0.0, 0.1, 0.0])
    state.score[2], state.alive[2] = 4, False
    g = wizard_arena_features(state, 2)
    assert g[0] == 0.4 and g[2] == 0.0 and g[3] == 0.0 and g[7] == 0.0  # a fallen bot keeps only its score


def test_expected_rank_return_is_zero_sum_and_exact_when_keys_are_far_apart():
    keys = torch.tensor([[100.0, 0.0, -100.0], [0.0, 0.0, 0.0]])
    out = fit_value.expected_rank_return(keys)
    assert out[0].tolist() == pytest.approx([1.0, 0.0, -1.0])
    assert out[1].tolist() == pytest.approx([0.0, 0.0, 0.0])  # all level: the shared middle rank
    assert out.sum(1).tolist() == pytest.approx([0.0, 0.0], abs=1e-6)


def planted(seed: int, positions: int = 4000, seats: int = 4):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(positions, seats, 3, generator=g)
    w = torch.tensor([1.5, -0.7, 0.3])
    return x, w, x @ w


def test_the_win_fit_recovers_a_planted_conditional_logit():
    x, w, keys = planted(0)
    winner = torch.multinomial(torch.softmax(keys, 1), 1, generator=torch.Generator().manual_seed(1)).squeeze(1)
    returns = torch.full(keys.shape, -1.0 / 3)
    returns[torch.arange(len(x)), winner] = 1.0
    fitted = fit_value.fit(x, returns, "win")
    assert fitted.tolist() == pytest.approx(w.tolist(), abs=0.15)
    assert fit_value.metrics(x @ fitted, returns)["winner_nll"] < fit_value.metrics(torch.zeros_like(keys), returns)["winner_nll"]


def test_the_rank_fit_recovers_planted_keys():
    x, w, keys = planted(2)
    returns = fit_value.expected_rank_return(keys)
    fitted = fit_value.fit(x, returns, "rank")
    assert fitted.tolist() == pytest.approx(w.tolist(), abs=0.05)
    assert fit_value.metrics(x @ fitted, returns)["return_mse"] < 1e-4


def test_a_small_run_writes_weights_metrics_and_provenance(tmp_path, capsys):
    out = tmp_path / "fit.json"
    result = fit_value.main(["wizard_arena_v0", "--games", "10", "--every", "20", "--out", str(out)])
    assert json.loads(out.read_text()) == result
    assert result["positions"] > result["held_out_positions"] > 0 and result["offset"] == 10
    for target in ("win", "rank"):
        assert len(result["fits"][target]["weights"]) == 9
        assert result["fits"][target]["return_mse"] >= 0
    assert set(result["held_out_baselines"]) == {"uniform_winner_nll", "zero_return_mse", "hand_written"}
    assert result["provenance"]["environments"] == {"wizard_arena_v0": 0}
    assert "10/10 games" in capsys.readouterr().err


@pytest.mark.parametrize("argv,needle", [(["--games", "4"], "--games must be 5 or more"),
                                         (["--every", "0"], "--every must be 1 or more")])
def test_bad_arguments_are_refused(tmp_path, argv, needle, capsys):
    with pytest.raises(SystemExit):
        fit_value.main(["dojo_v0", "--out", str(tmp_path / "x.json"), *argv])
    assert needle in capsys.readouterr().err


def fit_file(tmp_path, game="wizard_arena_v0", **changes):
    weights = {"dojo_v0": [0.5] * 6, "wizard_arena_v0": [1.0, 0.5, 0.2, 0.1, 0.3, -0.4, 0.0, 0.2, 0.6]}[game]
    data = {"game": game, "fits": {"win": {"weights": weights}, "rank": {"weights": [2 * w for w in weights]}}}
    data.update(changes)
    path = tmp_path / "fit.json"
    path.write_text(json.dumps(data))
    return path


def test_a_fit_file_is_a_leaf_value_of_the_search(tmp_path):
    from agents.rollout_search import FittedValue, RolloutSearchAgent, rank_value, win_value

    path = fit_file(tmp_path)
    state = envs.make_game("wizard_arena_v0").new_initial_state(4)
    state.score[:] = [3, 0, 1, 0, 0, 2]
    win, rank = FittedValue.from_file(str(path), "wizard_arena_v0"), FittedValue.from_file(f"{path}:rank", "wizard_arena_v0")
    keys = [sum(a * b for a, b in zip(win.weights, wizard_arena_features(state, p))) for p in range(6)]
    assert win(state, 0) == pytest.approx(win_value(keys, 0))
    assert rank(state, 2) == pytest.approx(rank_value([2 * k for k in keys], 2))
    for value in (win, rank):  # zero sum, and the leader on score ahead
        values = [value(state, p) for p in range(6)]
        assert sum(values) == pytest.approx(0.0, abs=1e-9) and max(values) == values[0]
    agent = RolloutSearchAgent("wizard_arena_v0", seed=0, value=f"{path}:rank")
    assert isinstance(agent.value, FittedValue) and agent.value.model == "rank"


def test_the_shipped_dojo_value_is_a_fitted_value_of_its_weights():
    from agents.rollout_search import DOJO_FITTED_WEIGHTS, FittedValue, dojo_fitted_value

    state = envs.make_game("dojo_v0").new_initial_state(2)
    state.track[:] = [9, 3, 15, 6]
    value = FittedValue("dojo_v0", list(DOJO_FITTED_WEIGHTS))
    assert [value(state, p) for p in range(4)] == pytest.approx([dojo_fitted_value(state, p) for p in range(4)])


@pytest.mark.parametrize("spec,changes,needle", [
    ("missing.json", {}, "cannot read a fitted value"),
    ("fit.json", {"fits": []}, "no 'fits' object"),
    ("fit.json", {"game": "dojo_v0"}, "a fit for 'dojo_v0', not 'wizard_arena_v0'"),
    ("fit.json", {"fits": {"rank": {"weights": [1.0] * 9}}}, "no 'win' fit in the file (it has: rank)"),
    ("fit.json", {"fits": {"win": {"weights": [1.0] * 4}}}, "4 weights, but wizard_arena_features reads 9"),
    ("fit.json", {"fits": {"win": {"weights": [1.0] * 8 + [True]}}}, "weights must be a list of finite numbers"),
    ("fit.json", {"fits": {"win": {"weights": "1,2"}}}, "weights must be a list of finite numbers"),
])
def test_a_bad_fit_file_is_refused_by_name(tmp_path, spec, changes, needle):
    from agents.rollout_search import FittedValue

    fit_file(tmp_path, **changes)
    with pytest.raises(ValueError) as err:
        FittedValue.from_file(str(tmp_path / spec), "wizard_arena_v0")
    assert needle in str(err.value)


def test_a_fitted_value_needs_a_game_with_features_and_a_known_model():
    from agents.rollout_search import FittedValue

    with pytest.raises(ValueError, match="no fitted value features for 'pans_trial_v0'"):
        FittedValue("pans_trial_v0", [1.0])
    with pytest.raises(ValueError, match="model must be one of win, rank"):
        FittedValue("dojo_v0", [1.0] * 6, model="mean")


def test_search_eval_takes_a_fit_file_as_the_value(tmp_path):
    from benchmarks import search_eval

    path = fit_file(tmp_path, game="dojo_v0")
    result = search_eval.main(["dojo_v0/search-v1", "--games", "1", "--value", str(path), "--out", str(tmp_path / "r.jsonl"),
                               "--search", "simulations=1", "--search", "max_candidates=2"])
    assert result["value"] == str(path) and result["games"] == 1


def test_search_eval_refuses_a_bad_fit_file_before_playing(tmp_path, capsys):
    from benchmarks import search_eval

    path = fit_file(tmp_path, game="wizard_arena_v0")
    out = tmp_path / "r.jsonl"
    with pytest.raises(SystemExit):
        search_eval.main(["dojo_v0/search-v1", "--games", "1", "--value", str(path), "--out", str(out)])
    assert "a fit for 'wizard_arena_v0', not 'dojo_v0'" in capsys.readouterr().err and not out.exists()
