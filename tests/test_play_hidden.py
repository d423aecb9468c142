"""What the front ends show a seat depends on that seat's knowledge only.

For each game with hidden information, the hidden part of the position is redrawn (another deal
consistent with the human seat's view, ``state_from_view``) and everything the browser is sent and
the terminal prints must stay the same, character for character.
"""

from __future__ import annotations

import io
import json
import random

import pytest

from play.session import Session
from play.terminal import TerminalGame
from play.web import seat_state

CASES = [
    ("sequence_v0", {}, "sequence_v0/heuristic-v1"),
    ("sequence_v0", {"num_teams": 3, "players_per_team": 2}, "sequence_v0/random-v0"),
    ("pans_trial_v0", {}, "pans_trial_v0/heuristic-v1"),
    ("dojo_v0", {"num_players": 4}, "dojo_v0/heuristic-v1"),
]


def _shown(session, seat):
    body = json.dumps(seat_state(session, seat, "sid"), sort_keys=True)
    out = io.StringIO()
    TerminalGame(session, out=out, color=True)._show(seat)
    return body, out.getvalue()


@pytest.mark.parametrize("game, config, opponent", CASES)
def test_redrawing_hidden_information_changes_nothing_shown(game, config, opponent):
    import envs

    n = len(envs.make(game, **config).possible_agents)
    session = Session(game, ["human"] + [opponent] * (n - 1), config=config, seed=9)
    compared = 0
    for turn in range(12):
        session.run_agents()
        if session.over:
            break
        seat = session.human_to_act()
        shown = _shown(session, seat)
        saved = session.runner.env.save_state()
        view = session.view(seat)
        for k in range(3):
            other = session.game.state_from_view(view, random.Random(100 * turn + k))
            data = session.game.save(other)
            data["env"] = saved["env"]
            session.runner.restore(data)
            assert session.view(seat) == view
            if session.runner.state.to_dict() != session.game.load(saved).to_dict():
                compared += 1
            assert _shown(session, seat) == shown
        session.runner.restore(saved)
        session.play(seat, session.legal_moves()[turn % len(session.legal_moves())][0])
    assert compared > 0, "no redraw differed from the real position"
