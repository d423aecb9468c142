"""Run by .ci/run inside a throwaway venv holding only the built wheel: the installed package, not the
source tree, is imported, and its shipped checkpoint plays a whole game of legal moves."""

import os
import pathlib
import sys

import agents
from agents.checkpoint import checkpoint_dir

prefix = pathlib.Path(sys.prefix).resolve()
installed = pathlib.Path(agents.__file__).resolve()
assert prefix in installed.parents, f"agents was imported from {installed}, not from the wheel in {prefix}"
assert "TABLETOP_CHECKPOINTS" not in os.environ
assert prefix in checkpoint_dir().resolve().parents, f"checkpoints looked up in {checkpoint_dir()}"
bot = agents.make("sequence_v0/ppo-v1", seed=0)
record = agents.play_game("sequence_v0", [bot, agents.make("sequence_v0/random-v0", seed=1)], seed=2)
assert record.length > 0
print(f"wheel install: {installed.parent} plays sequence_v0/ppo-v1 from {checkpoint_dir()} "
      f"({record.length} legal actions, returns {record.returns})")

# the ladders ship with the package too: every game's is read from the wheel, strongest first
import envs  # noqa: E402
from agents.ladder import ladder, ladder_dir  # noqa: E402

assert prefix in ladder_dir().resolve().parents, f"ladders looked up in {ladder_dir()}"
for game in envs.NAMES:
    rows = ladder(game)
    assert rows and rows[0]["elo"] >= rows[-1]["elo"], game
print("wheel install: ladders " + ", ".join(f"{g} (top {ladder(g)[0]['id']})" for g in envs.NAMES))

# a one-game league of shipped agents, through the installed command
import subprocess  # noqa: E402
import tempfile  # noqa: E402

with tempfile.TemporaryDirectory() as out:
    done = subprocess.run([sys.executable, "-m", "training.league", "--game", "sequence_v0", "--agents", "ppo-v4",
                           "heuristic-v1", "--games", "2", "--workers", "1", "--no-progress", "--out", out],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert (pathlib.Path(out) / "results.json").is_file()
print("wheel install: python -m training.league played sequence_v0/ppo-v4 against heuristic-v1")
