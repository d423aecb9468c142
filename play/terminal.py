"""The terminal front end: play a session typed in, and watch agents play live.

The board is drawn from the acting human seat's ``player_view`` only (:mod:`play.views`), coloured
with 24-bit ANSI colours unless ``color=False`` (or ``NO_COLOR`` is set), and fits 80 columns for
the shipped configs. The legal moves are listed by name and numbered; a move is chosen by its
number or by a unique prefix of its name. Commands: ``help``, ``help WORD`` (what a word of the game
means, from the glossary of its rules: :mod:`play.terms`), ``hint [AGENT]``, ``undo``, ``save [PATH]``,
``quit``. Under each move, what it caused (the game's story); when the player cannot
act for a while the terminal says why and offers to skip to the next decision. At every prompt (the
move prompt, the offer to skip, the hot seat's hand-over) ``quit`` and Ctrl-D leave the game and
``help`` says what the prompt asks; Ctrl-C leaves the game cleanly too. The record is written first
whichever way the game is left.
"""

from __future__ import annotations

import json
import pathlib
import re
import sys
import textwrap
import time
from collections.abc import Callable
from typing import TextIO

from agents.records import HUMAN
from play.session import Session, SessionError, UndoRefused
from play.story import waiting_reason
from play.terms import glossary
from play.views import Picture, action_square, picture

HELP = """\
Type the number of a move, or its name (any unique beginning, case ignored), then Enter.{squares}
Commands:
  help [WORD]     this text, or what a word of the game means{word_example}
  moves           every legal move, numbered
  hint [AGENT]    what an agent would play here (default: {hint})
  undo            take back your last move (refused once it revealed hidden information)
  save [PATH]     save the game to PATH (default: {save}); resume with --resume PATH
  quit            stop (the game is not saved unless you saved it; Ctrl-C and Ctrl-D too)"""
COMMANDS = ("help", "moves", "hint", "undo", "save", "quit")
#: What the prompts that are not the move prompt take, besides their own answers.
OTHER_PROMPTS_HELP = """\
At this prompt 'help' shows this text, and 'quit' (or Ctrl-D) leaves the game;
'help WORD' says what a word of the game means."""
WAIT_PROMPT = "Press Enter to watch, or type 'skip' to go to your next move (or the end), 'quit' to leave: "
WAIT_HELP = """\
You cannot act for a while (the reason is above). Press Enter to watch the other players' moves
one by one, or type 'skip' to see them all at once, up to your next move (or the end)."""
#: The pause between two moves of the same agent, as a share of the pause after its turn.
SAME_TURN_PACE = 0.2


# ----------------------------------------------------------------------------------------------
# Drawing
def _rgb(hex_colour: str) -> tuple[int, int, int]:
    h = hex_colour.lstrip("#")
    return int(h[0:2], 16), int(h[2:4], 16), int(h[4:6], 16)


def _dark(hex_colour: str) -> bool:
    r, g, b = _rgb(hex_colour)
    return 0.299 * r + 0.587 * g + 0.114 * b < 110


def strong_marker(pic: Picture, color: bool, width: int | None = None) -> str:
    """How the terminal shows a strong mark (a locked chip, your own pawn), in words for the legend."""
    if color:
        return "bold underlined"
    return "[X]" if (width or pic.cell_width) >= 4 else "X*"


def _marked(cell, width: int, color: bool) -> str:
    """A square's text with the mark standing on it, so that a chip or a pawn never hides the card or
    the kind of square under it: ``9C(A)``, ``9C[A]`` when strong (plain), ``9CA`` (colour, the
    mark's colour behind it); only the mark where both do not fit in ``width``."""
    if color:
        both = f"{cell.text}{cell.mark}"
    else:
        both = f"{cell.text}[{cell.mark}]" if cell.strong else f"{cell.text}({cell.mark})"
    if cell.text and len(both) <= width:
        return both
    if color:
        return cell.mark
    if width >= 4:
        return f"[{cell.mark}]" if cell.strong else f"({cell.mark})"
    return f"{cell.mark}*" if cell.strong else cell.mark


def _plain_cell(cell, width: int, targeted: bool) -> str:
    """A cell in plain text: its text with its mark (see :func:`_marked`); a "+" added on a target."""
    text = _marked(cell, width - 1, False) if cell.mark else cell.text or cell.plain
    if targeted:
        text = text[:width - 1] + "+" if text else "+"
    return text


def cell_width(pic: Picture, color: bool, width: int) -> int:
    """Characters per square: the game's own width, widened (as far as ``width`` columns allow) so that
    a square's text and the mark on it fit side by side, with room for the target "+"."""
    need = max((len(c.text) + len(c.mark) + (1 if color else 3) for row in pic.cells for c in row
                if c.mark and c.text), default=0)
    room = (width - 3) // pic.cols if pic.cols else pic.cell_width
    return max(pic.cell_width, min(need, room))


def draw_picture(pic: Picture, color: bool = True, width: int = 80,
                 targets: frozenset[tuple[int, int]] | set[tuple[int, int]] = frozenset()) -> str:
    """The board as text lines (ANSI-coloured if ``color``), column and row numbers around it.

    ``targets`` are the squares legal moves are about: a magenta background in colour, a "+" in
    plain text (after the square's text, or alone on an empty square). A mark stands beside the
    square's text where the width allows (:func:`_marked`). A strong mark is bold and underlined in
    colour, bracketed (or starred) in plain text; the other marks are not, and the
    legend says so only when a strong mark is on the board. A picture with no rows (a game that
    declares none) is its legend alone.
    """
    w = cell_width(pic, color, width)
    out = ["   " + "".join(f"{c:^{w}}" for c in range(pic.cols))] if pic.rows else []
    for r in range(pic.rows):
        parts = [f"{r:>2} "]
        for c, cell in enumerate(pic.cells[r]):
            targeted = (r, c) in targets
            if not color:
                parts.append(f"{_plain_cell(cell, w, targeted)[:w]:^{w}}")
                continue
            text = f"{(_marked(cell, w, True) if cell.mark else cell.text)[:w]:^{w}}"
            br, bg, bb = _rgb("#f0a0f0" if targeted and not _dark(cell.fill) else cell.fill)
            style = ""
            if cell.mark and cell.text and len(_marked(cell, w, True)) > len(cell.mark):
                # the mark's colour behind the square's text and the mark's letter
                colour = cell.mark_colour or "#000000"
                br, bg, bb = _rgb(colour)
                fr, fg, fb = (255, 255, 255) if _dark(colour) else (0, 0, 0)
                style = "\x1b[1m\x1b[4m" if cell.strong else ""
            elif cell.mark:
                fr, fg, fb = _rgb(cell.mark_colour or "#000000")
                if _dark(cell.fill) == _dark(cell.mark_colour or "#000000"):
                    fr, fg, fb = (255, 255, 255) if _dark(cell.fill) else (0, 0, 0)
                style = "\x1b[1m\x1b[4m" if cell.strong else ""
            else:
                fr, fg, fb = (255, 255, 255) if _dark(cell.fill) else (0, 0, 0)
            parts.append(f"\x1b[48;2;{br};{bg};{bb}m\x1b[38;2;{fr};{fg};{fb}m{style}{text}\x1b[0m")
        out.append("".join(parts))
    legend = pic.full_legend(strong_marker(pic, color, w))
    if targets:
        legend += "; " + ("magenta" if color else "+") + ": squares of your moves"
    if legend:
        out.extend(textwrap.wrap(legend, width))
    return "\n".join(out)


#: The numbered list is printed when it takes at most this many lines; longer lists are grouped.
MAX_LIST_LINES = 6
#: A group of square moves longer than this is summarised (its squares are marked on the board).
MAX_GROUP_SQUARES = 12
SQUARE_WORD = re.compile(r"^r(\d+)c(\d+)$")


def format_moves(moves: list[tuple[int, str]], width: int = 80,
                 squares: dict[int, tuple[int, int] | None] | None = None,
                 max_lines: int | None = MAX_LIST_LINES) -> str:
    """The legal moves, compactly: numbered in columns when that fits :data:`MAX_LIST_LINES` lines,
    otherwise grouped by their first word (``place: 5H r6c3, 9C r2c1``), a group of many square moves
    summarised as "any marked square". ``squares`` maps an action to the board square it is about;
    ``max_lines`` None always prints the numbered list."""
    if not moves:
        return ""
    cell = max(len(f"{i}. {name}") for i, (_, name) in enumerate(moves, 1)) + 2
    columns = max(1, width // (cell + 3))
    rows = (len(moves) + columns - 1) // columns
    if max_lines is None or rows <= max_lines:
        lines = []
        for r in range(rows):
            items = []
            for c in range(columns):
                i = c * rows + r
                if i < len(moves):
                    items.append(f"{i + 1:>3}. {moves[i][1]}".ljust(cell + 3))
            lines.append("".join(items).rstrip())
        return "\n".join(lines)
    squares = squares or {}
    groups: dict[str, list[tuple[int, str]]] = {}
    for action, name in moves:
        head, _, rest = name.partition(" ")
        groups.setdefault(head, []).append((action, rest))
    lines = []
    for head, items in groups.items():
        if len(items) > MAX_GROUP_SQUARES and all(squares.get(a) is not None for a, _ in items):
            r, c = squares[items[0][0]]
            text = (f"{head}: any of the {len(items)} marked squares, e.g. '{head} {items[0][1]}' "
                    f"(or 'r{r}c{c}')")
        else:
            text = f"{head}: " + ", ".join(rest or "(no argument)" for _, rest in items) if any(
                rest for _, rest in items) else head
        lines.extend(textwrap.wrap(text, width, subsequent_indent="    ") or [head])
    lines.extend(textwrap.wrap(f"({len(moves)} moves: type one as shown, a square rNcM, or 'moves' for the "
                               "numbered list)", width))
    return "\n".join(lines)


def choose(text: str, moves: list[tuple[int, str]],
           squares: dict[int, tuple[int, int] | None] | None = None) -> int:
    """The action meant by ``text``: a number from the list, a unique name prefix, or words that pick
    one move, where a word ``rNcM`` means the move's board square (``squares``: action -> square) and
    any other word must begin a word of the move's name (``5H r6c3``, ``wild r6c3``, ``r6c3``).
    ValueError says why not."""
    text = text.strip()
    if text.isdigit():
        k = int(text)
        if 1 <= k <= len(moves):
            return moves[k - 1][0]
        raise ValueError(f"there is no move number {k}; the moves are numbered 1 to {len(moves)}")
    low = " ".join(text.lower().split())
    exact = [a for a, name in moves if name.lower() == low]
    if exact:
        return exact[0]
    matches = [(a, name) for a, name in moves if name.lower().startswith(low)]
    if len(matches) == 1:
        return matches[0][0]
    if not matches:
        matches = _by_words(low.split(), moves, squares or {})
        if len(matches) == 1:
            return matches[0][0]
    if matches:
        shown = ", ".join(name for _, name in matches[:6]) + (" ..." if len(matches) > 6 else "")
        raise ValueError(f"'{text}' matches {len(matches)} moves ({shown}); type more of the name or a number")
    on_board = [sq for sq in (squares or {}).values() if sq is not None]
    square = f", a square like 'r{on_board[0][0]}c{on_board[0][1]}'" if on_board else ""
    raise ValueError(f"no legal move is named '{text}'; type a number from 1 to {len(moves)}, "
                     f"the beginning of a move's name{square}, or 'help'")


def typing_squares(moves: list[tuple[int, str]], squares: dict[int, tuple[int, int] | None],
                   rows: int, cols: int) -> str:
    """The help's sentence on typing a square, its examples from the board shown: a square of a legal
    move and words that pick that move (``place r6c3``); with no such move now, a square of the board.
    Empty for a game with no board."""
    if not rows or not cols:
        return ""
    for action, name in moves:
        square = squares.get(action)
        if square is None:
            continue
        word = f"r{square[0]}c{square[1]}"
        named = [w for w in name.split() if not SQUARE_WORD.match(w.lower())]
        # a verb ("place", "step") reads best, then a two-word name ("Safe Room"), then the last word ("5H")
        tried = [named[0]] if named and named[0].isalpha() and named[0].islower() else []
        tried += [" ".join(named[:2])] if len(named) > 1 and all(w.isalpha() for w in named[:2]) else []
        for words in dict.fromkeys(f"{w} {word}" for w in tried + named[-1:] + named[:1]):
            try:
                if choose(words, moves, squares) == action:
                    return (f"Where the board marks the squares of your moves, type a square ({word}) or "
                            f"words and a square ({words}).")
            except ValueError:
                continue
    r, c = rows // 2, cols // 2
    return (f"Where the board marks the squares of your moves, type a square as r, its row, c, its column "
            f"(r{r}c{c}: row {r}, column {c}), or words and a square.")


def _by_words(words: list[str], moves: list[tuple[int, str]],
              squares: dict[int, tuple[int, int] | None]) -> list[tuple[int, str]]:
    """The moves every word fits: ``rNcM`` their square (or a word of their name), others a word's beginning."""
    found = []
    for action, name in moves:
        parts = name.lower().split()
        ok = True
        for word in words:
            square = SQUARE_WORD.match(word)
            if square:
                if squares.get(action) == (int(square[1]), int(square[2])) or word in parts:
                    continue
                ok = False
                break
            if not any(part.startswith(word) for part in parts):
                ok = False
                break
        if ok:
            found.append((action, name))
    return found


# ----------------------------------------------------------------------------------------------
class Quit(Exception):
    """The player typed 'quit' (or Ctrl-D) at a prompt: the game is left."""


class TerminalGame:
    """Plays a session in a terminal; ``read`` and ``out`` are injectable for tests."""

    def __init__(self, session: Session, out: TextIO | None = None, read: Callable[[str], str] = input,
                 color: bool = True, pace: float = 0.5, hint_agent: str | None = None,
                 save_path: str | None = None, record_path: str | None = None, width: int = 80) -> None:
        self.session = session
        self.out = out or sys.stdout
        self.read = read
        self.color = color
        self.pace = pace
        self.hint_agent = hint_agent
        self.save_path = save_path or f"{session.game_name}-session.json"
        self.record_path = record_path
        self.width = width
        self.last_seat: int | None = None
        self.told_wait = ""  # the last reason given for a wait (each is given once)
        self.glossary = glossary(session.game)

    def say(self, text: str = "") -> None:
        print(text, file=self.out, flush=True)

    def run(self) -> str:
        """Play until the game ends or the player quits; returns "over", "quit", or "interrupted" (Ctrl-C:
        the record is written all the same, and the game is left without a traceback)."""
        try:
            return self._run()
        except KeyboardInterrupt:
            self.say("")
            self._write_record()
            self.say("Interrupted: the game is left (type 'save' during a game to be able to resume it).")
            return "interrupted"

    def _run(self) -> str:
        s = self.session
        # The seed is shown only at the end: the deck order follows from it.
        config = ", ".join(f"{k}={json.dumps(v)}" for k, v in s.game.config.items())
        self.say(textwrap.fill(f"{s.game_name} ({config}); seats: "
                               + ", ".join(f"player_{i} {who}" for i, who in enumerate(s.seats)), self.width))
        self.say("Type 'help' for the commands.")
        try:
            while not s.over:
                self._agents_move()
                if s.over:
                    break
                self._human_turn()
        except Quit:
            self._write_record()
            self.say("Bye.")
            return "quit"
        viewer = s.humans[0] if s.humans else 0
        self.say(draw_picture(picture(s.game, s.view(viewer)), self.color))
        self.say(f"Game over: {s.describe_result()} (seed {s.seed})")
        why = s.end_text()
        if why:
            self.say(textwrap.fill(f"How it ended: {why}", self.width, subsequent_indent="    "))
        self._write_record()
        return "over"

    # ------------------------------------------------------------------------------------------
    def _agents_move(self) -> None:
        s = self.session
        viewers = s.humans
        skipping = False
        while True:
            if not skipping and len(viewers) == 1 and s.to_act() is not None and s.human_to_act() is None:
                skipping = self._explain_wait(viewers[0])
            event = s.step_agent()
            if event is None:
                return
            viewer = s.human_to_act() if s.human_to_act() is not None else (viewers[0] if viewers else event.seat)
            self._tell(s.events_for(viewer, event.index - 1)[0] if viewers else None, event)
            if self.pace and not skipping:
                # a whole pause after an agent's turn; a short one between the moves of one turn (the
                # steps of one walk), so that a long turn does not keep the player waiting
                time.sleep(self.pace if s.to_act() != event.seat else self.pace * SAME_TURN_PACE)

    def _tell(self, told: dict | None, event) -> None:
        """A move as the log line and what it caused (the game's story), indented below it."""
        if told is None:
            self.say(f"  player_{event.seat}: {event.label or event.name}")
            return
        self.say(f"  {told['text']}")
        for line in told["story"]:
            self.say(textwrap.fill(line, self.width, initial_indent="      ", subsequent_indent="        "))

    def _explain_wait(self, seat: int) -> bool:
        """Say why ``seat`` cannot act for a while (once per reason) and offer to skip; True to skip."""
        why = waiting_reason(self.session.game, self.session.view(seat))
        if not why or why == self.told_wait:
            return False
        self.told_wait = why
        self.say(textwrap.fill(f"You cannot act now: {why}.", self.width, subsequent_indent="    "))
        answer = self._ask(WAIT_PROMPT, WAIT_HELP).strip().lower()
        return bool(answer) and "skip".startswith(answer)  # anything else (Enter) watches

    def _ask(self, prompt: str, meaning: str) -> str:
        """An answer at a prompt other than the move prompt: 'quit' or Ctrl-D leaves the game
        (:class:`Quit`), 'help' says what the prompt asks (``meaning``) and asks again."""
        while True:
            try:
                text = self._read(prompt)
            except EOFError:
                self.say("")
                raise Quit from None
            word = text.strip().lower()
            if word == "quit":
                raise Quit
            if word == "help":
                self.say(meaning)
                self.say(OTHER_PROMPTS_HELP)
                continue
            if word.startswith("help "):
                self.say(self.explain(text.strip()[5:]))
                continue
            return text

    def _human_turn(self) -> None:
        """One human move (or a command that takes the turn back, ``undo``); :class:`Quit` to leave."""
        s = self.session
        seat = s.human_to_act()
        if len(s.humans) > 1 and seat != self.last_seat:
            self.say("\n" * 3 + ("\x1b[2J\x1b[H" if self.color else ""))
            self._ask(f"Hot seat: pass the keyboard to player_{seat}, then press Enter ",
                      f"Hot seat: the board of player_{seat} is shown next, so player_{seat} alone should be at "
                      "the keyboard; press Enter when they are.")
        self.last_seat = seat
        self._show(seat)
        moves = s.legal_moves()
        squares = self._squares(seat)
        while True:
            try:
                text = self._read(f"player_{seat}> ")
            except EOFError:
                self.say("")
                raise Quit from None
            word, _, rest = text.strip().partition(" ")
            rest = rest.strip()
            if not text.strip():
                self.say("Type a move number, a move name, or 'help'.")
                continue
            if word.lower() in COMMANDS:
                verdict = self._command(word.lower(), rest, seat)
                if verdict == "quit":
                    raise Quit
                if verdict == "moved":
                    return
                continue
            try:
                action = choose(text, moves, squares)
            except ValueError as exc:
                self.say(f"Not understood: {exc}")
                continue
            event = s.play(seat, action)
            self._tell(s.events_for(seat, event.index - 1)[0], event)
            return

    def _command(self, word: str, rest: str, seat: int) -> str | None:
        s = self.session
        if word == "help":
            self.say(self.explain(rest) if rest else self.help_text(seat))
        elif word == "moves":
            self.say(format_moves(s.legal_moves(), self.width, max_lines=None))
        elif word == "quit":
            return "quit"
        elif word == "hint":
            try:
                action, name, agent_id = s.hint(rest or self.hint_agent)
            except SessionError as exc:
                self.say(f"No hint: {exc}")
                return None
            number = [a for a, _ in s.legal_moves()].index(action) + 1
            self.say(f"Hint from {agent_id}: {number}. {name}")
        elif word == "undo":
            try:
                taken = s.undo()
            except UndoRefused as exc:
                self.say(f"Cannot undo: {exc}")
                return None
            self.say(f"Undone: {taken} move(s) taken back.")
            self.last_seat = None
            return "moved"
        elif word == "save":
            path = pathlib.Path(rest or self.save_path)
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(json.dumps(s.save()) + "\n")
            except OSError as exc:
                self.say(f"Could not save to {path}: {exc}")
                return None
            self.say(f"Saved to {path}; resume with: python -m play terminal --resume {path}")
        return None

    def help_text(self, seat: int) -> str:
        """What 'help' says at the move prompt: how to type a move (the examples from the board shown),
        the commands, and the words of the game that 'help WORD' explains."""
        s = self.session
        pic = picture(s.game, s.view(seat))
        squares = typing_squares(s.legal_moves(), self._squares(seat), pic.rows, pic.cols)
        example = self.glossary.example()
        text = HELP.format(squares="\n" + textwrap.fill(squares, self.width) if squares else "",
                           word_example=f" (help {example})" if example else "",
                           hint=self.hint_agent or "the game's best heuristic", save=self.save_path)
        return text + "\n" + self.words_text()

    def words_text(self) -> str:
        """The words of the game that 'help WORD' explains, and where its full rules are."""
        g = self.glossary
        if g.terms:
            lines = [f"Words of {g.title} (type 'help WORD', e.g. 'help {g.example()}'): {', '.join(g.names())}."]
        else:
            lines = [f"The rules of {g.title} give no list of words."]
        if g.path is not None:
            lines.append(f"The full rules: {_shown_path(g.path)}")
        return "\n".join(textwrap.fill(line, self.width, subsequent_indent="    ") for line in lines)

    def explain(self, query: str) -> str:
        """What 'help WORD' says: each term the word names (any case, singular or plural), from the
        glossary of the game's rules; for a word that names none, the words there are."""
        found = self.glossary.lookup(query)
        if not found:
            return (textwrap.fill(f"'{query.strip()}' is not a word of the rules of {self.glossary.title}.", self.width)
                    + "\n" + self.words_text())
        return "\n".join(textwrap.fill(f"{t.heading()}: {t.text}", self.width, subsequent_indent="    ")
                         for t in found)

    def _show(self, seat: int) -> None:
        s = self.session
        view = s.view(seat)
        pic = picture(s.game, view)
        squares = self._squares(seat)
        targets = set(squares.values()) - {None}
        self.say("")
        self.say(draw_picture(pic, self.color, self.width, targets))
        for line in [pic.turn, *pic.lines] if pic.turn else pic.lines:
            self.say(textwrap.fill(line, self.width, subsequent_indent="    "))
        for line in pic.private:
            self.say(textwrap.fill(f"* {line}", self.width, subsequent_indent="    "))
        self.say(f"Your moves, player_{seat}:")
        self.say(format_moves(s.legal_moves(), self.width, squares))

    def _squares(self, seat: int) -> dict[int, tuple[int, int] | None]:
        """The board square of each legal move (None for a move that is not about one)."""
        s = self.session
        view = s.view(seat)
        return {a: action_square(s.game, view, a) for a, _ in s.legal_moves()}

    def _read(self, prompt: str) -> str:
        return self.read(prompt)

    def _write_record(self) -> None:
        if self.record_path:
            path = self.session.record.save(self.record_path)
            self.say(f"Record written to {path}")


def _shown_path(path: pathlib.Path) -> str:
    """A file's path as the player can open it: relative to the working folder when inside it."""
    try:
        return str(path.relative_to(pathlib.Path.cwd()))
    except ValueError:
        return str(path)


# ----------------------------------------------------------------------------------------------
def watch(session: Session, pace: float = 0.5, out: TextIO | None = None, color: bool = True,
          max_moves: int | None = None) -> None:
    """Agents play live; the whole state is shown (a spectator sees everything)."""
    out = out or sys.stdout
    if any(who == HUMAN for who in session.seats):
        raise SessionError("watch plays agents only; give an agent id for every seat")
    moves = 0
    while not session.over and (max_moves is None or moves < max_moves):
        event = session.step_agent()
        moves += 1
        text = session.game.render_text(session.runner.state)
        clear = "\x1b[2J\x1b[H" if color else "\n"
        print(f"{clear}move {event.index}: player_{event.seat} ({session.seats[event.seat]}): "
              f"{event.label or event.name}\n{text}", file=out, flush=True)
        if pace:
            time.sleep(pace if session.to_act() != event.seat else pace * SAME_TURN_PACE)
    print(f"Game over: {session.describe_result()}; {session.end_text()}" if session.over
          else f"Stopped after {moves} moves.", file=out, flush=True)
