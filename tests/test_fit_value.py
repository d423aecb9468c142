"""benchmarks.fit_value: the features, the two fits (checked on planted models) and what it writes."""

from __future__ import annotations

import json

import pytest
import torch

import envs
from benchmarks import fit_value


def test_arena_features_of_a_fresh_deal():
    state = envs.make_game("wizard_arena_v0").new_initial_state(3)
    f = fit_value.wizard_arena_features(state, 2)
    # score 0, strength 1.0, 10 HP, alive, a solo (no line), its side's strength its own, no rounds yet
    assert f == pytest.approx([0.0, 0.1, 1.0, 1.0, 0.0, 0.0, 0.0, 0.1, 0.0])
    state.score[2], state.alive[2] = 4, False
    g = fit_value.wizard_arena_features(state, 2)
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
