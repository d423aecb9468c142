"""docs/adding_a_game.md is true: following it adds the toy game (tests/toy/) and everything the
document promises then works for it — the generic contract tests, the golden playthrough, agents
found from ``envs.NAMES``, the runner, evaluation, the simulator and the benchmark."""

from __future__ import annotations

import pathlib

import pytest

import agents
import envs
from tests import golden_playthroughs as golden
from tests import test_contract as contract
from tests.toy_game import TOY_ROOT, NimGame

DOC = pathlib.Path(__file__).resolve().parents[1] / "docs" / "adding_a_game.md"
NAME = "nim_v0"


@pytest.fixture
def nim(monkeypatch, tmp_path):
    # Steps 1-4 are the files under tests/toy/ (tests.toy_game puts them on the package paths).
    for path in ("envs/nim/rules.py", "envs/nim/game.py", "envs/nim/RULES.md", "envs/nim_v0.py", "agents/nim.py"):
        assert (TOY_ROOT / path).exists(), path
    # Step 5: add the name to envs.NAMES (importing envs registers it with PettingZoo).
    monkeypatch.setattr(envs, "NAMES", (*envs.NAMES, NAME))
    envs.register_with_pettingzoo(NAME)
    # The generic tests read a game's files below the project root; the toy's root is tests/toy.
    monkeypatch.setattr(contract, "ROOT", TOY_ROOT)
    monkeypatch.setattr(golden, "GOLDEN_DIR", tmp_path)
    # Step 7: importing agents registers every game's players (done again for the added name).
    agents.load_game_agents(NAME)
    return NimGame


def test_the_document_names_the_steps_this_test_follows():
    text = DOC.read_text()
    for phrase in ("envs/<game>/rules.py", "envs/<game>/game.py", "envs/<game>/RULES.md", "envs/<game>_v0.py",
                   "envs.NAMES", "config_families", "agents/<game>.py", "agent.reset(seat, game)",
                   "python -m tests.golden_playthroughs", "apply_unchecked", "end_reason", "Runner",
                   "picture_module", "envs/<game>/picture.py", "action_square", "end_texts"):
        assert phrase in text, phrase


def test_step_5_every_generic_contract_test_runs_for_the_new_game(nim):
    contract.test_declared_facts(NAME)
    contract.test_rules_modules_import_only_stdlib_numpy_and_core(NAME)
    contract.test_bad_config_is_rejected_clearly(NAME)
    contract.test_registry_passes_max_cycles_through(NAME)
    contract.test_core_states_check_contract_on_initial_positions()
    per_family = [
        contract.test_spaces_identical_and_action_names_unique, contract.test_pettingzoo_api,
        contract.test_pettingzoo_seed, contract.test_registry_make, contract.test_fuzz_invariants,
        contract.test_illegal_actions_raise, contract.test_save_restore_continues_identically,
        contract.test_hidden_information_does_not_leak, contract.test_env_save_state_and_reset_from_it,
        contract.test_corrupt_or_mismatched_state_is_rejected, contract.test_raw_env_raises_and_env_penalizes_illegal_moves,
        contract.test_render_modes, contract.test_random_agent_plays_whole_games,
        contract.test_apply_unchecked_follows_the_same_game_as_apply_action,
        contract.test_seat_observation_matches_the_environment,
        contract.test_pettingzoo_state, contract.test_pettingzoo_parallel_api, contract.test_state_sees_what_seats_cannot,
    ]
    assert len(nim.config_families) == 2
    skipped = []
    for family, config in nim.config_families.items():
        for check in per_family:
            try:
                check(NAME, family, config)
            except pytest.skip.Exception as why:  # a check that does not apply; the others still run
                skipped.append((check.__name__, family, str(why)))
    # Nim's first position allows every action, so only the illegal-move check has nothing to try.
    assert {name for name, _, _ in skipped} <= {"test_raw_env_raises_and_env_penalizes_illegal_moves"}


def test_step_6_a_golden_playthrough_is_written_and_replays(nim):
    [path] = golden.main([NAME])
    header, stored = golden.read(path)
    assert header["game"] == NAME and path.name == f"{NAME}-default.txt"
    assert golden.dump(NAME, header["config"], header["seed"], header["actions"])[1] == stored


def test_step_7_agents_are_found_and_handed_the_game(nim):
    assert agents.agent_module(NAME) == "agents.nim"
    assert set(agents.available(NAME)) == {"nim_v0/heuristic-v1", "nim_v0/random-v0"}
    wins = 0
    for seed in range(10):
        seats = [agents.make("nim_v0/heuristic-v1", seed=seed), agents.make("nim_v0/random-v0", seed=seed)]
        record = agents.play_game(NAME, seats, seed=seed, record_actions=True)
        assert record.end_reason == "rules" and record.length == len(record.actions)
        wins += record.returns[0] > 0
    assert wins == 10  # 15 counters: the first player who leaves multiples of four always wins


def test_the_tools_work_at_once(nim, tmp_path):
    from benchmarks import run as bench
    from tools import simulate
    from training.league import matches

    report = matches.evaluate(NAME, [("nim_v0/heuristic-v1", "nim_v0/random-v0")], games=4, progress=False)
    assert report["games_per_lineup"] == [4] and report["end_reasons"] == {"rules": 4}
    result = simulate.main([NAME, "--games", "3", "--agents", "random", "--variants", "all",
                            "--out", str(tmp_path / "sim.png"), "--no-progress"])
    assert [v["label"] for v in result["variants"]] == ["heap 21"]
    timing = bench.run([NAME], seconds=0.02, repeats=1, progress=False)
    assert [row["config"] for row in timing["results"]] == ["default"]
