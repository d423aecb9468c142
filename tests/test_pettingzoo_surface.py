"""The PettingZoo surface beyond the AEC loop: ``state()`` / ``state_space``, the environment's
metadata, ``cumulative_reward`` after the end, ``SelfPlayEnv``'s seeding and Gymnasium/SB3 checks,
the env docstrings as reStructuredText and the PettingZoo API guide's examples. (PettingZoo's own
``state_test`` and ``parallel_api_test``, and ``state()`` against hidden information, run for every
game in ``test_contract.py``.)"""

from __future__ import annotations

import importlib
import json
import random
import warnings

import numpy as np
import pytest

import agents
import envs
from tests.test_contract import CASES, GAMES


def module(name):
    return importlib.import_module(f"envs.{name}")


# ---------------------------------------------------------------------------------------------
# state() and state_space
@pytest.mark.parametrize("name,family,config", CASES)
def test_state_is_in_its_space_and_a_pure_function_of_the_position(name, family, config):
    mod = module(name)
    env = mod.raw_env(**config)
    game = env.unwrapped.game
    assert env.state_space.shape == game.state_shape
    assert game.state_shape[0] == game.observation_shape[0] + game.num_players + 1 + game.referee_block_size
    env.reset(seed=11)
    rng = random.Random(11)
    other = mod.raw_env(**config)
    for step in range(10_000):
        state = env.state()
        assert state.dtype == np.float32 and env.state_space.contains(state), f"step {step}"
        if step % 9 == 0:  # save, through JSON text, into a fresh environment: the same array
            other.reset(options={"state": json.loads(json.dumps(env.unwrapped.save_state()))})
            assert np.array_equal(other.state(), state)
            assert np.array_equal(game.encode_state(game.load(json.loads(json.dumps(game.save(env.unwrapped.engine_state))))),
                                  state)
        if all(env.terminations.values()) or all(env.truncations.values()):
            break
        mask = env.observe(env.agent_selection)["action_mask"]
        legal = np.flatnonzero(mask)
        env.step(int(legal[rng.randrange(len(legal))]))
    # the seat-to-act block: one-hot of the seat, or the last value once the game is over
    n = game.num_players
    at = game.observation_shape[0]
    to_act = env.state()[at:at + n + 1]
    engine = env.unwrapped.engine_state
    expected = n if engine.is_terminal() else engine.current_player()
    assert to_act.sum() == 1.0 and to_act[expected] == 1.0


def test_state_before_reset_says_to_reset():
    env = module("sequence_v0").raw_env()
    with pytest.raises(RuntimeError, match="reset"):
        env.state()


def test_sequence_state_shows_every_hand_and_the_deck():
    game = envs.make_game("sequence_v0")
    state = game.new_initial_state(2)
    data = state.to_dict()
    card = data["hands"][1][0]
    swap = next(c for c in data["deck"] if c != card)
    data["hands"][1][0], data["deck"][data["deck"].index(swap)] = swap, card
    other = game.load_state(data)
    assert np.array_equal(game.observe(other, 0), game.observe(state, 0))
    diff = np.flatnonzero(game.encode_state(other) != game.encode_state(state))
    block = game.observation_shape[0] + game.num_players + 1
    # seat 1's hand row and the deck's contents change in the two kinds swapped, and the deck's order
    # in the one slot (counted from the top, the list's end) where the card was swapped
    top_slot = len(data["deck"]) - 1 - data["deck"].index(card)
    expected = sorted([52 + card, 52 + swap, 2 * 52 + card, 2 * 52 + swap]) + [3 * 52 + top_slot]
    assert (diff - block).tolist() == expected


def test_wizard_arena_state_shows_declined_pairs_that_seat_0_does_not_see():
    game = envs.make_game("wizard_arena_v0")
    state = game.new_initial_state(4)
    data = state.to_dict()
    assert data["declined"] == []
    data["declined"] = [[1, 2]]
    other = game.load_state(data)
    assert np.array_equal(game.observe(other, 0), game.observe(state, 0))
    n = game.num_players
    block = game.observation_shape[0] + n + 1
    diff = np.flatnonzero(game.encode_state(other) != game.encode_state(state))
    assert diff.tolist() == [block + 1 * n + 2, block + 2 * n + 1]


def test_pans_trial_state_shows_the_omens_before_their_reveal():
    game = envs.make_game("pans_trial_v0")
    state = game.new_initial_state(0)
    assert state.phase == "draft" and not state.to_dict()["revealed"]
    omens = state.to_dict()["omens"]
    block = game.observation_shape[0] + game.num_players + 1
    encoded = game.encode_state(state)[block:block + 16].reshape(4, 4)
    assert [int(np.argmax(row)) for row in encoded] == [c // 13 for c in omens]


# ---------------------------------------------------------------------------------------------
# cumulative_reward after the end
@pytest.mark.parametrize("name,family,config", CASES)
def test_cumulative_reward_is_the_final_return_after_the_episode(name, family, config):
    env = module(name).env(**config)
    env.reset(seed=4)
    rng = random.Random(4)
    totals = {a: 0.0 for a in env.possible_agents}
    for agent in env.agent_iter(max_iter=20_000):
        _, reward, term, trunc, _ = env.last()
        totals[agent] += reward
        if term or trunc:
            env.step(None)
        else:
            legal = np.flatnonzero(env.observe(agent)["action_mask"])
            env.step(int(legal[rng.randrange(len(legal))]))
    assert env.agents == []  # every agent has taken its dead step
    returns = {a: env.unwrapped.cumulative_reward(a) for a in env.possible_agents}
    assert returns == pytest.approx(totals)
    if env.unwrapped.engine_state.is_terminal():
        assert list(returns.values()) == pytest.approx(env.unwrapped.engine_state.returns())
    with pytest.raises(ValueError, match="no agent named"):
        env.unwrapped.cumulative_reward("player_99")


# ---------------------------------------------------------------------------------------------
# metadata: each class its own, never mutated by wrapping
def test_each_raw_env_class_owns_its_metadata_and_wrapping_mutates_none():
    from pettingzoo.utils.wrappers import CaptureStdoutWrapper

    classes = [module(n).raw_env for n in envs.NAMES]
    assert len({id(c.metadata) for c in classes}) == len(classes)
    assert [c.metadata["name"] for c in classes] == list(envs.NAMES)
    before = [dict(c.metadata) for c in classes]
    for cls in classes:
        for _ in range(3):
            wrapped = CaptureStdoutWrapper(cls(render_mode="human"))
            wrapped.reset(seed=0)
            text = wrapped.render()
            assert isinstance(text, str) and text.strip()
    assert [dict(c.metadata) for c in classes] == before
    for cls in classes:
        assert tuple(cls.metadata["render_modes"]) == ("human", "ansi", "rgb_array")
        assert cls().metadata["render_modes"] == ["human", "ansi", "rgb_array"]


# ---------------------------------------------------------------------------------------------
# SelfPlayEnv: seeded from reset(seed), opponents included; Gymnasium's and SB3's checks
def docstring_example(name, **factory_kwargs):
    from training.sb3.selfplay import SelfPlayEnv

    return SelfPlayEnv(name, {}, opponent_pool=[lambda: agents.make(f"{name}/random-v0", **factory_kwargs)])


def trajectory(env, seed, episodes=2):
    out = []
    obs, info = env.reset(seed=seed)
    rng = random.Random(0)
    for _ in range(episodes):
        done = False
        while not done:
            legal = np.flatnonzero(env.action_masks())
            action = int(legal[rng.randrange(len(legal))])
            obs, reward, term, trunc, info = env.step(action)
            out.append((action, reward, obs.tobytes()))
            done = term or trunc
        obs, info = env.reset()
        out.append(info["seat"])
    return out


@pytest.mark.parametrize("name", GAMES)
def test_selfplay_same_seed_same_trajectory_whatever_the_factories_do(name):
    env = docstring_example(name)  # the factory passes no seed: agents seeded from the OS
    first = trajectory(env, 123)
    assert trajectory(env, 123) == first
    assert trajectory(docstring_example(name), 123) == first
    assert trajectory(docstring_example(name, seed=99), 123) == first  # the factory's own seed is overridden


def test_selfplay_refuses_a_factory_that_returns_no_agent():
    from training.sb3.selfplay import SelfPlayEnv

    env = SelfPlayEnv("sequence_v0", {}, opponent_pool=[lambda: "random"])
    with pytest.raises(TypeError, match="must return an agents.base.Agent"):
        env.reset(seed=0)


@pytest.mark.parametrize("name", GAMES)
def test_selfplay_passes_gymnasium_and_sb3_env_checkers(name):
    from gymnasium.utils.env_checker import check_env as gymnasium_check_env
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gymnasium_check_env(docstring_example(name), skip_render_check=True)
        sb3_check_env(docstring_example(name), warn=True)


# ---------------------------------------------------------------------------------------------
# The module docstrings are each game's reference page (Sphinx autodoc): valid reStructuredText
@pytest.mark.parametrize("name", GAMES)
def test_module_docstring_is_valid_restructuredtext_with_the_reference_sections(name):
    import io

    import docutils.core
    import docutils.utils

    doc = module(name).__doc__
    warnings_out = io.StringIO()
    try:  # halt_level 2: any warning (a malformed table, an unclosed literal) is an error
        tree = docutils.core.publish_doctree(
            doc, settings_overrides={"warning_stream": warnings_out, "halt_level": 2, "report_level": 2})
    except docutils.utils.SystemMessage as exc:
        pytest.fail(f"{name}'s docstring is not clean reStructuredText: {exc}")
    assert warnings_out.getvalue() == ""
    titles = [t.astext() for t in tree.findall(docutils.nodes.title)]
    for section in ("State layout (state())", "Version history"):
        assert section in titles, f"{name}'s docstring lacks a {section!r} section; it has {titles}"
    assert "|" not in "".join(line[:1] for line in doc.splitlines()), "a Markdown table row"
    assert "parallel_env" in doc and "turn_based_aec_to_parallel" in doc
    game = envs.make_game(name)
    assert f"{game.state_shape[0]}" in doc, "the default state length is not the one documented"
    assert len(list(tree.findall(docutils.nodes.table))) >= 3


# ---------------------------------------------------------------------------------------------
def test_pettingzoo_api_guide_examples_run():
    """Every Python block of docs/guide/pettingzoo_api.md runs as written."""
    import contextlib
    import io
    import pathlib
    import re

    page = pathlib.Path(__file__).resolve().parents[1] / "docs" / "guide" / "pettingzoo_api.md"
    text = page.read_text(encoding="utf-8")
    assert text.startswith("# ") and text.count("\n# ") == 0  # a single title
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert len(blocks) >= 6
    for i, code in enumerate(blocks):
        with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
            warnings.simplefilter("ignore")
            try:
                exec(compile(code, f"{page.name} block {i}", "exec"), {"__name__": "guide_example"})
            except Exception as exc:
                pytest.fail(f"block {i} of {page.name} failed: {type(exc).__name__}: {exc}\n{code}")
