"""The browser front end: a small Starlette app serving one page and a JSON API.

``python -m play serve`` starts it with uvicorn on 127.0.0.1. The page (``play/static``: plain
HTML, JavaScript and SVG, no build step) lets you pick a game, a config, your seat and the
opponents, then play by clicking squares or move buttons.

The page keeps its game in the address (``#game=ID``) and in the browser's storage: a reload or a
tab opened again asks ``GET /api/sessions/{id}`` and shows the game as it stands (board, the whole
log, whose turn), for as long as the server keeps it. Under each move the log tells what it caused
(:mod:`play.story`); when the player cannot act for a while the page says why, and "Skip to my next
move" plays the agents on to the player's next decision (``/skip``).

What the browser is told is built from the human seat's ``player_view`` alone (the board picture
of :mod:`play.views`), the legal moves when that seat is to act, and the other seats' moves as
that seat may see them (hidden choices unnamed). The seed — from which the deck order follows —
and the record are only handed out once the game is over.

API (JSON):

=======================================  ==========================================================
``GET  /api/games``                      games, their named configs and seat counts, agents
``POST /api/sessions``                   ``{game, config, seat, opponents, seed?, max_cycles?}``
``GET  /api/sessions/{id}``              the seat's state (``?since=k``: events after move k); the page
                                         asks it again after a reload, to find its game
``POST /api/sessions/{id}/advance``      one agent move (the page calls it one by one)
``POST /api/sessions/{id}/skip``         agents move until your next decision or the end
``POST /api/sessions/{id}/move``         ``{action}`` or ``{square: [r, c]}``; illegal: 400
``GET  /api/sessions/{id}/hint``         what the game's best heuristic would play for you now
``GET  /api/sessions/{id}/record``       the record, once the game is over (409 before)
``DELETE /api/sessions/{id}``            leave the game (the page does so when it starts another)
``GET  /api/terms/{game}``               the words of the game, from the glossary of its rules
                                         (:mod:`play.terms`); ``?q=WORD``: the terms that word
                                         names (``found``, empty for a word the rules do not define)
``GET  /rules/{game}``                   the game's whole ``RULES.md``, as plain text
=======================================  ==========================================================

The page's Rules panel shows the words of the game being played (before a game, of the game chosen
in the form), looks a word up, and links to the whole rules.

A request body larger than 16 KiB is refused with 413 before it is read: from its ``Content-Length``
when it gives one, else (a chunked body) as soon as more than that has come; the connection is then
closed, so the rest is never read. An error the server did not expect answers 500 with a plain
message and an error id; what went wrong (its type and traceback) goes to the server's log under
that id, never to the page.
"""

from __future__ import annotations

import asyncio
import json
import logging
import pathlib
import os
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import agents
import envs
from agents.records import HUMAN
from agents.errors import BAD_INPUT, one_line
from play.opponents import opponents
from play.session import (
    Session,
    SessionError,
    agents_for,
    config_families,
    default_hint_agent,
    listed,
    resolve_config,
    seat_count,
    unknown_game,
    value_words,
)
from play.terms import glossary
from play.views import action_square, picture

STATIC = pathlib.Path(__file__).with_name("static")
#: The largest request body the server reads (bytes); a larger one is answered 413 unread.
MAX_BODY = 16 * 1024
#: The server's log: unexpected errors, each with the id its 500 answer names.
LOG = logging.getLogger("play.web")
#: Where, in a request's ASGI scope, the id of its unexpected error is kept once logged.
ERROR_ID = "play.error_id"
#: How many games the server holds at once; beyond that a new game is refused (503) until one expires.
MAX_SESSIONS = 64
#: The interpreter's thread switch interval (seconds) while serving (Python's default is 0.005).
SWITCH_INTERVAL = 0.0005
#: A game nobody has asked about for this long (seconds) is dropped.
IDLE_SECONDS = 30 * 60


class StoreFull(Exception):
    """Every place is taken by a game still in use; the message says so."""


@dataclass
class Entry:
    """One game the server holds: the session, its human seat, and the lock that serialises its requests."""

    session: Session
    seat: int
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    last_used: float = 0.0
    busy: int = 0  # requests working on it now; a busy game never expires


class Store:
    """Games by random id. A game idle for ``idle_seconds`` is dropped; a game in use never is: when
    ``limit`` games are in use, a new one is refused with :class:`StoreFull`."""

    def __init__(self, limit: int = MAX_SESSIONS, idle_seconds: float = IDLE_SECONDS,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if limit < 1 or idle_seconds <= 0:
            raise ValueError(f"a store holds at least 1 game for a positive time, got {limit}, {idle_seconds}")
        self.limit = limit
        self.idle_seconds = idle_seconds
        self.clock = clock
        self.items: dict[str, Entry] = {}

    def __len__(self) -> int:
        return len(self.items)

    def expire(self) -> None:
        """Drop every game idle for longer than ``idle_seconds`` (none being worked on)."""
        cutoff = self.clock() - self.idle_seconds
        for sid in [k for k, e in self.items.items() if e.busy == 0 and e.last_used < cutoff]:
            del self.items[sid]

    def check_room(self) -> None:
        self.expire()
        if len(self.items) >= self.limit:
            raise StoreFull(f"the server is full: {self.limit} games are in progress; a game idle for "
                            f"{self.idle_seconds:g} s is dropped, so try again later")

    def add(self, session: Session, seat: int) -> str:
        self.check_room()
        sid = secrets.token_urlsafe(16)
        self.items[sid] = Entry(session, seat, last_used=self.clock())
        return sid

    def get(self, sid: str) -> Entry:
        """The game ``sid`` (KeyError if unknown or expired), marked as used now."""
        self.expire()
        entry = self.items[sid]
        entry.last_used = self.clock()
        return entry

    def drop(self, sid: str) -> bool:
        return self.items.pop(sid, None) is not None


#: Niceness added to the worker threads agents think in (Linux: a thread has its own priority), so the
#: event loop serving every game's state requests gets the processor first.
AGENT_NICENESS = 10


def lower_priority() -> None:
    """Lower this worker thread's priority once (where the system allows it; elsewhere nothing)."""
    if getattr(_thread_flags, "niced", False):
        return
    _thread_flags.niced = True
    try:
        tid = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, tid, os.getpriority(os.PRIO_PROCESS, tid) + AGENT_NICENESS)
    except (AttributeError, OSError):
        pass


_thread_flags = threading.local()


# ----------------------------------------------------------------------------------------------
# Limits before work, and the last word on errors nobody expected
def body_too_large_text(limit: int = MAX_BODY) -> str:
    return f"the request body is larger than {limit // 1024} KiB ({limit} bytes), the most this server reads"


def internal_error_text(error_id: str) -> str:
    return f"internal error (id {error_id}); see the server log"


def log_unexpected(scope: dict[str, Any], exc: BaseException) -> str:
    """Log ``exc`` (its type and traceback) under a new error id, kept in ``scope``; returns the id."""
    error_id = scope.get(ERROR_ID)
    if error_id is None:
        error_id = scope[ERROR_ID] = secrets.token_hex(4)
        LOG.error("internal error (id %s) on %s %s", error_id, scope.get("method"), scope.get("path"),
                  exc_info=(type(exc), exc, exc.__traceback__))
    return error_id


async def _send_json(send, status: int, data: dict[str, Any], close: bool = False) -> None:
    body = json.dumps(data).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if close:
        headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body, "more_body": False})


class Guard:
    """ASGI wrapper round the app: request bodies over ``limit`` refused before they are read, and any
    error the app let through answered with a plain 500 naming an error id (the details in the log).

    A body that declares its length (``Content-Length``) over the limit is answered 413 at once,
    unread. A body without one (chunked) is taken in as it comes and answered 413 as soon as more than
    ``limit`` bytes have come (the server hands the body over in pieces of at most 64 KiB); a body within
    the limit is handed to the app whole. A 413 closes the connection, so the rest of the body is never
    read.
    """

    def __init__(self, app, limit: int = MAX_BODY) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def tracked(message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            receive = await self._within_limit(scope, receive, tracked)
            if receive is not None:
                await self.app(scope, receive, tracked)
        except Exception as exc:  # the last word: nothing reaches the server but the log line
            error_id = log_unexpected(scope, exc)
            if not started:
                await _send_json(tracked, 500, {"error": internal_error_text(error_id)}, close=True)

    async def _within_limit(self, scope, receive, send):
        """``receive`` for the app, or None when the body was too large (413 sent)."""
        declared = [v for k, v in scope["headers"] if k.lower() == b"content-length"]
        if declared:
            try:
                length = int(declared[0])
            except ValueError:
                length = self.limit + 1  # the server checks the header; this is never reached behind it
            if length > self.limit:
                await _send_json(send, 413, {"error": body_too_large_text(self.limit)}, close=True)
                return None
            return receive
        pieces, size = [], 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return receive  # the client left: the app finds that out for itself
            piece = message.get("body", b"")
            size += len(piece)
            if size > self.limit:
                await _send_json(send, 413, {"error": body_too_large_text(self.limit)}, close=True)
                return None
            pieces.append(piece)
            if not message.get("more_body", False):
                break
        whole = {"type": "http.request", "body": b"".join(pieces), "more_body": False}
        handed = False

        async def replay():
            nonlocal handed
            if not handed:
                handed = True
                return whole
            return await receive()

        return replay


def games_catalogue() -> list[dict[str, Any]]:
    out = []
    for name in envs.NAMES:
        families = config_families(name)
        seats = {k: seat_count(name, v) for k, v in families.items()}
        fit = {k: agents_for(name, v) for k, v in families.items()}
        ranked = {k: opponents(name, v) for k, v in families.items()}
        out.append({"name": name, "configs": families, "seats": seats, "agents": agents.available(name),
                    "agents_by_config": fit, "opponents_by_config": ranked,
                    "default_opponent": default_hint_agent(name)})
    return out


def seat_state(session: Session, seat: int, sid: str, since: int = 0) -> dict[str, Any]:
    """Everything the page shows to ``seat``: built from its player_view and the public moves."""
    view = session.view(seat)
    to_act = session.to_act()
    mine = to_act == seat and not session.over
    moves = []
    if mine:
        for action, name in session.legal_moves():
            square = action_square(session.game, view, action)
            moves.append({"action": action, "name": name, "square": list(square) if square else None})
    over = session.over
    ended = session.end_text() if over else None
    body = {
        "id": sid,
        "game": session.game_name,
        "config": session.game.config,
        "seat": seat,
        "seats": [("you" if i == seat else who) for i, who in enumerate(session.seats)],
        "to_act": to_act,
        "your_turn": mine,
        "phase": session.phase,
        "picture": picture(session.game, view, ended=ended).to_dict(),
        "moves": moves,
        "events": session.events_for(seat, since),
        "num_moves": len(session.record.moves),
        "over": over,
        "waiting": session.waiting(seat),
        "result": session.describe_result() if over else None,
        "end": session.end_reason,
        "end_text": ended,
        "seed": session.seed if over else None,
    }
    return body


def create_app(store: Store | None = None,
               on_response: Callable[[Session, int, dict[str, Any]], None] | None = None):
    """The app: Starlette's, inside a :class:`Guard`. ``on_response(session, seat, body)`` sees every
    state sent (for tests).

    Agent moves, hints and new games run in worker threads, off the event loop, so one agent
    thinking holds up no other game; one game's requests run one at a time (its lock). Every error a
    page can meet is answered as JSON ``{"error": ...}``; an unexpected one with status 500 and an
    error id, its details in the server's log (:data:`LOG`).
    """
    from starlette.applications import Starlette
    from starlette.concurrency import run_in_threadpool
    from starlette.exceptions import HTTPException
    from starlette.requests import Request
    from starlette.responses import FileResponse, JSONResponse, Response
    from starlette.routing import Route

    store = store if store is not None else Store()

    def error(status: int, message: str) -> JSONResponse:
        return JSONResponse({"error": message}, status_code=status)

    async def body_of(request: Request) -> dict[str, Any]:
        raw = await request.body()  # at most MAX_BODY bytes: the Guard refused anything larger
        try:
            data = json.loads(raw or b"{}")
        except (ValueError, RecursionError):
            # RecursionError: arrays nested thousands deep, which the parser gives up on
            raise SessionError("request body is not JSON (or nested too deep)") from None
        if not isinstance(data, dict):
            raise SessionError("request body must be a JSON object")
        return data

    def state_of(session: Session, seat: int, sid: str, since: int = 0) -> dict[str, Any]:
        body = seat_state(session, seat, sid, since)
        if on_response is not None:
            on_response(session, seat, body)
        return body

    def with_session(handler):
        """Route ``handler(request, sid, session, seat)`` for ``/api/sessions/{sid}/...`` holding the
        game's lock; an unknown (or expired) session id answers 404 before the handler runs."""

        async def route(request: Request) -> Response:
            sid = request.path_params["sid"]
            try:
                entry = store.get(sid)
            except KeyError:
                return error(404, "no such game: it ended long ago, expired after "
                                  f"{store.idle_seconds:g} s unused, or never existed; start a new one")
            entry.busy += 1
            try:
                async with entry.lock:
                    return await handler(request, sid, entry.session, entry.seat)
            finally:
                entry.busy -= 1
                entry.last_used = store.clock()

        return route

    async def index(request: Request) -> Response:
        return FileResponse(STATIC / "index.html", media_type="text/html")

    async def script(request: Request) -> Response:
        return FileResponse(STATIC / "app.js", media_type="text/javascript")

    async def favicon(request: Request) -> Response:
        return FileResponse(STATIC / "favicon.ico", media_type="image/x-icon")

    async def games(request: Request) -> Response:
        return JSONResponse({"games": await run_in_threadpool(games_catalogue)})

    def new_session(data: dict[str, Any]) -> tuple[Session, int]:
        game = data.get("game")
        if game not in envs.NAMES:
            raise unknown_game(game)
        name = data.get("config")
        if name is not None and not isinstance(name, str):
            raise SessionError("config must be the name of one of the game's configs "
                               f"({listed(sorted(config_families(game)))}); got {value_words(name)}")
        config = resolve_config(game, name)
        max_cycles = data.get("max_cycles")
        if max_cycles is not None and (isinstance(max_cycles, bool) or not isinstance(max_cycles, int)
                                       or not 1 <= max_cycles <= 100_000):
            raise SessionError(f"Max cycles must be a whole number from 1 to 100000; got {value_words(max_cycles)}")
        n = seat_count(game, config)
        seat = data.get("seat", 0)
        if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < n:
            raise SessionError(f"seat must be a whole number from 0 to {n - 1}; got {value_words(seat)}")
        opponents = data.get("opponents") or default_hint_agent(game)
        if isinstance(opponents, str):
            opponents = [opponents] * (n - 1)
        if not isinstance(opponents, list) or len(opponents) != n - 1 or \
                not all(isinstance(o, str) for o in opponents):
            raise SessionError(f"opponents must be one agent id or a list of {n - 1} agent ids; "
                               f"got {value_words(opponents)}")
        seats = list(opponents)
        seats.insert(seat, HUMAN)
        session = Session(game, seats, config=config, seed=data.get("seed"), max_cycles=max_cycles,
                          meta={"source": "play serve"})
        return session, seat

    async def create(request: Request) -> Response:
        try:
            store.check_room()
            data = await body_of(request)
            session, seat = await run_in_threadpool(new_session, data)
            sid = store.add(session, seat)
        except StoreFull as exc:
            return error(503, str(exc))
        except (SessionError, *BAD_INPUT) as exc:  # an opponent's damaged checkpoint too: refused, the server goes on
            return error(400, one_line(exc))
        entry = store.get(sid)
        async with entry.lock:
            return JSONResponse(await run_in_threadpool(state_of, session, seat, sid))

    @with_session
    async def show(request: Request, sid: str, session: Session, seat: int) -> Response:
        try:
            since = int(request.query_params.get("since", "0"))
        except ValueError:
            return error(400, "since must be a whole number (the number of moves already seen)")
        # Inline: a state is quick to build, and a hop to a worker thread would queue it behind
        # thinking agents for the interpreter lock.
        return JSONResponse(state_of(session, seat, sid, max(0, since)))

    @with_session
    async def advance(request: Request, sid: str, session: Session, seat: int) -> Response:
        def work() -> dict[str, Any]:
            lower_priority()
            since = len(session.record.moves)
            session.step_agent()
            return state_of(session, seat, sid, since)

        try:
            return JSONResponse(await run_in_threadpool(work))
        except SessionError as exc:
            return error(500, str(exc))

    @with_session
    async def skip(request: Request, sid: str, session: Session, seat: int) -> Response:
        def work() -> dict[str, Any]:
            lower_priority()
            since = len(session.record.moves)
            session.skip(seat)
            return state_of(session, seat, sid, since)

        try:
            return JSONResponse(await run_in_threadpool(work))
        except SessionError as exc:
            return error(500, str(exc))

    @with_session
    async def move(request: Request, sid: str, session: Session, seat: int) -> Response:
        try:
            data = await body_of(request)
        except SessionError as exc:
            return error(400, str(exc))

        def work() -> JSONResponse:
            since = len(session.record.moves)
            if session.over:
                raise SessionError("the game is over")
            if session.to_act() != seat:
                raise SessionError(f"it is not your turn: player_{session.to_act()} is to act")
            if "square" in data:
                square = data["square"]
                if not (isinstance(square, list) and len(square) == 2 and
                        all(isinstance(v, int) and not isinstance(v, bool) for v in square)):
                    raise SessionError("square must be [row, column]")
                view = session.view(seat)
                hits = [(a, n) for a, n in session.legal_moves()
                        if action_square(session.game, view, a) == tuple(square)]
                if not hits:
                    raise SessionError(f"no legal move on row {square[0]}, column {square[1]}")
                if len(hits) > 1:
                    return JSONResponse({"error": "several moves use this square; choose one",
                                         "choices": [{"action": a, "name": n} for a, n in hits]}, status_code=409)
                action = hits[0][0]
            else:
                action = data.get("action")
            session.play(seat, action)
            return JSONResponse(state_of(session, seat, sid, since))

        try:
            return await run_in_threadpool(work)
        except SessionError as exc:
            return error(400, str(exc))

    @with_session
    async def hint(request: Request, sid: str, session: Session, seat: int) -> Response:
        if session.over or session.to_act() != seat:
            return error(409, "a hint is given when it is your move")
        try:
            action, name, agent_id = await run_in_threadpool(session.hint)
        except SessionError as exc:
            return error(409, str(exc))
        return JSONResponse({"action": action, "name": name, "agent": agent_id})

    @with_session
    async def record(request: Request, sid: str, session: Session, seat: int) -> Response:
        if not session.over:
            return error(409, "the record (with the seed, from which the deck follows) is available once the game is over")
        name = f"{session.game_name}-{session.seed}.json"
        return Response(session.record.to_json(), media_type="application/json",
                        headers={"Content-Disposition": f'attachment; filename="{name}"'})

    def glossary_of(request: Request):
        """The glossary of the game the path names; SessionError for a game that is not one of ours."""
        name = request.path_params["game"]
        if name not in envs.NAMES:
            raise unknown_game(name)
        return glossary(envs.game_class(name))

    async def terms(request: Request) -> Response:
        try:
            words = glossary_of(request)
        except SessionError as exc:
            return error(404, str(exc))
        body = words.to_dict()
        body["rules"] = f"/rules/{words.game}" if words.path is not None else None
        query = request.query_params.get("q")
        if query is not None:
            body["query"] = query
            body["found"] = [t.to_dict() for t in words.lookup(query)]
        return JSONResponse(body)

    async def rules(request: Request) -> Response:
        try:
            words = glossary_of(request)
        except SessionError as exc:
            return error(404, str(exc))
        if words.path is None:
            return error(404, f"{words.game} has no rules file")
        return Response(words.path.read_text(encoding="utf-8"), media_type="text/plain; charset=utf-8")

    async def drop(request: Request) -> Response:
        """Leave a game (the page does so when it starts another): its place is free at once."""
        if not store.drop(request.path_params["sid"]):
            return error(404, "no such game")
        return JSONResponse({"dropped": True})

    async def http_error(request: Request, exc: HTTPException) -> Response:
        return error(exc.status_code, f"{request.method} {request.url.path}: {exc.detail}")

    async def unexpected(request: Request, exc: Exception) -> Response:
        # Starlette raises the error again after this answer: the Guard outside sees it logged already.
        return error(500, internal_error_text(log_unexpected(request.scope, exc)))

    routes = [
        Route("/", index),
        Route("/app.js", script),
        Route("/favicon.ico", favicon),
        Route("/api/games", games),
        Route("/api/sessions", create, methods=["POST"]),
        Route("/api/sessions/{sid}", show),
        Route("/api/sessions/{sid}", drop, methods=["DELETE"]),
        Route("/api/sessions/{sid}/advance", advance, methods=["POST"]),
        Route("/api/sessions/{sid}/skip", skip, methods=["POST"]),
        Route("/api/sessions/{sid}/move", move, methods=["POST"]),
        Route("/api/sessions/{sid}/hint", hint),
        Route("/api/sessions/{sid}/record", record),
        Route("/api/terms/{game}", terms),
        Route("/rules/{game}", rules),
    ]
    app = Starlette(routes=routes, exception_handlers={HTTPException: http_error, Exception: unexpected})
    return Guard(app)


def serve(host: str = "127.0.0.1", port: int = 8000, max_games: int = MAX_SESSIONS,
          idle_seconds: float = IDLE_SECONDS) -> None:
    import sys

    import uvicorn

    # Agents think in worker threads; a short switch interval lets the event loop take the GIL back
    # from a thinking agent within a millisecond, so other games' requests are not held up.
    sys.setswitchinterval(SWITCH_INTERVAL)
    store = Store(limit=max_games, idle_seconds=idle_seconds)
    if not LOG.handlers:  # the server's log: standard error, beside uvicorn's own lines
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        LOG.addHandler(handler)
        LOG.setLevel(logging.INFO)
    print(f"Open http://{host}:{port}/ in a browser (Ctrl-C stops the server); up to {max_games} games, "
          f"each dropped after {idle_seconds:g} s unused.")
    uvicorn.run(create_app(store), host=host, port=port, log_level="warning")
