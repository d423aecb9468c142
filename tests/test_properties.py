"""The game-properties table: every game's declared type is held to what its code does, and the
generated page (docs/reference/properties.md) shows the declarations as they stand."""

from __future__ import annotations

import json
import pathlib

import pytest

import agents
import envs
from envs.core.game import TURN_KINDS
from envs.provenance import check_provenance
from tools import properties

ROOT = pathlib.Path(__file__).resolve().parents[1]
FAMILIES = [(name, family, config) for name in envs.NAMES
            for family, config in envs.game_class(name).config_families.items()]
IDS = [f"{name}-{family}" for name, family, _ in FAMILIES]
#: Random games per family for the zero-sum and team checks, and a cycle cap that keeps Dojo's
#: (which random play rarely finishes) short; truncated games count too (their payout must obey).
FUZZ_GAMES = 4
FUZZ_CAP = {"dojo_v0": 60}


def _random_returns(name, config):
    game = envs.make_game(name, **config)
    table = dict(config, **({"max_cycles": FUZZ_CAP[name]} if name in FUZZ_CAP else {}))
    out = []
    for seed in range(FUZZ_GAMES):
        seats = [agents.make(f"{name}/random-v0", seed=seed * 100 + s) for s in range(game.num_players)]
        out.append(agents.play_game(name, seats, seed=seed, config=table))
    return game, out


@pytest.mark.parametrize("name, family, config", FAMILIES, ids=IDS)
def test_declared_types_are_well_formed(name, family, config):
    game = envs.make_game(name, **config)
    assert game.turn_structure and set(game.turn_structure) <= set(TURN_KINDS), game.turn_structure
    assert len(set(game.turn_structure)) == len(game.turn_structure)
    assert isinstance(game.chance, bool) and isinstance(game.zero_sum, bool)
    assert isinstance(game.reward_structure, str) and game.reward_structure


@pytest.mark.parametrize("name, family, config", FAMILIES, ids=IDS)
def test_zero_sum_is_declared_exactly_when_returns_sum_to_zero_and_teams_share_a_result(name, family, config):
    game, records = _random_returns(name, config)
    sums = [sum(r.returns) for r in records]
    assert game.zero_sum == all(abs(s) < 1e-9 for s in sums), (game.zero_sum, sums)
    assert sorted({game.team_of(s) for s in range(game.num_players)}) == list(range(game.num_teams))
    for record in records:
        for team in range(game.num_teams):
            assert len({record.returns[s] for s in game.team_seats(team)}) == 1, (team, record.returns)


def test_three_team_sequence_is_the_general_sum_case():
    """Three teams pay +1/-1/-1, two teams and every other game sum to zero."""
    assert not envs.make_game("sequence_v0", num_teams=3).zero_sum
    assert envs.make_game("sequence_v0", num_teams=2, players_per_team=2).zero_sum
    assert all(envs.make_game(n).zero_sum for n in envs.NAMES if n != "sequence_v0")


@pytest.mark.parametrize("name", envs.NAMES)
def test_chance_is_declared_exactly_when_deals_differ_across_seeds(name):
    game = envs.make_game(name)

    def deal(seed):
        return json.dumps({k: v for k, v in game.new_initial_state(seed).to_dict().items() if k != "rng"},
                          sort_keys=True)

    assert deal(3) == deal(3)  # a seed is a deal
    assert game.chance == (len({deal(seed) for seed in range(4)}) > 1)


@pytest.mark.parametrize("name, family, config", FAMILIES, ids=IDS)
def test_the_declared_row_reads_the_game(name, family, config):
    game = envs.make_game(name, **config)
    row = properties.declared_row(name, family, config)
    assert (row["players"], row["teams"]) == (game.num_players, game.num_teams)
    assert (row["observation_size"], row["actions"]) == (game.observation_shape[0], game.num_actions)
    assert row["information"] == ("imperfect" if game.hidden_information else "perfect")
    assert row["zero_sum"] == game.zero_sum and row["chance"] == game.chance


def test_the_measurement_counts_lengths_and_legal_actions(tmp_path):
    """The branching factor is the mean legal-action count over decisions, checked by a loop of its own."""
    measured = properties.measure("pans_trial_v0", {}, "random-v0", games=2, seed=5)
    legal, lengths = [], []
    for deal in (5, 6):
        game = envs.make_game("pans_trial_v0")
        seats = [agents.make("pans_trial_v0/random-v0", seed=deal * 1000 + s) for s in range(2)]
        record = agents.play_game("pans_trial_v0", seats, seed=deal, record_actions=True)
        state = game.new_initial_state(deal)
        for action in record.actions:
            legal.append(len(state.legal_actions()))
            state.apply_action(action)
        lengths.append(record.length)
    assert measured["decisions"] == len(legal) == sum(lengths)
    assert measured["mean_branching"] == pytest.approx(sum(legal) / len(legal))
    assert measured["mean_length"] == pytest.approx(sum(lengths) / 2) and measured["truncated"] == 0


def test_the_command_writes_the_page_and_the_json(tmp_path, capsys):
    report = properties.main(["--games", "pans_trial_v0", "--random-games", "1", "--heuristic-games", "1",
                              "--out", str(tmp_path), "--no-progress"])
    saved = json.loads((tmp_path / "properties.json").read_text())
    check_provenance(saved["provenance"])
    assert saved["provenance"]["environments"] == {"pans_trial_v0": 0}
    assert [r["family"] for r in saved["rows"]] == list(envs.game_class("pans_trial_v0").config_families)
    assert saved == json.loads(json.dumps(report))
    page = (tmp_path / "properties.md").read_text()
    assert page.startswith("# Game properties\n") and page.count("| `pans_trial_v0` |") == 3 + 3 * 2
    with pytest.raises(SystemExit):
        properties.main(["--games", "chess_v0", "--out", str(tmp_path)])


def test_the_committed_page_shows_the_current_declarations():
    """docs/reference/properties.md is generated; its declared table must match the code (rerun
    ``python -m tools.properties`` after changing a declaration or a config family)."""
    page = (ROOT / "docs" / "reference" / "properties.md").read_text()
    committed = json.loads((ROOT / "docs" / "reference" / "properties.json").read_text())
    rows = [properties.declared_row(name, family, config) for name, family, config in FAMILIES]
    fresh = properties.to_markdown({**committed, "rows": [dict(r, measured={}) for r in rows]})
    declared = fresh.split("## Declared")[1].split("## Measured")[0]
    assert declared in page
    assert [{k: v for k, v in r.items() if k != "measured"} for r in committed["rows"]] == rows
