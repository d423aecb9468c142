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
