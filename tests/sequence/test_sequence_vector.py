"""The numpy Sequence backend against the reference engine: a differential test over seeded games of
every config family, tables handed across with save_state / load_state at random points, and scenario
positions for the rare rules (blocked tables, dead cards, nine in a row).

The long run (``-m slow``, over 1,000 games) is ``python -m pytest -m slow tests/sequence/test_sequence_vector.py``.
"""

from __future__ import annotations

import json
import random
from collections import Counter

import numpy as np
import pytest

from envs import sequence_v0, vector
from envs.core import IllegalActionError, StateError
from envs.sequence.board import kind, label
from envs.sequence.game import SequenceGame
from envs.sequence.rules import DEAD, NON_JACK_INDEX, PASS, REMOVE, WILD, from_text
from envs.sequence.vector import WINDOWS_THROUGH, SequenceNumpyBackend

#: Every config family of the game, and more: teams of three and four, other targets, a generated
#: layout with another seed.
FAMILIES = {
    **SequenceGame.config_families,
    "2x4-one-sequence": {"players_per_team": 4, "sequences_to_win": 1},
    "3x4": {"num_teams": 3, "players_per_team": 4},
    "2x3-generated-seed7": {"players_per_team": 3, "layout": "generated", "layout_seed": 7},
    "2p-three-to-win-nodead": {"sequences_to_win": 3, "dead_cards": False},
}


def sorted_hands(data):
    """A saved state with each hand sorted (hand order never changes play; the backend sorts)."""
    data = json.loads(json.dumps(data))
    data["state"]["hands"] = [sorted(h) for h in data["state"]["hands"]]
    return data


def reference_step(game, state, action, steps, max_steps):
    """One action on the reference engine as the environment scores it: (rewards, terminated, truncated)."""
    state.apply_action(action)
    if state.is_terminal():
        return np.array(state.returns(), dtype=np.float32), True, False
    return np.zeros(game.num_players, dtype=np.float32), False, steps >= max_steps


def differential(config, *, tables, games, seed, max_cycles=None, handover=0.02):
    """Play ``games`` seeded random games on ``tables`` tables of both engines in lock step; assert that
    every mask, observation, reward and end agree; return counts of what happened."""
    game = SequenceGame(**config)
    backend = SequenceNumpyBackend(game, tables, max_cycles=max_cycles)
    max_steps = backend.max_steps
    rng = random.Random(seed)
    next_seed = iter(range(seed * 100_000, seed * 100_000 + 10**6))
    counts = Counter()
    refs, steps = [None] * tables, [0] * tables

    def deal(rows):
        seeds = [next(next_seed) for _ in rows]
        backend.reset_tables(rows, seeds)
        for i, s in zip(rows, seeds):
            refs[i], steps[i] = game.new_initial_state(s), 0
            assert backend.save_state(i)["state"] == sorted_hands(game.save(refs[i]))["state"]

    deal(list(range(tables)))
    started = tables
    while counts["games"] < games:
        actions = np.zeros(tables, dtype=np.int64)
        for i, state in enumerate(refs):
            seat = state.current_player()
            assert backend.current_seat[i] == seat
            assert np.array_equal(backend.action_mask[i], state.legal_mask()), f"mask of table {i}"
            assert np.array_equal(backend.observation[i], game.observe(state, seat)), f"observation of table {i}"
            if rng.random() < handover:  # hand the table across, one way or the other
                saved = backend.save_state(i)
                assert sorted_hands(game.save(state)) == {k: v for k, v in saved.items() if k != "env"}
                assert saved["env"] == {"steps": steps[i], "max_cycles": backend.max_cycles}
                if rng.random() < 0.5:
                    refs[i] = state = game.load(json.loads(json.dumps(saved)))
                else:
                    backend.load_state(i, {**game.save(state), "env": {"steps": steps[i]}})
                counts["handovers"] += 1
            legal = np.flatnonzero(state.legal_mask())
            actions[i] = legal[rng.randrange(len(legal))]
        decks = backend.deck_len.copy()
        seqs = backend.seq_count.sum(axis=1)
        rewards, terms, truncs = backend.step(actions)
        finished = []
        for i, state in enumerate(refs):
            a = int(actions[i])
            steps[i] += 1
            want = reference_step(game, state, a, steps[i], max_steps)
            assert np.array_equal(rewards[i], want[0]) and terms[i] == want[1] and truncs[i] == want[2], \
                f"table {i} after action {a}: backend {rewards[i]}, {terms[i]}, {truncs[i]}; reference {want}"
            counts["steps"] += 1
            counts["wild"] += WILD <= a < REMOVE
            counts["remove"] += REMOVE <= a < DEAD
            counts["dead"] += DEAD <= a < PASS
            counts["pass"] += a == PASS
            counts["reshuffles"] += bool(backend.deck_len[i] > decks[i])
            counts["sequences"] += int(backend.seq_count[i].sum() - seqs[i])
            if terms[i] or truncs[i]:
                counts["games"] += 1
                counts["won" if state.winner is not None else "drawn" if terms[i] else "truncated"] += 1
                finished.append(i)
        if finished:
            for i in finished:  # a finished table's final position agrees too, then it is dealt again
                assert backend.save_state(i)["state"] == sorted_hands(game.save(refs[i]))["state"]
                assert not backend.action_mask[i].any()
            started += len(finished)
            deal(finished)
    return counts


def check_sample(counts):
    for event in ("wild", "remove", "dead", "reshuffles", "sequences", "won", "handovers"):
        assert counts[event] > 0, f"no {event} in the sample: {dict(counts)}"


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_backend_equals_the_reference_engine(family):
    counts = differential(FAMILIES[family], tables=8, games=16, seed=1 + sorted(FAMILIES).index(family))
    assert counts["games"] >= 16
    assert counts["won"] > 0 and counts["sequences"] > 0 and counts["wild"] > 0 and counts["remove"] > 0


def test_a_short_cap_truncates_like_the_environment():
    counts = differential({}, tables=8, games=16, seed=99, max_cycles=30)
    assert counts["truncated"] > 0 and counts["games"] >= 16


def test_the_ci_sample_has_every_rare_event():
    counts = Counter()
    for n, family in enumerate(("2p", "3teams", "2x2")):
        counts += differential(FAMILIES[family], tables=6, games=12, seed=50 + n)
    counts += differential({"dead_cards": True}, tables=4, games=6, seed=60, max_cycles=40)
    check_sample(counts)
    assert counts["truncated"] > 0


@pytest.mark.slow
def test_over_a_thousand_games_across_the_families():
    counts = Counter()
    for n, family in enumerate(sorted(FAMILIES)):
        counts += differential(FAMILIES[family], tables=32, games=120, seed=200 + n)
    counts += differential({}, tables=32, games=64, seed=300, max_cycles=40)
    assert counts["games"] >= 1000
    check_sample(counts)
    assert counts["truncated"] > 0
    print(dict(counts))


# --------------------------------------------------------------------------------------------
# Scenario positions: the backend plays a readable position like the reference


def rows(*lines):
    lines = list(lines) + ["." * 10] * (10 - len(lines))
    return [line.replace(" ", "").ljust(10, ".") for line in lines]


def occupied(game, cards, team="B"):
    board = [list(r) for r in rows()]
    for card in cards:
        for s in game.squares_of[kind(card)]:
            board[s // 10][s % 10] = team
    return ["".join(r) for r in board]


def lockstep(game, state, actions, max_cycles=None):
    """Load ``state`` at table 1 of three, play ``actions`` there on both engines, compare all along."""
    backend = SequenceNumpyBackend(game, 3, max_cycles=max_cycles)
    backend.reset_tables([0, 2], [5, 6])
    backend.load_state(1, game.save(state))
    results = []
    for a in actions:
        assert np.array_equal(backend.action_mask[1], state.legal_mask())
        assert np.array_equal(backend.observation[1], game.observe(state, state.current_player()))
        step = np.array([np.flatnonzero(backend.action_mask[i])[0] for i in range(3)])
        step[1] = a
        rewards, terms, truncs = backend.step(step)
        state.apply_action(a)
        assert terms[1] == state.is_terminal()
        results.append((rewards[1].tolist(), bool(terms[1]), bool(truncs[1])))
    assert backend.save_state(1)["state"] == sorted_hands(game.save(state))["state"]
    return backend, results


def test_a_blocked_table_is_drawn_after_the_pass():
    game = SequenceGame(dead_cards=False)
    state = from_text(game, occupied(game, ["5D"]), hands={0: ["5D"], 1: ["5D"]})
    backend, results = lockstep(game, state, [PASS])
    assert results == [([0.0, 0.0], True, False)]
    assert not backend.action_mask[1].any()


def test_a_pass_is_not_a_draw_while_another_seat_can_play():
    game = SequenceGame(dead_cards=False)
    state = from_text(game, occupied(game, ["5D"]), hands={0: ["5D"], 1: ["2S"]})
    backend, results = lockstep(game, state, [PASS])
    assert results == [([0.0, 0.0], False, False)] and backend.current_seat[1] == 1


def test_dead_card_exchanges_keep_the_turn_and_passes_count_on():
    game = SequenceGame()
    dead = ["5D", "6D", "7D", "8D", "9D", "TD"]
    state = from_text(game, occupied(game, dead), hands={0: ["5D", "6D"], 1: ["7D", "8D"]})
    for card in ["TD", "9D", "TD", "9D"]:  # the next four cards drawn, all dead
        state.deck.remove(kind(card))
        state.deck.append(kind(card))
    plan = [DEAD + NON_JACK_INDEX[kind(c)] if c != "pass" else PASS
            for c in ("5D", "pass", "7D", "pass", "6D", "pass", "8D", "pass")]
    backend, results = lockstep(game, state, plan)
    assert backend.passes[1] == 4 and backend.observation[1, -1] == 1.0 and not backend.drawn[1]


def test_nine_in_a_row_through_the_new_chip_makes_two_sequences_and_wins():
    game = SequenceGame()
    layout = game.layout
    state = from_text(game, rows(".", ".", ".", ".", "AAAA.AAAA."), hands={0: [label(layout[44])]})
    backend, results = lockstep(game, state, [44])
    assert results == [([1.0, -1.0], True, False)]
    assert backend.seq_count[1, 0] == 2 and backend.locked[1, 40:49].all()


def test_a_wild_and_a_remove_jack_as_the_reference_plays_them():
    game = SequenceGame(num_teams=3)
    state = from_text(game, rows(".ABC......"), hands={1: ["JS", "JC"], 2: ["JH"]}, player=1)
    backend, results = lockstep(game, state, [REMOVE + 3, REMOVE + 2, PASS, WILD + 55])
    assert backend.board[1, [1, 2, 3, 55]].tolist() == [0, -1, -1, 1]


# --------------------------------------------------------------------------------------------
# Interchange and bad input


def test_a_saved_table_continues_identically_in_raw_env():
    game = SequenceGame(players_per_team=2)
    backend = SequenceNumpyBackend(game, 4, max_cycles=60)
    backend.reset_tables(range(4), [11, 12, 13, 14])
    rng = np.random.default_rng(3)
    for _ in range(37):
        backend.step(np.array([rng.choice(np.flatnonzero(m)) for m in backend.action_mask]))
    env = sequence_v0.raw_env(players_per_team=2, max_cycles=60)
    env.reset(options={"state": json.loads(json.dumps(backend.save_state(2)))})
    for _ in range(400):
        obs, _, term, trunc, _ = env.last()
        assert env.agent_selection == f"player_{backend.current_seat[2]}"
        assert np.array_equal(obs["observation"], backend.observation[2])
        assert np.array_equal(obs["action_mask"], backend.action_mask[2])
        acts = np.array([rng.choice(np.flatnonzero(m)) if m.any() else PASS for m in backend.action_mask])
        _, terms, truncs = backend.step(acts)
        env.step(int(acts[2]))
        if terms[2] or truncs[2]:
            assert env.terminations["player_0"] == terms[2] and env.truncations["player_0"] == truncs[2]
            assert [env.rewards[a] for a in env.possible_agents] == backend._rewards[2].tolist()
            break
        if terms.any() or truncs.any():
            done = np.flatnonzero(terms | truncs)
            backend.reset_tables(done, [int(d) + 100 for d in done])
    else:
        pytest.fail("the table never finished")


@pytest.mark.parametrize("config", [{}, {"num_teams": 3, "players_per_team": 2, "layout": "generated"}])
def test_envs_vector_numpy_equals_python_backend(config):
    numpy_tables = vector.make("sequence_v0", 6, seed=4, backend="numpy", max_cycles=40, **config)
    python_tables = vector.make("sequence_v0", 6, seed=4, backend="python", max_cycles=40, **config)
    assert numpy_tables.backend == "numpy" and vector.available_backends("sequence_v0")[0] == "numpy"
    (obs_n, info_n), (obs_p, info_p) = numpy_tables.reset(), python_tables.reset()
    rng = np.random.default_rng(1)
    ended = 0
    for _ in range(300):
        for key in obs_n:
            assert np.array_equal(obs_n[key], obs_p[key])
        assert np.array_equal(info_n["current_seat"], info_p["current_seat"])
        actions = numpy_tables.sample_legal(rng)
        obs_n, rew_n, term_n, trunc_n, info_n = numpy_tables.step(actions)
        obs_p, rew_p, term_p, trunc_p, info_p = python_tables.step(actions)
        assert np.array_equal(rew_n, rew_p) and np.array_equal(term_n, term_p) and np.array_equal(trunc_n, trunc_p)
        assert np.array_equal(info_n["final_returns"], info_p["final_returns"])
        ended += int((term_n | trunc_n).sum())
    assert ended > 6
    assert numpy_tables.save_state(2) == {**python_tables.save_state(2), "state": {
        **python_tables.save_state(2)["state"], "hands": [sorted(h) for h in python_tables.save_state(2)["state"]["hands"]]}}


def test_windows_through_each_square_are_the_runs_of_five_containing_it():
    from envs.sequence.rules import WINDOWS
    for sq in (0, 44, 9, 57):
        listed = {frozenset(w.tolist()) for w in WINDOWS_THROUGH[sq].reshape(-1, 5) if 100 not in w}
        assert listed == {w for w in WINDOWS if sq in w}


def test_bad_input_is_refused_clearly():
    game = SequenceGame()
    backend = SequenceNumpyBackend(game, 2)
    with pytest.raises(RuntimeError, match="never dealt"):
        backend.step(np.array([0, 0]))
    backend.reset_tables([0, 1], [1, 2])
    illegal = int(np.flatnonzero(backend.action_mask[0] == 0)[0])
    legal = int(np.flatnonzero(backend.action_mask[1])[0])
    with pytest.raises(IllegalActionError, match="table 0: action"):
        backend.step(np.array([illegal, legal]))
    with pytest.raises(IllegalActionError, match="shape"):
        backend.step(np.array([legal]))
    with pytest.raises(IllegalActionError, match="outside"):
        backend.step(np.array([349, legal]))
    with pytest.raises(IllegalActionError, match="integer"):
        backend.step(np.array([0.5, 1.0]))
    with pytest.raises(IndexError, match="table index"):
        backend.save_state(2)
    bad = backend.save_state(0)
    bad["state"]["hands"][0] = bad["state"]["hands"][0][1:]  # a card vanished
    with pytest.raises(StateError, match="cards not conserved"):
        backend.load_state(1, bad)
    bad = backend.save_state(0)
    bad["env"] = {"steps": -1}
    with pytest.raises(StateError, match="env.steps"):
        backend.load_state(1, bad)
    with pytest.raises(TypeError, match="sequence_v0"):
        SequenceNumpyBackend(object(), 2)
    with pytest.raises(ValueError, match="num_envs"):
        SequenceNumpyBackend(game, 0)
    with pytest.raises(ValueError, match="max_cycles"):
        SequenceNumpyBackend(game, 2, max_cycles=0)


# --------------------------------------------------------------------------------------------
# Stepping a subset of the tables


@pytest.mark.parametrize("family", ["2p", "3teams", "2x2"])
def test_stepping_a_subset_equals_the_reference_engine(family):
    """``step(actions, active)``: the active tables play as the reference engine does; the others keep
    their state and buffers and get zero rewards and ends, whatever action they were given."""
    game = SequenceGame(**FAMILIES[family])
    tables = 8
    backend = SequenceNumpyBackend(game, tables, max_cycles=60)
    rng = random.Random(7)
    seeds = iter(range(1000, 100_000))
    refs, steps = [None] * tables, [0] * tables

    def deal(rows):
        chosen = [next(seeds) for _ in rows]
        backend.reset_tables(rows, chosen)
        for i, s in zip(rows, chosen):
            refs[i], steps[i] = game.new_initial_state(s), 0

    deal(list(range(tables)))
    games = 0
    while games < 12:
        active = np.array([rng.random() < 0.5 for _ in range(tables)])
        actions = np.array([rng.randrange(349) for _ in range(tables)])  # junk where inactive
        for i in np.flatnonzero(active):
            legal = np.flatnonzero(refs[i].legal_mask())
            actions[i] = legal[rng.randrange(len(legal))]
        before = {i: (backend.save_state(i), backend.observation[i].copy(), backend.action_mask[i].copy(),
                      int(backend.current_seat[i])) for i in np.flatnonzero(~active)}
        rewards, terms, truncs = backend.step(actions, active)
        finished = []
        for i in range(tables):
            if not active[i]:
                saved, obs, mask, seat = before[i]
                assert backend.save_state(i) == saved and backend.current_seat[i] == seat
                assert np.array_equal(backend.observation[i], obs) and np.array_equal(backend.action_mask[i], mask)
                assert not rewards[i].any() and not terms[i] and not truncs[i]
                continue
            steps[i] += 1
            want = reference_step(game, refs[i], int(actions[i]), steps[i], backend.max_steps)
            assert np.array_equal(rewards[i], want[0]) and terms[i] == want[1] and truncs[i] == want[2]
            if terms[i] or truncs[i]:
                assert backend.save_state(i)["state"] == sorted_hands(game.save(refs[i]))["state"]
                finished.append(i)
                continue
            state = refs[i]
            assert backend.current_seat[i] == state.current_player()
            assert np.array_equal(backend.action_mask[i], state.legal_mask())
            assert np.array_equal(backend.observation[i], game.observe(state, state.current_player()))
        if finished:
            games += len(finished)
            deal(finished)
    nothing = backend.step(np.zeros(tables, dtype=np.int64), np.zeros(tables, dtype=bool))
    assert not nothing[0].any() and not nothing[1].any() and not nothing[2].any()


def test_envs_vector_steps_a_subset_of_numpy_tables_like_the_python_backend():
    numpy_tables = vector.make("sequence_v0", 6, seed=8, backend="numpy", max_cycles=40, num_teams=3)
    python_tables = vector.make("sequence_v0", 6, seed=8, backend="python", max_cycles=40, num_teams=3)
    (obs_n, _), (obs_p, _) = numpy_tables.reset(), python_tables.reset()
    rng = np.random.default_rng(2)
    for _ in range(200):
        for key in obs_n:
            assert np.array_equal(obs_n[key], obs_p[key])
        active = rng.random(6) < 0.6
        actions = numpy_tables.sample_legal(rng)
        obs_n, rew_n, term_n, trunc_n, info_n = numpy_tables.step(actions, active)
        obs_p, rew_p, term_p, trunc_p, info_p = python_tables.step(actions, active)
        assert np.array_equal(rew_n, rew_p) and np.array_equal(term_n, term_p) and np.array_equal(trunc_n, trunc_p)
        assert np.array_equal(info_n["current_seat"], info_p["current_seat"])
        assert np.array_equal(info_n["episode_length"], info_p["episode_length"])


def test_a_bad_active_mask_is_refused():
    backend = SequenceNumpyBackend(SequenceGame(), 2)
    backend.reset_tables([0, 1], [1, 2])
    legal = np.array([np.flatnonzero(m)[0] for m in backend.action_mask])
    with pytest.raises(ValueError, match="active"):
        backend.step(legal, np.array([1, 0]))
    with pytest.raises(IllegalActionError, match="table 1"):  # only active tables' actions are checked
        backend.step(np.array([legal[0], 0 if not backend.action_mask[1, 0] else 348]), np.array([False, True]))


def test_the_inlined_shuffle_is_random_shuffle():
    from envs.sequence.vector import shuffle
    for seed in range(40):
        for size in (0, 1, 2, 31, 32, 33, 80, 104):
            ours, theirs = random.Random(seed), random.Random(seed)
            a, b = list(range(size)), list(range(size))
            shuffle(ours, a)
            theirs.shuffle(b)
            assert a == b and ours.getstate() == theirs.getstate()


# --------------------------------------------------------------------------------------------
# The incremental structures


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_incremental_structures_equal_a_recomputation_from_scratch(family):
    """Every structure the backend keeps up to date cell by cell (``SequenceNumpyBackend.DERIVED``: the
    placeable and covered cards, the one-eyed jacks' targets, the line bits, locked squares, sequence
    starts, discard counts and the observation parts written only where they change) equals its
    recomputation from the board, hands, discards and sequences, after every step of random play, across
    new deals and tables loaded mid-game."""
    game = SequenceGame(**FAMILIES[family])
    tables = 6
    backend = SequenceNumpyBackend(game, tables, max_cycles=80)
    backend.reset_tables(range(tables), range(tables))
    rng = np.random.default_rng(sorted(FAMILIES).index(family))
    next_seed, games, sequences = tables, 0, 0
    for step in range(400):
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in backend.action_mask])
        counted = backend.seq_count.sum()
        _, terms, truncs = backend.step(actions)
        sequences += int(backend.seq_count.sum() - counted)
        for i in range(tables):
            assert backend.stale_structures(i) == [], f"table {i} after step {step}"
        done = np.flatnonzero(terms | truncs)
        if len(done):
            games += len(done)
            backend.reset_tables(done, range(next_seed, next_seed + len(done)))
            next_seed += len(done)
        if step % 50 == 25:  # a table continued from its saved state (the structures rebuilt on load)
            backend.load_state(int(step % tables), backend.save_state(int(step % tables)))
    assert games > 0 and sequences > 0


def test_a_stale_structure_is_reported():
    backend = SequenceNumpyBackend(SequenceGame(), 2)
    backend.reset_tables([0, 1], [3, 4])
    assert backend.stale_structures(0) == [] and backend.stale_structures(1) == []
    backend.covered[1, 0] = True
    backend.lines[1, 0, 0] ^= 1
    assert backend.stale_structures(0) == [] and backend.stale_structures(1) == ["covered", "lines"]
