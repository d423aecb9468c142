"""Turn a game record into pictures and a transcript.

The record is replayed exactly (:func:`agents.records.replay`, refusing any move that does not
replay); frames come from the environment's ``render_mode="rgb_array"`` pictures. A long game is
thinned to at most ``max_frames`` frames, always keeping the first and the last position.
"""

from __future__ import annotations

import pathlib
from typing import Any

import numpy as np

from agents.records import Record, replay


def transcript(record: Record) -> str:
    """A readable, line-per-move account of a record (names as recorded)."""
    lines = [f"{record.game} (version {record.game_version}), config {record.config}, seed {record.seed}",
             "seats: " + ", ".join(f"player_{i} {who}" for i, who in enumerate(record.seats))]
    for i, move in enumerate(record.moves, 1):
        lines.append(f"{i:>5}. player_{move.seat}: {move.name}")
    if record.result is None:
        lines.append("result: not finished")
    else:
        res = record.result
        how = "truncated" if res["truncated"] else "over" if res["over"] else "not finished"
        lines.append(f"result ({how}): " + ", ".join(f"player_{i} {r:+g}" for i, r in enumerate(res["returns"])))
    return "\n".join(lines) + "\n"


def frames(record: Record, max_frames: int = 200) -> list[np.ndarray]:
    """rgb_array pictures of the replayed game (thinned evenly to at most ``max_frames``)."""
    total = len(record.moves)
    keep = set(np.linspace(0, total, num=min(max_frames, total + 1)).round().astype(int).tolist())
    keep.add(total)
    pictures: list[np.ndarray] = []

    def grab(i: int, move: Any, env) -> None:
        if i in keep:
            pictures.append(env.render())

    from agents.records import make_env

    first = make_env(record, render_mode="rgb_array")
    pictures.append(first.render())
    replay(record, on_move=grab, render_mode="rgb_array")
    return pictures


def write_gif(record: Record, path: str | pathlib.Path, max_frames: int = 200, fps: float = 4.0,
              scale: float = 1.0, last_frame_s: float = 2.0) -> pathlib.Path:
    from PIL import Image

    images = [Image.fromarray(f) for f in frames(record, max_frames)]
    if scale != 1.0:
        images = [im.resize((max(1, int(im.width * scale)), max(1, int(im.height * scale)))) for im in images]
    size = (max(im.width for im in images), max(im.height for im in images))
    padded = []
    for im in images:
        if im.size != size:
            canvas = Image.new("RGB", size, "white")
            canvas.paste(im, (0, 0))
            im = canvas
        padded.append(im.convert("P", palette=Image.ADAPTIVE, colors=64))
    durations = [int(1000 / fps)] * len(padded)
    durations[-1] = int(last_frame_s * 1000)
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    padded[0].save(path, save_all=True, append_images=padded[1:], duration=durations, loop=0, optimize=True)
    return path


def write_png(record: Record, path: str | pathlib.Path, scale: float = 1.0) -> pathlib.Path:
    """The final position of a record as a PNG."""
    from PIL import Image

    env = replay(record, render_mode="rgb_array")
    im = Image.fromarray(env.render())
    if scale != 1.0:
        im = im.resize((max(1, int(im.width * scale)), max(1, int(im.height * scale))))
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    im.save(path, optimize=True)
    return path
