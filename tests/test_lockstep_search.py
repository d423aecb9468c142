"""Lockstep rollouts (``RolloutSearchAgent`` with ``lockstep``) held to the one-at-a-time search.

The differential tests search positions of seeded games twice, rollouts one at a time (``lockstep=0``)
and advanced together, from the same seeds, and require the same choice, the same value of every
candidate (equal floats) and the same counts. Exact equality can hold across batching because
``PolicyAgent.act_batch`` computes again, alone, every row whose choice the last bits of a batched
forward pass could turn (two best logits, or a sample's number and a boundary, within
``BATCH_TOLERANCE``), so each action is the one ``act`` gives; the rollouts, their seeds and the
order of the sums are the same. A network *value* is the exception: its leaves come from one
batched forward pass and may differ in the last bits, so those values are compared to 1e-5.
"""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

import agents
import envs
from agents.policy_agent import BATCH_TOLERANCE, PolicyAgent
from agents.rollout_search import RolloutSearchAgent
from agents.runner import seat_inputs

PANS_NET = "pans_trial_v0/ppo-v4"
DOJO_NET = "dojo_v0/ppo-v3"


@pytest.fixture(autouse=True)
def _one_thread():
    import torch

    torch.set_num_threads(1)


def positions(name: str, games: int, every: int, seat_agent: str = "heuristic-v1", config=None, limit: int = 400):
    """Positions with a choice for the seat to act, every ``every`` actions of seeded games of ``seat_agent``."""
    game = envs.make_game(name, **(config or {}))
    found = []
    for seed in range(games):
        state = game.new_initial_state(seed)
        bots = [agents.make(f"{name}/{seat_agent}" if "/" not in seat_agent else seat_agent, seed=seed * 10 + p)
                for p in range(game.num_players)]
        for p, bot in enumerate(bots):
            bot.reset(p, game)
        n = 0
        while not state.is_terminal() and n < limit:
            p = state.current_player()
            if n % every == every - 1 and int(state.legal_mask().sum()) > 1:
                found.append(state.clone())
            state.apply_action(bots[p].act(*seat_inputs(state, p)))
            n += 1
    return game, found


def both_ways(name, game, states, settings, lockstep, **kwargs):
    """Each position searched one rollout at a time and in lockstep: (choice, values, counts) of both."""
    results = []
    for i, state in enumerate(states):
        seat = state.current_player()
        pair = []
        for rows in (0, lockstep):
            bot = RolloutSearchAgent(name, seed=100 + i, search={**settings, "lockstep": rows}, **kwargs)
            bot.reset(seat, game)
            choice, values = bot.search_values(*seat_inputs(state, seat))
            pair.append((choice, values, bot.last_search))
        results.append(pair)
    return results


def sampled(name: str, path: str):
    from agents.checkpoint import policy_folder

    folder = policy_folder(path)
    return lambda seed: PolicyAgent(name, seed=seed, path=folder, deterministic=False)


# ----------------------------------------------------------------------------------------------
# PolicyAgent.act_batch


def observations_of(name: str, games: int = 6, config=None):
    game, states = positions(name, games, every=3, seat_agent="random-v0", config=config)
    return game, [seat_inputs(state, state.current_player()) + (state.current_player(),) for state in states]


@pytest.mark.parametrize("name, net", [("pans_trial_v0", PANS_NET), ("dojo_v0", DOJO_NET)])
def test_act_batch_gives_act_on_every_row(name, net):
    game, rows = observations_of(name)
    bot = agents.make(net, seed=0)
    bot.reset(0, game)
    observations = [o for o, _, _ in rows]
    assert len(observations) > 40
    assert bot.act_batch(observations) == [bot.act(o, {}) for o in observations]
    assert bot.act_batch(observations + observations[:5]) == bot.act_batch(observations) + bot.act_batch(observations[:5])


def test_a_sampled_policy_draws_each_row_from_its_own_generator():
    game, rows = observations_of("pans_trial_v0", games=3)
    observations = [o for o, _, _ in rows]
    bot = sampled("pans_trial_v0", PANS_NET)(0)
    bot.reset(0, game)
    batch = bot.act_batch(observations, rngs=[random.Random(7 + i) for i in range(len(observations))])
    one_by_one = []
    for i, o in enumerate(observations):
        bot.rng.seed(7 + i)
        one_by_one.append(bot.act(o, {}))
    assert batch == one_by_one
    bot.rng.seed(3)
    without = bot.act_batch(observations)  # from the agent's own generator, row after row
    bot.rng.seed(3)
    assert without == [bot.act(o, {}) for o in observations]


class _BatchBump:
    """Logits all equal for one row; in a batch of more, each action's logit grows by a hair with its id,
    so the batch alone would pick the last tied action where one row picks the first."""

    def __init__(self, n: int) -> None:
        self.n = n

    def __call__(self, obs):
        import torch

        bump = 1e-3 * BATCH_TOLERANCE * torch.arange(self.n, dtype=torch.float32) if obs.shape[0] > 1 else 0.0
        return torch.zeros(obs.shape[0], self.n) + bump


def test_near_ties_are_decided_as_one_row_decides_them():
    game, rows = observations_of("pans_trial_v0", games=2)
    observations = [o for o, _, _ in rows]
    bot = PolicyAgent("pans_trial_v0", seed=0, model=_BatchBump(game.num_actions))
    bot.reset(0, game)
    expected = [int(np.flatnonzero(o["action_mask"])[0]) for o in observations]
    assert [bot.act(o, {}) for o in observations] == expected
    assert bot.act_batch(observations) == expected


def test_a_table_observed_otherwise_is_reencoded_row_by_row(tmp_path):
    """A network trained on another observation version reads each row through the seat's view."""
    from tests.test_search_agent import write_actor_critic

    folder = write_actor_critic(tmp_path / "v3", game_name="wizard_arena_v0", config={"observation_version": 3})
    game, rows = observations_of("wizard_arena_v0", games=2)
    for seat in (0, 3):
        bot = PolicyAgent("wizard_arena_v0", seed=0, path=folder)
        bot.reset(seat, game)
        assert bot.batch_reads_view
        mine = [(o, v) for o, v, p in rows if p == seat]
        assert bot.act_batch([o for o, _ in mine], [v for _, v in mine]) == [bot.act(o, v) for o, v in mine]
        with pytest.raises(ValueError, match="one view per observation"):
            bot.act_batch([o for o, _ in mine])


def test_a_search_policy_agent_batches_by_searching_each_row():
    game, rows = observations_of("pans_trial_v0", games=1)
    rows = rows[:4]
    from agents.checkpoint import policy_folder
    from agents.search import SearchPolicyAgent

    bot = SearchPolicyAgent("pans_trial_v0", seed=0, path=policy_folder(PANS_NET),
                            search={"determinizations": 2, "top_k": 2, "rollout_turns": 1})
    bot.reset(0, game)
    gens = [random.Random(i) for i in range(len(rows))]
    batch = bot.act_batch([o for o, _, _ in rows], [v for _, v, _ in rows], gens)
    one_by_one = []
    for i, (o, v, _) in enumerate(rows):
        bot.rng = random.Random(i)
        one_by_one.append(bot.act(o, v))
    assert batch == one_by_one


# ----------------------------------------------------------------------------------------------
# The search: lockstep against one at a time

SMALL = {"simulations": 3, "max_candidates": 4, "turns": 2, "horizon": 60}


@pytest.mark.parametrize("lockstep", [4096, 5])  # all determinizations at once; one or two at a time
def test_pans_trial_network_search_is_the_same_search(lockstep):
    game, states = positions("pans_trial_v0", games=3, every=9, seat_agent=PANS_NET)
    assert len(states) >= 8
    for (one, lock) in both_ways("pans_trial_v0", game, states, SMALL, lockstep, base=PANS_NET):
        assert lock == one


def test_pans_trial_search_with_sampled_rollouts_and_heuristic_opponents_is_the_same_search():
    game, states = positions("pans_trial_v0", games=2, every=15, seat_agent=PANS_NET)
    settings = {**SMALL, "turns": 1, "simulations": 2}
    for (one, lock) in both_ways("pans_trial_v0", game, states[:4], settings, 4096, base=PANS_NET,
                                 rollout=sampled("pans_trial_v0", PANS_NET), opponents="experienced-v1"):
        assert lock == one


def test_dojo_network_search_against_heuristic_opponents_is_the_same_search():
    game, states = positions("dojo_v0", games=2, every=25)
    states = states[::3]  # spread over both games
    assert len(states) >= 8
    settings = {**SMALL, "simulations": 4, "turns": 1}
    for (one, lock) in both_ways("dojo_v0", game, states, settings, 4096, base=DOJO_NET, opponents="heuristic-v1"):
        assert lock == one


def test_wizard_arena_policy_switching_over_heuristics_is_the_same_search():
    game, states = positions("wizard_arena_v0", games=2, every=40)
    settings = {"simulations": 2, "max_candidates": 4, "turns": 2, "horizon": 80}
    for (one, lock) in both_ways("wizard_arena_v0", game, states[:6], settings, 4096, base="heuristic-v1",
                                 rollout=("heuristic-v1", "gary-hunter-v1"), opponents="heuristic-v1"):
        assert lock == one


def test_sequence_heuristic_search_is_the_same_search():
    game, states = positions("sequence_v0", games=2, every=20)
    assert len(states) >= 3
    for (one, lock) in both_ways("sequence_v0", game, states, {**SMALL, "simulations": 2}, 3):
        assert lock == one


def test_a_network_value_gives_the_same_choice_and_values_to_the_last_bits():
    game, states = positions("pans_trial_v0", games=2, every=12, seat_agent=PANS_NET)
    for (one, lock) in both_ways("pans_trial_v0", game, states[:5], SMALL, 4096, base=PANS_NET, value=PANS_NET):
        assert lock[0] == one[0] and lock[2] == one[2]
        assert lock[1] == pytest.approx(one[1], abs=1e-5)


def test_a_time_budget_stops_between_groups():
    game, states = positions("wizard_arena_v0", games=1, every=30)
    bot = RolloutSearchAgent("wizard_arena_v0", seed=0, search={"simulations": 4096, "time_ms": 1.0, "horizon": 200,
                                                                "max_candidates": 4, "lockstep": 16})
    seat = states[0].current_player()
    bot.reset(seat, game)
    bot.act(*seat_inputs(states[0], seat))
    assert 1 <= bot.last_search["simulations"] < 4096


# ----------------------------------------------------------------------------------------------
# Settings that cannot work


def test_zero_determinizations_and_a_negative_lockstep_are_refused_by_name():
    with pytest.raises(ValueError, match=r"simulations must be an integer in \[1, 4096\], got 0"):
        RolloutSearchAgent("pans_trial_v0", search={"simulations": 0, "lockstep": 64})
    with pytest.raises(ValueError, match=r"lockstep must be an integer in \[0, 1048576\], got -1"):
        RolloutSearchAgent("pans_trial_v0", search={"lockstep": -1})


def test_a_lockstep_larger_than_memory_allows_is_refused_with_what_fits(monkeypatch):
    import agents.rollout_search as rollout_search

    monkeypatch.setattr(rollout_search, "machine_memory", lambda: 2**30)
    bot = RolloutSearchAgent("pans_trial_v0", base=PANS_NET, search={"lockstep": 256})
    per_row = bot.lockstep_row_bytes()
    fits = int(rollout_search.LOCKSTEP_MEMORY_SHARE * 2**30 // per_row)
    assert 256 < fits < 1 << 20
    with pytest.raises(ValueError, match=rf"lockstep must be in \[1, {fits}\]") as info:
        RolloutSearchAgent("pans_trial_v0", base=PANS_NET, search={"lockstep": fits + 1})
    assert "1.0 GiB" in str(info.value)
    RolloutSearchAgent("pans_trial_v0", base=PANS_NET, search={"lockstep": fits})
    monkeypatch.setattr(rollout_search, "machine_memory", lambda: 400 * per_row)
    with pytest.raises(ValueError, match="lower max_candidates to at most 200"):
        RolloutSearchAgent("pans_trial_v0", base=PANS_NET, search={"lockstep": 1, "max_candidates": 512})


def test_the_machine_bounds_the_real_lockstep():
    """On this machine the largest lockstep (over a million rollouts of Pan's Trial) does not fit."""
    from agents.rollout_search import machine_memory

    memory = machine_memory()
    if not memory or memory > 64 * 2**30:
        pytest.skip("a machine with more memory than this test assumes")
    with pytest.raises(ValueError, match=r"lockstep must be in \[1, \d+\]"):
        RolloutSearchAgent("pans_trial_v0", base=PANS_NET, search={"lockstep": 1 << 20})


def test_the_benchmark_measures_both_searches_on_the_same_positions(tmp_path):
    from benchmarks import lockstep_search

    out = tmp_path / "lockstep.json"
    report = lockstep_search.main(["--positions", "1", "--scales", "1", "--out", str(out)])
    assert json.loads(out.read_text()) == report
    (scale,) = report["scales"]
    assert scale["settings"] == {"simulations": 32, "max_candidates": 8, "turns": 3, "horizon": 200}
    assert scale["same_choice_and_values"] == 1 and scale["lockstep_cpu_s_per_choice"] > 0
    assert report["provenance"]["package"] == "tabletop-rl" and report["command"].endswith(str(out))
    with pytest.raises(SystemExit):
        lockstep_search.main(["--checkpoint", "pans_trial_v0/ppo-v4", "--out", str(out)])
