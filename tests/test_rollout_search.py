"""Search over any base agent (``agents.rollout_search``): whole legal games in every game and config
family, the budget settings obeyed, forced moves free, determinism for a seed, a network as the base."""

from __future__ import annotations

import random

import numpy as np
import pytest

import agents
import envs
from agents.rollout_search import SETTINGS, SHIPPED, RolloutSearchAgent, check_settings
from agents.runner import seat_inputs

TINY = {"simulations": 1, "horizon": 3, "max_candidates": 3}
FAMILIES = [
    pytest.param(name, family, id=f"{name}-{family}")
    for name in envs.NAMES
    for family in type(envs.make_game(name)).config_families
]


class Counting(agents.Agent):
    """Wraps a real agent and counts the decisions it is asked for."""

    def __init__(self, inner: agents.Agent) -> None:
        super().__init__(inner.game_name, inner.seed)
        self.inner, self.calls = inner, 0

    def reset(self, seat, game):
        super().reset(seat, game)
        self.inner.reset(seat, game)

    def act(self, observation, view):
        self.calls += 1
        return self.inner.act(observation, view)


@pytest.mark.parametrize("name,family", FAMILIES)
def test_plays_whole_games_legally_and_forced_moves_are_free(name, family):
    config = type(envs.make_game(name)).config_families[family]
    game = envs.make_game(name, **config)
    base = f"{name}/heuristic-v1"
    counted = []

    def counting_base(seed):
        counted.append(Counting(agents.make(base, seed=seed)))
        return counted[-1]

    searcher = RolloutSearchAgent(name, seed=1, base=counting_base, rollout=base, search=TINY)
    bots = [searcher] + [agents.make(base, seed=10 + s) for s in range(1, game.num_players)]
    record = agents.play_game(name, bots, seed=4, config=config, record_actions=True)
    assert not record.truncated, f"{name} {family}: the game was cut at the cycle cap"
    # the decisions of seat 0 that had a choice, replayed from the record
    state = game.new_initial_state(4)
    choices = 0
    for action in record.actions:
        if state.current_player() == 0 and int(state.legal_mask().sum()) > 1:
            choices += 1
        state.apply_action(action)
    assert choices > 0
    assert len(searcher.move_times) == len(searcher.move_cpu_times) == choices
    assert counted[0].calls == choices  # the base agent is never asked about a forced move
    assert searcher.timing()["moves"] == choices


def midgame(name, seed=3, steps=25, config=None):
    """A non-terminal position with a choice for its seat to act, after some heuristic play."""
    game = envs.make_game(name, **(config or {}))
    state = game.new_initial_state(seed)
    bots = [agents.make(f"{name}/heuristic-v1", seed=s) for s in range(game.num_players)]
    for s, bot in enumerate(bots):
        bot.reset(s, game)
    n = 0
    while n < steps or int(state.legal_mask().sum()) < 2:
        p = state.current_player()
        state.apply_action(bots[p].act(*seat_inputs(state, p)))
        n += 1
        assert not state.is_terminal()
    return game, state


@pytest.mark.parametrize("name", ["pans_trial_v0", "dojo_v0", "wizard_arena_v0", "sequence_v0"])
def test_budget_settings_are_obeyed(name):
    game, state = midgame(name)
    seat = state.current_player()
    for sims, horizon, most in ((1, 0, 2), (3, 5, 4)):
        bot = RolloutSearchAgent(name, seed=0, search={"simulations": sims, "horizon": horizon, "max_candidates": most})
        bot.reset(seat, game)
        action = bot.act(*seat_inputs(state, seat))
        assert state.legal_mask()[action]
        last = bot.last_search
        assert last["simulations"] == sims
        assert 2 <= last["candidates"] <= min(most, int(state.legal_mask().sum()))
        assert last["rollouts"] == sims * last["candidates"]
        assert last["longest_rollout"] <= horizon


@pytest.mark.parametrize("name", ["pans_trial_v0", "dojo_v0"])
def test_turns_end_rollouts_when_the_seat_is_to_act_again(name):
    game, state = midgame(name)
    seat = state.current_player()
    longest = []
    for turns in (1, 3):
        bot = RolloutSearchAgent(name, seed=0, search={"simulations": 1, "turns": turns, "horizon": 10_000})
        bot.reset(seat, game)
        bot.act(*seat_inputs(state, seat))
        longest.append(bot.last_search["longest_rollout"])
    assert 0 < longest[0] < longest[1] < 10_000


def test_time_budget_stops_the_search_early():
    game, state = midgame("wizard_arena_v0")
    seat = state.current_player()
    bot = RolloutSearchAgent("wizard_arena_v0", seed=0, search={"simulations": 4096, "time_ms": 1.0, "horizon": 200})
    bot.reset(seat, game)
    bot.act(*seat_inputs(state, seat))
    assert 1 <= bot.last_search["simulations"] < 4096


@pytest.mark.parametrize("agent_id", [f"{name}/search-v1" for name in SHIPPED])
def test_shipped_ids_are_registered_with_their_settings(agent_id):
    bot = agents.make(agent_id, seed=0)
    assert isinstance(bot, RolloutSearchAgent)
    assert bot.search == check_settings(SHIPPED[agent_id.split("/")[0]])
    assert "heuristic-v1" in agents.describe(agent_id)
    overridden = agents.make(agent_id, seed=0, search={"simulations": 1})
    assert overridden.search["simulations"] == 1
    assert overridden.search["horizon"] == bot.search["horizon"]  # the rest kept


@pytest.mark.parametrize("name", ["pans_trial_v0", "dojo_v0", "wizard_arena_v0"])
def test_same_seed_same_game(name):
    game = envs.make_game(name)

    def lineup():
        return [RolloutSearchAgent(name, seed=7, search=TINY)] + [
            agents.make(f"{name}/heuristic-v1", seed=20 + s) for s in range(1, game.num_players)]

    a = agents.play_game(name, lineup(), seed=5, record_actions=True)
    b = agents.play_game(name, lineup(), seed=5, record_actions=True)
    assert a.actions == b.actions and a.returns == b.returns


@pytest.mark.parametrize("name", ["pans_trial_v0", "dojo_v0", "sequence_v0"])
def test_choice_ignores_what_the_seat_cannot_see(name):
    """The same view with every hidden card redrawn: the same choice (the search's guesses are its own)."""
    game, state = midgame(name, seed=11)
    seat = state.current_player()
    twin = game.state_from_view(state.player_view(seat), random.Random(2))
    choices = []
    for s in (state, twin):
        bot = RolloutSearchAgent(name, seed=3, search={"simulations": 2, "horizon": 6})
        bot.reset(seat, game)
        choices.append(bot.act(*seat_inputs(s, seat)))
    assert choices[0] == choices[1]


def test_a_better_move_found_by_rollouts_overrides_the_base_agent():
    """A base agent that always plays the lowest legal id: in Wizard Arena's move phase the search,
    whose rollouts play heuristic-v1, must often prefer another move."""

    class Lowest(agents.Agent):
        def act(self, observation, view):
            return int(np.flatnonzero(observation["action_mask"])[0])

    name = "wizard_arena_v0"
    differ = total = 0
    for seed in range(4):
        game, state = midgame(name, seed=seed, steps=12)
        seat = state.current_player()
        bot = RolloutSearchAgent(name, seed=0, base=lambda s: Lowest(name, s), rollout="heuristic-v1",
                                 search={"simulations": 4, "horizon": 18})
        bot.reset(seat, game)
        obs, view = seat_inputs(state, seat)
        total += 1
        differ += bot.act(obs, view) != int(np.flatnonzero(obs["action_mask"])[0])
    assert differ >= 1


def test_a_network_can_be_the_base(tmp_path):
    import torch

    from agents.policy_agent import PolicyAgent
    from tests.test_search_agent import write_actor_critic

    torch.set_num_threads(1)
    folder = write_actor_critic(tmp_path / "net", game_name="pans_trial_v0")
    bot = RolloutSearchAgent("pans_trial_v0", seed=0, base=lambda s: PolicyAgent("pans_trial_v0", seed=s, path=folder),
                             search={"simulations": 1, "horizon": 4, "max_candidates": 2})
    bots = [bot, agents.make("pans_trial_v0/experienced-v1", seed=1)]
    record = agents.play_game("pans_trial_v0", bots, seed=2)
    assert not record.truncated and bot.timing()["moves"] > 0


@pytest.mark.parametrize(
    "bad, words",
    [
        ([], "must be a dict"),
        ({"depth": 3}, "unknown setting"),
        ({"simulations": 0}, "simulations must be an integer in [1, 4096]"),
        ({"simulations": 2.0}, "simulations must be an integer"),
        ({"horizon": True}, "horizon must be an integer"),
        ({"max_candidates": 1}, "max_candidates must be an integer in [2, 512]"),
        ({"time_ms": float("nan")}, "time_ms must be a number"),
        ({"margin": -0.1}, "margin must be a number in [0.0, 2.0]"),
    ],
)
def test_bad_settings_are_refused_by_name(bad, words):
    with pytest.raises(ValueError) as info:
        check_settings(bad)
    assert words in str(info.value)
    assert set(check_settings({})) == set(SETTINGS)


def test_bad_base_is_refused():
    with pytest.raises(ValueError, match="no agent registered"):
        RolloutSearchAgent("dojo_v0", base="nonsense-v9")
    with pytest.raises(ValueError, match="plays another game"):
        RolloutSearchAgent("dojo_v0", base="pans_trial_v0/heuristic-v1")
    with pytest.raises(ValueError, match="agent id, a policy folder or a callable"):
        RolloutSearchAgent("dojo_v0", base=3)


def test_a_policy_folder_can_be_the_base(tmp_path):
    """A folder (or run folder) holding a policy is a base by its path; the network is loaded once a
    process and the search over it plays whole games; another game's folder or a missing one is refused."""
    import torch

    from agents.rollout_search import agent_factory
    from tests.test_search_agent import write_actor_critic

    torch.set_num_threads(1)
    folder = write_actor_critic(tmp_path / "run" / "policy", game_name="pans_trial_v0")
    for spec in (str(folder), str(tmp_path / "run")):
        bot = RolloutSearchAgent("pans_trial_v0", seed=0, base=spec,
                                 search={"simulations": 1, "horizon": 4, "max_candidates": 2})
        record = agents.play_game("pans_trial_v0", [bot, agents.make("pans_trial_v0/random-v0", seed=1)], seed=3)
        assert record.length > 0 and bot.timing()["moves"] > 0
    first, second = agent_factory("pans_trial_v0", str(folder))(1), agent_factory("pans_trial_v0", str(folder))(2)
    first.reset(0, envs.make_game("pans_trial_v0"))
    second.reset(1, envs.make_game("pans_trial_v0"))
    assert first.model is second.model  # one network a process, however many rollout agents use it
    with pytest.raises(ValueError, match="no usable policy folder"):
        RolloutSearchAgent("dojo_v0", base=str(folder))
    with pytest.raises(ValueError, match="no usable policy folder"):
        RolloutSearchAgent("pans_trial_v0", base=str(tmp_path / "missing"))


def test_a_network_value_scores_the_leaves(tmp_path):
    """value=<policy> scores rollout ends with that network's value head on the seat's own observation:
    a network whose value is 0 everywhere makes every cut-off candidate worth 0, a real one gives finite
    values in the return range; a folder without a usable network is refused before any game."""
    import torch

    from agents.rollout_search import NetworkValue
    from tests.test_search_agent import write_actor_critic

    torch.set_num_threads(1)
    zero = write_actor_critic(tmp_path / "zero", game_name="pans_trial_v0", zero_value=True)
    some = write_actor_critic(tmp_path / "some", game_name="pans_trial_v0", seed=3)
    game, state = midgame("pans_trial_v0", seed=1, steps=20)
    seat = state.current_player()
    value = NetworkValue("pans_trial_v0", str(some))
    v = value(state, seat)
    assert np.isfinite(v) and v == value(state.clone(), seat)
    obs = torch.as_tensor(game.observe(state, seat)[None], dtype=torch.float32)
    with torch.no_grad():
        assert v == pytest.approx(float(value.model.logits_and_value(obs)[1][0]))
    bot = RolloutSearchAgent("pans_trial_v0", seed=0, value=str(zero), search={"simulations": 2, "horizon": 2})
    bot.reset(seat, game)
    obs_dict, view = seat_inputs(state, seat)
    bot.act(obs_dict, view)
    cut = bot.last_search["longest_rollout"] <= 2
    assert cut and all(v == 0.0 for v in bot.last_values.values())  # nothing finished within two actions
    with pytest.raises(Exception, match="neither a checkpoint id"):
        RolloutSearchAgent("pans_trial_v0", value=str(tmp_path / "missing"))
    with pytest.raises(Exception, match="policy for 'pans_trial_v0', not 'dojo_v0'|pans_trial_v0"):
        RolloutSearchAgent("dojo_v0", value=str(some))


def test_a_network_value_reencodes_a_table_that_observes_otherwise(tmp_path):
    """A Wizard Arena network trained on observation version 3 values positions of a default table
    (another observation version, the same rules) through the seat's view, as a PolicyAgent plays there."""
    import torch

    from agents.rollout_search import NetworkValue
    from tests.test_search_agent import write_actor_critic

    torch.set_num_threads(1)
    folder = write_actor_critic(tmp_path / "v3", game_name="wizard_arena_v0", config={"observation_version": 3})
    table = envs.make_game("wizard_arena_v0")
    assert table.config["observation_version"] != 3
    state = table.new_initial_state(4)
    value = NetworkValue("wizard_arena_v0", str(folder))
    trained = envs.make_game("wizard_arena_v0", observation_version=3)
    expected = trained.observe_view(state.player_view(2), 2, table, table.observe(state, 2))
    assert np.array_equal(value.observation(state, 2), expected)
    assert np.isfinite(value(state, 2))


def test_the_other_seats_play_the_opponent_model_in_rollouts():
    """opponents= sets who the other seats are in the rollouts; the searching seat plays the rollout agent."""
    game = envs.make_game("dojo_v0", num_players=3)
    bot = RolloutSearchAgent("dojo_v0", seed=0, base="heuristic-v1", rollout="random-v0", opponents="heuristic-v1")
    bot.reset(1, game)
    kinds = [a.agent_id for a in bot.rollout_agents]
    assert kinds == ["dojo_v0/heuristic-v1", "dojo_v0/random-v0", "dojo_v0/heuristic-v1"]
    plain = RolloutSearchAgent("dojo_v0", seed=0, rollout="random-v0")
    plain.reset(1, game)
    assert [a.agent_id for a in plain.rollout_agents] == ["dojo_v0/random-v0"] * 3
    with pytest.raises(ValueError, match="no agent registered"):
        RolloutSearchAgent("dojo_v0", opponents="nobody-v9")


def test_the_fitted_dojo_value_reads_track_way_and_cards():
    """dojo_fitted_value: a conditional logit over the seats, zero-sum like the game's payout; higher up
    the track is better, and for a Brown belt so is being nearer the Dojo and holding a Kiai."""
    from agents.rollout_search import DOJO_FITTED_WEIGHTS, dojo_features, dojo_fitted_value
    from envs.dojo.cards import KIAI, UKE

    game = envs.make_game("dojo_v0", num_players=4)
    state = game.new_initial_state(1)
    board = game.board
    entrance = next(s for s in range(256) if board.entry[s] >= 0 and not board.dojo[s])
    inside = next(s for s in range(256) if board.dojo[s])
    far = max((s for s in range(256) if not board.dojo[s] and board.room[s] < 0),
              key=lambda s: abs(s // 16 - 7.5) + abs(s % 16 - 7.5))
    state.track[:] = [15, 15, 6, 0]
    state.pos[:] = [entrance, far, far, -1]
    state.hands[:] = [[KIAI], [UKE], [], []]
    f0, f1, f3 = dojo_features(state, 0), dojo_features(state, 1), dojo_features(state, 3)
    assert f0[:3] == [15 / 17, 1.0, 0.0] and f0[4:] == [1 / 3, 0.5]
    assert f1[2] > 0.5 and f1[5] == 0.0 and f3[2:4] == [0.0, 0.0]  # a seat not yet placed counts 30 steps
    values = [dojo_fitted_value(state, p) for p in range(4)]
    assert sum(values) == pytest.approx(0.0, abs=1e-12)
    assert values[0] > values[1] > values[2] > values[3]  # nearer the Dojo with a Kiai > far away > lower belts
    state.pos[0] = inside
    assert dojo_features(state, 0)[2] == 0.0
    assert len(DOJO_FITTED_WEIGHTS) == len(f0)


def test_dojo_search_v2_is_search_v1_with_the_fitted_value():
    from agents.rollout_search import dojo_fitted_value

    v1, v2 = agents.make("dojo_v0/search-v2", seed=0), agents.make("dojo_v0/search-v1", seed=0)
    assert v1.value is dojo_fitted_value and v1.search == v2.search
    assert agents.registry.searches_at_play_time("dojo_v0/search-v2")
    record = agents.play_game("dojo_v0", [agents.make("dojo_v0/search-v2", seed=1)]
                              + [agents.make("dojo_v0/heuristic-v1", seed=s) for s in range(2, 5)], seed=7)
    assert record.length > 0


def test_dojo_search_v3_is_search_v2_with_24_determinizations():
    from agents.rollout_search import dojo_fitted_value

    v3, v2 = agents.make("dojo_v0/search-v3", seed=0), agents.make("dojo_v0/search-v2", seed=0)
    assert v3.value is dojo_fitted_value and agents.registry.searches_at_play_time("dojo_v0/search-v3")
    assert v3.search == {**v2.search, "simulations": 24}
    game = envs.make_game("dojo_v0")
    state = game.new_initial_state(3)
    others = [agents.make("dojo_v0/heuristic-v1", seed=s) for s in range(4)]
    for p, agent in enumerate(others):
        agent.reset(p, game)
    v3.reset(0, game)
    while not (state.current_player() == 0 and int(state.legal_mask().sum()) > 1):
        p = state.current_player()
        state.apply_action(others[p].act(*seat_inputs(state, p)))
    action = v3.act(*seat_inputs(state, 0))
    assert state.legal_mask()[action]
    assert v3.last_search["simulations"] == 24 and v3.last_search["rollouts"] == 24 * v3.last_search["candidates"]
    assert len(v3.move_times) == 1


def test_wizard_arena_search_v2_is_search_v1_with_four_turns_and_the_fitted_keys():
    from agents.rollout_search import WIZARD_ARENA_FITTED_WEIGHTS, FittedValue, wizard_arena_fitted_value

    v2, v1 = agents.make("wizard_arena_v0/search-v2", seed=0), agents.make("wizard_arena_v0/search-v1", seed=0)
    assert v2.value is wizard_arena_fitted_value and agents.registry.searches_at_play_time("wizard_arena_v0/search-v2")
    assert v2.search == {**v1.search, "turns": 4}
    state = envs.make_game("wizard_arena_v0").new_initial_state(5)
    state.score[:] = [0, 4, 2, 0, 0, 0]
    state.strength[3] = 30  # three times the others' strength, no score
    values = [wizard_arena_fitted_value(state, p) for p in range(6)]
    assert sum(values) == pytest.approx(0.0, abs=1e-9)
    # four points of score lead; strength 3.0 (the others 1.0) is worth more than two points, as it wins fights to come
    assert values[1] > values[3] > values[2] > values[0] and values[4] == pytest.approx(values[0]) == values[5]
    same = FittedValue("wizard_arena_v0", list(WIZARD_ARENA_FITTED_WEIGHTS), "rank")
    assert [same(state, p) for p in range(6)] == pytest.approx(values)
    game = envs.make_game("wizard_arena_v0")
    state = game.new_initial_state(4)
    v2.reset(0, game)
    while not (state.current_player() == 0 and int(state.legal_mask().sum()) > 1):
        state.apply_action(int(np.flatnonzero(state.legal_mask())[0]))
    action = v2.act(*seat_inputs(state, 0))
    assert state.legal_mask()[action] and v2.last_search["simulations"] == 8


def test_first_place_scores_a_finished_game_by_first_place_alone():
    from types import SimpleNamespace

    from agents.rollout_search import first_place_return

    assert first_place_return([1.0, 0.0, -1.0], 0) == 1.0
    assert first_place_return([1.0, 0.0, -1.0], 1) == first_place_return([1.0, 0.0, -1.0], 2) == -0.5
    assert first_place_return([0.5, 0.5, -1.0], 0) == pytest.approx(0.25)  # a shared first place splits it
    assert sum(first_place_return([0.5, 0.5, -1.0], p) for p in range(3)) == pytest.approx(0.0)
    finished = SimpleNamespace(is_terminal=lambda: True, returns=lambda: [-1.0, 0.6, 0.2, 1.0, -0.2, -0.6])
    plain = agents.make("wizard_arena_v0/search-v1", seed=0)
    first = agents.make("wizard_arena_v0/search-v1", seed=0, search={"first_place": 1})
    plain.seat = first.seat = 1
    assert plain._leaf(finished) == pytest.approx(0.6)  # the game's ranking return
    assert first._leaf(finished) == pytest.approx(-0.2)  # second place is worth no more than last
    with pytest.raises(ValueError, match="first_place must be an integer in \\[0, 1\\]"):
        agents.make("wizard_arena_v0/search-v1", seed=0, search={"first_place": 2})


def test_wizard_arena_first_value_reads_the_fitted_keys_as_a_first_place_softmax():
    from agents.rollout_search import WIZARD_ARENA_FITTED_WEIGHTS, FittedValue, wizard_arena_first_value

    state = envs.make_game("wizard_arena_v0").new_initial_state(5)
    state.score[:] = [0, 4, 2, 0, 0, 0]
    values = [wizard_arena_first_value(state, p) for p in range(6)]
    assert sum(values) == pytest.approx(0.0, abs=1e-9)
    assert values[1] == max(values) and values[2] > values[0]
    same = FittedValue("wizard_arena_v0", list(WIZARD_ARENA_FITTED_WEIGHTS), "win")
    assert [same(state, p) for p in range(6)] == pytest.approx(values)


def test_policy_switching_scores_each_candidate_at_its_best_continuation():
    """rollout=[A, B]: every candidate is rolled out under both (same determinizations and seeds) and is
    worth the larger mean, which is what two one-policy searches from the same random state find."""
    game = envs.make_game("wizard_arena_v0")
    state = game.new_initial_state(3)
    seat = state.current_player()
    obs, view = seat_inputs(state, seat)
    assert int(obs["action_mask"].sum()) > 1
    settings = {"simulations": 2, "turns": 2, "horizon": 200, "max_candidates": 4}

    def searcher(rollout):
        bot = RolloutSearchAgent("wizard_arena_v0", seed=0, rollout=rollout, opponents="heuristic-v1", search=settings)
        bot.reset(seat, game)
        return bot

    both = searcher(["heuristic-v1", "random-v0"])
    assert [a.agent_id for a in both.own_agents] == ["wizard_arena_v0/heuristic-v1", "wizard_arena_v0/random-v0"]
    assert [a.agent_id for a in both.rollout_agents] == ["wizard_arena_v0/heuristic-v1"] * 6
    alone = [searcher("heuristic-v1"), searcher("random-v0")]
    for bot in alone:  # the same determinizations, rollout seeds and base choice as the switching search
        bot.rng.setstate(both.rng.getstate())
        bot.base_agent.rng.setstate(both.base_agent.rng.getstate())
    choice = both.act(obs, view)
    for bot in alone:
        bot.act(obs, view)
    assert both.last_search["rollouts"] == 2 * alone[0].last_search["rollouts"] > 0
    assert list(both.last_values) == list(alone[0].last_values) == list(alone[1].last_values)
    for action, value in both.last_values.items():
        assert value == pytest.approx(max(alone[0].last_values[action], alone[1].last_values[action]))
    # here the continuations disagree, so the maximum had something to choose
    assert any(alone[1].last_values[a] != pytest.approx(alone[0].last_values[a]) for a in both.last_values)
    best = max(both.last_values.values())
    assert choice == next(a for a, v in both.last_values.items() if v == best)  # the first of equals


def test_policy_switching_needs_at_least_one_rollout_agent():
    with pytest.raises(ValueError, match="at least one agent"):
        RolloutSearchAgent("wizard_arena_v0", rollout=[])
    with pytest.raises(ValueError, match="no agent registered"):
        RolloutSearchAgent("wizard_arena_v0", rollout=["heuristic-v1", "nobody-v9"])


def test_wizard_arena_search_v3_is_search_v2_switching_to_the_gary_hunter():
    """search-v3: search-v2's settings and value, its own rollouts as heuristic-v1 and as gary-hunter-v1,
    the other bots heuristic-v1; a choice costs two sets of rollouts and is the best over both."""
    from agents.rollout_search import wizard_arena_fitted_value

    v3, v2 = agents.make("wizard_arena_v0/search-v3", seed=0), agents.make("wizard_arena_v0/search-v2", seed=0)
    assert v3.search == v2.search and v3.value is wizard_arena_fitted_value
    assert agents.registry.searches_at_play_time("wizard_arena_v0/search-v3")
    game = envs.make_game("wizard_arena_v0")
    state = game.new_initial_state(3)
    seat = state.current_player()
    v3.reset(seat, game)
    assert [a.agent_id for a in v3.own_agents] == ["wizard_arena_v0/heuristic-v1", "wizard_arena_v0/gary-hunter-v1"]
    assert {a.agent_id for a in v3.rollout_agents} == {"wizard_arena_v0/heuristic-v1"}
    v3.act(*seat_inputs(state, seat))
    s = v3.last_search
    assert s["simulations"] == 8 and s["rollouts"] == 2 * 8 * s["candidates"]
    # a setting or a continuation can still be changed by the caller
    other = agents.make("wizard_arena_v0/search-v3", seed=0, rollout="lone-wolf-v1", search={"simulations": 2})
    other.reset(seat, game)
    assert [a.agent_id for a in other.own_agents] == ["wizard_arena_v0/lone-wolf-v1"] and other.search["simulations"] == 2
