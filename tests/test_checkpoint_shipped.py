"""The shipped policies decide exactly as the Stable-Baselines3 models they were converted from.

``tests/golden/ppo_v1_decisions.npz`` holds, per game, 300 observations from games played by the
original MaskablePPO model of ``<game>/ppo-v1`` (against random, heuristic and experienced play) with
the action that model chose (deterministic, masked). Those models were converted into
``policy.json`` + ``policy.safetensors`` and no longer ship; this pins that the ids still mean the
same player. The file is read with ``allow_pickle=False``.
"""

from __future__ import annotations

import numpy as np
import pytest

import agents
import envs
from tests.checkpoint_helpers import REPO

torch = pytest.importorskip("torch")
torch.set_num_threads(1)
DECISIONS = REPO / "tests" / "golden" / "ppo_v1_decisions.npz"


@pytest.mark.parametrize("game", ["sequence_v0", "pans_trial_v0"])
def test_shipped_policy_decides_as_the_original_model(game):
    with np.load(DECISIONS, allow_pickle=False) as data:
        observations, masks, actions = (data[f"{game}/{k}"] for k in ("observation", "action_mask", "action"))
    bot = agents.make(f"{game}/ppo-v1", seed=0)
    chosen = np.array([bot.act({"observation": o, "action_mask": m}, {}) for o, m in zip(observations, masks)])
    assert len(chosen) == 300
    assert (masks[np.arange(len(chosen)), chosen] == 1).all()
    assert (chosen == actions).all(), f"{(chosen != actions).sum()} of {len(chosen)} decisions differ"


def test_a_sampling_policy_plays_legal_moves_and_is_seeded():
    with np.load(DECISIONS, allow_pickle=False) as data:
        observations, masks = data["sequence_v0/observation"][:100], data["sequence_v0/action_mask"][:100]

    def picks(seed):
        bot = agents.make("sequence_v0/ppo-v1", seed=seed, deterministic=False)
        return [bot.act({"observation": o, "action_mask": m}, {}) for o, m in zip(observations, masks)]

    first = picks(3)
    assert all(m[a] == 1 for a, m in zip(first, masks))
    assert first == picks(3)
    assert first != picks(4)


def test_a_policy_folder_loaded_without_a_config_still_refuses_another_config():
    from agents.checkpoint import CheckpointError, PolicyAgent

    bot = PolicyAgent("sequence_v0", path=REPO / "checkpoints" / "sequence_v0" / "ppo-v1")
    with pytest.raises(CheckpointError, match=r"was trained for.*rules differ in \['num_teams'\].*the one it was"):
        bot.reset(0, envs.make_game("sequence_v0", num_teams=3))
    bot.reset(0, envs.make_game("sequence_v0"))
