"""Every input gets a clear answer: action types, the lifecycle before reset(), seeds, max_cycles
on restore and config values (integers are integers, files are regular text files, ranges said)."""

from __future__ import annotations

import json
import os
import random
import warnings
from decimal import Decimal

import numpy as np
import pytest

import envs
from envs.core import ConfigError, IllegalActionError, StateError

NOT_ACTIONS = [1.7, 1.0, "1", b"1", Decimal(1), np.float32(2.7), np.bool_(True), True, float("inf"),
               float("nan"), None, [1], np.array([1]), np.array(1.0), 1 + 0j]


@pytest.mark.parametrize("name", envs.NAMES)
def test_only_integers_are_actions(name):
    raw = envs.make(name, raw=True)
    raw.reset(seed=1)
    wrapped = envs.make(name)
    wrapped.reset(seed=1)
    state = envs.make_game(name).new_initial_state(1)
    before = json.dumps(state.to_dict())
    for action in NOT_ACTIONS:
        for target in (raw.step, wrapped.step, state.apply_action):
            with pytest.raises(IllegalActionError) as info, warnings.catch_warnings():
                warnings.simplefilter("ignore")
                target(action)
            assert "integer" in str(info.value) and type(action).__name__ in str(info.value), info.value
    assert json.dumps(state.to_dict()) == before
    assert raw.agents and not any(raw.terminations.values())  # nothing was applied or penalised
    legal = int(np.flatnonzero(state.legal_mask())[0])
    for ok in (np.int64(legal), np.uint16(legal), np.array(legal), np.array(legal, dtype=np.int16)):
        other = state.clone()
        other.apply_action(ok)
        assert other.to_dict() != state.to_dict() or other.is_terminal()
    raw.step(np.array(int(np.flatnonzero(raw.observe(raw.agent_selection)["action_mask"])[0])))


@pytest.mark.parametrize("name", envs.NAMES)
def test_calls_before_reset_say_so(name):
    env = envs.make(name, raw=True)
    for call in (env.save_state, lambda: env.player_view("player_0"), lambda: env.step(0), env.last,
                 lambda: env.observe("player_0")):
        with pytest.raises(RuntimeError, match=r"call reset\(\) before"):
            call()


@pytest.mark.parametrize("name", envs.NAMES)
def test_seeds_are_integers_from_zero(name):
    env = envs.make(name, raw=True)
    with pytest.raises(ValueError, match="seed must be an integer >= 0"):
        env.reset(seed=-5)
    for bad in (1.5, "3", True):
        with pytest.raises(TypeError, match="seed must be an integer >= 0"):
            env.reset(seed=bad)
    env.reset(seed=np.int64(5))
    other = envs.make(name, raw=True)
    other.reset(seed=5)
    assert env.save_state() == other.save_state()


def test_the_restoring_environment_keeps_its_own_max_cycles():
    env = envs.make("pans_trial_v0", raw=True, max_cycles=1000)
    env.reset(seed=2)
    rng = random.Random(0)
    for _ in range(30):
        legal = np.flatnonzero(env.observe(env.agent_selection)["action_mask"])
        env.step(int(legal[rng.randrange(len(legal))]))
    assert env.agents and not any(env.terminations.values())
    saved = json.loads(json.dumps(env.save_state()))
    assert saved["env"] == {"steps": 30, "max_cycles": 1000}
    small = envs.make("pans_trial_v0", raw=True, max_cycles=10)  # 20 actions for two seats < 30
    small.reset(options={"state": saved})
    assert all(small.truncations.values()) and small.max_cycles == 10
    large = envs.make("pans_trial_v0", raw=True, max_cycles=16)  # 32 actions: two more to play
    large.reset(options={"state": saved})
    assert not any(large.truncations.values())
    for _ in range(2):
        legal = np.flatnonzero(large.observe(large.agent_selection)["action_mask"])
        large.step(int(legal[0]))
    assert all(large.truncations.values()) or all(large.terminations.values())
    for bad in ({"steps": 30, "max_cycles": 0}, {"steps": 30, "max_cycles": 2.5}, {"steps": True},
                {"steps": 30, "extra": 1}, {"steps": 10**12}):
        with pytest.raises(StateError, match="env"):
            large.reset(options={"state": dict(saved, env=bad)})


# ------------------------------------------------------------------------------------------------
# Configs
INT_KEYWORDS = {
    "sequence_v0": {"num_teams": 3, "players_per_team": 2, "sequences_to_win": 2, "layout_seed": 4},
    "pans_trial_v0": {"damage_threshold": 30, "first_player": 0},
    "dojo_v0": {"num_players": 3, "kiai_bonus": 1, "failed_exam_cost": 1},
    "wizard_arena_v0": {"num_bots": 4, "health": 5, "map_size": 12},
}


@pytest.mark.parametrize("name", envs.NAMES)
def test_integer_keywords_take_numpy_integers_and_refuse_floats_and_bools(name):
    for key, value in INT_KEYWORDS[name].items():
        game = envs.make_game(name, **{key: np.int64(value)})
        assert type(game.config[key]) is int and game.config[key] == value
        env = envs.make(name, raw=True, **{key: np.int32(value)})
        env.reset(seed=0)
        json.dumps(env.save_state())
        for bad in (float(value), True, str(value), None if key != "sequences_to_win" else 2.5):
            with pytest.raises(ConfigError, match=key) as info:
                envs.make_game(name, **{key: bad})
            assert "integer" in str(info.value) or " or " in str(info.value), info.value


def test_ranges_are_said_in_the_error():
    cases = [
        ("sequence_v0", "num_teams", 4, "2 or 3"),
        ("sequence_v0", "players_per_team", 5, "from 1 to 4"),
        ("sequence_v0", "layout_seed", -1, ">= 0"),
        ("pans_trial_v0", "damage_threshold", 61, "from 1 to 60"),
        ("pans_trial_v0", "damage_threshold", 0, "from 1 to 60"),
        ("pans_trial_v0", "damage_threshold", 200, "from 1 to 60"),
        ("dojo_v0", "num_players", 9, "from 2 to 8"),
        ("dojo_v0", "kiai_bonus", 3, "1 or 2"),
        ("dojo_v0", "failed_exam_cost", 2, "0, 1 or 3"),
        ("wizard_arena_v0", "num_bots", 17, "from 2 to 16"),
    ]
    for name, key, value, said in cases:
        with pytest.raises(ConfigError, match=f"{key}={value!r}.*{said}"):
            envs.make_game(name, **{key: value})
    # ... and in each module docstring's table of config keywords
    import envs.dojo_v0 as dojo
    import envs.pans_trial_v0 as pans
    import envs.sequence_v0 as sequence

    assert "1–60" in pans.__doc__ and "0 or 1" in pans.__doc__
    assert "regular file of UTF-8 text, at most 64 KiB" in " ".join(dojo.__doc__.split())
    assert "an integer >= 0" in sequence.__doc__


def test_dojo_keeps_its_integers_integers():
    game = envs.make_game("dojo_v0", kiai_bonus=np.int64(1))
    assert type(game.config["kiai_bonus"]) is int
    with pytest.raises(ConfigError, match="kiai_bonus=1.0"):
        envs.make_game("dojo_v0", kiai_bonus=1.0)


def test_dojo_board_file_must_be_a_regular_text_file(tmp_path):
    standard = envs.make_game("dojo_v0").board.text
    good = tmp_path / "board.txt"
    good.write_text(standard, encoding="utf-8")
    assert envs.make_game("dojo_v0", board_file=str(good)).board.text == standard
    binary = tmp_path / "board.bin"
    binary.write_bytes(bytes(range(256)) * 4)
    with pytest.raises(ConfigError, match="not UTF-8 text"):
        envs.make_game("dojo_v0", board_file=str(binary))
    nul = tmp_path / "nul.txt"
    nul.write_text(standard + "\x00", encoding="utf-8")
    with pytest.raises(ConfigError, match="NUL"):
        envs.make_game("dojo_v0", board_file=str(nul))
    huge = tmp_path / "huge.txt"
    huge.write_text("." * (65 * 1024))
    with pytest.raises(ConfigError, match="at most 65536"):
        envs.make_game("dojo_v0", board_file=str(huge))
    with pytest.raises(ConfigError, match="board_file"):
        envs.make_game("dojo_v0", board_file=str(tmp_path))
    if hasattr(os, "mkfifo"):
        fifo = tmp_path / "fifo"
        os.mkfifo(fifo)
        with pytest.raises(ConfigError, match="not a regular file"):  # refused, without blocking
            envs.make_game("dojo_v0", board_file=str(fifo))
