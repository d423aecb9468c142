"""The play session: seats see only their view, hidden choices stay unnamed, undo, save and resume."""

from __future__ import annotations

import json

import pytest

from agents.records import replay
from play.session import Session, SessionError, UndoRefused
from play.views import action_square, picture

GAMES = {
    "sequence_v0": ({}, "sequence_v0/heuristic-v1"),
    "pans_trial_v0": ({}, "pans_trial_v0/heuristic-v1"),
    "dojo_v0": ({"num_players": 2}, "dojo_v0/heuristic-v1"),
    "wizard_arena_v0": ({"num_bots": 2, "map_size": 8}, "wizard_arena_v0/heuristic-v1"),
}


def _session(game, seed=4, max_cycles=None):
    config, opponent = GAMES[game]
    import envs

    n = len(envs.make(game, **config).possible_agents)
    return Session(game, ["human"] + [opponent] * (n - 1), config=config, seed=seed, max_cycles=max_cycles)


def _first_legal(session):
    return session.legal_moves()[0][0]


@pytest.mark.parametrize("game", list(GAMES))
def test_whole_game_record_replays_and_pictures_come_from_the_view(game):
    s = _session(game, max_cycles=40)
    while not s.over:
        s.run_agents()
        if s.over:
            break
        view = s.view(0)
        pic = picture(s.game, view)
        assert pic.rows * pic.cols == sum(len(r) for r in pic.cells)
        for action, _ in s.legal_moves():
            square = action_square(s.game, view, action)
            assert square is None or (0 <= square[0] < pic.rows and 0 <= square[1] < pic.cols)
        s.play(0, _first_legal(s))
    assert s.record.result["over"]
    env = replay(s.record)
    assert env.save_state() == s.runner.env.save_state()
    # how it ended, in words: the game's end_texts for the engine's reason, or the move limit
    reason = s.runner.end_reason
    assert s.end_text() and s.end_text() != reason
    if reason in s.game.end_texts:
        # who won and why, in the game's words
        assert "player_" in s.end_text() or "draw" in s.end_text(), s.end_text()
    # the picture of a finished game names nobody to act
    assert not any("to act" in line for line in picture(s.game, s.view(0)).lines)


def test_out_of_turn_illegal_and_agent_seat_moves_are_refused():
    s = _session("sequence_v0")
    with pytest.raises(SessionError, match="player_1 is played by sequence_v0/heuristic-v1"):
        s.play(1, 0)
    legal = {a for a, _ in s.legal_moves()}
    illegal = next(a for a in range(100) if a not in legal)
    with pytest.raises(SessionError, match=f"action {illegal} .* is not legal now"):
        s.play(0, illegal)
    # a move that is not an action number is refused in words, never as a Python value
    for sent, said in (("place", 'got "place"'), (True, "got a boolean"), (None, "got nothing"), (2.5, "got 2.5"),
                       ([3], "got a list")):
        with pytest.raises(SessionError) as refused:
            s.play(0, sent)
        assert str(refused.value) == f"a move is an action number; {said}"
    with pytest.raises(SessionError, match=r"there is no action number 999 in sequence_v0 \(they run from 0 to 348\)"):
        s.play(0, 999)
    with pytest.raises(SessionError, match="neither 'human' nor an agent") as refused:
        Session("sequence_v0", ["human", "sequence_v0/nobody-v9"])
    # the agents offered instead are those that can sit at this table (two players, not teams)
    assert "sequence_v0/ppo-v1" in str(refused.value) and "ppo-teams" not in str(refused.value)
    with pytest.raises(SessionError, match="has 2 seats"):
        Session("sequence_v0", ["human"])


def test_hidden_choice_of_an_opponent_is_not_named():
    # Pan's Trial: the first Appeasing card is secret until both have chosen.
    for seed in range(20):
        s = _session("pans_trial_v0", seed=seed)
        while not s.over:
            s.run_agents()
            if s.over:
                break
            s.play(0, _first_legal(s))
        hidden = [e for e in s.events_for(0) if e["name"] is None]
        if hidden:
            assert all(e["seat"] == 1 and e["action"] is None and "hidden choice" in e["text"] for e in hidden)
            assert all(e["phase"] == "appease_first" for e in hidden)
            named = [e for e in s.events_for(1) if e["seat"] == 1]
            assert all(e["name"] for e in named)  # the mover's own view of its moves
            return
    pytest.fail("no hidden Appeasing choice by the agent in 20 games")


def test_undo_restores_the_state_when_nothing_hidden_was_revealed():
    s = _session("wizard_arena_v0", seed=2)
    s.run_agents()
    before = s.runner.env.save_state()
    moves_before = len(s.record.moves)
    s.play(0, _first_legal(s))
    s.run_agents()
    assert s.can_undo() is None
    s.undo()
    assert s.runner.env.save_state() == before
    assert len(s.record.moves) == moves_before
    assert s.record.meta["undos"] == 1
    with pytest.raises(UndoRefused, match="no human move"):
        s.undo()


def test_undo_is_refused_after_a_card_was_drawn():
    s = _session("sequence_v0", seed=1)
    s.play(0, _first_legal(s))  # every card played draws a new one
    with pytest.raises(UndoRefused, match="seen something that was hidden"):
        s.undo()


def test_save_and_resume_continue_exactly_and_edits_are_refused():
    s = _session("dojo_v0", seed=6)
    for _ in range(15):
        s.run_agents()
        s.play(0, _first_legal(s))
    data = json.loads(json.dumps(s.save()))
    resumed = Session.load(data)
    assert resumed.runner.env.save_state() == s.runner.env.save_state()
    assert resumed.seats == s.seats and resumed.record.moves == s.record.moves
    # both continue identically
    for session in (s, resumed):
        session.run_agents()
    assert resumed.runner.env.save_state() == s.runner.env.save_state()

    edited = json.loads(json.dumps(data))
    edited["record"]["moves"][3]["action"] = 13
    edited["record"]["moves"][3]["name"] = "pass"
    with pytest.raises(SessionError, match="move 4 .*does not replay"):
        Session.load(edited)
    edited = json.loads(json.dumps(data))
    edited["state"]["state"]["track"][0] = 17
    with pytest.raises(SessionError, match="not the state its record replays to"):
        Session.load(edited)
    with pytest.raises(SessionError, match="not a saved play session"):
        Session.load({"format": "x"})


def test_out_of_turn_decisions_are_asked_of_the_human_seat():
    # Pan's Trial: while player_1 is the Traversing player, player_0 (human) still strikes back in
    # combat and chooses an Appeasing card; the session asks seat 0 then, not the turn holder.
    asked = set()
    for seed in range(10):
        s = _session("pans_trial_v0", seed=seed)
        while not s.over:
            s.run_agents()
            if s.over:
                break
            view = s.view(0)
            if view["stage"] != "draft" and view["active"] == 1:
                asked.add(s.phase)
            s.play(0, _first_legal(s))
    assert asked & {"combat", "appease_first", "appease_second"}, asked


def test_undo_history_survives_save_and_resume():
    s = _session("wizard_arena_v0", seed=2)
    s.run_agents()
    before = s.runner.env.save_state()
    s.play(0, _first_legal(s))
    s.run_agents()
    resumed = Session.load(json.loads(json.dumps(s.save())))
    assert resumed.can_undo() is None
    resumed.undo()
    assert resumed.runner.env.save_state() == before


def test_the_session_plays_in_the_runner_and_an_agent_that_cheats_is_named(monkeypatch):
    from agents.runner import Runner

    s = _session("sequence_v0", seed=3)
    assert isinstance(s.runner, Runner) and s.runner.seats[0] is None and s.runner.seats[1] is s.agents[1]
    assert s.agents[1].game is s.game and s.agents[1].seat == 1
    s.play(0, _first_legal(s))
    legal = {a for a, _ in s.legal_moves()}
    illegal = next(a for a in range(s.game.num_actions) if a not in legal)
    monkeypatch.setattr(s.agents[1], "act", lambda observation, view: illegal)
    before = s.runner.env.save_state()
    with pytest.raises(SessionError, match="sequence_v0/heuristic-v1 at player_1 chose an illegal action"):
        s.step_agent()
    assert s.runner.env.save_state() == before and len(s.record.moves) == len(s.events) == 1


def test_a_game_cut_at_the_move_limit_says_so_and_its_record_replays():
    s = Session("wizard_arena_v0", ["wizard_arena_v0/random-v0"] * 2, config={"num_bots": 2, "map_size": 8},
                seed=1, max_cycles=3)
    events = s.run_agents()
    assert s.over and len(events) == 6 and [e.index for e in events] == list(range(1, 7))
    assert s.describe_result().startswith("cut off at the move limit")
    assert s.record.result["truncated"] and s.record.max_cycles == 3
    assert replay(s.record).save_state() == s.runner.env.save_state()
