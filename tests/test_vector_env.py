"""training.vector_env: the batched self-play view, its determinism, and MaskablePPO training on it."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import agents
from envs.core import IllegalActionError
from training.vector_env import SB3VecEnv, SelfPlayVectorEnv


def random_pool(game):
    return [lambda: agents.make(f"{game}/random-v0")]


def legal_choice(masks, rng):
    return np.argmax(np.where(masks, rng.random(masks.shape), -1.0), axis=1)


def play(venv, seed, steps):
    rng = np.random.default_rng(seed)
    obs, infos = venv.reset(seed=seed)
    trace = [(obs, infos["seat"])]
    for _ in range(steps):
        out = venv.step(legal_choice(venv.action_masks(), rng))
        trace.append(out)
    return trace


def assert_same(a, b):
    for x, y in zip(a, b):
        if isinstance(x, dict):
            assert x.keys() == y.keys()
            for k in x:
                np.testing.assert_array_equal(x[k], y[k])
        elif isinstance(x, tuple):
            assert_same(x, y)
        else:
            np.testing.assert_array_equal(x, y)


def test_vector_env_follows_gymnasiums_vector_api():
    venv = SelfPlayVectorEnv("pans_trial_v0", 4, opponent_pool=random_pool("pans_trial_v0"), max_cycles=15)
    assert venv.observation_space.shape == (4, *venv.single_observation_space.shape)
    assert venv.action_space.shape == (4,)
    obs, infos = venv.reset(seed=1)
    assert obs in venv.observation_space and obs.dtype == np.float32
    ends = 0
    rng = np.random.default_rng(0)
    seats = set()
    for _ in range(120):
        # Every table awaits its learner, and the mask is the learner's.
        assert all(venv.tables.learner_seat(i) == seat for i, seat in enumerate(venv.learner))
        masks = venv.action_masks()
        assert masks.dtype == bool and masks.shape == (4, venv.single_action_space.n) and masks.any(axis=1).all()
        obs, rewards, terms, truncs, infos = venv.step(legal_choice(masks, rng))
        assert obs in venv.observation_space
        assert rewards.dtype == np.float32 and terms.dtype == bool and truncs.dtype == bool
        done = terms | truncs
        np.testing.assert_array_equal(infos["_final_obs"], done)
        assert not rewards[~done].any()
        low, high = venv.game.reward_range
        assert ((rewards >= low) & (rewards <= high)).all()
        assert (infos["episode_decisions"][done] >= 1).all()
        ends += int(done.sum())
        seats.update(infos["seat"].tolist())
    assert ends >= 4 and seats == set(range(venv.game.num_players))
    venv.close()


def test_a_seed_makes_deals_seats_and_opponents_reproducible():
    def make():
        return SelfPlayVectorEnv("sequence_v0", 3, opponent_pool=random_pool("sequence_v0"), max_cycles=20)
    first = play(make(), 5, 60)
    assert_same(first, play(make(), 5, 60))
    venv = make()
    play(venv, 9, 10)
    assert_same(first, play(venv, 5, 60))  # reset(seed) starts the same sequence again
    other = play(make(), 6, 60)
    assert not np.array_equal(first[0][0], other[0][0])
    # A reset without a seed deals on from the stream: new games, the same ones in every process.
    again, twin = make(), make()
    for venv in (again, twin):
        venv.reset(seed=5)
    later = again.reset()[0]
    assert not np.array_equal(later, first[0][0]) and np.array_equal(later, twin.reset()[0])


def test_the_numpy_sequence_backend_plays_the_same_self_play_games_as_the_python_one():
    # The numpy backend steps the opponents' subset of tables (step with an active mask) too.
    def make(backend):
        return SelfPlayVectorEnv("sequence_v0", 4, config={"num_teams": 3}, opponent_pool=random_pool("sequence_v0"),
                                 max_cycles=20, backend=backend)
    assert_same(play(make("python"), 3, 80), play(make("numpy"), 3, 80))


def test_an_illegal_learner_action_names_the_table():
    venv = SelfPlayVectorEnv("sequence_v0", 2, opponent_pool=random_pool("sequence_v0"))
    venv.reset(seed=0)
    actions = venv.action_masks().argmax(axis=1)
    actions[1] = int(np.flatnonzero(~venv.action_masks()[1])[0])
    with pytest.raises(IllegalActionError, match="table 1"):
        venv.step(actions)
    with pytest.raises(ValueError, match="opponent_pool"):
        SelfPlayVectorEnv("sequence_v0", 2)


def test_maskable_ppo_trains_on_the_sb3_adapter():
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported

    torch.set_num_threads(1)
    venv = SB3VecEnv(SelfPlayVectorEnv("pans_trial_v0", 4, opponent_pool=random_pool("pans_trial_v0"), max_cycles=10))
    assert is_masking_supported(venv)
    venv.seed(0)
    venv.reset()
    assert get_action_masks(venv).shape == (4, venv.action_space.n)
    model = MaskablePPO("MlpPolicy", venv, n_steps=64, batch_size=64, n_epochs=1, seed=0,
                        policy_kwargs={"net_arch": [32]}, device="cpu")
    model.learn(total_timesteps=256)
    assert model.num_timesteps >= 256
    assert len(model.ep_info_buffer) >= 1  # episodes finished and were reported
