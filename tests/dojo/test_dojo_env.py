"""Dojo through the environment: hidden information, step-budgeted fuzz with invariants,
truncation rewards, the heuristic agent, and the simulator with a tiny budget."""

from __future__ import annotations

import json
import random

import numpy as np

import agents
import envs
import envs.dojo_v0 as dojo
from envs.core.testing import check_hidden_information, check_save_restore, check_state
from envs.dojo.cards import KIAI, UKE
from envs.dojo.rules import from_position
from dojo_helpers import game, position, walk


def test_hidden_tecnica_changes_state_but_not_observation():
    g = game()
    a = from_position(g, {}, hands={1: [KIAI]}, dice=[1, 1])
    b = from_position(g, {}, hands={1: [UKE]}, dice=[1, 1])
    assert a.to_dict() != b.to_dict()
    for seat in (0, 2, 3):
        assert np.array_equal(g.observe(a, seat), g.observe(b, seat))
        assert a.player_view(seat) == b.player_view(seat)
    assert not np.array_equal(g.observe(a, 1), g.observe(b, 1))


def test_face_down_discard_and_deck_order_are_hidden():
    st = position("5,0: . ? . 0", deck_top=[UKE], hands={0: [KIAI]}, dice=[1, 1])
    walk(st, "WW")
    st.apply_action(17)  # keep Uke: Kiai goes face down
    other = st.clone()
    other.discard[-1] = 2  # a different Tecnica face down
    other.hands[0] = [UKE]
    for seat in (1, 2, 3):
        assert np.array_equal(st.game.observe(st, seat), other.game.observe(other, seat))
    assert check_hidden_information(st, random.Random(1))


def test_fuzz_by_steps_with_invariants():
    """Random play, budgeted by steps (random players rarely reach the Exam)."""
    for n, config in ((2, {}), (4, {"exam_best_of_three": True, "fatica_on_stop_only": True}),
                      (8, {"kumite_first_round": True, "kiai_bonus": 1})):
        g = dojo.Game(num_players=n, **config)
        rng = random.Random(n)
        state = g.new_initial_state(n)
        for step in range(6000):
            if state.is_terminal():
                state = g.new_initial_state(step)
            legal = state.legal_actions()
            state.apply_action(legal[rng.randrange(len(legal))])
            check_state(state)
            assert not state.check_invariants()


def test_heuristic_games_reach_the_exam_and_keep_invariants():
    attempts = finished = 0
    for seed, n in ((0, 2), (1, 4), (2, 8)):
        g = dojo.Game(num_players=n, exam_best_of_three=(seed == 1))
        seats = [agents.make("dojo_v0/heuristic-v1", seed=seed * 10 + i) for i in range(n)]
        for i, a in enumerate(seats):
            a.reset(i, g)
        state = g.new_initial_state(seed)
        steps = 0
        while not state.is_terminal() and steps < 8000:
            p = state.current_player()
            obs = {"observation": g.observe(state, p), "action_mask": state.legal_mask()}
            state.apply_action(seats[p].act(obs, state.player_view(p)))
            check_state(state)
            steps += 1
            if steps % 500 == 0:
                check_save_restore(state, steps=20)
        attempts += state.stats["exam_attempts"]
        finished += state.is_terminal()
    assert attempts >= 1 and finished >= 2


def test_rewards_zero_sum_and_truncation_gives_zero():
    env = dojo.raw_env(num_players=3, max_cycles=5)
    env.reset(seed=0)
    rng = random.Random(0)
    while env.agents:
        a = env.agent_selection
        if env.terminations[a] or env.truncations[a]:
            assert env.unwrapped.cumulative_reward(a) == 0
            env.step(None)
            continue
        legal = np.flatnonzero(env.observe(a)["action_mask"])
        env.step(int(legal[rng.randrange(len(legal))]))
    record = agents.play_game("dojo_v0", [agents.make("dojo_v0/heuristic-v1", seed=i) for i in range(3)],
                              seed=4, config={"num_players": 3})
    assert not record.truncated
    assert abs(sum(record.returns)) < 1e-9 and sorted(record.returns) == [-0.5, -0.5, 1.0]


def test_observation_bounds_and_json_view():
    g = game(num_players=8)
    st = g.new_initial_state(3)
    rng = random.Random(0)
    for _ in range(400):
        for p in range(8):
            o = g.observe(st, p)
            assert o.shape == g.observation_shape and o.min() >= 0 and o.max() <= 1
        json.dumps(st.player_view(st.current_player()))
        legal = st.legal_actions()
        st.apply_action(legal[rng.randrange(len(legal))])


def test_action_names_and_registry():
    g = game()
    assert g.action_to_string(0) == "step N" and g.string_to_action("play Tecnica") == 14
    assert "dojo_v0/heuristic-v1" in agents.available("dojo_v0")
    assert envs.make("dojo_v0", num_players=2).unwrapped.game.num_players == 2


def test_simulator_runs_with_a_tiny_budget(tmp_path, capsys):
    from tools import simulate

    out = tmp_path / "sim.png"
    result = simulate.main(["dojo", "--games", "2", "--config", "num_players=2", "--variants", "short_game",
                            "--out", str(out), "--json", str(tmp_path / "r.json"), "--no-progress"])
    assert out.exists() and out.stat().st_size > 1000
    text = capsys.readouterr().out
    assert "win rate by seat" in text and "short_game" in text and "turn order" in text
    assert result["default"]["games"] == 2 and len(result["default"]["win_rate_by_seat"]) == 2
    assert set(result["default"]["stats"]) == {"turns", "rounds", "exam_attempts", "kumite", "cards"}
    lo, hi = result["default"]["win_rate_by_seat"][0]["ci95"]
    assert 0.0 <= lo <= hi <= 1.0
