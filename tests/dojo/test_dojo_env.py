"""Dojo through the environment: hidden information, step-budgeted fuzz with invariants,
truncation rewards, the heuristic agent, and the simulator with a tiny budget."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

import agents
import envs
import envs.dojo_v0 as dojo
from envs.core.testing import check_hidden_information, check_save_restore, check_state
from envs.dojo.board import FATICA
from envs.dojo.cards import KIAI, UKE
from envs.dojo.rules import A_STEP, from_position
from dojo_helpers import game, position, read_picture, sq, walk


def test_hidden_tecnica_changes_state_but_not_observation():
    g = game()
    a = from_position(g, {}, hands={1: [KIAI]}, dice=[1, 1])
    b = from_position(g, {}, hands={1: [UKE]}, dice=[1, 1])
    assert a.to_dict() != b.to_dict()
    for seat in (0, 2, 3):
        assert np.array_equal(g.observe(a, seat), g.observe(b, seat))
        assert a.player_view(seat) == b.player_view(seat)
    assert not np.array_equal(g.observe(a, 1), g.observe(b, 1))


def test_face_down_discard_and_deck_order_are_hidden():
    st = position("5,0: . ? . 0", deck_top=[UKE], hands={0: [KIAI]}, dice=[1, 1])
    walk(st, "WW")
    st.apply_action(17)  # keep Uke: Kiai goes face down
    other = st.clone()
    other.discard[-1] = 2  # a different Tecnica face down
    other.hands[0] = [UKE]
    for seat in (1, 2, 3):
        assert np.array_equal(st.game.observe(st, seat), other.game.observe(other, seat))
    assert check_hidden_information(st, random.Random(1))


def test_fuzz_by_steps_with_invariants():
    """Random play, budgeted by steps (random players rarely reach the Exam)."""
    for n, config in ((2, {}), (4, {"exam_best_of_three": True, "fatica_on_stop_only": True}),
                      (8, {"kumite_first_round": True, "kiai_bonus": 1})):
        g = dojo.Game(num_players=n, **config)
        rng = random.Random(n)
        state = g.new_initial_state(n)
        for step in range(6000):
            if state.is_terminal():
                state = g.new_initial_state(step)
            legal = state.legal_actions()
            state.apply_action(legal[rng.randrange(len(legal))])
            check_state(state)
            assert not state.check_invariants()


def test_heuristic_games_reach_the_exam_and_keep_invariants():
    attempts = finished = 0
    for seed, n in ((0, 2), (1, 4), (2, 8)):
        g = dojo.Game(num_players=n, exam_best_of_three=(seed == 1))
        seats = [agents.make("dojo_v0/heuristic-v1", seed=seed * 10 + i) for i in range(n)]
        for i, a in enumerate(seats):
            a.reset(i, g)
        state = g.new_initial_state(seed)
        steps = 0
        while not state.is_terminal() and steps < 8000:
            p = state.current_player()
            obs = {"observation": g.observe(state, p), "action_mask": state.legal_mask()}
            state.apply_action(seats[p].act(obs, state.player_view(p)))
            check_state(state)
            steps += 1
            if steps % 500 == 0:
                check_save_restore(state, steps=20)
        attempts += state.stats["exam_attempts"]
        finished += state.is_terminal()
    assert attempts >= 1 and finished >= 2


@pytest.mark.parametrize("track", [11, 13, 15])
def test_heuristic_v2_heads_for_the_dojo_two_track_positions_later(track):
    """The same sampled walks, scored by v1 and by v2: they differ only by the pull toward the Dojo,
    0.15 per square from the Dojo per track position above 11 (v1) or 13 (v2) where the walk ends
    (a Fatica crossed on the way costs a position)."""
    g = game()
    st = from_position(g, read_picture(g, "4,0: 0"), tracks=[track, 0, 0, 0], dice=[3, 4])
    view = st.player_view(0)
    dirs = [a - A_STEP for a in st.legal_actions()]
    v1, v2 = agents.make("dojo_v0/heuristic-v1", seed=5), agents.make("dojo_v0/heuristic-v2", seed=5)
    for a in (v1, v2):
        a.reset(0, g)
    ends, differ = set(), False
    for _ in range(30):
        (path1, score1), (path2, score2) = v1._sample(view, dirs), v2._sample(view, dirs)
        assert path1 == path2
        s, end_track = st.pos[0], track
        for d in path1:
            s = g.board.step[s][d]
            end_track -= g.board.room[s] < 0 and g.board.kind[s] == FATICA
        ends.add(s)
        pull_v1, pull_v2 = max(0, end_track - 11), max(0, end_track - 13)
        assert score2 - score1 == pytest.approx(0.15 * (pull_v1 - pull_v2) * v1.dojo_dist[s])
        differ |= score2 != pytest.approx(score1)
    assert len(ends) > 3 and differ == (track > 11)


def test_heuristic_walk_cache_gives_the_answers_of_a_fresh_search(monkeypatch):
    """The walker caches its next directions by the visited squares within reach only: every
    answer a game used equals the one worked out from scratch with the full visited set."""
    from agents import dojo as walker

    calls = []
    cached = walker.DojoHeuristic._next_dirs

    def spy(oracle, s, k, visited, dojo):
        answer = cached(oracle, s, k, visited, dojo)
        calls.append((oracle, s, k, visited, dojo, answer))
        return answer

    monkeypatch.setattr(walker.DojoHeuristic, "_next_dirs", staticmethod(spy))
    agents.play_game("dojo_v0", [agents.make("dojo_v0/heuristic-v2", seed=i) for i in range(4)], seed=8,
                     config={"num_players": 4, "max_cycles": 15})
    assert len(calls) > 1000
    for oracle, s, k, visited, reach, answer in calls[::7]:
        left = oracle.longest(s, k, visited, reach)
        step, bit = oracle.board.step[s], oracle.board.bit
        fresh = [] if left == 0 else [e for e in range(4) if step[e] >= 0 and not visited & bit[step[e]]
                                       and oracle.walk(step[e], left - 1, visited | bit[step[e]], reach)]
        if left and reach and oracle.board.entry[s] >= 0:
            fresh.append(oracle.board.entry[s])
        assert answer == tuple(fresh)


def test_rewards_zero_sum_and_truncation_gives_zero():
    env = dojo.raw_env(num_players=3, max_cycles=5)
    env.reset(seed=0)
    rng = random.Random(0)
    while env.agents:
        a = env.agent_selection
        if env.terminations[a] or env.truncations[a]:
            assert env.unwrapped.cumulative_reward(a) == 0
            env.step(None)
            continue
        legal = np.flatnonzero(env.observe(a)["action_mask"])
        env.step(int(legal[rng.randrange(len(legal))]))
    record = agents.play_game("dojo_v0", [agents.make("dojo_v0/heuristic-v1", seed=i) for i in range(3)],
                              seed=4, config={"num_players": 3})
    assert not record.truncated
    assert abs(sum(record.returns)) < 1e-9 and sorted(record.returns) == [-0.5, -0.5, 1.0]


def test_observation_bounds_and_json_view():
    g = game(num_players=8)
    st = g.new_initial_state(3)
    rng = random.Random(0)
    for _ in range(400):
        for p in range(8):
            o = g.observe(st, p)
            assert o.shape == g.observation_shape and o.min() >= 0 and o.max() <= 1
        json.dumps(st.player_view(st.current_player()))
        legal = st.legal_actions()
        st.apply_action(legal[rng.randrange(len(legal))])


def test_action_names_and_registry():
    g = game()
    assert g.action_to_string(0) == "step N" and g.string_to_action("play Tecnica") == 14
    assert {"dojo_v0/heuristic-v1", "dojo_v0/heuristic-v2"} <= set(agents.available("dojo_v0"))
    assert envs.make("dojo_v0", num_players=2).unwrapped.game.num_players == 2


def test_simulator_runs_with_a_tiny_budget(tmp_path, capsys):
    from tools import simulate

    out = tmp_path / "sim.png"
    result = simulate.main(["dojo", "--games", "2", "--config", "num_players=2", "--variants", "short_game",
                            "--out", str(out), "--json", str(tmp_path / "r.json"), "--no-progress"])
    assert out.exists() and out.stat().st_size > 1000
    text = capsys.readouterr().out
    assert "win rate by seat" in text and "short_game" in text and "turn order" in text
    assert result["default"]["games"] == 2 and len(result["default"]["win_rate_by_seat"]) == 2
    assert set(result["default"]["stats"]) == {"turns", "rounds", "exam_attempts", "kumite", "cards"}
    lo, hi = result["default"]["win_rate_by_seat"][0]["ci95"]
    assert 0.0 <= lo <= hi <= 1.0


# ---- rendering ------------------------------------------------------------------------------------
def test_text_render_draws_the_walls_entrances_and_tunnel_pairs_as_the_board_file_does():
    from envs.dojo.board import DEFAULT_BOARD_PATH

    st = position("4,7: 0\n4,9: F 1", tracks=[3, 3, 0, 0], begin=False)
    st.pos[2] = st.pos[3] = sq(3, 5)  # two pawns on one square: '*'
    text = st.game.render_text(st)
    drawing = [line.rstrip() for line in DEFAULT_BOARD_PATH.read_text().splitlines() if line.startswith(("+", "|"))]
    shown = [line[3:] for line in text.splitlines()[1:34]]
    assert len(shown) == len(drawing) == 33
    for y, (got, want) in enumerate(zip(shown, drawing)):
        if y % 2 == 0:
            assert got == want  # every wall and entrance between rows, as in the file
        else:
            r = y // 2
            marks = {7: "0", 10: "1"} if r == 4 else {5: "*"} if r == 3 else {}
            for x, (g, w) in enumerate(zip(got, want)):
                if x % 2 == 1 and (x - 1) // 2 in marks:
                    assert g == marks[(x - 1) // 2], (r, x)
                else:
                    assert g == w, (r, x)
    assert "|" in shown[11] and "=" in shown[12] and ":" in shown[15]
    assert "Tunnels joined: (3, 3)-(12, 12), (3, 12)-(12, 3)" in text
    assert text.splitlines()[0].split() == [str(c % 10) for c in range(16)]


def test_image_shows_which_tunnels_are_joined(tmp_path):
    from envs.dojo.board import DEFAULT_BOARD_PATH

    def pixel(image, s, cell=24):
        r, c = divmod(s, 16)
        return tuple(image[r * cell + cell - 4, c * cell + cell - 4])

    g = game()
    image = g.render_rgb(g.new_initial_state(0))
    (a, b), (c, d) = g.board.tunnel_pairs()
    assert pixel(image, a) == pixel(image, b) != pixel(image, c) == pixel(image, d)
    # on a user's board whose pairs are listed the other way round, the colours follow the pairs
    text = DEFAULT_BOARD_PATH.read_text().replace("tunnel 3,3 12,12\ntunnel 3,12 12,3", "tunnel 3,3 12,3\ntunnel 3,12 12,12")
    path = tmp_path / "crossed.txt"
    path.write_text(text)
    g2 = game(board_file=str(path))
    image = g2.render_rgb(g2.new_initial_state(0))
    assert pixel(image, sq(3, 3)) == pixel(image, sq(12, 3)) != pixel(image, sq(3, 12))
    assert pixel(image, sq(3, 12)) == pixel(image, sq(12, 12))
