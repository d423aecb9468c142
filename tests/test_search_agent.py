"""Search on top of a trained network (``agents.search.SearchPolicyAgent``): settings, index entries,
hidden information, determinism, and that the lookahead finds what the bare policy misses."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
import torch

import agents
import envs
from agents.checkpoint import CheckpointError, PolicyAgent, register_checkpoint, register_index
from agents.nets import build_mlp_ac
from agents.policy_io import save_policy
from agents.runner import seat_inputs
from agents.search import SEARCH_SETTINGS, SearchPolicyAgent, check_search_settings
from envs.sequence.game import SequenceGame
from envs.sequence.rules import PLACE, from_text

torch.set_num_threads(1)


def write_actor_critic(folder, game_name="sequence_v0", config=None, seed=0, zero_value=False, avoid=None):
    """A tiny ``mlp_ac`` policy; ``zero_value`` makes its value 0 everywhere, ``avoid`` an action it
    never prefers (a large negative bias on that logit)."""
    torch.manual_seed(seed)
    game = envs.make_game(game_name, **(config or {}))
    obs_dim, n = int(game.observation_shape[0]), int(game.num_actions)
    module = build_mlp_ac(obs_dim, n, [16])
    with torch.no_grad():
        if zero_value:
            module.value.weight.zero_()
            module.value.bias.zero_()
        if avoid is not None:
            module.policy.bias[avoid] = -50.0
    return save_policy(folder, module, arch="mlp_ac", arch_kwargs={"obs_dim": obs_dim, "num_actions": n, "hidden": [16]},
                       game=game_name, config=game.config, observation_shape=(obs_dim,), num_actions=n)


def choose(agent, state):
    seat = state.current_player()
    agent.reset(seat, state.game)
    observation, view = seat_inputs(state, seat)
    action = agent.act(observation, view)
    assert observation["action_mask"][action], state.game.action_to_string(action)
    return action


def sq(r, c):
    return r * 10 + c


@pytest.mark.parametrize(
    "bad, words",
    [
        ([], "must be an object"),
        ({"depth": 3}, "unknown setting"),
        ({"top_k": 0}, "top_k must be an integer in [1, 64]"),
        ({"determinizations": True}, "determinizations must be an integer"),
        ({"determinizations": 2.0}, "determinizations must be an integer"),
        ({"rollout_turns": 17}, "rollout_turns must be an integer in [0, 16]"),
        ({"prior_weight": float("nan")}, "prior_weight must be a number"),
        ({"prior_weight": -1}, "prior_weight must be a number in [0.0, 1.0]"),
        ({"max_plies": "5"}, "max_plies must be an integer"),
    ],
)
def test_bad_settings_are_refused_with_the_allowed_range(bad, words):
    with pytest.raises(CheckpointError) as err:
        check_search_settings(bad)
    assert words in str(err.value)


def test_settings_are_completed_with_defaults():
    full = check_search_settings({"top_k": 3})
    assert full["top_k"] == 3
    assert set(full) == set(SEARCH_SETTINGS)
    assert full["determinizations"] == SEARCH_SETTINGS["determinizations"][0]


def test_the_lookahead_takes_the_winning_move_the_bare_policy_avoids(tmp_path):
    game = SequenceGame()
    first = [sq(1, c) for c in range(5)]
    # A chip on r1c5 (the AH) completes a second sequence sharing one chip with the first: a win.
    state = from_text(game, ["." * 10, "AAAAA.AAA.", *["." * 10] * 8],
                      hands={0: ["6D", "3S", "AH", "KS", "9C"]}, sequences={0: [first]})
    win = PLACE + sq(1, 5)
    assert win in state.legal_actions()
    folder = write_actor_critic(tmp_path / "p", zero_value=True, avoid=win)
    assert choose(PolicyAgent("sequence_v0", seed=0, path=folder), state) != win
    searcher = SearchPolicyAgent("sequence_v0", seed=0, path=folder, search={"top_k": 64, "determinizations": 2})
    assert choose(searcher, state) == win
    # With only the policy's favourite candidate it cannot see it.
    narrow = SearchPolicyAgent("sequence_v0", seed=0, path=folder, search={"top_k": 1})
    assert choose(narrow, state) != win


@pytest.mark.parametrize("config", [{}, {"players_per_team": 2}])
def test_choice_ignores_other_hands_and_the_deck(tmp_path, config):
    """The agent decides from its view: resampling everything it cannot see changes nothing."""
    game = SequenceGame(**config)
    folder = write_actor_critic(tmp_path / "p", config=config, seed=1)
    checked = 0
    for seed in range(4):
        state = game.new_initial_state(seed)
        rng = random.Random(seed)
        for _ in range(12 + 5 * seed):
            legal = state.legal_actions()
            state.apply_action(legal[rng.randrange(len(legal))])
        seat = state.current_player()
        other = game.state_from_view(state.player_view(seat), random.Random(99 + seed))
        assert [h for p, h in enumerate(other.hands) if p != seat] != [h for p, h in enumerate(state.hands) if p != seat]

        def agent(seed=seed):
            return SearchPolicyAgent("sequence_v0", seed=seed, path=folder, search={"determinizations": 3})

        assert choose(agent(), state) == choose(agent(), other)
        checked += 1
    assert checked == 4


@pytest.mark.parametrize("game_name", list(envs.NAMES))
def test_plays_whole_games_legally_and_the_same_seed_plays_the_same_game(tmp_path, game_name):
    folder = write_actor_critic(tmp_path / "p", game_name=game_name, seed=2)
    game = envs.make_game(game_name)
    settings = {"top_k": 2, "determinizations": 2, "max_plies": 20}

    def run():
        seats = [SearchPolicyAgent(game_name, seed=s, path=folder, search=settings) if s == 0
                 else agents.make(f"{game_name}/random-v0", seed=s) for s in range(game.num_players)]
        return agents.play_game(game_name, seats, seed=5, record_actions=True)

    first, second = run(), run()
    assert first.length > 0
    assert first.actions == second.actions


def test_a_network_without_a_value_head_is_refused_clearly(tmp_path):
    from tests.checkpoint_helpers import write_small_policy

    folder = write_small_policy(tmp_path / "actor-only")
    state = SequenceGame().new_initial_state(0)
    with pytest.raises(CheckpointError, match="value head"):
        choose(SearchPolicyAgent("sequence_v0", seed=0, path=folder), state)


def _index(root, entries):
    (root / "index.json").write_text(json.dumps({"checkpoints": entries}))


def test_an_index_entry_with_search_settings_plays_with_search(tmp_path):
    root = tmp_path / "ck"
    root.mkdir()
    write_actor_critic(root / "sequence_v0" / "s", seed=3)
    base = {"game": "sequence_v0", "config": SequenceGame().config, "format": "policy", "path": "sequence_v0/s"}
    _index(root, [
        {**base, "id": "sequence_v0/srch-v1", "search": {"top_k": 2, "determinizations": 2}},
        {**base, "id": "sequence_v0/srch-v2", "search": {"top_k": 99}},
        {**base, "id": "sequence_v0/plain-v1"},
    ])
    ids = register_index(root)
    assert "sequence_v0/srch-v1" in ids and "sequence_v0/plain-v1" in ids
    good = agents.make("sequence_v0/srch-v1", seed=0)
    assert isinstance(good, SearchPolicyAgent) and good.search["top_k"] == 2
    assert type(agents.make("sequence_v0/plain-v1", seed=0)) is PolicyAgent
    with pytest.raises(CheckpointError, match=r"top_k must be an integer in \[1, 64\]"):
        agents.make("sequence_v0/srch-v2", seed=0)
    state = SequenceGame().new_initial_state(4)
    assert state.legal_mask()[choose(good, state)]


def test_register_checkpoint_stores_checked_settings_and_refuses_bad_ones_before_copying(tmp_path):
    root = tmp_path / "ck"
    root.mkdir()
    _index(root, [])
    source = write_actor_critic(tmp_path / "run", seed=4)
    with pytest.raises(CheckpointError, match="unknown setting"):
        register_checkpoint("sequence_v0/reg_search-v1", source, description="x", folder=root, search={"depth": 2})
    assert not (root / "sequence_v0").exists()
    entry = register_checkpoint("sequence_v0/reg_search-v1", source, description="x", folder=root,
                                search={"top_k": 4})
    assert entry["search"] == check_search_settings({"top_k": 4})
    saved = json.loads((root / "index.json").read_text())["checkpoints"]
    assert saved[0]["search"]["top_k"] == 4
    assert np.isclose(saved[0]["search"]["prior_weight"], SEARCH_SETTINGS["prior_weight"][0])
