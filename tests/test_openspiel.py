"""The games in OpenSpiel (``envs.openspiel``) and the IS-MCTS agent built on it.

Needs the ``openspiel`` extra (``pip install -e ".[openspiel]"``); where OpenSpiel is absent the whole
module is skipped. CI runs it in a virtual environment of its own after the main suite.
"""

from __future__ import annotations

import json
import pickle
import random

import numpy as np
import pytest

pyspiel = pytest.importorskip(
    "pyspiel", reason="open-spiel is not installed: these tests need the openspiel extra (pip install -e '.[openspiel]')"
)

import agents  # noqa: E402
import envs  # noqa: E402
from envs import openspiel  # noqa: E402
from envs.core.errors import ConfigError, StateError  # noqa: E402

FAMILIES = [(name, family, config) for name in envs.NAMES
            for family, config in envs.game_class(name).config_families.items()]
FAMILY_IDS = [f"{name}-{family}" for name, family, _ in FAMILIES]
#: A short step limit keeps every family's random games quick (and covers the truncation path).
SHORT_CYCLES = 10


def load(name: str, config: dict | None = None, **kwargs) -> openspiel.TabletopGame:
    return openspiel.load(envs.make_game(name, **(config or {})), **kwargs)


def test_every_game_is_registered_under_its_short_name():
    names = set(pyspiel.registered_names())
    for name in envs.NAMES:
        assert openspiel.short_name(name) == f"python_tabletop_{name}" in names
        game = pyspiel.load_game(openspiel.short_name(name))
        kind = game.get_type()
        assert kind.dynamics == pyspiel.GameType.Dynamics.SEQUENTIAL
        assert kind.chance_mode == pyspiel.GameType.ChanceMode.SAMPLED_STOCHASTIC
        assert kind.information == pyspiel.GameType.Information.IMPERFECT_INFORMATION
        assert kind.reward_model == pyspiel.GameType.RewardModel.TERMINAL
        spec = openspiel.parameter_specification(name)
        assert set(spec) == set(envs.make_game(name).config) | {"max_cycles", "seed"}
        assert set(game.get_parameters()) == set(spec)
    with pytest.raises(ValueError, match="unknown game"):
        openspiel.short_name("chess_v0")


@pytest.mark.parametrize("name, family, config", FAMILIES, ids=FAMILY_IDS)
def test_facts_follow_the_engine(name, family, config):
    engine = envs.make_game(name, **config)
    game = openspiel.load(engine, max_cycles=7)
    assert game.num_players() == engine.num_players
    assert game.num_distinct_actions() == engine.num_actions
    assert game.max_game_length() == 7 * engine.num_players
    assert (game.min_utility(), game.max_utility()) == tuple(engine.reward_range)
    assert game.observation_tensor_shape() == [int(np.prod(engine.observation_shape))]
    assert game.information_state_tensor_shape() == game.observation_tensor_shape()
    utility = game.get_type().utility
    if engine.zero_sum:
        assert utility == pyspiel.GameType.Utility.ZERO_SUM and game.utility_sum() == 0.0
    else:
        assert utility == pyspiel.GameType.Utility.GENERAL_SUM
    low, high = openspiel.PLAYER_RANGE[name]
    assert low <= engine.num_players <= high


def test_sequence_with_three_teams_is_general_sum():
    assert load("sequence_v0", {"num_teams": 3}).get_type().utility == pyspiel.GameType.Utility.GENERAL_SUM
    assert load("sequence_v0").get_type().utility == pyspiel.GameType.Utility.ZERO_SUM


@pytest.mark.parametrize("name, family, config", FAMILIES, ids=FAMILY_IDS)
def test_random_sim_test_passes_for_every_family(name, family, config):
    game = load(name, config, max_cycles=SHORT_CYCLES, seed=11)
    pyspiel.random_sim_test(game, num_sims=2, serialize=False, verbose=False)


#: Step limits of the long check: the environment's own (None), but a fifth of Dojo's, where random
#: play never ends a game and a full-length one takes minutes.
LONG_CYCLES = {"sequence_v0": None, "pans_trial_v0": None, "dojo_v0": 200, "wizard_arena_v0": None}


@pytest.mark.slow
@pytest.mark.parametrize("name", envs.NAMES)
def test_random_sim_test_on_whole_games(name):
    game = load(name, seed=5, max_cycles=LONG_CYCLES[name])
    pyspiel.random_sim_test(game, num_sims=1, serialize=False, verbose=False)


def test_parameters_that_are_not_one_scalar_are_json_text():
    assert openspiel.text_keywords("sequence_v0") == ("sequences_to_win",)
    assert openspiel.text_keywords("pans_trial_v0") == ("trump_order",)
    assert openspiel.text_keywords("dojo_v0") == ("board_file",)
    assert openspiel.text_keywords("wizard_arena_v0") == ()
    game = pyspiel.load_game("python_tabletop_sequence_v0", {"sequences_to_win": "1", "num_teams": 2})
    assert game.engine_game.config["sequences_to_win"] == 1
    order = ["weapons", "ballista", "traps", "walls"]
    game = pyspiel.load_game("python_tabletop_pans_trial_v0", {"trump_order": json.dumps(order)})
    assert game.engine_game.config["trump_order"] == order
    assert pyspiel.load_game("python_tabletop_dojo_v0").engine_game.config["board_file"] is None
    # the engine's parameters round-trip through game_parameters
    engine = envs.make_game("pans_trial_v0", trump_order=order, damage_threshold=15)
    assert openspiel.load(engine).engine_game.config == engine.config


def test_bad_parameters_are_refused_with_what_is_allowed():
    with pytest.raises(pyspiel.SpielError, match="Unknown parameter"):
        pyspiel.load_game("python_tabletop_sequence_v0", {"num_team": 3})
    with pytest.raises(ConfigError, match="num_teams"):
        pyspiel.load_game("python_tabletop_sequence_v0", {"num_teams": 5})
    with pytest.raises(ValueError, match="max_cycles"):
        pyspiel.load_game("python_tabletop_sequence_v0", {"max_cycles": 0})
    with pytest.raises(ValueError, match="seed"):
        pyspiel.load_game("python_tabletop_sequence_v0", {"seed": -2})
    with pytest.raises(ValueError, match="layout_seed=2147483648 does not fit"):
        openspiel.load(envs.make_game("sequence_v0", layout="generated", layout_seed=2**31))


def test_the_step_limit_is_counted_as_env_counts_it():
    game = load("wizard_arena_v0", {"num_bots": 2, "map_size": 8}, max_cycles=1, seed=0)
    state = game.new_initial_state()
    steps = 0
    while not state.is_terminal():
        state.apply_action(state.legal_actions()[0])
        steps += 1
    assert steps <= 2 and state.steps == steps
    if not state.engine.is_terminal():
        assert state.returns() == [float(r) for r in state.engine.truncation_returns()]
    assert state.current_player() == pyspiel.PlayerId.TERMINAL and state.legal_actions() == []


@pytest.mark.parametrize("name", envs.NAMES)
def test_observations_are_the_seats_view_and_observation_as_env_gives_them(name):
    game = load(name)
    env = envs.make(name, raw=True)
    env.reset(seed=3)
    state = game.state_at(game.engine_game.new_initial_state(3))
    rng = random.Random(0)
    for _ in range(12):
        if state.is_terminal():
            break
        for seat, agent in enumerate(env.possible_agents):
            view = env.unwrapped.player_view(agent)
            assert state.observation_string(seat) == json.dumps(view, sort_keys=True, separators=(",", ":"))
            assert state.information_state_string(seat) == state.observation_string(seat)
            expected = env.observe(agent)["observation"].reshape(-1)
            np.testing.assert_array_equal(np.asarray(state.observation_tensor(seat), np.float32), expected)
            np.testing.assert_array_equal(np.asarray(state.information_state_tensor(seat), np.float32), expected)
        action = rng.choice(state.legal_actions())
        state.apply_action(action)
        env.step(action)
        assert state.current_player() == env.unwrapped.seat_of(env.agent_selection) or state.is_terminal()


def test_observers_refuse_what_a_seat_cannot_see():
    game = load("sequence_v0")
    public_only = pyspiel.IIGObservationType(perfect_recall=False, public_info=True,
                                             private_info=pyspiel.PrivateInfoType.NONE)
    with pytest.raises(ValueError, match="one seat's own knowledge"):
        game.make_py_observer(public_only)


def test_a_seed_makes_the_run_reproducible():
    strings = []
    for _ in range(2):
        game = load("sequence_v0", seed=9)
        states = [game.new_initial_state() for _ in range(3)]
        strings.append([str(s) for s in states])
    assert strings[0] == strings[1]
    assert len(set(strings[0])) == 3  # successive games are dealt differently


def test_tensor_shape_probes_draw_no_game():
    # OpenSpiel builds a throwaway state to learn a tensor's shape; that must not change the games dealt.
    plain = load("sequence_v0", seed=4)
    probed = load("sequence_v0", seed=4)
    for _ in range(3):
        probed.observation_tensor_shape()
        probed.information_state_tensor_size()
    assert str(plain.new_initial_state()) == str(probed.new_initial_state())


def random_moves(state, moves, seed):
    """``state`` after up to ``moves`` uniformly random legal actions (fewer if the game ends)."""
    rng = random.Random(seed)
    for _ in range(moves):
        if not state.is_terminal():
            state.apply_action(rng.choice(state.legal_actions()))
    return state


@pytest.mark.parametrize("name", envs.NAMES)
def test_clones_are_independent_and_share_the_future(name):
    game = load(name, seed=2)
    state = random_moves(game.new_initial_state(), 5, seed=1)
    clone = state.clone()
    assert str(clone) == str(state) and clone.history() == state.history() and clone.steps == state.steps
    assert clone.engine is not state.engine
    twin = state.clone()
    before = str(state)
    for _ in range(8):
        if clone.is_terminal():
            break
        action = clone.legal_actions()[0]
        clone.apply_action(action)
        twin.apply_action(action)
        assert str(twin) == str(clone)  # the same random future
    assert str(state) == before and state.steps == twin.steps - (clone.steps - state.steps)


@pytest.mark.parametrize("name", envs.NAMES)
def test_serialize_goes_through_the_engines_validated_json(name):
    game = load(name, seed=6)
    state = random_moves(game.new_initial_state(), 6, seed=2)
    text = state.serialize()
    loaded = game.deserialize_state(text)
    assert str(loaded) == str(state) and loaded.steps == state.steps
    assert [loaded.observation_string(p) for p in range(game.num_players())] == \
           [state.observation_string(p) for p in range(game.num_players())]
    for _ in range(5):
        if state.is_terminal():
            break
        action = state.legal_actions()[-1]
        state.apply_action(action)
        loaded.apply_action(action)
        assert str(loaded) == str(state)


def test_bad_saves_are_refused_and_nothing_is_pickled():
    game = load("sequence_v0", seed=1)
    state = game.new_initial_state()
    data = json.loads(state.serialize())
    with pytest.raises(StateError, match="JSON text"):
        game.deserialize_state("not json")
    with pytest.raises(StateError, match="'format'"):
        game.deserialize_state(json.dumps({"save": data["save"]}))
    with pytest.raises(StateError, match="steps"):
        game.deserialize_state(json.dumps(dict(data, steps=10**9)))
    broken = json.loads(json.dumps(data))
    broken["save"]["state"]["hands"] = "everything"
    with pytest.raises(StateError):
        game.deserialize_state(json.dumps(broken))
    with pytest.raises(StateError, match="different config"):
        load("sequence_v0", {"num_teams": 3}).deserialize_state(state.serialize())
    # OpenSpiel's own route (a pickle of the state's attributes) is refused before anything is written
    with pytest.raises(pyspiel.SpielError, match="GetRNGState|not pickled"):
        pyspiel.serialize_game_and_state(game, state)
    with pytest.raises(pyspiel.SpielError, match="GetRNGState|not pickled"):
        pickle.dumps(state)
    with pytest.raises(ValueError, match="deserialize_state"):
        game.new_initial_state("{}")


@pytest.mark.parametrize("name", envs.NAMES)
def test_resampled_states_keep_the_seats_view(name):
    game = load(name, seed=8)
    state = game.new_initial_state()
    rng, guesses = random.Random(3), random.Random(4)
    for _ in range(15):
        if state.is_terminal():
            break
        seat = state.current_player()
        guess = openspiel.resample(state, seat, guesses)
        assert guess.information_state_string(seat) == state.information_state_string(seat)
        assert guess.steps == state.steps and guess.current_player() == seat
        state.apply_action(rng.choice(state.legal_actions()))


def test_ismcts_bot_plays_whole_games_against_an_openspiel_bot():
    from open_spiel.python.algorithms import evaluate_bots

    game = load("pans_trial_v0", seed=1)
    for seat in range(2):
        bots = [pyspiel.make_uniform_random_bot(p, 5) for p in range(2)]
        bots[seat] = openspiel.ismcts_bot(game, seat, num_simulations=8, seed=3)
        returns = evaluate_bots.evaluate_bots(game.new_initial_state(), bots, np.random.RandomState(0))
        assert len(returns) == 2 and sum(returns) == 0.0


def test_ismcts_bot_is_seeded_and_checks_its_arguments():
    game = load("sequence_v0", seed=1)
    state = game.new_initial_state()
    moves = [openspiel.ismcts_bot(game, 0, num_simulations=6, seed=2).step(state.clone()) for _ in range(2)]
    assert moves[0] == moves[1] and moves[0] in state.legal_actions()
    with pytest.raises(ValueError, match="plays seat 1"):
        openspiel.ismcts_bot(game, 1, num_simulations=6, seed=2).step(state)
    with pytest.raises(ValueError, match="num_simulations"):
        openspiel.ismcts_bot(game, 0, num_simulations=0, seed=2)
    with pytest.raises(ValueError, match="player"):
        openspiel.ismcts_bot(game, 2, num_simulations=5, seed=2)
    with pytest.raises(TypeError, match="envs.openspiel"):
        openspiel.ismcts_bot(pyspiel.load_game("kuhn_poker"), 0, num_simulations=5, seed=2)


def test_the_ismcts_agent_sits_at_a_tabletop_table():
    for name in envs.NAMES:
        assert f"{name}/ismcts-v0" in agents.available(name)
    bot = agents.make("pans_trial_v0/ismcts-v0", seed=1, num_simulations=6)
    record = agents.play_game("pans_trial_v0", [bot, agents.make("pans_trial_v0/random-v0", seed=2)], seed=4)
    assert record.length > 0 and sum(record.returns) == 0.0
    with pytest.raises(ValueError, match="num_simulations"):
        agents.make("pans_trial_v0/ismcts-v0", num_simulations=0)


def test_openspiels_rl_environment_plays_the_games():
    from open_spiel.python import rl_environment

    env = rl_environment.Environment(load("pans_trial_v0", seed=3))
    rng = random.Random(0)
    step = env.reset()
    while not step.last():
        seat = step.observations["current_player"]
        step = env.step([rng.choice(step.observations["legal_actions"][seat])])
    assert sum(step.rewards) == 0.0 and len(step.observations["info_state"][0]) == 987


def test_the_pages_openspiel_blocks_run():
    import re
    from pathlib import Path

    page = Path(__file__).resolve().parent.parent / "docs" / "guide" / "openspiel_torchrl.md"
    blocks = re.findall(r"^```\{code-block\} python\n:class: run-with-openspiel\n\n(.*?)^```$",
                        page.read_text(encoding="utf-8"), re.S | re.M)
    assert len(blocks) == 2
    for i, code in enumerate(blocks):
        exec(compile(code, f"{page.name}[openspiel {i}]", "exec"), {"__name__": "__docs__"})


def test_the_bridge_benchmark_runs(capsys):
    from benchmarks import openspiel_bridge

    openspiel_bridge.main(["--positions", "1"])
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines[1:]] == list(envs.NAMES)
    with pytest.raises(SystemExit):
        openspiel_bridge.main(["--positions", "0"])


@pytest.mark.parametrize("name", envs.NAMES)
def test_the_ismcts_agents_choice_depends_only_on_what_the_seat_may_know(name):
    # The check tests/test_agents.py makes of every rule-based agent, with fewer simulations.
    game = envs.make_game(name)
    state = game.new_initial_state(17)
    rng, guesses = random.Random(17), random.Random(5)
    checked = 0
    for step in range(60):
        if state.is_terminal() or checked == 3:
            break
        seat = state.current_player()
        if step % 7 == 3 and len(state.legal_actions()) > 1:
            twin = game.state_from_view(state.player_view(seat), guesses)
            choices = []
            for position in (state, twin):
                bot = agents.make(f"{name}/ismcts-v0", seed=123, num_simulations=12)
                bot.reset(seat, game)
                action = bot.act(position.seat_observation(seat), position.player_view(seat))
                assert position.legal_mask()[action]
                choices.append(action)
            assert choices[0] == choices[1]
            checked += 1
        legal = state.legal_actions()
        state.apply_action(legal[rng.randrange(len(legal))])
    assert checked >= 1


def test_the_ismcts_agent_plays_the_same_game_from_the_same_seed():
    def lineup():
        return [agents.make("pans_trial_v0/ismcts-v0", seed=3, num_simulations=6),
                agents.make("pans_trial_v0/random-v0", seed=4)]

    a = agents.play_game("pans_trial_v0", lineup(), seed=8, record_actions=True)
    b = agents.play_game("pans_trial_v0", lineup(), seed=8, record_actions=True)
    assert a.actions == b.actions and a.returns == b.returns
