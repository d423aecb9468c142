"""The games in TorchRL: ``PettingZooWrapper(<game>.env(**config), use_mask=True)`` for every game and
config family, and the training loop of the OpenSpiel and TorchRL page.

Needs the ``torchrl`` extra (``pip install -e ".[torchrl]"``); where TorchRL is absent the whole module
is skipped. CI runs it in a virtual environment of its own after the main suite.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import pytest

pytest.importorskip(
    "torchrl", reason="torchrl is not installed: these tests need the torchrl extra (pip install -e '.[torchrl]')"
)

import torch  # noqa: E402
from torchrl.envs.libs.pettingzoo import PettingZooWrapper  # noqa: E402
from torchrl.envs.utils import check_env_specs  # noqa: E402

import envs  # noqa: E402

PAGE = Path(__file__).resolve().parent.parent / "docs" / "guide" / "openspiel_torchrl.md"
BLOCK = re.compile(r"^```\{code-block\} python\n:class: run-with-torchrl\n\n(.*?)^```$", re.S | re.M)
FAMILIES = [(name, family, config) for name in envs.NAMES
            for family, config in envs.game_class(name).config_families.items()]


@pytest.fixture(autouse=True)
def quiet_torchrl():
    # TorchRL warns that it was tested with another PettingZoo version; nothing here depends on it.
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="PettingZoo in TorchRL is tested")
        torch.set_num_threads(1)
        yield


@pytest.mark.parametrize("name, family, config", FAMILIES, ids=[f"{n}-{f}" for n, f, _ in FAMILIES])
def test_every_game_passes_check_env_specs(name, family, config):
    # A short step limit: check_env_specs plays a few random steps; truncation ends long games.
    env = PettingZooWrapper(envs.make(name, max_cycles=20, **config), use_mask=True, seed=0)
    check_env_specs(env, seed=0)
    seats = envs.make_game(name, **config).num_players
    assert set(env.group_map) == {f"player_{i}" for i in range(seats)}


@pytest.mark.parametrize("name", envs.NAMES)
def test_one_group_of_seats_plays_whole_games(name):
    game = envs.make_game(name)
    seats = [f"player_{i}" for i in range(game.num_players)]
    env = PettingZooWrapper(envs.make(name, max_cycles=30), use_mask=True, group_map={"players": seats}, seed=1)
    check_env_specs(env, seed=1)
    episode = env.rollout(max_steps=30 * game.num_players + 5)
    assert bool(episode["next", "done"][-1])
    acted = episode["players", "mask"]
    assert (acted.sum(-1) == 1).all()  # turn-based: exactly one seat moved at each step
    # the seat that acts has its legal actions; TorchRL fills a waiting seat's mask with True, so the
    # action sampled for it (and ignored by the step) comes from a valid distribution
    masks = episode["players", "action_mask"]
    legal = masks.sum(-1)
    assert (legal[acted] < game.num_actions).any() and (legal[acted] >= 1).all()
    assert (legal[~acted] == game.num_actions).all()
    returns = episode["next", "players", "reward"].sum(0).squeeze(-1)
    assert returns.shape == (game.num_players,)


def test_the_whole_position_is_there_for_a_centralised_critic():
    env = PettingZooWrapper(envs.make("sequence_v0", max_cycles=20, players_per_team=2), use_mask=True,
                            return_state=True, seed=2)
    check_env_specs(env, seed=2)
    state = env.reset()["state"]
    assert tuple(state.shape) == envs.make_game("sequence_v0", players_per_team=2).state_shape


def test_the_parallel_api_is_not_for_torchrls_wrapper():
    # The page says so: TorchRL treats a parallel env as simultaneous and samples every seat's action,
    # and a waiting seat's mask is all zeros.
    env = PettingZooWrapper(envs.pans_trial_v0.parallel_env(), use_mask=False, seed=0)
    with pytest.raises(RuntimeError, match="invalid multinomial|probability"):
        check_env_specs(env, seed=0)
    with pytest.raises(ValueError, match="use_mask=True"):
        PettingZooWrapper(envs.pans_trial_v0.env(), use_mask=False)


def test_the_pages_training_loop_runs():
    blocks = BLOCK.findall(PAGE.read_text(encoding="utf-8"))
    assert len(blocks) == 1
    scope = {"__name__": "__docs__"}
    exec(compile(blocks[0], f"{PAGE.name}[torchrl]", "exec"), scope)
    assert scope["episode"]["players", "mask"].any()
    assert all(p.grad is not None for p in scope["net"].parameters())
