"""The browser front end: a small Starlette app serving one page and a JSON API.

``python -m play serve`` starts it with uvicorn on 127.0.0.1. The page (``play/static``: plain
HTML, JavaScript and SVG, no build step) lets you pick a game, a config, your seat and the
opponents, then play by clicking squares or move buttons.

What the browser is told is built from the human seat's ``player_view`` alone (the board picture
of :mod:`play.views`), the legal moves when that seat is to act, and the other seats' moves as
that seat may see them (hidden choices unnamed). The seed — from which the deck order follows —
and the record are only handed out once the game is over.

API (JSON):

=======================================  ==========================================================
``GET  /api/games``                      games, their named configs and seat counts, agents
``POST /api/sessions``                   ``{game, config, seat, opponents, seed?, max_cycles?}``
``GET  /api/sessions/{id}``              the seat's state (``?since=k``: events after move k)
``POST /api/sessions/{id}/advance``      one agent move (the page calls it one by one)
``POST /api/sessions/{id}/move``         ``{action}`` or ``{square: [r, c]}``; illegal: 400
``GET  /api/sessions/{id}/hint``         what the game's best heuristic would play for you now
``GET  /api/sessions/{id}/record``       the record, once the game is over (409 before)
=======================================  ==========================================================
"""

from __future__ import annotations

import collections
import json
import pathlib
import secrets
from collections.abc import Callable
from typing import Any

import agents
import envs
from agents.records import HUMAN
from play.session import (
    Session,
    SessionError,
    config_families,
    default_hint_agent,
    resolve_config,
    seat_count,
)
from play.views import action_square, picture

STATIC = pathlib.Path(__file__).with_name("static")
MAX_BODY = 16 * 1024
MAX_SESSIONS = 64


class Store:
    """Sessions by random id, oldest dropped beyond ``limit``; each with its one human seat."""

    def __init__(self, limit: int = MAX_SESSIONS) -> None:
        self.limit = limit
        self.items: collections.OrderedDict[str, tuple[Session, int]] = collections.OrderedDict()

    def add(self, session: Session, seat: int) -> str:
        sid = secrets.token_urlsafe(16)
        self.items[sid] = (session, seat)
        while len(self.items) > self.limit:
            self.items.popitem(last=False)
        return sid

    def get(self, sid: str) -> tuple[Session, int]:
        if sid not in self.items:
            raise KeyError(sid)
        self.items.move_to_end(sid)
        return self.items[sid]


def games_catalogue() -> list[dict[str, Any]]:
    out = []
    for name in envs.NAMES:
        families = config_families(name)
        seats = {k: seat_count(name, v) for k, v in families.items()}
        out.append({"name": name, "configs": families, "seats": seats, "agents": agents.available(name),
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
    body = {
        "id": sid,
        "game": session.game_name,
        "config": session.game.config,
        "seat": seat,
        "seats": [("you" if i == seat else who) for i, who in enumerate(session.seats)],
        "to_act": to_act,
        "your_turn": mine,
        "phase": session.phase,
        "picture": picture(session.game, view).to_dict(),
        "moves": moves,
        "events": session.events_for(seat, since),
        "num_moves": len(session.record.moves),
        "over": over,
        "result": session.describe_result() if over else None,
        "seed": session.seed if over else None,
    }
    return body


def create_app(store: Store | None = None,
               on_response: Callable[[Session, int, dict[str, Any]], None] | None = None):
    """The Starlette app. ``on_response(session, seat, body)`` sees every state sent (for tests)."""
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import FileResponse, JSONResponse, Response
    from starlette.routing import Route

    store = store or Store()

    def error(status: int, message: str) -> JSONResponse:
        return JSONResponse({"error": message}, status_code=status)

    async def body_of(request: Request) -> dict[str, Any]:
        raw = await request.body()
        if len(raw) > MAX_BODY:
            raise SessionError(f"request body larger than {MAX_BODY} bytes")
        try:
            data = json.loads(raw or b"{}")
        except ValueError:
            raise SessionError("request body is not JSON") from None
        if not isinstance(data, dict):
            raise SessionError("request body must be a JSON object")
        return data

    def state_response(session: Session, seat: int, sid: str, since: int = 0, status: int = 200) -> JSONResponse:
        body = seat_state(session, seat, sid, since)
        if on_response is not None:
            on_response(session, seat, body)
        return JSONResponse(body, status_code=status)

    def with_session(handler):
        """Route ``handler(request, sid, session, seat)`` for ``/api/sessions/{sid}/...``; an unknown
        (or expired) session id answers 404 before the handler runs."""

        async def route(request: Request) -> Response:
            sid = request.path_params["sid"]
            try:
                session, seat = store.get(sid)
            except KeyError:
                return error(404, "no such game (the server keeps the most recent games only)")
            return await handler(request, sid, session, seat)

        return route

    async def index(request: Request) -> Response:
        return FileResponse(STATIC / "index.html", media_type="text/html")

    async def script(request: Request) -> Response:
        return FileResponse(STATIC / "app.js", media_type="text/javascript")

    async def games(request: Request) -> Response:
        return JSONResponse({"games": games_catalogue()})

    async def create(request: Request) -> Response:
        try:
            data = await body_of(request)
            game = data.get("game")
            if game not in envs.NAMES:
                raise SessionError(f"unknown game {game!r}; games: {list(envs.NAMES)}")
            name = data.get("config")
            if name is not None and not isinstance(name, str):
                raise SessionError("config must be the name of one of the game's configs "
                                   f"({sorted(config_families(game))})")
            config = resolve_config(game, name)
            max_cycles = data.get("max_cycles")
            if max_cycles is not None and (isinstance(max_cycles, bool) or not isinstance(max_cycles, int)
                                           or not 1 <= max_cycles <= 100_000):
                raise SessionError(f"max_cycles must be an integer in [1, 100000], got {max_cycles!r}")
            n = seat_count(game, config)
            seat = data.get("seat", 0)
            if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < n:
                raise SessionError(f"seat must be an integer in [0, {n}), got {seat!r}")
            opponents = data.get("opponents") or default_hint_agent(game)
            if isinstance(opponents, str):
                opponents = [opponents] * (n - 1)
            if not isinstance(opponents, list) or len(opponents) != n - 1 or \
                    not all(isinstance(o, str) for o in opponents):
                raise SessionError(f"opponents must be one agent id or a list of {n - 1} agent ids")
            seats = list(opponents)
            seats.insert(seat, HUMAN)
            session = Session(game, seats, config=config, seed=data.get("seed"), max_cycles=max_cycles,
                              meta={"source": "play serve"})
        except SessionError as exc:
            return error(400, str(exc))
        except Exception as exc:  # a ConfigError from the game says what is allowed
            if type(exc).__name__ == "ConfigError":
                return error(400, str(exc))
            raise
        sid = store.add(session, seat)
        return state_response(session, seat, sid)

    @with_session
    async def show(request: Request, sid: str, session: Session, seat: int) -> Response:
        try:
            since = int(request.query_params.get("since", "0"))
        except ValueError:
            return error(400, "since must be an integer")
        return state_response(session, seat, sid, max(0, since))

    @with_session
    async def advance(request: Request, sid: str, session: Session, seat: int) -> Response:
        since = len(session.record.moves)
        session.step_agent()
        return state_response(session, seat, sid, since)

    @with_session
    async def move(request: Request, sid: str, session: Session, seat: int) -> Response:
        since = len(session.record.moves)
        try:
            data = await body_of(request)
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
        except SessionError as exc:
            return error(400, str(exc))
        return state_response(session, seat, sid, since)

    @with_session
    async def hint(request: Request, sid: str, session: Session, seat: int) -> Response:
        if session.over or session.to_act() != seat:
            return error(409, "a hint is given when it is your move")
        action, name, agent_id = session.hint()
        return JSONResponse({"action": action, "name": name, "agent": agent_id})

    @with_session
    async def record(request: Request, sid: str, session: Session, seat: int) -> Response:
        if not session.over:
            return error(409, "the record (with the seed, from which the deck follows) is available once the game is over")
        name = f"{session.game_name}-{session.seed}.json"
        return Response(session.record.to_json(), media_type="application/json",
                        headers={"Content-Disposition": f'attachment; filename="{name}"'})

    routes = [
        Route("/", index),
        Route("/app.js", script),
        Route("/api/games", games),
        Route("/api/sessions", create, methods=["POST"]),
        Route("/api/sessions/{sid}", show),
        Route("/api/sessions/{sid}/advance", advance, methods=["POST"]),
        Route("/api/sessions/{sid}/move", move, methods=["POST"]),
        Route("/api/sessions/{sid}/hint", hint),
        Route("/api/sessions/{sid}/record", record),
    ]
    return Starlette(routes=routes)


def serve(host: str = "127.0.0.1", port: int = 8000) -> None:
    import uvicorn

    print(f"Open http://{host}:{port}/ in a browser (Ctrl-C stops the server).")
    uvicorn.run(create_app(), host=host, port=port, log_level="warning")
