"""Words, not identifiers: what the front ends show speaks the game's words.

Every move of every game is named through one path (``play.story.label``); no name, log line, turn
line or refusal holds an identifier of the code (a ``snake_case`` word), a Python value (``True``,
``None``) or the brackets of a Python repr. Seats (``player_3``), agent ids
(``sequence_v0/heuristic-v1``) and game ids (``dojo_v0``) are the project's own names and stay.
"""

from __future__ import annotations

import random
import re

import pytest

import envs
from play.session import Session, SessionError, value_words
from play.story import label, plain_words
from play.views import picture
from tests.test_play_front_ends import _asgi

#: What a person should never read: a snake_case word that is not a seat, an agent id or a game id;
#: Python's True/False/None; the opening of a list, dict or tuple repr of text; an object's repr.
IDENTIFIER = re.compile(
    r"\b(?!player_\d+\b)(?![a-z]+(?:_[a-z]+)*_v\d+\b)[A-Za-z]+(?:_[A-Za-z0-9]+)+\b"
    r"|\b(?:True|False|None)\b|[\[{(]'|<[A-Za-z_.]+ object|\bseat\+\d"
)


def odd_words(text: str) -> list[str]:
    return [m.group(0) for m in IDENTIFIER.finditer(text)]


def test_the_pattern_finds_identifiers_and_spares_the_projects_names():
    assert odd_words("request steal_life") == ["steal_life"]
    assert odd_words("made a hidden choice (appease_first)") == ["appease_first"]
    assert odd_words("a move is an action id (an integer), got True") == ["True"]
    assert odd_words("got None; known: ['2p', '4p']") == ["None", "['"]
    assert odd_words("target seat+1") == ["seat+1"]
    assert odd_words("player_3 (sequence_v0/heuristic-v1) plays on dojo_v0") == []
    assert plain_words("request ignore_us for player_1") == "request ignore us for player_1"


def _positions(name: str, config: dict, seeds=(0, 1)):
    """The start and a few later positions of games of seeded random legal moves."""
    game = envs.make_game(name, **config)
    wanted = (0, 5, 20, 80)
    out = []
    for seed in seeds:
        state = game.new_initial_state(seed)
        rng = random.Random(seed)
        for step in range(max(wanted) + 1):
            if step in wanted and (step or seed == seeds[0]):
                out.append(state.clone())
            if state.is_terminal():
                break
            state.apply_action(rng.choice(state.legal_actions()))
    return game, out


CASES = [(name, family) for name in envs.NAMES for family in list(envs.game_class(name).config_families)[:3]]


@pytest.mark.parametrize("name, family", CASES)
def test_every_move_of_every_game_is_named_in_words(name, family):
    config = envs.game_class(name).config_families[family]
    game, states = _positions(name, config)
    assert len(states) >= 4
    problems = {}
    for state in states:
        for seat in range(game.num_players):
            view = state.player_view(seat)
            for action in range(game.num_actions):
                text = label(game, view, action)
                if not text or odd_words(text):
                    problems.setdefault(text, action)
    assert problems == {}, f"{name} {family}: {list(problems.items())[:10]}"


@pytest.mark.parametrize("name, config", [("sequence_v0", {}), ("pans_trial_v0", {}), ("dojo_v0", {"num_players": 4}),
                                          ("wizard_arena_v0", {"num_bots": 6})])
def test_what_a_player_reads_in_a_whole_game_is_in_words(name, config):
    """The move list, the log (hidden choices too), the turn and score lines, the waits, the end."""
    n = envs.make_game(name, **config).num_players
    session = Session(name, ["human"] + [f"{name}/heuristic-v1"] * (n - 1), config=config, seed=2, max_cycles=60)
    texts = []
    while not session.over:
        session.run_agents()
        if session.over:
            break
        pic = picture(session.game, session.view(0))
        moves = session.legal_moves()
        texts += [pic.turn, *pic.lines, *pic.private, session.waiting(0), *(m for _, m in moves)]
        texts.append(session.hint()[1])
        session.play(0, moves[len(session.events) % len(moves)][0])
    for event in session.events_for(0):
        texts += [event["text"], *event["story"]]
    texts += [session.end_text(), session.describe_result()]
    found = {t: odd_words(t) for t in texts if t and odd_words(t)}
    assert found == {}, list(found.items())[:10]


def test_a_hidden_choice_is_told_without_the_phase_name():
    for seed in range(10):
        session = Session("pans_trial_v0", ["human", "pans_trial_v0/heuristic-v1"], seed=seed)
        while not session.over:
            session.run_agents()
            hidden = [e for e in session.events_for(0) if e["name"] is None]
            if hidden:
                assert hidden[0]["text"] == "player_1 (pans_trial_v0/heuristic-v1) made a hidden choice"
                assert hidden[0]["story"] == ["player_1 chooses an Appeasing card, face down"]
                return
            if session.over:
                break
            session.play(0, session.legal_moves()[0][0])
    pytest.fail("no hidden choice in ten games")


def test_refused_moves_and_values_are_said_in_words():
    assert [value_words(v) for v in (None, True, 3, 2.5, "x" * 50, [], {}, "")] == [
        "nothing", "a boolean", "3", "2.5", '"' + "x" * 40 + '..."', "a list", "an object", "empty text"]
    session = Session("pans_trial_v0", ["human", "pans_trial_v0/heuristic-v1"], seed=1)
    legal = {a for a, _ in session.legal_moves()}
    illegal = next(a for a in range(300, 408) if a not in legal)
    with pytest.raises(SessionError) as refused:
        session.play(0, illegal)
    assert odd_words(str(refused.value)) == [] and "is not legal now; the legal moves: draft " in str(refused.value)
    with pytest.raises(SessionError, match="a move is an action number; got a boolean"):
        session.play(0, True)


def test_a_tie_in_wizard_arena_reads_as_a_shared_place():
    from envs.wizard_arena.picture import ordinal

    assert [ordinal(n) for n in (1, 2, 3, 4, 11, 12, 13, 21, 22, 101)] == [
        "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "101st"]
    game = envs.make_game("wizard_arena_v0", num_bots=6)
    state = game.new_initial_state(0)
    lines = picture(game, state.player_view(0)).lines
    assert len(lines) == 6 and all(": shared 1st, alive, score 0," in line for line in lines), lines
    from envs.wizard_arena.rules import C_START_SCORE

    for seat, score in ((2, 3), (4, -1)):  # as if the bots had begun with these scores
        state.score[seat] = state.counters[seat][C_START_SCORE] = score
    lines = picture(game, state.player_view(0)).lines
    assert lines[0].startswith("C player_2: 1st, alive, score 3,")
    assert sum("shared 2nd" in line for line in lines) == 4 and lines[-1].startswith("E player_4: 6th, ")
    assert not any(re.search(r"rank \d+\.\d", line) for line in lines)


def test_the_server_refuses_bad_values_in_words():
    pytest.importorskip("starlette")
    from play.web import create_app

    app = create_app()
    start = {"game": "wizard_arena_v0", "config": "2bots", "opponents": "wizard_arena_v0/random-v0"}
    for change, said in (({"seat": True}, "seat must be a whole number from 0 to 1; got a boolean"),
                         ({"seat": None}, "seat must be a whole number from 0 to 1; got nothing"),
                         ({"max_cycles": "5"}, 'Max cycles must be a whole number from 1 to 100000; got "5"'),
                         ({"seed": -1}, "the seed must be a whole number from 0 to 2**63 - 1; got -1"),
                         ({"game": None}, "no game given; the games: sequence_v0, "),
                         ({"config": "9bots"}, 'wizard_arena_v0 has no config named "9bots"; its configs: 16bots, 2bots')):
        status, body = _asgi(app, "POST", "/api/sessions", {**start, **change})
        assert status == 400 and said in body["error"] and odd_words(body["error"]) == [], (change, body)
    status, state = _asgi(app, "POST", "/api/sessions", dict(start, seed=3))
    assert status == 200 and state["your_turn"]
    for sent, said in ((None, "got nothing"), (True, "got a boolean"), ("stay", 'got "stay"')):
        status, body = _asgi(app, "POST", f"/api/sessions/{state['id']}/move", {"action": sent})
        assert status == 400 and body["error"] == f"a move is an action number; {said}"


def test_the_wizard_arena_board_names_shared_places_in_words():
    from envs.wizard_arena.game import place_words

    ranks = [1.0, 3.0, 3.0, 3.0, 5.5, 5.5]
    assert [place_words(r, ranks) for r in ranks] == ["1st", "shared 2nd", "shared 2nd", "shared 2nd",
                                                     "shared 5th", "shared 5th"]
    import envs

    game = envs.make_game("wizard_arena_v0")
    text = game.render_text(game.new_initial_state(0))
    assert "shared 1st" in text and not re.search(r"rank \d", text)
