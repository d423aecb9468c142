"""agents.runner: one game between seats, whole (play_game) or step by step (Runner) with hooks."""

from __future__ import annotations

import numpy as np
import pytest

import agents
import envs
from agents.runner import Runner, RunnerHooks, decide, seat_inputs
from envs.core import IllegalActionError


class Trace(RunnerHooks):
    def __init__(self):
        self.events = []

    def on_start(self, runner):
        self.events.append(("start", runner.num_steps))

    def on_step(self, runner, seat, action):
        self.events.append(("step", seat, action))

    def on_end(self, runner, record):
        self.events.append(("end", record.length))


def bots(game, n, seed=0):
    return [agents.make(f"{game}/random-v0", seed=seed + i) for i in range(n)]


def test_play_game_is_the_runner_to_the_end_and_hooks_see_every_action():
    trace = Trace()
    record = agents.play_game("sequence_v0", bots("sequence_v0", 2), seed=3, hooks=[trace], record_actions=True)
    steps = [e for e in trace.events if e[0] == "step"]
    assert trace.events[0] == ("start", 0) and trace.events[-1] == ("end", record.length)
    assert [a for _, _, a in steps] == record.actions and len(steps) == record.length
    assert record.end_reason in ("rules", "truncated") and record.truncated == (record.end_reason == "truncated")
    again = agents.play_game("sequence_v0", bots("sequence_v0", 2), seed=3, record_actions=True)
    assert again.actions == record.actions and again.returns == record.returns


def test_an_outside_seat_is_asked_and_the_agents_move_until_it_must_act():
    runner = Runner("pans_trial_v0", [None, agents.make("pans_trial_v0/random-v0", seed=1)], seed=2)
    human_moves = 0
    while True:
        seat = runner.advance()
        if seat is None:
            break
        assert seat == 0 and runner.is_outside(0) and runner.seat_to_act == 0
        observation, view = runner.inputs(0)
        assert view["seat"] == 0 and observation["action_mask"].any()
        with pytest.raises(RuntimeError, match="seat 1 may not act"):
            runner.apply(int(np.flatnonzero(observation["action_mask"])[0]), seat=1)
        with pytest.raises(RuntimeError, match="played from outside"):
            runner.step()
        runner.apply(int(np.flatnonzero(observation["action_mask"])[0]), seat=0)
        human_moves += 1
    assert human_moves > 0 and runner.finished and runner.record is not None
    with pytest.raises(RuntimeError, match="game is over"):
        runner.apply(0)


def test_an_illegal_action_from_outside_raises_and_changes_nothing():
    runner = Runner("sequence_v0", [None, None], seed=0)
    mask = runner.inputs(0)[0]["action_mask"]
    illegal = int(np.flatnonzero(mask == 0)[0])
    with pytest.raises(IllegalActionError):
        runner.apply(illegal)
    assert runner.num_steps == 0 and runner.seat_to_act == 0


def test_a_saved_game_continues_in_the_runner():
    env = envs.make("sequence_v0", raw=True)
    env.reset(seed=5)
    for _ in range(6):
        env.step(int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0]))
    saved = env.unwrapped.save_state()
    runner = Runner("sequence_v0", bots("sequence_v0", 2), state=saved)
    assert runner.num_steps == 6 and runner.seat_to_act == env.unwrapped.seat_of(env.agent_selection)
    record = runner.run()
    assert record.length > 6


def test_the_runner_reuses_only_a_strict_environment_of_its_game():
    with pytest.raises(ValueError, match="strict raw_env"):
        Runner("sequence_v0", [None, None], env=envs.make("pans_trial_v0", raw=True))
    with pytest.raises(ValueError, match="seats"):
        Runner("sequence_v0", [None, None, None])


def test_agents_are_handed_the_game_not_a_dict():
    bot = agents.make("dojo_v0/heuristic-v1", seed=0)
    with pytest.raises(TypeError, match="takes the configured Game"):
        bot.reset(0, {"num_players": 4})
    with pytest.raises(ValueError, match="plays dojo_v0"):
        bot.reset(0, envs.make_game("sequence_v0"))
    game = envs.make_game("dojo_v0", num_players=4)  # the keywords a user passes: defaults filled in
    bot.reset(3, game)
    assert bot.game is game and bot.config["kumite_first_round"] is False and bot.seat == 3


def test_decide_and_seat_inputs_hand_out_what_the_environment_does():
    game = envs.make_game("sequence_v0")
    state = game.new_initial_state(1)
    observation, view = seat_inputs(state, 1)
    assert state.current_player() == 0 and not observation["action_mask"].any()  # seat 1 is not to act
    assert np.array_equal(observation["observation"], game.observe(state, 1)) and view == state.player_view(1)
    action = decide("sequence_v0/heuristic-v1", state, seed=0)
    assert state.legal_mask()[action]
