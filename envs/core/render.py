"""Small drawing helpers shared by the games' renderers (Pillow is imported only when drawing)."""

from __future__ import annotations

import numpy as np


def text_to_image(text: str, scale: int = 2) -> np.ndarray:
    """Draw monospaced text on white and return an ``(H, W, 3)`` uint8 array."""
    from PIL import Image, ImageDraw, ImageFont

    font = ImageFont.load_default()
    lines = text.splitlines() or [""]
    probe = Image.new("RGB", (1, 1))
    draw = ImageDraw.Draw(probe)
    line_h = 0
    width = 1
    for line in lines:
        left, top, right, bottom = draw.textbbox((0, 0), line or " ", font=font)
        width = max(width, right - left)
        line_h = max(line_h, bottom - top)
    line_h += 3
    image = Image.new("RGB", (width + 8, line_h * len(lines) + 8), "white")
    draw = ImageDraw.Draw(image)
    for i, line in enumerate(lines):
        draw.text((4, 4 + i * line_h), line, fill="black", font=font)
    if scale != 1:
        image = image.resize((image.width * scale, image.height * scale), Image.NEAREST)
    return np.asarray(image, dtype=np.uint8)


def grid_image(
    colors: np.ndarray,
    cell: int = 24,
    labels: list[list[str]] | None = None,
    grid_color=(60, 60, 60),
    edges: list[tuple[tuple[int, int], tuple[int, int], tuple[int, int, int]]] | None = None,
) -> np.ndarray:
    """Draw an ``(R, C, 3)`` array of cell colours as a grid, with optional short text labels.

    ``edges`` draws thick lines on the border between two orthogonally adjacent cells, each given as
    ``((row, col), (row, col), colour)`` — walls, doors and the like.
    """
    from PIL import Image, ImageDraw, ImageFont

    rows, cols = colors.shape[:2]
    image = Image.new("RGB", (cols * cell + 1, rows * cell + 1), "white")
    draw = ImageDraw.Draw(image)
    font = ImageFont.load_default()
    for r in range(rows):
        for c in range(cols):
            x0, y0 = c * cell, r * cell
            draw.rectangle(
                [x0, y0, x0 + cell, y0 + cell], fill=tuple(int(v) for v in colors[r, c]), outline=grid_color
            )
            if labels is not None and labels[r][c]:
                draw.text((x0 + 2, y0 + cell // 4), labels[r][c], fill="black", font=font)
    for (r1, c1), (r2, c2), colour in edges or ():
        if r1 == r2:  # side by side: a vertical segment
            x = max(c1, c2) * cell
            draw.line([x, r1 * cell, x, (r1 + 1) * cell], fill=tuple(colour), width=3)
        else:  # one above the other: a horizontal segment
            y = max(r1, r2) * cell
            draw.line([c1 * cell, y, (c1 + 1) * cell, y], fill=tuple(colour), width=3)
    return np.asarray(image, dtype=np.uint8)
