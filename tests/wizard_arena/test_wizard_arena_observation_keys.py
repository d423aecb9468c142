"""A policy trained on one observation version plays at a table of the other.

``observation_version`` is Wizard Arena's only observation key (``Game.observation_keys``): it changes
how a seat's position is encoded, never the rules. A policy trained on version 3 sits at a default
(version 2) table by re-encoding each observation from the seat's view (``Game.observe_view``); these
tests pin that the re-encoding is exactly the observation a version 3 table would have given.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

import agents
import envs
from agents.checkpoint import DEFAULT_DIR, CheckpointError, PolicyAgent
from agents.runner import play_game
from envs import wizard_arena_v0


def _random_play(source: dict, target: dict, seeds: range, max_cycles: int):
    """Play random games at a ``source`` table and a ``target`` table side by side; yield, for every
    decision, the target game's re-encoding of the source seat's inputs and the target's own observation."""
    src_env = wizard_arena_v0.raw_env(max_cycles=max_cycles, **source)
    dst_env = wizard_arena_v0.raw_env(max_cycles=max_cycles, **target)
    dst_game = envs.make_game("wizard_arena_v0", **target)
    rng = random.Random(7)
    for seed in seeds:
        src_env.reset(seed=seed)
        dst_env.reset(seed=seed)
        for agent in src_env.agent_iter():
            obs, _, term, trunc, _ = src_env.last()
            if term or trunc:
                src_env.step(None)
                dst_env.step(None)
                continue
            seat = src_env.unwrapped.seat_of(agent)
            view = src_env.unwrapped.player_view(agent)
            again = dst_game.observe_view(view, seat, src_env.unwrapped.game, obs["observation"])
            yield again, dst_env.observe(agent)["observation"]
            action = rng.choice(list(np.flatnonzero(obs["action_mask"])))
            src_env.step(action)
            dst_env.step(action)


@pytest.mark.parametrize(("source", "target"), [
    ({}, {"observation_version": 3}),
    ({"observation_version": 3}, {}),
    ({"num_bots": 16, "observation_version": 1}, {"num_bots": 16, "observation_version": 3}),
])
def test_a_view_re_encodes_to_exactly_the_other_versions_observation(source, target):
    # max_cycles 120: the "time left" feature counts down to the table's own step limit, which the
    # view does not carry; it must come over from the table's observation.
    decisions = 0
    for again, expected in _random_play(source, target, range(3), max_cycles=120):
        assert again.shape == expected.shape
        np.testing.assert_array_equal(again, expected)
        decisions += 1
    assert decisions > 300


def test_same_rules_ignores_only_the_observation_keys():
    default = envs.make_game("wizard_arena_v0")
    assert default.same_rules(envs.make_game("wizard_arena_v0", observation_version=3))
    assert not default.same_rules(envs.make_game("wizard_arena_v0", num_bots=5))
    assert not default.same_rules(envs.make_game("wizard_arena_v0", gary_roams=True))
    other = envs.make_game("wizard_arena_v0", num_bots=5, gary_roams=True, observation_version=3)
    assert default.rule_differences(other) == ["num_bots", "gary_roams"]
    assert not default.same_rules(envs.make_game("sequence_v0"))
    # games that declare no observation keys compare their whole config
    assert envs.make_game("sequence_v0").same_rules(envs.make_game("sequence_v0"))
    assert not envs.make_game("sequence_v0").same_rules(envs.make_game("sequence_v0", num_teams=3))


def test_observe_view_refuses_a_table_with_other_rules():
    state = envs.make_game("wizard_arena_v0", num_bots=5).new_initial_state(seed=1)
    observer = envs.make_game("wizard_arena_v0", observation_version=3)
    with pytest.raises(ValueError, match="same rules"):
        observer.observe_view(state.player_view(0), 0, state.game, state.observation(0))


def test_the_version_3_checkpoint_plays_a_default_table_as_it_plays_its_own():
    """``ppo-v3`` (trained on version 3) at a default table makes the same moves, game for game,
    as at a version 3 table: its network reads the same numbers either way."""
    lineup = ["wizard_arena_v0/ppo-v3"] + ["wizard_arena_v0/heuristic-v1"] * 5
    for seed in (3, 4):
        records = []
        for config in ({}, {"observation_version": 3}):
            bots = [agents.make(agent_id, seed=seed * 10 + s) for s, agent_id in enumerate(lineup)]
            records.append(play_game("wizard_arena_v0", bots, seed=seed, config=config, record_actions=True))
            if not config:
                assert bots[0].observer is not None and bots[0].observer.config["observation_version"] == 3
        assert len(records[0].actions) > 100
        assert records[0].actions == records[1].actions
        assert records[0].returns == records[1].returns


def test_a_policy_still_refuses_a_table_with_other_rules():
    bot = agents.make("wizard_arena_v0/ppo-v3", seed=0)
    with pytest.raises(CheckpointError, match=r"rules differ in \['gary_roams'\] .*at most in \['observation_version'\]"):
        bot.reset(0, envs.make_game("wizard_arena_v0", gary_roams=True))
    # and a policy at its own table keeps reading the table's observation unchanged
    bot.reset(0, envs.make_game("wizard_arena_v0", observation_version=3))
    assert bot.observer is None
    assert isinstance(bot, PolicyAgent)


def test_search_on_a_version_3_policy_looks_ahead_in_its_own_encoding():
    """At a default table the searcher rebuilds states of the game it was trained for, so its choices
    are the ones it makes at a version 3 table."""
    from agents.search import SearchPolicyAgent

    folder = DEFAULT_DIR / "wizard_arena_v0" / "ppo-v3"
    settings = {"top_k": 3, "determinizations": 2, "rollout_turns": 1, "max_plies": 30}
    lineup_seed = 11
    runs = []
    for config in ({}, {"observation_version": 3}):
        searcher = SearchPolicyAgent("wizard_arena_v0", seed=1, path=folder, search=settings,
                                     config={"observation_version": 3})
        bots = [searcher] + [agents.make("wizard_arena_v0/random-v0", seed=s) for s in range(1, 6)]
        runs.append(play_game("wizard_arena_v0", bots, seed=lineup_seed, config=config | {"max_cycles": 12},
                              record_actions=True))
    assert runs[0].length > 40
    assert runs[0].actions == runs[1].actions
