"""The Sequence heuristic (``sequence_v0/heuristic-v1``): tactics, hidden information, strength."""

from __future__ import annotations

import random

import pytest

import agents
from agents.sequence import evaluate_moves
from envs.sequence.board import kind
from envs.sequence.game import SequenceGame
from envs.sequence.rules import DEAD, NON_JACK_INDEX, PLACE, REMOVE, WILD, from_text

HEURISTIC = "sequence_v0/heuristic-v1"


def rows(*lines):
    """Ten board rows; missing rows and short rows are padded with empty squares."""
    lines = list(lines) + ["." * 10] * (10 - len(lines))
    return [line.replace(" ", "").ljust(10, ".") for line in lines]


def sq(r, c):
    return r * 10 + c


def decide(state, seed=0, agent_id=HEURISTIC):
    """What a freshly made agent plays for the seat to act in ``state`` (sees only obs + view)."""
    return agents.runner.decide(agent_id, state, seed=seed)


def name(state, action):
    return state.game.action_to_string(action)


# Printed board facts used below (row 1: 6C 5C 4C 3C 2C AH KH QH TH TS): r1c4 is 2C (its twin is
# r3c6), r1c5 is AH, r1c8 is TH; 5D lies on r2c5 and r8c9.


def test_completes_a_sequence_with_the_natural_card():
    game = SequenceGame()
    state = from_text(game, rows(".", "AAAA......", ".", "..BB......"), hands={0: ["5D", "6D", "3S", "2C", "9H", "KS", "JD"]})
    action = decide(state)
    assert action == PLACE + sq(1, 4), name(state, action)


def test_completes_a_sequence_with_a_two_eyed_jack_when_no_natural_card_does():
    game = SequenceGame()
    state = from_text(game, rows(".", "AAAA......"), hands={0: ["5D", "6D", "3S", "9H", "KS", "JC"]})
    assert decide(state) == WILD + sq(1, 4)


def test_completes_a_second_sequence_sharing_one_chip_of_the_first():
    game = SequenceGame()
    first = [sq(1, c) for c in range(5)]
    # Through r1c5: r1c4..r1c8 shares one chip (r1c4) with the first sequence, so it completes.
    state = from_text(game, rows(".", "AAAAA.AAA."), hands={0: ["5D", "6D", "3S", "AH", "KS"]},
                      sequences={0: [first]})
    assert decide(state) == PLACE + sq(1, 5)
    values = evaluate_moves(state.player_view(0), target=2)
    assert values["complete"][sq(1, 5)] == 1


def test_a_window_sharing_two_chips_with_a_sequence_is_not_counted():
    game = SequenceGame()
    first = [sq(1, c) for c in range(5)]
    state = from_text(game, rows(".", "AAAAA....."), sequences={0: [first]})
    values = evaluate_moves(state.player_view(0), target=2)
    assert values["complete"][sq(1, 5)] == 0  # r1c1..r1c5 would share four chips


@pytest.mark.parametrize("num_teams,threat_team", [(2, "B"), (3, "B"), (3, "C")])
def test_blocks_an_opposing_four_in_a_row_with_a_natural_card_not_a_jack(num_teams, threat_team):
    game = SequenceGame(num_teams=num_teams)
    board = rows(".", threat_team * 4, ".", "...A......")
    state = from_text(game, board, hands={0: ["5D", "6D", "2C", "9H", "KS", "JD", "JH"]})
    action = decide(state)
    assert action == PLACE + sq(1, 4), name(state, action)


def test_blocks_a_four_with_a_two_eyed_jack_when_there_is_no_natural_block():
    game = SequenceGame()
    state = from_text(game, rows(".", "BBBB......", ".", "...A......"), hands={0: ["5D", "6D", "9H", "KS", "JD"]})
    assert decide(state) == WILD + sq(1, 4)


def test_removes_a_threatening_chip_with_a_one_eyed_jack():
    game = SequenceGame()
    state = from_text(game, rows(".", "BBBB......", ".", "...A......"), hands={0: ["5D", "6D", "9H", "KS", "JH"]})
    action = decide(state)
    assert action in [REMOVE + sq(1, c) for c in range(4)], name(state, action)


def test_keeps_one_eyed_jack_when_nothing_is_threatened():
    game = SequenceGame()
    state = from_text(game, rows(".", "B.B.......", "....B....."), hands={0: ["5D", "6D", "9H", "KS", "JH"]})
    action = decide(state)
    assert action < WILD, name(state, action)


def test_keeps_two_eyed_jack_for_ordinary_moves():
    game = SequenceGame()
    state = from_text(game, rows(".", "A.A......."), hands={0: ["5D", "6D", "9H", "KS", "JD", "JC"]})
    action = decide(state)
    assert action < WILD, name(state, action)


def test_extends_own_line_rather_than_playing_elsewhere():
    game = SequenceGame()
    # A, A, A on r1c0..r1c2: 3C on r1c3 makes four; 5D (r2c5 / r8c9) does far less.
    state = from_text(game, rows(".", "AAA......."), hands={0: ["5D", "3C"]})
    assert decide(state) == PLACE + sq(1, 3)


def test_exchanges_a_dead_card_first():
    game = SequenceGame()
    board = rows(".", "AAAA......", ".....B....", ".", ".", ".", ".", ".", ".........A")  # both 5D squares
    state = from_text(game, board, hands={0: ["2C", "5D", "6D"]})
    assert decide(state) == DEAD + NON_JACK_INDEX[kind("5D")]
    state.apply_action(DEAD + NON_JACK_INDEX[kind("5D")])
    assert decide(state) == PLACE + sq(1, 4)  # then it wins with the 2C, same turn


def test_choice_ignores_other_hands_and_deck_order():
    """Rebuild each position with other seats' hands and the deck resampled: same choice."""
    checked = 0
    for config in ({}, {"players_per_team": 2}, {"num_teams": 3}):
        game = SequenceGame(**config)
        for seed in range(4):
            state = game.new_initial_state(seed)
            rng = random.Random(seed)
            for _ in range(10 + 7 * seed):
                if state.is_terminal():
                    break
                legal = state.legal_actions()
                state.apply_action(legal[rng.randrange(len(legal))])
            if state.is_terminal():
                continue
            seat = state.current_player()
            other = game.state_from_view(state.player_view(seat), random.Random(1000 + seed))
            hidden_before = [h for p, h in enumerate(state.hands) if p != seat] + [state.deck]
            hidden_after = [h for p, h in enumerate(other.hands) if p != seat] + [other.deck]
            assert hidden_before != hidden_after  # the hidden part really changed
            assert sorted(other.hands[seat]) == sorted(state.hands[seat])
            assert decide(state, seed=seed) == decide(other, seed=seed)
            # Another shuffle of the clone's deck alone.
            shuffled = state.clone()
            random.Random(seed).shuffle(shuffled.deck)
            assert decide(shuffled, seed=seed) == decide(state, seed=seed)
            checked += 1
    assert checked >= 10


def test_same_seed_plays_the_same_game():
    def run():
        seats = [agents.make(HEURISTIC, seed=3), agents.make("sequence_v0/heuristic-noisy-v1", seed=4)]
        return agents.play_game("sequence_v0", seats, seed=11, record_actions=True).actions

    assert run() == run()


def test_decisions_are_fast():
    import time

    game = SequenceGame(num_teams=3)
    bot = agents.make(HEURISTIC, seed=0)
    bot.reset(0, game)
    state = game.new_initial_state(5)
    rng = random.Random(5)
    for _ in range(60):
        legal = state.legal_actions()
        state.apply_action(legal[rng.randrange(len(legal))])
    seat = state.current_player()
    observation = {"observation": game.observe(state, seat), "action_mask": state.legal_mask()}
    view = state.player_view(seat)
    bot.reset(seat, game)
    start = time.perf_counter()
    for _ in range(200):
        bot.act(observation, view)
    per_move = (time.perf_counter() - start) / 200
    assert per_move < 5e-3, f"{per_move * 1e3:.2f} ms per decision"


@pytest.mark.parametrize(
    "config,games,minimum",
    [({}, 40, 0.8), ({"players_per_team": 2}, 40, 0.8), ({"num_teams": 3}, 30, 0.6)],
    ids=["2p", "2x2", "3teams"],
)
def test_beats_random_players_with_seats_rotated(config, games, minimum):
    game = SequenceGame(**config)
    teams, players = game.num_teams, game.num_players
    wins = 0
    for g in range(games):
        hero = g % teams  # the heuristic's team side rotates every game
        seats = [
            agents.make(HEURISTIC if s % teams == hero else "sequence_v0/random-v0", seed=1000 * g + s)
            for s in range(players)
        ]
        record = agents.play_game("sequence_v0", seats, seed=g // teams, config=config)
        wins += record.returns[hero] > 0
    assert wins / games >= minimum, f"{wins}/{games}"
