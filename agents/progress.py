"""Progress of a long loop that fits where it goes: a bar redrawn on a terminal, plain lines elsewhere.

tqdm redraws its bar with carriage returns. On a terminal that is what one wants; in a log file or a
pipe every redraw stays, and the file fills with one long line of them. :func:`progress_bar` hands
back tqdm's bar when its stream (standard error unless told) is a terminal, and otherwise a
:class:`PlainProgress` that prints a whole line each time another tenth of the work is done, or
:data:`LINE_EVERY_S` seconds after the last line when the work is slow or its total unknown. Both
take the same calls (``update``, ``set_postfix``, ``set_postfix_str``, ``clear``, ``close``,
iteration), so a caller never asks which one it has.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable, Iterator
from typing import Any, TextIO

#: Seconds after which a plain line is printed even if the next tenth is not done.
LINE_EVERY_S = 30.0
#: A plain line each time this share of the total is done.
LINE_EVERY_SHARE = 0.1
#: Words for tqdm's units, counted.
PLURALS = {"it": "iterations", "step": "steps", "game": "games"}


def is_terminal(stream: Any) -> bool:
    """True when ``stream`` is a terminal (then a redrawn bar stays on one line)."""
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty is not None and isatty())
    except (ValueError, OSError):  # a closed or detached stream
        return False


def progress_bar(iterable: Iterable | None = None, *, total: float | None = None, desc: str = "",
                 unit: str = "it", disable: bool = False, file: TextIO | None = None, initial: float = 0,
                 **tqdm_options: Any) -> Any:
    """tqdm's bar on a terminal, else a :class:`PlainProgress`; ``tqdm_options`` (``dynamic_ncols``,
    ``mininterval``, ``leave``, ...) go to tqdm and mean nothing to plain lines."""
    stream = file if file is not None else sys.stderr
    if is_terminal(stream):
        try:
            from tqdm import tqdm
        except ImportError:  # tqdm comes with the dev extra; without it, lines on a terminal too
            tqdm = None
        if tqdm is not None:
            return tqdm(iterable, total=total, desc=desc or None, unit=unit, disable=disable, file=stream,
                        initial=initial, **tqdm_options)
    return PlainProgress(iterable, total=total, desc=desc, unit=unit, disable=disable, file=stream, initial=initial)


class PlainProgress:
    """Progress as whole lines (``games: 4/8 games (50%) after 3 s``), never a carriage return."""

    def __init__(self, iterable: Iterable | None = None, *, total: float | None = None, desc: str = "",
                 unit: str = "it", disable: bool = False, file: TextIO | None = None, initial: float = 0,
                 clock=time.monotonic) -> None:
        if total is None and iterable is not None and hasattr(iterable, "__len__"):
            total = len(iterable)  # type: ignore[arg-type]
        self.iterable = iterable
        self.total = total
        self.desc = desc
        self.unit = unit
        self.disable = disable
        self.file = file if file is not None else sys.stderr
        self.n = initial
        self.postfix = ""
        self.clock = clock
        self.started = clock()
        self.last_line = self.started
        self.shown = initial  # the count the last line showed
        self.next_share = self._share_after(initial)

    def _share_after(self, n: float) -> float:
        """The count at which the next tenth is done."""
        if not self.total:
            return float("inf")
        done = int(n / self.total / LINE_EVERY_SHARE + 1e-9)
        return (done + 1) * LINE_EVERY_SHARE * self.total

    def line(self) -> str:
        """The line printed now: what, how far, how long so far."""
        unit = PLURALS.get(self.unit, self.unit)
        count = f"{self.n:g}/{self.total:g} {unit} ({100 * self.n / self.total:.0f}%)" if self.total \
            else f"{self.n:g} {unit}"
        head = f"{self.desc}: " if self.desc else ""
        tail = f"; {self.postfix}" if self.postfix else ""
        return f"{head}{count} after {self.clock() - self.started:.0f} s{tail}"

    def _print(self) -> None:
        print(self.line(), file=self.file, flush=True)
        self.last_line = self.clock()
        self.shown = self.n
        self.next_share = self._share_after(self.n)

    def update(self, n: float = 1) -> None:
        self.n += n
        if self.disable:
            return
        if self.n >= self.next_share - 1e-9 or self.clock() - self.last_line >= LINE_EVERY_S:
            self._print()

    def set_postfix(self, ordered_dict: dict[str, Any] | None = None, refresh: bool = True, **kwargs: Any) -> None:
        items = {**(ordered_dict or {}), **kwargs}
        self.postfix = ", ".join(f"{k}={v:.3g}" if isinstance(v, float) else f"{k}={v}" for k, v in items.items())

    def set_postfix_str(self, s: str = "", refresh: bool = True) -> None:
        self.postfix = str(s)

    def set_description(self, desc: str | None = None, refresh: bool = True) -> None:
        self.desc = desc or ""

    def clear(self, *args: Any, **kwargs: Any) -> None:
        """Nothing to clear: lines already printed stay."""

    def refresh(self, *args: Any, **kwargs: Any) -> None:
        """Lines are printed when due, not on request."""

    def write(self, text: str) -> None:
        print(text, file=self.file, flush=True)

    def close(self) -> None:
        """The last count, unless the last line showed it already."""
        if not self.disable and self.n != self.shown:
            self._print()
        self.disable = True

    def __iter__(self) -> Iterator:
        if self.iterable is None:
            raise TypeError("this progress counts updates; it was given nothing to iterate over")
        try:
            for item in self.iterable:
                yield item
                self.update(1)
        finally:
            self.close()

    def __enter__(self) -> PlainProgress:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
