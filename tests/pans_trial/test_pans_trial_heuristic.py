"""Our Pan's Trial heuristic (``pans_trial_v0/heuristic-v1``): legality, judgement, no peeking, strength."""

from __future__ import annotations

import random

import numpy as np

import pytest
from pt_builder import build, card

import agents
import envs.pans_trial_v0 as pt
from agents.pans_trial import _clone, h_evaluate
from agents.runner import play_game
from envs.pans_trial import rules as R

AGENT = "pans_trial_v0/heuristic-v1"
UP, RIGHT, DOWN, LEFT = 0, 1, 2, 3

EMPTY = """
. . . . . .
. . . . . .
. . . . . .
. . . . . .
. . . . . .
. . . . . .
"""


def decide(state, seed=0, agent_id=AGENT):
    """What a fresh agent plays for the seat to act in ``state``; it sees only observation + view."""
    return agents.runner.decide(agent_id, state, seed=seed)


# ------------------------------------------------------------------------------------------------
# Registration, legality, internals
NOISY = "pans_trial_v0/heuristic-noisy-v1"


def test_registered():
    for agent_id in (AGENT, NOISY):
        assert agent_id in agents.available("pans_trial_v0")
        assert agents.describe(agent_id)


@pytest.mark.parametrize("family", sorted(pt.Game.config_families))
def test_plays_whole_games_legally(family):
    config = pt.Game.config_families[family]
    for seed in range(3):
        seats = [agents.make(AGENT, seed=seed), agents.make("pans_trial_v0/random-v0", seed=seed)]
        if seed % 2:
            seats.reverse()
        record = play_game("pans_trial_v0", seats, seed=seed, config=config)  # strict env: raises on illegal
        assert record.length > 0
    # against itself and its noisy sibling
    record = play_game("pans_trial_v0", [agents.make(AGENT, seed=1), agents.make(NOISY, seed=2)], seed=7,
                       config=config)
    assert record.length > 0


def test_own_legal_actions_and_clone_match_the_engine():
    """The engine's plain-Python move generator and the search's light clone agree with the mask
    and the checked path everywhere."""
    game = pt.Game()
    rng = random.Random(5)
    stages = set()
    for seed in range(30):
        s = game.new_initial_state(seed)
        while not s.is_terminal():
            assert sorted(s.legal_actions()) == np.flatnonzero(s.legal_mask()).tolist(), (
                R.PHASE_NAMES[s.stage], s.to_dict())
            stages.add(s.stage)
            a = rng.choice(sorted(s.legal_actions()))
            c = _clone(s)
            c.apply_unchecked(a)
            s.apply_action(a)
            assert c.to_dict() == {**s.to_dict(), "rng": c.to_dict()["rng"]}
    assert {R.DRAFT, R.TRAVERSE, R.TARGET, R.COMBAT, R.APPEASE, R.REQUEST, R.PLACE} <= stages


# ------------------------------------------------------------------------------------------------
# Judgement in readable positions (default roles: W walls, T traps, B ballista, X weapons)
def test_takes_the_lethal_strike():
    board = """
    .  .  .  .  .  .
    X8 .  .  .  .  .
    .  .  .  .  .  .
    .  .  .  .  .  .
    .  .  .  .  .  .
    .  .  .  .  .  .
    """
    # player_1 has 17 damage, so X9 finishes them; a weapon lies just below, a distraction
    s = build(pt.Game(), board, pos=((0, 0), (0, 1)), hands=("X9", "X10"), damage=("", "T9 T8"))
    for seed in range(3):
        assert decide(s, seed=seed) == R.A_MOVE + RIGHT
    s.apply_action(R.A_MOVE + RIGHT)
    assert decide(s) == R.A_STRIKE + card("X9")


def test_strikes_with_the_card_that_kills():
    s = build(pt.Game(), EMPTY, pos=((0, 0), (0, 1)), hands=("X2 X9", "X10"), damage=("", "T9 T8"))
    s.apply_action(R.A_MOVE + RIGHT)
    assert s.phase == "combat" and s.current_player() == 0
    for seed in range(6):
        assert decide(s, seed=seed) == R.A_STRIKE + card("X9")


def test_avoids_a_lethal_trap():
    board = """
    .  .  .  .  .  .
    .  .  T6 .  .  .
    .  W1 .  T7 .  .
    .  .  .  .  .  .
    .  .  .  .  .  .
    .  .  .  .  .  .
    """
    # 20 damage: both traps would kill; up leads towards nothing, down is safe
    s = build(pt.Game(), board, pos=((2, 2), (5, 5)), damage=("T9 T8 T3", ""))
    for seed in range(3):
        a = decide(s, seed=seed)
        assert a not in (R.A_MOVE + UP, R.A_MOVE + RIGHT)
        assert a == R.A_MOVE + DOWN


def test_prefers_a_weapon_to_a_trap():
    board = """
    .  .  .  .  .  .
    .  .  X7 .  .  .
    .  T5 .  W2 .  .
    .  .  W3 .  .  .
    .  .  .  .  .  .
    .  .  .  .  .  .
    """
    s = build(pt.Game(), board, pos=((2, 2), (5, 5)))
    assert decide(s) == R.A_MOVE + UP


def test_picks_up_a_weapon_when_unarmed_and_the_opponent_is_close():
    board = """
    .  .  .  .  .  .
    .  .  .  .  .  .
    .  .  X9 .  .  .
    .  .  .  .  .  .
    .  .  .  .  .  .
    .  .  .  .  .  .
    """
    # standing on X9, unarmed, an armed opponent two squares away
    s = build(pt.Game(), board, pos=((2, 2), (2, 4)), hands=("", "X5"))
    for seed in range(3):
        assert decide(s, seed=seed) == R.A_INTERACT


def test_does_not_step_next_to_an_armed_opponent_who_would_kill_first():
    board = """
    .  .  .  .  .  .
    .  .  .  .  .  .
    .  .  .  .  .  .
    .  .  .  .  .  .
    .  .  .  .  .  .
    .  .  .  .  .  .
    """
    # 18 damage and armed with X5 only; the opponent holds X8 (lethal for us) two squares to the
    # right: stepping next to them hands them the first, lethal, strike
    s = build(pt.Game(), board, pos=((2, 2), (2, 4)), hands=("X5", "X8"), damage=("T9 T4 T5", ""))
    for seed in range(3):
        a = decide(s, seed=seed)
        assert a != R.A_MOVE + RIGHT
        s2 = s.clone()
        s2.apply_action(a)
        assert abs(s2.pos[0] // 6 - s2.pos[1] // 6) + abs(s2.pos[0] % 6 - s2.pos[1] % 6) > 1


def requests_position(game, hands, damage=("", ""), board=EMPTY, pos=((0, 0), (3, 3))):
    """player_1 submits first (player_0's forced pass ended the phase), then player_0 wins."""
    s = build(game, board, pos=pos, hands=hands, damage=damage, active=0, turns_left=1, forced=(1, 0))
    s.apply_action(R.A_PASS)
    assert s.phase == "appease_first" and s.current_player() == 1
    return s


def test_steal_life_for_the_win():
    # player_0 wins Appeasing with W2; swapping its T12 for the opponent's T1 pushes them to 26
    s = requests_position(pt.Game(), ("W2 X5", "X3 T3"), damage=("T12", "T1 T8 T9"))
    s.apply_action(R.A_APPEASE + card("X3"))
    s.apply_action(R.A_APPEASE + card("W2"))
    assert s.phase == "request_first" and s.current_player() == 0
    assert decide(s) == R.A_REQUEST + R.STEAL_LIFE
    s.apply_action(R.A_REQUEST + R.STEAL_LIFE)
    assert decide(s) == R.A_STEAL_MINE + card("T12")
    s.apply_action(R.A_STEAL_MINE + card("T12"))
    assert decide(s) == R.A_STEAL_THEIRS + card("T1")
    s.apply_action(R.A_STEAL_THEIRS + card("T1"))
    assert s.is_terminal() and s.returns() == [1.0, -1.0]


def test_restructure_turns_its_own_high_cards_into_weapons():
    # player_0 holds the two high diamonds (traps); making diamonds the weapons suit arms it with 23
    # points against an opponent who holds only spades (weapons now, walls or traps after)
    s = requests_position(pt.Game(), ("W2 T12 T11", "X3 X10 X9"))
    s.apply_action(R.A_APPEASE + card("X3"))
    s.apply_action(R.A_APPEASE + card("W2"))
    assert decide(s) == R.A_REQUEST + R.RESTRUCTURE
    s.apply_action(R.A_REQUEST + R.RESTRUCTURE)
    a = decide(s)
    x, y = R.SUIT_PAIRS[a - R.A_RESTRUCTURE]
    assert {x, y} == {1, 3}  # diamonds <-> spades


def test_evaluation_counts_damage_and_weapons():
    game = pt.Game()
    base = build(game, EMPTY, pos=((0, 0), (3, 3)))
    hurt = build(game, EMPTY, pos=((0, 0), (3, 3)), damage=("T5", ""))
    armed = build(game, EMPTY, pos=((0, 0), (3, 3)), hands=("X5", ""))
    assert h_evaluate(hurt, 0) < h_evaluate(base, 0) < h_evaluate(armed, 0)
    assert h_evaluate(hurt, 1) > h_evaluate(base, 1)


# ------------------------------------------------------------------------------------------------
# It reads nothing hidden
def test_draft_choice_ignores_the_secret_omen_order():
    game = pt.Game()
    for seed in range(6):
        s = game.new_initial_state(seed)
        other = s.clone()
        other.omens = list(reversed(s.omens))
        other.suit_role = R.suit_roles_from_omens(other.omens)
        assert other.to_dict() != s.to_dict()
        assert other.player_view(s.actor) == s.player_view(s.actor)
        for agent_seed in range(2):
            assert decide(s, seed=agent_seed) == decide(other, seed=agent_seed)


def test_appeasing_choice_ignores_the_opponents_secret_card():
    game = pt.Game()
    board = """
    .  .  .  .  .  .
    .  .  .  .  .  .
    .  .  .  .  .  .
    .  .  .  .  .  .
    .  .  .  .  .  .
    .  .  .  .  .  .
    """
    s = requests_position(game, ("W2 X5 T9 B4", "X12 T3 W7 B10"), damage=("T4", "T6"), board=board)
    decisions = set()
    states = []
    for their in ("X12", "T3", "W7", "B10"):
        t = s.clone()
        t.apply_action(R.A_APPEASE + card(their))  # player_1 submits first, secretly
        states.append(t)
        assert t.current_player() == 0
    views = [t.player_view(0) for t in states]
    assert all(v == views[0] for v in views)
    assert len({str(t.to_dict()) for t in states}) == 4
    for seed in range(2):
        decisions = {decide(t, seed=seed) for t in states}
        assert len(decisions) == 1


# ------------------------------------------------------------------------------------------------
# Strength (small samples; the 400-game measurements are in the report)
def _match(opponent, games):
    wins = losses = 0
    for seed in range(games):
        me = seed % 2
        seats = [agents.make(AGENT, seed=seed), agents.make(opponent, seed=1000 + seed)]
        if me:
            seats.reverse()
        r = play_game("pans_trial_v0", seats, seed=seed).returns[me]
        wins += r > 0
        losses += r < 0
    return wins, losses


def test_beats_random_play():
    wins, _ = _match("pans_trial_v0/random-v0", 40)
    assert wins >= 36


def test_beats_the_experienced_profile():
    wins, losses = _match("pans_trial_v0/experienced-v1", 40)
    assert wins > losses
