"""envs.vector: a batch of tables plays exactly the games that N independent raw_env would."""

from __future__ import annotations

import json

import numpy as np
import pytest

import envs
import envs.vector as vector
from envs.core import ConfigError, IllegalActionError, StateError

FAMILIES = [(name, label, config) for name in envs.NAMES
            for label, config in envs.game_class(name).config_families.items()]
# Short caps make truncation and autoreset happen within a short test for every game.
CAP = {"sequence_v0": 20, "pans_trial_v0": 12, "dojo_v0": 6, "wizard_arena_v0": 4}


def reference_tables(tables, config, max_cycles):
    """One raw_env per table, dealt the game the batch dealt there."""
    refs = []
    for i in range(tables.num_envs):
        env = envs.make(tables.game.name, raw=True, max_cycles=max_cycles, **config)
        env.reset(seed=tables.table_seed(i, 0))
        refs.append(env)
    return refs


def assert_table_matches(tables, obs, seats, i, env):
    agent = env.agent_selection
    expected = env.observe(agent)
    assert seats[i] == env.seat_of(agent), f"table {i}: seat to act"
    np.testing.assert_array_equal(obs["action_mask"][i], expected["action_mask"], err_msg=f"table {i}: mask")
    np.testing.assert_array_equal(obs["observation"][i], expected["observation"], err_msg=f"table {i}: observation")


def play_against_reference(tables, config, max_cycles, steps, rng):
    """Random legal play on the batch and on one raw_env per table; everything must agree."""
    refs = reference_tables(tables, config, max_cycles)
    games = [0] * tables.num_envs
    obs, infos = tables.reset()
    ended_total = truncated_total = 0
    for i, env in enumerate(refs):
        assert_table_matches(tables, obs, infos["current_seat"], i, env)
    for _ in range(steps):
        actions = tables.sample_legal(rng)
        obs, rewards, terms, truncs, infos = tables.step(actions)
        assert rewards.dtype == np.float32 and rewards.shape == (tables.num_envs, tables.num_seats)
        for i, env in enumerate(refs):
            env.step(int(actions[i]))
            expected = np.array([env.rewards[a] for a in env.possible_agents], dtype=np.float32)
            np.testing.assert_array_equal(rewards[i], expected, err_msg=f"table {i}: rewards")
            agent = env.agent_selection
            assert terms[i] == env.terminations[agent] and truncs[i] == env.truncations[agent], f"table {i}: ends"
            assert infos["_final_returns"][i] == (terms[i] or truncs[i])
            if terms[i] or truncs[i]:
                np.testing.assert_array_equal(infos["final_returns"][i], expected)
                assert infos["episode_length"][i] == env.num_steps
                ended_total += 1
                truncated_total += bool(truncs[i])
                games[i] += 1
                env.reset(seed=tables.table_seed(i, games[i]))
            else:
                assert not infos["final_returns"][i].any() and infos["episode_length"][i] == 0
            assert_table_matches(tables, obs, infos["current_seat"], i, env)
    return ended_total, truncated_total


@pytest.mark.parametrize(("name", "label", "config"), FAMILIES, ids=[f"{n}-{lab}" for n, lab, _ in FAMILIES])
def test_python_backend_plays_the_games_of_independent_raw_envs(name, label, config):
    cap = CAP[name]
    tables = vector.make(name, 3, seed=11, backend="python", max_cycles=cap, **config)
    assert tables.backend == "python"
    steps = 3 * cap * tables.num_seats + 5  # every table reaches the cap at least twice
    ended, _ = play_against_reference(tables, config, cap, steps, np.random.default_rng(5))
    assert ended >= tables.num_envs  # ended by the rules or by the cap, every table at least once


def test_games_that_end_by_the_rules_autoreset_with_their_returns():
    # Pan's Trial without a tight cap ends by the rules; the autoreset hands out the next seeded game.
    tables = vector.make("pans_trial_v0", 4, seed=3, backend="python")
    ended, truncated = play_against_reference(tables, {}, None, 400, np.random.default_rng(1))
    assert ended >= 4 and truncated == 0


def test_seeding_is_a_function_of_batch_seed_table_and_game_count():
    a = vector.make("sequence_v0", 4, seed=7)
    b = vector.make("sequence_v0", 4, seed=0)
    first = a.reset()[0]["observation"]
    np.testing.assert_array_equal(b.reset(seed=7)[0]["observation"], first)
    nxt = a.reset()[0]["observation"]  # no seed: every table's next game
    assert not np.array_equal(nxt, first)
    assert a.table_seed(2, 1) == b.table_seed(2, 1) != a.table_seed(1, 2)
    np.testing.assert_array_equal(a.reset(seed=7)[0]["observation"], first)
    assert len({a.table_seed(i, k) for i in range(50) for k in range(50)}) == 2500


def test_save_hands_a_table_to_the_reference_engine_and_back():
    rng = np.random.default_rng(0)
    tables = vector.make("sequence_v0", 3, seed=2, backend="python", players_per_team=2)
    tables.reset()
    for _ in range(25):
        tables.step(tables.sample_legal(rng))
    data = json.loads(json.dumps(tables.save_state(1)))
    # The reference engine and raw_env both continue it.
    assert envs.make_game("sequence_v0", players_per_team=2).load(data).to_dict() == data["state"]
    env = envs.make("sequence_v0", raw=True, players_per_team=2)
    env.reset(options={"state": data})
    assert env.num_steps == data["env"]["steps"] == 25
    for _ in range(30):
        obs = tables.observe()
        assert_table_matches(tables, obs, tables.current_seat, 1, env)
        actions = tables.sample_legal(rng)
        tables.step(actions)
        env.step(int(actions[1]))
    # And back: the raw_env's position, loaded at another table, plays on as the raw_env does.
    tables.load_state(0, env.save_state())
    obs = tables.observe()
    assert_table_matches(tables, obs, tables.current_seat, 0, env)
    assert tables.save_state(0) == env.save_state()
    actions = tables.sample_legal(rng)
    tables.step(actions)
    env.step(int(actions[0]))
    assert_table_matches(tables, tables.observe(), tables.current_seat, 0, env)


def test_a_loaded_table_keeps_its_step_count_for_truncation():
    tables = vector.make("dojo_v0", 2, seed=1, max_cycles=3)
    tables.reset()
    limit = 3 * tables.num_seats
    env = envs.make("dojo_v0", raw=True)
    env.reset(seed=4)
    for _ in range(limit - 1):
        env.step(int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0]))
    tables.load_state(1, env.save_state())
    actions = tables.sample_legal(np.random.default_rng(0))
    _, _, terms, truncs, infos = tables.step(actions)
    assert truncs[1] and not terms[1] and infos["episode_length"][1] == limit


def test_bad_arguments_are_refused_with_what_is_allowed():
    with pytest.raises(ValueError, match="unknown game"):
        vector.make("chess_v0", 2)
    with pytest.raises(ValueError, match="num_envs must be an integer >= 1"):
        vector.make("dojo_v0", 0)
    with pytest.raises(ValueError, match="backend='gpu' is not available; choose 'auto' or one of"):
        vector.make("dojo_v0", 2, backend="gpu")
    with pytest.raises(ConfigError, match="max_cycles"):
        vector.make("dojo_v0", 2, max_cycles=0)
    with pytest.raises(ConfigError, match="unknown config keyword"):
        vector.make("dojo_v0", 2, colour="red")
    with pytest.raises(ValueError, match="seed must be an integer >= 0"):
        vector.make("dojo_v0", 2, seed=-1)
    tables = vector.make("sequence_v0", 3, seed=0, backend="python")
    with pytest.raises(RuntimeError, match="call reset"):
        tables.step(np.zeros(3, dtype=np.int64))
    obs, _ = tables.reset()
    with pytest.raises(IllegalActionError, match=r"shape \(3,\)"):
        tables.step(np.zeros(2, dtype=np.int64))
    with pytest.raises(IllegalActionError, match="dtype float64"):
        tables.step(np.zeros(3))
    with pytest.raises(IllegalActionError, match=r"table 1: action 100000 is outside"):
        tables.step(np.array([0, 100000, 0]))
    actions = tables.sample_legal(np.random.default_rng(0))
    illegal = int(np.flatnonzero(obs["action_mask"][2] == 0)[0])
    actions[2] = illegal
    before = tables.save_state(0)
    with pytest.raises(IllegalActionError, match=rf"table 2: action {illegal} \(.*\) is illegal for seat 0"):
        tables.step(actions)
    assert tables.save_state(0) == before  # no table moved
    with pytest.raises(IndexError, match=r"table index must be an integer in \[0, 3\)"):
        tables.save_state(3)
    other = vector.make("dojo_v0", 1, seed=0)
    other.reset()
    with pytest.raises(StateError, match="belongs to game"):
        tables.load_state(0, other.save_state(0))
    with pytest.raises(StateError, match="different config"):
        tables.load_state(0, _saved("sequence_v0", num_teams=3))


def _saved(name, **config):
    t = vector.make(name, 1, seed=0, **config)
    t.reset()
    return t.save_state(0)


def test_a_finished_game_cannot_sit_at_a_table():
    env = envs.make("pans_trial_v0", raw=True)
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    while not (env.terminations[env.agent_selection] or env.truncations[env.agent_selection]):
        legal = np.flatnonzero(env.observe(env.agent_selection)["action_mask"])
        env.step(int(rng.choice(legal)))
    tables = vector.make("pans_trial_v0", 2, seed=0)
    tables.reset()
    with pytest.raises(StateError, match="cannot continue a finished game"):
        tables.load_state(0, env.save_state())


def test_spaces_are_raw_envs_and_auto_picks_a_registered_backend():
    tables = vector.make("wizard_arena_v0", 2, seed=0, num_bots=2, map_size=8)
    env = envs.make("wizard_arena_v0", raw=True, num_bots=2, map_size=8)
    assert tables.single_observation_space == env.observation_space("player_0")
    assert tables.single_action_space == env.action_space("player_0")
    assert tables.num_seats == 2 and tables.backend == vector.available_backends("wizard_arena_v0")[0] == "python"
    assert vector.available_backends("sequence_v0")[-1] == "python"
    obs, infos = tables.reset()
    assert obs["observation"].dtype == np.float32 and obs["action_mask"].dtype == np.int8
    assert infos["current_seat"].dtype == np.int64


class CountingBackend(vector.PythonBackend):
    """A registered backend for the registry test: the python one, counting its steps."""

    name = "counting"
    calls = 0

    def step(self, actions):
        CountingBackend.calls += 1
        return super().step(actions)


def test_auto_takes_the_first_registered_backend_that_imports(monkeypatch):
    monkeypatch.setitem(vector.BACKENDS, "dojo_v0", {"missing": "tests.no_such_module:Backend",
                                                     "counting": "tests.test_vector:CountingBackend"})
    assert vector.available_backends("dojo_v0") == ["counting", "python"]
    tables = vector.make("dojo_v0", 2, seed=0)
    assert tables.backend == "counting"
    tables.reset()
    tables.step(tables.sample_legal(np.random.default_rng(0)))
    assert CountingBackend.calls == 1
    with pytest.raises(ModuleNotFoundError):
        vector.make("dojo_v0", 2, backend="missing")


def test_an_active_mask_steps_only_those_tables_and_views_match_the_engine():
    tables = vector.make("pans_trial_v0", 3, seed=4, backend="python")
    obs, _ = tables.reset()
    before = [tables.save_state(i) for i in range(3)]
    actions = tables.sample_legal(np.random.default_rng(0))
    active = np.array([False, True, False])
    _, rewards, terms, truncs, _ = tables.step(actions, active=active)
    assert tables.save_state(0) == before[0] and tables.save_state(2) == before[2]
    assert tables.save_state(1)["env"]["steps"] == 1 and not rewards[[0, 2]].any()
    env = envs.make("pans_trial_v0", raw=True)
    env.reset(options={"state": tables.save_state(1)})
    assert tables.player_view(1) == env.player_view(env.agent_selection)
    with pytest.raises(ValueError, match=r"active must be a bool array of shape \(3,\)"):
        tables.step(actions, active=np.array([1, 0, 1]))


def test_copy_false_hands_out_the_buffers_and_copy_true_fresh_arrays():
    fresh = vector.make("sequence_v0", 2, seed=0)
    shared = vector.make("sequence_v0", 2, seed=0, copy=False)
    a, _ = fresh.reset()
    b, _ = shared.reset()
    np.testing.assert_array_equal(a["observation"], b["observation"])
    assert shared.observe()["observation"] is b["observation"]
    assert fresh.observe()["observation"] is not a["observation"]
    before = a["observation"].copy()
    actions = fresh.sample_legal(np.random.default_rng(0))
    fresh.step(actions)
    shared.step(actions)
    np.testing.assert_array_equal(a["observation"], before)  # a copy is not written by the next step
    np.testing.assert_array_equal(b["observation"], fresh.observe()["observation"])  # the buffer is
    with pytest.raises(ValueError, match="copy must be True or False"):
        vector.make("sequence_v0", 2, copy=1)


def test_sample_legal_draws_every_legal_action_uniformly_and_nothing_else():
    tables = vector.make("pans_trial_v0", 4, seed=3, backend="python")
    tables.reset()
    mask = tables._tables.action_mask
    mask[:] = 0
    legal = {0: [0], 1: [2, 5], 2: [1, 3, 4, 7], 3: list(range(mask.shape[1]))}
    for i, actions in legal.items():
        mask[i, actions] = 1
    rng = np.random.default_rng(0)
    draws = np.stack([tables.sample_legal(rng) for _ in range(4000)])
    for i, actions in legal.items():
        counts = np.bincount(draws[:, i], minlength=mask.shape[1])
        assert set(np.flatnonzero(counts)) == set(actions), f"table {i}"
        expected = 4000 / len(actions)
        # within 5 standard deviations of the uniform count (a loose bound: the test must not flake)
        assert np.all(np.abs(counts[actions] - expected) < 5 * np.sqrt(expected)), f"table {i}: {counts[actions]}"


@pytest.mark.parametrize("backend", vector.available_backends("sequence_v0"))
def test_tables_dealt_by_the_caller_step_subsets_and_wait_at_the_cap(backend):
    """Without autoreset the caller deals each game from its seed; ``step(active=...)`` moves only the
    given tables; ``max_steps`` cuts games at a cap that is not whole cycles; an ended game waits."""
    game = envs.make_game("sequence_v0")
    tables = vector.make("sequence_v0", 3, backend=backend, max_steps=5, autoreset=False)
    assert tables.awaiting_deal.all() and tables.max_steps == 5
    tables.deal([0, 1, 2], [10, 11, 12])
    reference = [game.new_initial_state(s) for s in (10, 11, 12)]
    rng = np.random.default_rng(3)
    mask = tables.observe()["action_mask"]
    ended = np.zeros(3, dtype=bool)
    for step in range(5):
        active = np.array([True, step % 2 == 0, True])
        actions = np.array([rng.choice(np.flatnonzero(m)) if a else 10_000 for m, a in zip(mask, active)])
        obs, _, terms, truncs, infos = tables.step(actions, active=active)  # inactive actions are not checked
        for i in np.flatnonzero(active):
            reference[i].apply_action(int(actions[i]))
        ended = infos["_final_returns"]
        mask = obs["action_mask"]
        for i in np.flatnonzero(active & ~ended):
            seat = reference[i].current_player()
            assert infos["current_seat"][i] == seat
            np.testing.assert_array_equal(mask[i], reference[i].legal_mask())
            np.testing.assert_array_equal(obs["observation"][i], game.observe(reference[i], seat))
    # tables 0 and 2 reached the cap of 5 actions and wait; table 1 played 3 and goes on
    assert ended.tolist() == [True, False, True] and truncs.tolist() == [True, False, True] and not terms.any()
    assert infos["episode_length"].tolist() == [5, 0, 5]
    assert tables.awaiting_deal.tolist() == [True, False, True]
    assert tables.save_state(1)["env"]["steps"] == 3
    with pytest.raises(RuntimeError, match="table 0 has no game in progress"):
        tables.step(np.zeros(3, dtype=np.int64), active=np.array([True, False, False]))
    tables.deal([0], [10])
    assert not tables.awaiting_deal[0]
    np.testing.assert_array_equal(tables.observe()["action_mask"][0], game.new_initial_state(10).legal_mask())
    with pytest.raises(ValueError, match="max_steps must be an integer >= 1"):
        vector.make("sequence_v0", 1, backend=backend, max_steps=0)


class WholeBatchOnly(vector.PythonBackend):
    """A backend that declares it cannot step a subset of its tables."""

    name = "whole"
    steps_subsets = False


def test_a_backend_declares_whether_it_steps_a_subset(monkeypatch):
    monkeypatch.setitem(vector.BACKENDS, "dojo_v0", {"whole": f"{__name__}:WholeBatchOnly"})
    tables = vector.make("dojo_v0", 2, seed=0, backend="whole")
    tables.reset()
    with pytest.raises(ValueError, match="the whole backend cannot step a subset"):
        tables.step(tables.sample_legal(np.random.default_rng(0)), active=np.array([True, False]))
    tables.step(tables.sample_legal(np.random.default_rng(0)))  # the whole batch it steps


@pytest.mark.parametrize("num_envs,without_bitwise_count", [(40, False), (100, False), (100, True)])
def test_sample_legal_takes_the_drawn_legal_action_of_every_mask(monkeypatch, num_envs, without_bitwise_count):
    """``sample_legal`` picks, for a uniform ``u`` per table, the ``floor(u * k)``-th of the ``k`` legal
    actions (0 where none is legal), found here plainly; masks of every density, over several 64-bit
    words (Sequence's 349 actions): a small batch on the running count, a larger one on the packed bits,
    also through the numpy < 2 fallback that has no ``bitwise_count``."""
    if without_bitwise_count:
        monkeypatch.delattr(np, "bitwise_count", raising=False)
    tables = vector.make("sequence_v0", num_envs, seed=0)
    assert (tables._tables.action_mask.size <= vector._SMALL_MASK) == (num_envs == 40)
    tables.reset()
    mask = tables._tables.action_mask
    shapes = np.random.default_rng(5)
    for density in (0.0, 0.003, 0.05, 0.5, 1.0):
        mask[:] = shapes.random(mask.shape) < density
        mask[0] = 0
        mask[1] = 0
        mask[1, -1] = 1  # only the last action
        mask[2] = 0
        mask[2, 0] = 1  # only the first
        got = tables.sample_legal(np.random.default_rng(7))
        u = np.random.default_rng(7).random(len(mask))
        want = [np.flatnonzero(row)[int(x * row.sum())] if row.any() else 0 for row, x in zip(mask, u)]
        assert got.tolist() == want, density
