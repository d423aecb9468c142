"""Turn a game record into pictures and a transcript.

The record is replayed exactly (:func:`agents.records.replay`, refusing any move that does not
replay); frames come from the environment's ``render_mode="rgb_array"`` pictures. A long game is
thinned to at most ``max_frames`` frames, always keeping the first and the last position. Every
frame gets a caption below the board: the game's ``image_legend``, the move just played, and on
the last frame the result and how the game ended (the game's ``end_texts``).
"""

from __future__ import annotations

import pathlib
from typing import Any

import numpy as np

from agents.records import Record, replay
from envs.provenance import image_metadata, png_info
from play.story import plain_words, score_text


def transcript(record: Record) -> str:
    """A readable, line-per-move account of a record (names as recorded, in plain words)."""
    lines = [f"{record.game} (version {record.game_version}), config {record.config}, seed {record.seed}",
             "seats: " + ", ".join(f"player_{i} {who}" for i, who in enumerate(record.seats))]
    for i, move in enumerate(record.moves, 1):
        lines.append(f"{i:>5}. player_{move.seat}: {plain_words(move.name)}")
    if record.result is None:
        lines.append("result: not finished")
    else:
        res = record.result
        how = "truncated" if res["truncated"] else "over" if res["over"] else "not finished"
        lines.append(f"result ({how}): " + ", ".join(f"player_{i} {score_text(r)}" for i, r in enumerate(res["returns"])))
    return "\n".join(lines) + "\n"


def result_text(record: Record, env) -> str:
    """Who won and how the game ended, for the last frame (``env``: the replayed environment)."""
    result = record.result
    if result is None or not result["over"]:
        return f"not finished after {len(record.moves)} moves"
    returns = result["returns"]
    scores = ", ".join(f"player_{i} {score_text(r)}" for i, r in enumerate(returns))
    if result["truncated"]:
        return f"cut off at the move limit after {len(record.moves)} moves, nobody wins ({scores})"
    best = max(returns)
    winners = [i for i, r in enumerate(returns) if r == best]
    head = "a draw" if len(winners) == len(returns) else " and ".join(f"player_{i}" for i in winners) + (
        " win" if len(winners) > 1 else " wins")
    game = env.unwrapped.engine_state.game
    why = game.end_texts.get(env.unwrapped.engine_state.end_reason() or "", "")
    return f"{head} ({scores})" + (f": {why.format(**game.config)}" if why else "")


def caption(image: np.ndarray, lines: list[str], min_width: int = 360) -> np.ndarray:
    """``image`` with ``lines`` written below it on white (wrapped; the image widened to ``min_width``)."""
    from PIL import Image, ImageDraw, ImageFont

    font = ImageFont.load_default()
    width = max(image.shape[1], min_width)
    probe = ImageDraw.Draw(Image.new("RGB", (1, 1)))
    wrapped = []
    for line in lines:  # greedy wrap by measured width (the default font is proportional)
        current = ""
        for word in line.split():
            trial = f"{current} {word}".strip()
            if current and probe.textlength(trial, font=font) > width - 8:
                wrapped.append(current)
                trial = word
            current = trial
        wrapped.append(current)
    line_h = int(font.getbbox("Ag")[3]) + 4
    canvas = Image.new("RGB", (width, image.shape[0] + 6 + line_h * len(wrapped)), "white")
    canvas.paste(Image.fromarray(image), (0, 0))
    draw = ImageDraw.Draw(canvas)
    for k, line in enumerate(wrapped):
        draw.text((4, image.shape[0] + 4 + k * line_h), line, fill=(0, 0, 0), font=font)
    return np.asarray(canvas, dtype=np.uint8)


def frames(record: Record, max_frames: int = 200, captions: bool = True) -> list[np.ndarray]:
    """rgb_array pictures of the replayed game (thinned evenly to at most ``max_frames``), each with
    its caption (legend, last move, and the result on the last) unless ``captions`` is False."""
    total = len(record.moves)
    keep = set(np.linspace(0, total, num=min(max_frames, total + 1)).round().astype(int).tolist())
    keep.add(total)
    pictures: list[tuple[np.ndarray, str]] = []

    def grab(i: int, move: Any, env) -> None:
        if i in keep:
            pictures.append((env.render(), f"move {i} of {total}: player_{move.seat}: {move.name}"))

    from agents.records import make_env

    first = make_env(record, render_mode="rgb_array")
    pictures.append((first.render(), f"start ({total} moves)"))
    env = replay(record, on_move=grab, render_mode="rgb_array")
    if not captions:
        return [image for image, _ in pictures]
    legend = env.unwrapped.engine_state.game.image_legend
    out = []
    for k, (image, line) in enumerate(pictures):
        lines = [legend] if legend else []
        lines.append(line)
        if k == len(pictures) - 1:
            lines.append("result: " + result_text(record, env))
        out.append(caption(image, lines))
    return out


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
    padded[0].save(path, save_all=True, append_images=padded[1:], duration=durations, loop=0, optimize=True,
                   comment=image_metadata(record.game)["Comment"])
    return path


def write_png(record: Record, path: str | pathlib.Path, scale: float = 1.0) -> pathlib.Path:
    """The final position of a record as a PNG, with the legend and the result below it."""
    from PIL import Image

    env = replay(record, render_mode="rgb_array")
    game = env.unwrapped.engine_state.game
    lines = ([game.image_legend] if game.image_legend else []) + ["result: " + result_text(record, env)]
    im = Image.fromarray(caption(env.render(), lines))
    if scale != 1.0:
        im = im.resize((max(1, int(im.width * scale)), max(1, int(im.height * scale))))
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    im.save(path, optimize=True, pnginfo=png_info(record.game))
    return path
