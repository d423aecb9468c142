"""Loading saved states: examples of impossible states, each refused with a
``StateError`` naming the field, and the possible ones (found in seeded play) still accepted."""

from __future__ import annotations

import copy
import json
import random

import numpy as np
import pytest

import envs
from envs.core import StateError
from envs.core.fields import (
    BitSet,
    Bool,
    Choice,
    Int,
    List,
    Optional,
    Record,
    Rng,
    Str,
    Tagged,
    Tuple,
)
from envs.core.fields import Field as F
from envs.pans_trial import rules as PR


def saved_after(name: str, actions: int, seed: int = 3, **config) -> dict:
    """A JSON round-tripped save of a seeded random game after ``actions`` actions (or its end)."""
    game = envs.make_game(name, **config)
    state = game.new_initial_state(seed)
    rng = random.Random(seed)
    for _ in range(actions):
        if state.is_terminal():
            break
        legal = state.legal_actions()
        state.apply_action(legal[rng.randrange(len(legal))])
    return json.loads(json.dumps(game.save(state)))


def find(name: str, wanted, seeds=range(200), **config):
    """The first state of seeded random play (any seed) for which ``wanted(state)`` holds."""
    game = envs.make_game(name, **config)
    for seed in seeds:
        state = game.new_initial_state(seed)
        rng = random.Random(seed)
        while not state.is_terminal():
            legal = state.legal_actions()
            state.apply_action(legal[rng.randrange(len(legal))])
            if wanted(state):
                return game, state
    raise AssertionError("no such state in seeded play")


def refused(name: str, saved: dict, field: str, **config) -> str:
    game = envs.make_game(name, **config)
    with pytest.raises(StateError) as info:
        game.load(saved)
    assert field in str(info.value), f"the error should name {field!r}: {info.value}"
    return str(info.value)


def edit(saved: dict, **changes) -> dict:
    out = copy.deepcopy(saved)
    out["state"].update(changes)
    return out


# ------------------------------------------------------------------------------------------------
# Impossible states, one by one
def test_dojo_huge_step_count_is_refused_instead_of_hanging():
    saved = saved_after("dojo_v0", 12)
    refused("dojo_v0", edit(saved, mv_steps=10**9), "mv_steps")


def test_dojo_roll_out_of_range_is_refused():
    saved = saved_after("dojo_v0", 12)
    refused("dojo_v0", edit(saved, roll=1000), "roll")


def test_sequence_player_true_is_not_a_seat():
    saved = saved_after("sequence_v0", 6)
    refused("sequence_v0", edit(saved, player=True), "player")


def test_pans_trial_first_request_out_of_range():
    saved = saved_after("pans_trial_v0", 40)
    refused("pans_trial_v0", edit(saved, first_request=999), "first_request")


def test_pans_trial_impossible_positions_are_refused():
    saved = saved_after("pans_trial_v0", 3)  # still drafting: both players on their start squares
    assert saved["state"]["stage"] == "draft"
    moved = edit(saved, pos=[saved["state"]["pos"][1], saved["state"]["pos"][1]])  # on one square
    refused("pans_trial_v0", moved, "pos")
    refused("pans_trial_v0", edit(saved, pos=[36, 2]), "pos")  # off the board
    holes = copy.deepcopy(saved["state"]["board"])
    card = holes[5]
    holes[5] = -1  # a hole before anything moved (the card parked in the pool: all cards counted)
    refused("pans_trial_v0", edit(saved, board=holes, pool=saved["state"]["pool"] + [card]), "board")


def test_pans_trial_positions_reached_in_play_stay_loadable():
    # A Wall under a player (its role changed, or it lay there from the start), a hole under a
    # player (after picking up a card) and both on one square (after a combat) all happen in
    # legal play (RULES.md: "a player can stand on a Wall card after its role changed"), so
    # refusing them would refuse real games.
    def on_wall(s):
        return s.stage != PR.DRAFT and any(s.board[s.pos[p]] >= 0 and s.is_wall(s.pos[p]) for p in (0, 1))

    def on_hole(s):
        return s.stage == PR.TRAVERSE and s.board[s.pos[s.actor]] < 0

    def together(s):
        return s.stage == PR.TRAVERSE and s.pos[0] == s.pos[1]

    for wanted in (on_wall, on_hole, together):
        game, state = find("pans_trial_v0", wanted)
        loaded = game.load(json.loads(json.dumps(game.save(state))))
        assert loaded.to_dict() == state.to_dict()


def test_wizard_arena_positions():
    saved = saved_after("wizard_arena_v0", 5)
    state = saved["state"]
    terrain = state["terrain"]
    size = len(terrain)
    blocked = next(r * size + c for r in range(size) for c in range(size) if terrain[r][c] != ".")
    refused("wizard_arena_v0", edit(saved, gary=blocked), "Gary")  # Gary on a mountain or forest
    pos = list(state["pos"])
    pos[1] = pos[0]
    refused("wizard_arena_v0", edit(saved, pos=pos), "share")  # two living bots on one cell
    pos = list(state["pos"])
    pos[0] = blocked
    refused("wizard_arena_v0", edit(saved, pos=pos), "obstacle")


def test_wizard_arena_gary_on_a_bot_is_possible_and_loads():
    # RULES.md: "Gary and gravestones never block, so a bot may stand on Gary's cell".
    game, state = find("wizard_arena_v0", lambda s: s.occ[s.gary] >= 0)
    assert game.load(json.loads(json.dumps(game.save(state)))).to_dict() == state.to_dict()


def test_sequence_winner_must_exist_and_hold_its_sequences():
    saved = saved_after("sequence_v0", 6)
    refused("sequence_v0", edit(saved, winner=5), "winner")  # no team 5 in a two-team game
    refused("sequence_v0", edit(saved, winner=0), "winner")  # team 0 has no sequence yet
    refused("sequence_v0", edit(saved, winner=-1), "winner")


def test_sequence_not_both_won_and_drawn():
    game, state = find("sequence_v0", lambda s: s.winner is not None)
    saved = json.loads(json.dumps(game.save(state)))
    game.load(saved)  # the real finished game loads
    refused("sequence_v0", edit(saved, drawn_game=True), "drawn_game")


def test_booleans_are_booleans():
    saved = saved_after("sequence_v0", 6)
    message = refused("sequence_v0", edit(saved, drawn_game="no"), "drawn_game")
    assert "'no'" in message
    refused("sequence_v0", edit(saved, dead_used=0), "dead_used")
    refused("pans_trial_v0", edit(saved_after("pans_trial_v0", 30), revealed=1), "revealed")


def test_a_huge_list_is_refused_by_its_length():
    for name, key in (("sequence_v0", "deck"), ("pans_trial_v0", "pool"), ("dojo_v0", "discard"),
                      ("wizard_arena_v0", "met")):
        saved = saved_after(name, 10)
        message = refused(name, edit(saved, **{key: list(range(200_000))}), key)
        assert "length 200000" in message and "[0, 1, 2" not in message  # described, not printed


def test_rng_words_config_and_card_ids():
    for name in envs.NAMES:
        saved = saved_after(name, 8)
        bad = copy.deepcopy(saved)
        bad["state"]["rng"][1][5] = -3
        refused(name, bad, "rng")
        bad["state"]["rng"][1][5] = 2**40
        refused(name, bad, "rng")
        bad = copy.deepcopy(saved)
        bad["state"]["rng"][1] = [0] * 625
        refused(name, bad, "rng")
        with pytest.raises(StateError, match="config must be a dict"):
            envs.make_game(name).load(dict(saved, config=None))
        with pytest.raises(StateError, match="version"):
            envs.make_game(name).load(dict(saved, version=False))
    saved = saved_after("sequence_v0", 4)
    hands = copy.deepcopy(saved["state"]["hands"])
    hands[0][0] = -1
    refused("sequence_v0", edit(saved, hands=hands), "hands[0][0]")
    saved = saved_after("pans_trial_v0", 30)
    refused("pans_trial_v0", edit(saved, pool=[-1]), "pool[0]")


def test_config_values_must_match_in_type():
    saved = saved_after("dojo_v0", 4)
    other = copy.deepcopy(saved)
    other["config"]["kiai_bonus"] = 2.0  # equal to 2, but not the same config
    with pytest.raises(StateError, match="different config"):
        envs.make_game("dojo_v0").load(other)


def test_a_keyword_the_file_lacks_reads_as_this_versions_default():
    # A file written before a keyword existed has no entry for it; the keyword's default plays as
    # the game did before it, so the state loads.
    saved = saved_after("dojo_v0", 20)
    older = copy.deepcopy(saved)
    del older["config"]["kiai_bonus"], older["config"]["failed_exam_cost"]
    game = envs.make_game("dojo_v0")
    assert game.save(game.load(older)) == saved
    # Lacking a keyword whose value was not the default is a different config, named as such.
    varied = saved_after("dojo_v0", 20, kiai_bonus=1)
    del varied["config"]["kiai_bonus"]
    with pytest.raises(StateError, match=r"different config \(keys differing: \['kiai_bonus'\]\)"):
        envs.make_game("dojo_v0", kiai_bonus=1).load(varied)
    # A keyword this version does not know is never dropped silently.
    unknown = copy.deepcopy(saved)
    unknown["config"]["future_rule"] = False
    with pytest.raises(StateError, match="future_rule"):
        game.load(unknown)


def test_the_environment_resumes_a_state_saved_before_a_keyword_existed():
    saved = saved_after("sequence_v0", 6, seed=5)
    older = copy.deepcopy(saved)
    del older["config"]["layout_seed"]
    other = envs.make("sequence_v0", raw=True)
    other.reset(options={"state": older})
    resumed = other.unwrapped.save_state()
    del resumed["env"]  # the environment's own counters; the game's save is what must come back
    assert resumed == saved
    older["config"]["dead_cards"] = False  # present with another value: refused, naming it
    with pytest.raises(StateError, match=r"keys differing: \['dead_cards'\]"):
        other.reset(options={"state": older})


def test_cards_are_conserved():
    saved = saved_after("sequence_v0", 4)
    deck = saved["state"]["deck"]
    refused("sequence_v0", edit(saved, deck=deck[:-1] + [deck[0]]), "cards not conserved")
    saved = saved_after("dojo_v0", 20)
    deck = saved["state"]["deck"]
    other = next(c for c in range(13) if c != deck[-1])
    refused("dojo_v0", edit(saved, deck=deck[:-1] + [other]), "cards not conserved")
    saved = saved_after("pans_trial_v0", 30)
    board = saved["state"]["board"]
    refused("pans_trial_v0", edit(saved, board=[board[0]] + board[1:-1] + [board[0]]), "cards not conserved")


def test_unknown_and_missing_fields_are_named():
    saved = saved_after("dojo_v0", 4)
    refused("dojo_v0", edit(saved, surprise=1), "surprise")
    gone = copy.deepcopy(saved)
    del gone["state"]["k_wins"]
    refused("dojo_v0", gone, "k_wins")


def test_dojo_phase_needs_its_fields():
    game, state = find("dojo_v0", lambda s: s.main_phase == "tecnica" and not s.pending)
    saved = json.loads(json.dumps(game.save(state)))
    game.load(saved)
    refused("dojo_v0", edit(saved, k_kind=""), "k_att")
    refused("dojo_v0", edit(saved, winner=state.turn_player), "winner")


def finished_save(name: str, config: dict) -> dict:
    """A save of a finished game: seeded random play to the end, or for the Dojo (whose random games
    rarely end) a position in the move phase edited into the Final Exam's win."""
    if name != "dojo_v0":
        game, state = find(name, lambda s: s.is_terminal(), seeds=range(3), **config)
        return json.loads(json.dumps(game.save(state)))
    game, state = find(name, lambda s: s.main_phase == "move" and not s.pending, **config)
    saved = json.loads(json.dumps(game.save(state)))
    winner = state.turn_player
    track = list(saved["state"]["track"])
    track[winner] = 15
    return edit(saved, winner=winner, main_phase="over", actor=-1, track=track)


def test_restoring_a_finished_game_into_a_never_reset_env():
    for name in envs.NAMES:
        config = {"num_bots": 2, "map_size": 8} if name == "wizard_arena_v0" else {}
        saved = {**finished_save(name, config), "env": {"steps": 10, "max_cycles": 1000}}
        state = envs.make_game(name, **config).load(saved)
        assert state.is_terminal()
        env = envs.make(name, raw=True, **config)
        env.reset(options={"state": json.loads(json.dumps(saved))})
        assert all(env.terminations.values())
        assert [env.rewards[a] for a in env.possible_agents] == state.returns()
        for _agent in env.agent_iter():
            obs, _reward, term, _trunc, _info = env.last()
            assert term and not obs["action_mask"].any()
            env.step(None)
        assert not env.agents


# ------------------------------------------------------------------------------------------------
# The field declarations themselves
def test_field_specs_name_the_place_and_refuse_near_misses():
    spec = Record(
        F("n", Int(0, 5)),
        F("flag", Bool()),
        F("kind", Choice(("a", "b"), index=True)),
        F("maybe", Optional(Int(0, 1))),
        F("rows", List(Str(3, "xy", min_len=3), size=2)),
        F("nest", List(List(Int(-1, 9), max_len=3), size=2)),
        F("tag", List(Tagged({"p": Tuple(Int(0, 3)), "s": Tuple(Int(0, 3), BitSet(8))}), max_len=3)),
        F("rng", Rng()),
    )
    rng_json = Rng().dump(random.Random(1))
    good = {"n": 5, "flag": False, "kind": "b", "maybe": None, "rows": ["xyx", "yyy"],
            "nest": [[], [9, -1]], "tag": [["p", 3], ["s", 0, "0xff"]], "rng": rng_json}
    values = spec.load(good)
    assert values["kind"] == 1 and values["tag"][1] == ["s", 0, 255]
    assert spec.dump({**values, "rng": values["rng"]}) == good
    bad_cases = {
        "n": [True, 6, -1, 5.0, "5", None, np.float32(2)],
        "flag": [0, 1, "no", None, np.bool_(True)],
        "kind": ["c", 0, None, ["a"]],
        "maybe": [2, False, "1"],
        "rows": [["xyx"], ["xyz", "yyy"], ["xy", "yyy"], "xyxyyy"],
        "nest": [[[], [1, 2, 3, 4]], [[10], []], [[], [], []]],
        "tag": [[["q", 1]], [["p"]], [["s", 0, "ff"]], [["s", 0, "0x100"]], [[]]],
        "rng": [[3, [1] * 624, None], [2] + rng_json[1:], None],
    }
    for key, values_ in bad_cases.items():
        for value in values_:
            with pytest.raises(StateError, match=rf"state\.{key}"):
                spec.load({**good, key: value})
    assert int(spec.load({**good, "n": np.int64(3)})["n"]) == 3 and type(spec.load({**good, "n": np.int64(3)})["n"]) is int
    with pytest.raises(ValueError, match="bounded"):
        List(Int(0, 1))
