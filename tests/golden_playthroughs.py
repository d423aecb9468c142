"""Golden playthroughs: stored action sequences replayed and compared line by line with a readable dump.

    python -m tests.golden_playthroughs                 # regenerate every file in tests/golden/
    python -m tests.golden_playthroughs dojo_v0         # regenerate one game's file

Each file records a game, its config and seed, the actions taken (seeded random legal play), and after
every action the action's name, the seat that acted, the phase and the full text rendering. A rules
change that alters any position shows up as a readable diff; if the change is intended, regenerate and
review the diff in the commit.
"""

from __future__ import annotations

import json
import pathlib
import random

import envs

GOLDEN_DIR = pathlib.Path(__file__).resolve().parent / "golden"
ACTIONS = 60
SEED = 2024


def dump(name: str, config: dict, seed: int, actions: list[int] | None = None) -> tuple[list[int], str]:
    """Play (or replay) a game and return the actions and the readable dump."""
    game = envs.make_game(name, **config)
    state = game.new_initial_state(seed)
    rng = random.Random(seed)
    chosen: list[int] = []
    lines = [f"# {name} config={json.dumps(game.config, sort_keys=True)} seed={seed}", "", "## initial", str(state)]
    steps = len(actions) if actions is not None else ACTIONS
    for i in range(steps):
        if state.is_terminal():
            break
        if actions is not None:
            action = actions[i]
        else:
            legal = state.legal_actions()
            action = legal[rng.randrange(len(legal))]
        player = state.current_player()
        state.apply_action(action)
        chosen.append(action)
        lines += ["", f"## {i + 1}: player_{player} {game.action_to_string(action)} -> phase {state.phase!r}", str(state)]
    lines += ["", f"## returns {state.returns()} terminal={state.is_terminal()}"]
    return chosen, "\n".join(lines) + "\n"


def path_for(name: str, family: str) -> pathlib.Path:
    return GOLDEN_DIR / f"{name}-{family}.txt"


def first_family(name: str) -> tuple[str, dict]:
    configs = envs.game_class(name).config_families
    family = next(iter(configs))
    return family, configs[family]


def write(name: str) -> pathlib.Path:
    family, config = first_family(name)
    actions, text = dump(name, config, SEED)
    path = path_for(name, family)
    header = json.dumps({"game": name, "family": family, "config": config, "seed": SEED, "actions": actions})
    path.write_text(header + "\n" + text)
    return path


def read(path: pathlib.Path) -> tuple[dict, str]:
    header, text = path.read_text().split("\n", 1)
    return json.loads(header), text


def main(argv: list[str] | None = None) -> list[pathlib.Path]:
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m tests.golden_playthroughs",
        description="Regenerate the golden playthrough files in tests/golden/ (one per game: its first config "
        f"family, seed {SEED}, up to {ACTIONS} seeded random legal actions). Review the diff before committing.",
    )
    parser.add_argument("games", nargs="*", metavar="GAME",
                        help=f"games to regenerate, from {list(envs.NAMES)} (default: every game)")
    names = parser.parse_args(argv).games or list(envs.NAMES)
    unknown = sorted(set(names) - set(envs.NAMES))
    if unknown:
        parser.error(f"unknown games {unknown}; choose from {list(envs.NAMES)}")
    GOLDEN_DIR.mkdir(exist_ok=True)
    written = []
    for game_name in names:
        written.append(write(game_name))
        print("wrote", written[-1])
    return written


if __name__ == "__main__":
    main()
