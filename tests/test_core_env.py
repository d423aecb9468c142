"""The generic environment's behaviour, checked on a tiny game that needs no real rules."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test

import agents
from envs.core import ConfigError, IllegalActionError, StateError
from tests.toy_game import NimGame, env, raw_env


def play(e, actions):
    for a in actions:
        e.step(a)


def test_toy_game_passes_pettingzoo_api_and_seed_tests():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        api_test(env(), num_cycles=50)
        api_test(raw_env(), num_cycles=50)
        seed_test(env, num_cycles=50)


def test_observation_dict_keys_in_order_and_mask_only_for_acting_seat():
    e = raw_env(heap=5)
    e.reset(seed=0)
    obs = e.observe("player_0")
    assert list(obs) == ["observation", "action_mask"]
    assert obs["action_mask"].dtype == np.int8 and obs["action_mask"].tolist() == [1, 1, 1]
    assert e.observe("player_1")["action_mask"].tolist() == [0, 0, 0]


def test_terminal_rewards_reach_every_seat_when_the_game_ends_on_another_seats_move():
    e = raw_env(heap=4)
    e.reset(seed=0)
    play(e, [0, 2])  # player_0 takes 1, player_1 takes the last 3 and wins
    assert all(e.terminations.values())
    assert e.rewards == {"player_0": -1.0, "player_1": 1.0}
    seen = {}
    for agent in e.agent_iter():
        _, reward, term, trunc, _ = e.last()
        seen[agent] = reward
        assert term and not trunc
        e.step(None)
    assert seen == {"player_0": -1.0, "player_1": 1.0}
    assert e.agents == []


def test_truncation_after_max_cycles_times_agents_actions_with_zero_reward():
    e = raw_env(heap=1000, max_cycles=3)
    e.reset(seed=0)
    for i in range(5):
        play(e, [0])
        assert not any(e.truncations.values()), f"truncated after only {i + 1} actions"
    play(e, [0])  # the 6th action = 3 cycles x 2 agents
    assert all(e.truncations.values()) and not any(e.terminations.values())
    assert e.rewards == {"player_0": 0.0, "player_1": 0.0}


def test_reset_is_reproducible_and_other_option_keys_are_ignored():
    a, b = raw_env(), raw_env()
    a.reset(seed=7, options={"anything": 1})
    b.reset(seed=7)
    assert a.unwrapped.save_state() == b.unwrapped.save_state()
    c = raw_env()
    c.reset(seed=8)
    assert c.unwrapped.save_state() != a.unwrapped.save_state()


def test_save_state_restores_the_episode_counter_and_the_rng():
    e = raw_env(heap=1000, max_cycles=4)
    e.reset(seed=3)
    play(e, [0, 1, 2])
    saved = json.loads(json.dumps(e.unwrapped.save_state()))
    assert saved["env"]["steps"] == 3
    f = raw_env(heap=1000, max_cycles=4)
    f.reset(options={"state": saved})
    assert f.agent_selection == e.agent_selection
    play(e, [0] * 4)
    play(f, [0] * 4)
    assert e.unwrapped.save_state() == f.unwrapped.save_state()
    assert not any(f.truncations.values())  # 7 actions so far
    play(f, [0])
    assert all(f.truncations.values())  # the 8th action = 4 cycles x 2 agents, counted across the save


def test_raw_env_raises_on_illegal_and_out_of_range_actions():
    e = raw_env(heap=2)
    e.reset(seed=0)
    with pytest.raises(IllegalActionError, match=r"action 2 \(take 3\) is illegal for player 0 in phase 'take'"):
        e.step(2)
    with pytest.raises(IllegalActionError, match="outside Discrete"):
        e.step(7)
    with pytest.raises(IllegalActionError, match="integer"):
        e.step("one")
    with pytest.raises(IllegalActionError, match="integer"):
        e.step(True)
    with pytest.raises(IllegalActionError, match="integer"):
        e.step(None)
    e.step(np.array(0))  # a 0-d array is an integer action (take 1)
    assert e.agent_selection == "player_1"


def test_env_penalizes_the_offender_and_ends_the_game():
    e = env(heap=2)
    e.reset(seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        e.step(2)
    assert all(e.terminations.values())
    assert {a: e.unwrapped.cumulative_reward(a) for a in e.agents} == {"player_0": -1.0, "player_1": 0.0}
    assert "take 3" in e.unwrapped.infos["player_0"]["illegal_action"]


def test_env_enforces_call_order():
    e = env()
    with pytest.raises(Exception, match="reset"):
        e.step(0)


def test_bad_config_and_corrupt_state_errors_name_the_problem():
    with pytest.raises(ConfigError, match="heap=0 is not allowed; heap must be an integer >= 1"):
        raw_env(heap=0)
    with pytest.raises(ConfigError, match="unknown config keyword"):
        raw_env(heep=3)
    e = raw_env()
    e.reset(seed=0)
    saved = e.unwrapped.save_state()
    with pytest.raises(StateError, match="env.steps"):
        e.reset(options={"state": dict(saved, env={"steps": -2})})
    with pytest.raises(StateError, match="a saved state must be a dict"):
        e.reset(options={"state": "not a state"})
    with pytest.raises(StateError, match="corrupt RNG"):
        bad = json.loads(json.dumps(saved))
        bad["state"]["rng"] = [3, [1, 2], None]
        e.reset(options={"state": bad})


def test_render_modes():
    e = raw_env(render_mode="ansi")
    e.reset(seed=0)
    assert "heap" in e.render()
    e = raw_env(render_mode="rgb_array")
    e.reset(seed=0)
    img = e.render()
    assert img.dtype == np.uint8 and img.shape[2] == 3


def test_string_to_action_round_trips_and_explains_unknown_names():
    game = NimGame()
    assert game.string_to_action("take 2") == 1
    with pytest.raises(ValueError, match="no action is named 'take 9'"):
        game.string_to_action("take 9")


def test_agent_registry_ids_and_errors():
    ids = agents.available("sequence_v0")
    assert "sequence_v0/random-v0" in ids
    with pytest.raises(ValueError, match="no agent registered"):
        agents.make("sequence_v0/telepath-v9")
    with pytest.raises(ValueError, match="malformed"):
        agents.register("not an id", agents.RandomAgent)
    a, b = agents.make("sequence_v0/random-v0", seed=3), agents.make("sequence_v0/random-v0", seed=3)
    obs = {"action_mask": np.ones(50, dtype=np.int8)}
    assert [a.act(obs, {}) for _ in range(5)] == [b.act(obs, {}) for _ in range(5)]


def test_a_saved_final_position_restores_as_a_finished_episode():
    e = raw_env(heap=2)
    e.reset(seed=0)
    e.step(1)  # player_0 takes the last two counters
    saved = json.loads(json.dumps(e.unwrapped.save_state()))
    other = raw_env(heap=2)
    other.reset(options={"state": saved})
    assert all(other.terminations.values())
    assert {a: other.unwrapped.cumulative_reward(a) for a in other.agents} == {"player_0": 1.0, "player_1": -1.0}
