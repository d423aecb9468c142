"""Generic tests every game must pass, for every configuration family it declares in
``Game.config_families``.

Covers: declared game facts, PettingZoo's own ``api_test``, ``seed_test``, ``state_test`` and
``parallel_api_test`` (the parallel API through the registry too), ``state()`` seeing what seats
cannot, random-play fuzz with
the engine's invariants checked after every action, illegal actions, save/restore, hidden
information, ``env()``'s illegal-move penalty, bad configs, corrupt saves, rendering, the
PettingZoo registry and the import direction of rules modules.
"""

from __future__ import annotations

import ast
import copy
import importlib
import json
import pathlib
import random
import warnings

import numpy as np
import pytest
from pettingzoo.test import api_test, parallel_api_test, seed_test, state_test

import agents
import envs
from envs.core import ConfigError, IllegalActionError, StateError
from envs.core.testing import (
    check_hidden_information,
    check_illegal_actions_raise,
    check_save_restore,
    check_state,
    random_playout,
)

ROOT = pathlib.Path(__file__).resolve().parents[1]

CASES = [
    pytest.param(name, family, config, id=f"{name}-{family}")
    for name in envs.NAMES
    for family, config in envs.game_class(name).config_families.items()
]
GAMES = [pytest.param(name, id=name) for name in envs.NAMES]


def module(name):
    return importlib.import_module(f"envs.{name}")


def states_along_a_game(game, seed, every=7, limit=400):
    """Snapshots (clones) of a random game every few actions, terminal state included."""
    rng = random.Random(seed)
    state = game.new_initial_state(seed)
    snaps = [state.clone()]
    n = 0
    while not state.is_terminal() and n < limit:
        legal = state.legal_actions()
        state.apply_action(legal[rng.randrange(len(legal))])
        n += 1
        if n % every == 0:
            snaps.append(state.clone())
    snaps.append(state.clone())
    return snaps


@pytest.mark.parametrize("name", GAMES)
def test_declared_facts(name):
    mod = module(name)
    game_cls = mod.Game
    assert game_cls.name == name
    assert mod.raw_env.metadata["name"] == name
    assert mod.raw_env.metadata["is_parallelizable"] is False
    assert set(mod.raw_env.metadata["render_modes"]) == {"human", "ansi", "rgb_array"}
    lo, hi = game_cls.reward_range
    assert lo < hi
    assert game_cls.config_families, "each game declares at least one configuration family"
    assert game_cls.benchmark_configs and game_cls.fuzz_games > 0 and game_cls.fuzz_max_actions > 0
    assert isinstance(game_cls.hidden_information, bool)
    for config in game_cls.config_families.values():
        game = game_cls(**config)
        teams = [game.team_of(s) for s in range(game.num_players)]
        assert sorted(set(teams)) == list(range(game.num_teams)), "every team has a seat, numbered from 0"
        assert sum(len(game.team_seats(t)) for t in range(game.num_teams)) == game.num_players
    assert mod.__doc__ and "Action" in mod.__doc__ and "Observation" in mod.__doc__
    rules_md = ROOT / "envs" / name.rsplit("_v", 1)[0] / "RULES.md"
    text = rules_md.read_text()
    assert "## Interpretations" in text


@pytest.mark.parametrize("name,family,config", CASES)
def test_spaces_identical_and_action_names_unique(name, family, config):
    env = envs.make(name, raw=True, **config)
    game = env.game
    spaces_ = {a: env.observation_space(a) for a in env.possible_agents}
    first = spaces_[env.possible_agents[0]]
    assert all(s == first for s in spaces_.values())
    assert all(env.action_space(a).n == game.num_actions for a in env.possible_agents)
    names = [game.action_to_string(a) for a in range(game.num_actions)]
    assert len(set(names)) == len(names), "action names must be unique"
    assert all(game.string_to_action(names[a]) == a for a in range(0, game.num_actions, 7))


@pytest.mark.parametrize("name,family,config", CASES)
def test_declared_board_layout_fits_the_observation_and_actions(name, family, config):
    game = envs.make_game(name, **config)
    layout = game.board_layout
    if layout is None:
        pytest.skip(f"{name} declares no board_layout (no grid of squares in its observation for a "
                    "convolutional network), so there is nothing to check")
    assert set(layout) - {"focus_channels"} == {"channels", "height", "width", "layout", "circular", "square_heads"}
    board = layout["channels"] * layout["height"] * layout["width"]
    # a focus channel marks at most one square in every observation (the network reads the features there)
    focus = layout.get("focus_channels", [])
    assert len(set(focus)) == len(focus) and all(0 <= c < layout["channels"] for c in focus)
    marked = set()
    if focus:
        state = game.new_initial_state(3)
        for _ in range(40):
            if state.is_terminal():
                break
            obs = np.asarray(game.observe(state, state.current_player()), dtype=np.float32).reshape(-1)[:board]
            planes = obs.reshape(layout["height"] * layout["width"], layout["channels"]) if layout["layout"] == "squares" \
                else obs.reshape(layout["channels"], -1).T
            for c in focus:
                assert set(np.unique(planes[:, c])) <= {0.0, 1.0} and planes[:, c].sum() <= 1
                if planes[:, c].sum() == 1:
                    marked.add(c)
            state.apply_action(int(np.flatnonzero(state.legal_mask())[0]))
        assert marked == set(focus), f"focus channels {sorted(set(focus) - marked)} never mark a square"
    assert 0 < board < int(np.prod(game.observation_shape)) and layout["layout"] in ("planes", "squares")
    for first, count in layout["square_heads"]:
        assert count == layout["height"] * layout["width"] and 0 <= first <= game.num_actions - count


@pytest.mark.parametrize("name,family,config", CASES)
def test_declared_table_layout_fits_the_observation_and_actions(name, family, config):
    game = envs.make_game(name, **config)
    table = game.table_layout
    if table is None:
        pytest.skip(f"{name} declares no table_layout (no block of like rows, one per player or piece, "
                    "in its observation for a shared-weight network to read), so there is nothing to check")
    assert set(table) == {"offset", "rows", "row_len", "row_actions", "action_blocks"}
    obs_dim = int(np.prod(game.observation_shape))
    end = table["offset"] + table["rows"] * table["row_len"]
    assert table["rows"] >= 1 and table["row_len"] >= 1 and 0 <= table["offset"] and end <= obs_dim
    for start, first, count in table["row_actions"]:
        assert 0 <= start <= table["row_len"] - count and 0 <= first <= game.num_actions - count
    for at, first, count in table["action_blocks"]:
        assert 0 <= at <= obs_dim - count and not table["offset"] <= at < end
        assert 0 <= first <= game.num_actions - count


@pytest.mark.parametrize("name,family,config", CASES)
def test_pettingzoo_api(name, family, config):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        api_test(envs.make(name, **config), num_cycles=300)
        api_test(envs.make(name, raw=True, **config), num_cycles=300)


@pytest.mark.parametrize("name,family,config", CASES)
def test_pettingzoo_seed(name, family, config):
    mod = module(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        seed_test(lambda **kw: mod.env(**config, **kw), num_cycles=300)


@pytest.mark.parametrize("name,family,config", CASES)
def test_pettingzoo_state(name, family, config):
    mod = module(name)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # PettingZoo's state checks only warn: here they fail
        state_test(mod.env(**config), mod.parallel_env(**config), num_cycles=60)


@pytest.mark.parametrize("name,family,config", CASES)
def test_pettingzoo_parallel_api(name, family, config):
    import pettingzoo

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        parallel_api_test(module(name).parallel_env(**config), num_cycles=300)
        par = pettingzoo.make("parallel", envs.registry_id(name), **config)
    assert par.unwrapped.game.name == name and par.unwrapped.game.config == module(name).Game(**config).config
    observations, infos = par.reset(seed=3)
    assert set(observations) == set(par.possible_agents)
    assert par.state_space.contains(par.state())


@pytest.mark.parametrize("name,family,config", CASES)
def test_state_sees_what_seats_cannot(name, family, config):
    """Two positions that a seat cannot tell apart (its hidden part resampled from its view) give it
    the same observation and the referee different ``state()`` arrays; equal positions equal arrays."""
    game = module(name).Game(**config)
    rng = random.Random(5)
    differing = 0
    for state in states_along_a_game(game, seed=5, every=5, limit=300):
        for seat in range(game.num_players):
            other = game.state_from_view(state.player_view(seat), rng)
            assert np.array_equal(game.observe(other, seat), game.observe(state, seat))
            same_position = json.dumps({k: v for k, v in other.to_dict().items() if k != "rng"}, sort_keys=True) \
                == json.dumps({k: v for k, v in state.to_dict().items() if k != "rng"}, sort_keys=True)
            assert np.array_equal(game.encode_state(other), game.encode_state(state)) == same_position, (
                f"seat {seat}: positions {'equal' if same_position else 'differing in hidden information'} "
                f"give {'different' if same_position else 'equal'} state() arrays (phase {state.phase!r})")
            differing += not same_position
    if game.hidden_information:
        assert differing > 0, "the resampling never changed anything hidden: the test tested nothing"


@pytest.mark.parametrize("name,family,config", CASES)
def test_registry_make(name, family, config):
    import pettingzoo

    env = pettingzoo.make("aec", envs.registry_id(name), **config)
    env.reset(seed=1)
    assert env.unwrapped.game.name == name


@pytest.mark.parametrize("name", GAMES)
def test_every_registry_spelling_builds_the_game(name):
    import pettingzoo

    ids = envs.registry_ids(name)
    assert ids[0] == envs.registry_id(name)
    base = name.rsplit("_v", 1)[0]
    if "_" in base:  # a name of several words also works with hyphens, as users type it
        assert ids[1] == envs.registry_id(name).replace(base, base.replace("_", "-"))
    for env_id in ids:
        assert pettingzoo.make("aec", env_id).unwrapped.game.name == name
        assert pettingzoo.make("parallel", env_id).unwrapped.game.name == name
    # envs.make takes module names; another spelling is refused, naming the module name it meant.
    for spelling in ids:
        with pytest.raises(ValueError, match=f"Did you mean '{name}'"):
            envs.make(spelling)


@pytest.mark.parametrize("name,family,config", CASES)
def test_fuzz_invariants(name, family, config):
    game = module(name).Game(**config)
    finished = 0
    for seed in range(game.fuzz_games):
        state, n = random_playout(game, seed=1000 + seed, max_actions=game.fuzz_max_actions)
        finished += state.is_terminal()
    assert finished > 0 or game.fuzz_may_not_finish, "no random game finished"


@pytest.mark.parametrize("name,family,config", CASES)
def test_illegal_actions_raise(name, family, config):
    game = module(name).Game(**config)
    for state in states_along_a_game(game, seed=3, every=11)[:12]:
        check_illegal_actions_raise(state)


@pytest.mark.parametrize("name,family,config", CASES)
def test_save_restore_continues_identically(name, family, config):
    game = module(name).Game(**config)
    for state in states_along_a_game(game, seed=5, every=13)[:10]:
        check_save_restore(state, continuation_seed=9, steps=60)


@pytest.mark.parametrize("name,family,config", CASES)
def test_every_position_of_whole_random_games_loads_and_rebuilds_from_views(name, family, config):
    """Late positions too (long pass runs, deep Exams): each one saved loads back the same, and the
    seat to act can rebuild a state from its view (what search agents do at every decision)."""
    game = module(name).Game(**config)
    view_rng = random.Random(4)
    checked = 0
    for seed in range(2000, 2006):  # in 3-team Sequence, game 2002 passes more times in a row than there are seats
        for state in states_along_a_game(game, seed, every=5, limit=game.fuzz_max_actions):
            saved = json.loads(json.dumps(state.to_dict()))
            assert game.load_state(saved).to_dict() == saved, f"game {seed}, phase {state.phase!r}"
            if not state.is_terminal():
                seat = state.current_player()
                rebuilt = game.state_from_view(state.player_view(seat), view_rng)
                assert rebuilt.player_view(seat) == state.player_view(seat)
            checked += 1
    assert checked > 20


@pytest.mark.parametrize("name,family,config", CASES)
def test_hidden_information_does_not_leak(name, family, config):
    game = module(name).Game(**config)
    rng = random.Random(0)
    states = states_along_a_game(game, seed=7, every=1, limit=80)
    varied = [check_hidden_information(state, rng, samples=2) for state in states]
    if game.hidden_information:
        assert any(varied), "resampling never changed anything hidden: the check tested nothing"


@pytest.mark.parametrize("name,family,config", CASES)
def test_env_save_state_and_reset_from_it(name, family, config):
    env = envs.make(name, raw=True, **config)
    env.reset(seed=11)
    rng = random.Random(2)
    for _ in range(15):
        if not env.agents or env.terminations[env.agent_selection]:
            break
        legal = np.flatnonzero(env.observe(env.agent_selection)["action_mask"])
        env.step(int(legal[rng.randrange(len(legal))]))
    saved = json.loads(json.dumps(env.unwrapped.save_state()))
    other = envs.make(name, raw=True, **config)
    other.reset(options={"state": saved})
    assert other.agent_selection == env.agent_selection
    for _ in range(40):
        if not env.agents:
            break
        a = env.agent_selection
        assert other.agent_selection == a
        o1, o2 = env.observe(a), other.observe(a)
        assert np.array_equal(o1["observation"], o2["observation"])
        assert np.array_equal(o1["action_mask"], o2["action_mask"])
        if env.terminations[a] or env.truncations[a]:
            assert env.unwrapped.cumulative_reward(a) == other.unwrapped.cumulative_reward(a)
            env.step(None)
            other.step(None)
            continue
        legal = np.flatnonzero(o1["action_mask"])
        act = int(legal[rng.randrange(len(legal))])
        env.step(act)
        other.step(act)


@pytest.mark.parametrize("name,family,config", CASES)
def test_corrupt_or_mismatched_state_is_rejected(name, family, config):
    game = module(name).Game(**config)
    saved = game.save(game.new_initial_state(4))
    with pytest.raises(StateError, match="missing"):
        game.load({k: v for k, v in saved.items() if k != "state"})
    wrong_game = dict(saved, game="not_a_game_v0")
    with pytest.raises(StateError, match="belongs to game"):
        game.load(wrong_game)
    other_config = dict(saved, config=dict(saved["config"], __extra__=1))
    with pytest.raises(StateError, match="different config"):
        game.load(other_config)
    broken = copy.deepcopy(saved)
    broken["state"] = {"garbage": True}
    with pytest.raises(StateError):
        game.load(broken)
    bad_rng = copy.deepcopy(saved)
    for key in bad_rng["state"]:
        if "rng" in key:
            bad_rng["state"][key] = [3, [1, 2, 3], None]
            with pytest.raises(StateError):
                game.load(bad_rng)


@pytest.mark.parametrize("name", GAMES)
def test_bad_config_is_rejected_clearly(name):
    mod = module(name)
    with pytest.raises(ConfigError, match="unknown config keyword") as refused:
        mod.raw_env(no_such_option=1)
    # The message lists every keyword the caller could have meant: the game's and the environment's.
    for keyword in (*mod.Game().config, "max_cycles", "render_mode", "illegal_action"):
        assert keyword in str(refused.value), keyword
    with pytest.raises(ConfigError, match="did you mean 'max_cycles'"):
        mod.env(max_cycle=5)
    with pytest.raises(ConfigError, match="max_cycles"):
        mod.raw_env(max_cycles=0)
    with pytest.raises(ConfigError, match="render_mode"):
        mod.raw_env(render_mode="hologram")


@pytest.mark.parametrize("name,family,config", CASES)
def test_raw_env_raises_and_env_penalizes_illegal_moves(name, family, config):
    raw = envs.make(name, raw=True, **config)
    raw.reset(seed=0)
    agent = raw.agent_selection
    mask = raw.observe(agent)["action_mask"]
    illegal = np.flatnonzero(mask == 0)
    if len(illegal) == 0:
        pytest.skip("every action is legal in the first position")
    with pytest.raises(IllegalActionError, match=str(int(illegal[0]))):
        raw.step(int(illegal[0]))
    wrapped = envs.make(name, **config)
    wrapped.reset(seed=0)
    agent = wrapped.agent_selection
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        wrapped.step(int(illegal[0]))
    assert all(wrapped.terminations.values())
    assert wrapped.unwrapped.cumulative_reward(agent) == -1
    assert all(wrapped.unwrapped.cumulative_reward(a) == 0 for a in wrapped.agents if a != agent)
    assert "illegal_action" in wrapped.infos[agent]


@pytest.mark.parametrize("name,family,config", CASES)
def test_render_modes(name, family, config):
    for mode in ("ansi", "rgb_array"):
        env = envs.make(name, raw=True, render_mode=mode, **config)
        env.reset(seed=0)
        out = env.render()
        if mode == "ansi":
            assert isinstance(out, str) and len(out) > 20
        else:
            assert out.dtype == np.uint8 and out.ndim == 3 and out.shape[2] == 3


@pytest.mark.parametrize("name,family,config", CASES)
def test_random_agent_plays_whole_games(name, family, config):
    n_seats = len(envs.make(name, raw=True, **config).possible_agents)
    for seed in range(3):
        seats = [agents.make(f"{name}/random-v0", seed=seed * 10 + i) for i in range(n_seats)]
        record = agents.play_game(name, seats, seed=seed, config=config)
        assert record.length > 0
        lo, hi = module(name).Game.reward_range
        assert all(lo <= r <= hi for r in record.returns)


@pytest.mark.parametrize("name", GAMES)
def test_rules_modules_import_only_stdlib_numpy_and_core(name):
    """Convention 1: imports flow rules -> core -> agents -> training."""
    import sys

    folder = ROOT / "envs" / name.rsplit("_v", 1)[0]
    rules_files = [p for p in folder.glob("*.py") if p.stem in ("rules", "board", "cards", "engine", "map")]
    assert rules_files, f"no rules module found in {folder}"
    stdlib = set(sys.stdlib_module_names)
    for path in rules_files:
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                mods = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:  # relative import: must stay inside the rules layer
                    mods = [f"{folder.name}.{node.module or ''}"]
                    assert (node.module or "").split(".")[0] in {p.stem for p in rules_files}, (
                        f"{path.name} imports .{node.module}, which is not a rules module"
                    )
                    continue
                mods = [node.module]
            else:
                continue
            for m in mods:
                top = m.split(".")[0]
                ok = top in stdlib or top == "numpy" or m.startswith("envs.core") or m.startswith(
                    f"envs.{folder.name}."
                ) and m.rsplit(".", 1)[-1] in {p.stem for p in rules_files}
                assert ok, f"{path.relative_to(ROOT)} imports {m}"


def test_core_states_check_contract_on_initial_positions():
    for name in envs.NAMES:
        for config in module(name).Game.config_families.values():
            game = module(name).Game(**config)
            check_state(game.new_initial_state(0))


@pytest.mark.parametrize("name", GAMES)
def test_registry_passes_max_cycles_through(name):
    import pettingzoo

    env = pettingzoo.make("aec", envs.registry_id(name), max_cycles=1)
    env.reset(seed=0)
    n = len(env.possible_agents)
    steps = 0
    while not any(env.truncations.values()) and not any(env.terminations.values()):
        mask = env.observe(env.agent_selection)["action_mask"]
        env.step(int(np.flatnonzero(mask)[0]))
        steps += 1
    assert env.unwrapped.max_cycles == 1
    assert steps <= n and (steps == n or any(env.terminations.values()))


@pytest.mark.parametrize("name,family,config", CASES)
def test_apply_unchecked_follows_the_same_game_as_apply_action(name, family, config):
    """The search agents' entry: same positions as the checked path when given legal actions."""
    game = module(name).Game(**config)
    checked, unchecked = game.new_initial_state(4), game.new_initial_state(4)
    rng = random.Random(4)
    for _ in range(200):
        if checked.is_terminal():
            break
        legal = checked.legal_actions()
        assert legal == unchecked.legal_actions()
        action = legal[rng.randrange(len(legal))]
        checked.apply_action(action)
        unchecked.apply_unchecked(action)
        assert json.dumps(checked.to_dict(), sort_keys=True) == json.dumps(unchecked.to_dict(), sort_keys=True)
    assert checked.end_reason() == unchecked.end_reason()


@pytest.mark.parametrize("name,family,config", CASES)
def test_seat_observation_matches_the_environment(name, family, config):
    env = envs.make(name, raw=True, **config)
    env.reset(seed=6)
    state = env.unwrapped.engine_state
    for seat in range(env.unwrapped.game.num_players):
        agent = env.unwrapped.agent_of(seat)
        assert env.unwrapped.seat_of(agent) == seat
        got, want = state.seat_observation(seat), env.observe(agent)
        assert np.array_equal(got["observation"], want["observation"])
        assert np.array_equal(got["action_mask"], want["action_mask"])
        assert got["action_mask"].any() == (agent == env.agent_selection)
    # the mask handed out is a copy: writing to it changes nothing in the engine
    got = state.seat_observation(state.current_player())
    got["action_mask"][:] = 0
    assert state.legal_mask().any()
