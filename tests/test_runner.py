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


class Before(RunnerHooks):
    """Notes the position each action is played from, and the actions that went through."""

    def __init__(self):
        self.before, self.after = [], []

    def before_step(self, runner, seat, action):
        self.before.append((seat, action, runner.num_steps, runner.state.to_dict()))

    def on_step(self, runner, seat, action):
        self.after.append((seat, action, runner.num_steps))


def test_before_step_sees_the_position_before_the_action_even_an_illegal_one():
    hook = Before()
    runner = Runner("sequence_v0", [None, None], seed=2, hooks=[hook])
    start = runner.state.to_dict()
    illegal = int(np.flatnonzero(runner.state.legal_mask() == 0)[0])
    with pytest.raises(IllegalActionError):
        runner.apply(illegal)
    assert hook.before == [(0, illegal, 0, start)] and hook.after == []
    legal = runner.legal_actions()
    assert legal == np.flatnonzero(runner.inputs(0)[0]["action_mask"]).tolist() and legal
    runner.apply(legal[0])
    assert hook.before[-1] == (0, legal[0], 0, start) and hook.after == [(0, legal[0], 1)]
    assert runner.state.to_dict() != start


class CountingAgent(agents.RandomAgent):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.resets = 0

    def reset(self, seat, game):
        super().reset(seat, game)
        self.resets += 1


def test_restore_goes_back_to_a_saved_position_and_resets_the_agents():
    bot = CountingAgent("wizard_arena_v0", seed=1)
    config = {"num_bots": 2, "map_size": 8}
    runner = Runner("wizard_arena_v0", [None, bot], seed=3, config=config, record_actions=True)
    runner.advance()
    runner.apply(runner.legal_actions()[0], seat=0)
    runner.advance()
    saved, actions = runner.env.save_state(), list(runner.actions)
    runner.apply(runner.legal_actions()[-1], seat=0)
    runner.advance()
    assert runner.num_steps > len(actions)
    runner.restore(saved, actions)
    assert runner.env.save_state() == saved and runner.actions == actions and runner.record is None
    assert bot.resets == 2 and runner.seat_to_act == 0 and runner.end_reason is None
    # the game goes on from there, to its end
    while runner.advance() is not None:
        runner.apply(runner.legal_actions()[0], seat=0)
    assert runner.record is not None and runner.record.length == runner.num_steps
    assert runner.record.actions[: len(actions)] == actions and len(runner.record.actions) == runner.num_steps


def test_restoring_a_final_position_ends_at_once_with_its_reason():
    trace = Trace()
    runner = Runner("sequence_v0", bots("sequence_v0", 2), seed=4, config={"max_cycles": 3}, hooks=[trace])
    assert runner.end_reason is None
    record = runner.run()
    assert record.end_reason == runner.end_reason == "truncated" and record.truncated and record.length == 6
    final = runner.env.save_state()
    runner.restore(runner.env.save_state())
    assert runner.record is not None and runner.record.end_reason == "truncated"
    assert runner.legal_actions() == [] and runner.seat_to_act is None
    assert [e[0] for e in trace.events].count("end") == 2
    played = agents.play_game("sequence_v0", bots("sequence_v0", 2), seed=4)
    assert played.end_reason == "rules" and not played.truncated
    assert runner.env.save_state() == final
