"""Every registered rule-based agent of every game: legal play, determinism, and no hidden reads."""

from __future__ import annotations

import random

import pytest

import agents
import envs
from agents.checkpoint import read_index
from agents.runner import seat_inputs

CHECKPOINT_IDS = {e["id"] for e in read_index()}
RULE_BASED = [
    pytest.param(name, agent_id, id=agent_id)
    for name in envs.NAMES
    for agent_id in agents.available(name)
    if not agent_id.endswith("/random-v0") and agent_id not in CHECKPOINT_IDS
    # OpenSpiel's IS-MCTS (registered where open-spiel is installed) takes seconds a move: the same
    # checks run for it in tests/test_openspiel.py, with fewer simulations and shorter games
    and "/ismcts-v" not in agent_id
]


# Whole games against random players take the search agents minutes (random Dojo and Arena games
# run to the cycle cap); tests/test_rollout_search.py plays them whole at small budgets instead.
QUICK = [p for p in RULE_BASED if "/search-v" not in p.values[1]]


def test_every_game_has_a_rule_based_opponent():
    games = {p.values[0] for p in RULE_BASED}
    assert games == set(envs.NAMES)


def positions(name, seed, count=12, every=3, limit=300):
    """States of one random game (default config), every few actions, not terminal."""
    game = envs.make_game(name)
    state = game.new_initial_state(seed)
    rng = random.Random(seed)
    found = []
    n = 0
    while not state.is_terminal() and n < limit and len(found) < count:
        if n % every == 0:
            found.append(state.clone())
        legal = state.legal_actions()
        state.apply_action(legal[rng.randrange(len(legal))])
        n += 1
    return game, found


@pytest.mark.parametrize("name,agent_id", RULE_BASED)
def test_choice_depends_only_on_what_the_seat_may_know(name, agent_id):
    """Resample everything the acting seat cannot see: the agent's choice must not move."""
    game, states = positions(name, seed=17)
    rng = random.Random(5)
    for state in states:
        seat = state.current_player()
        twin = game.state_from_view(state.player_view(seat), rng)
        choices = []
        for s in (state, twin):
            bot = agents.make(agent_id, seed=123)
            bot.reset(seat, game)
            obs, view = seat_inputs(s, seat)
            action = bot.act(obs, view)
            assert obs["action_mask"][action], f"{agent_id} chose illegal action {action}"
            choices.append(action)
        assert choices[0] == choices[1], f"{agent_id} changed its choice when hidden information changed"


@pytest.mark.parametrize("name,agent_id", QUICK)
def test_same_seed_same_game(name, agent_id):
    n = len(envs.make(name, raw=True).possible_agents)

    def lineup(seed):
        return [agents.make(agent_id if i == 0 else f"{name}/random-v0", seed=seed + i) for i in range(n)]

    a = agents.play_game(name, lineup(3), seed=8, record_actions=True)
    b = agents.play_game(name, lineup(3), seed=8, record_actions=True)
    assert a.actions == b.actions and a.returns == b.returns


def test_agents_that_search_at_play_time_say_so_in_the_registry():
    from agents.registry import searches_at_play_time

    assert searches_at_play_time("pans_trial_v0/search-v1")  # a search agent
    assert searches_at_play_time("pans_trial_v0/ppo-search-v6")  # a checkpoint whose index entry searches
    assert not searches_at_play_time("pans_trial_v0/heuristic-v1")
    assert not searches_at_play_time("pans_trial_v0/ppo-v3")
