"""32 browser-API clients at once against one play server on 127.0.0.1: every game played to its
end without an error (four against a search agent, whose moves run off the event loop), and every
game's memory freed once it is left or has expired. Latency is the benchmark's business
(``python -m benchmarks.play_load``), never asserted here."""

from __future__ import annotations

import gc
import weakref

import pytest

pytest.importorskip("uvicorn")
pytest.importorskip("starlette")

from benchmarks.play_load import Server, call, plans, run_load  # noqa: E402  (after the skip checks)
from play.web import Store, create_app  # noqa: E402

CLIENTS = 32
SEARCH = 4


class Clock:
    def __init__(self) -> None:
        self.offset = 0.0

    def __call__(self) -> float:
        import time

        return time.monotonic() + self.offset


def test_thirty_two_clients_at_once_then_every_game_is_freed():
    import torch

    torch.set_num_threads(1)
    clock = Clock()
    store = Store(limit=CLIENTS, idle_seconds=600, clock=clock)
    sessions: weakref.WeakSet = weakref.WeakSet()
    most = [0]

    def watch(session, seat, body):
        sessions.add(session)
        most[0] = max(most[0], len(store))

    client_plans = plans(CLIENTS, SEARCH, search_cycles=2, seed=100)
    assert sum(p.searching for p in client_plans) == SEARCH
    with Server(create_app(store, on_response=watch)) as server:
        results = run_load(server.host, server.port, client_plans)
        errors = [f"{r.plan.game} vs {r.plan.opponent}: {e}" for r in results for e in r.errors]
        assert not errors, errors[:5]
        assert len(results) == CLIENTS and all(r.over and r.moves >= 1 for r in results)
        assert {r.plan.game for r in results} == {"sequence_v0", "pans_trial_v0", "dojo_v0", "wizard_arena_v0"}
        assert most[0] <= CLIENTS
        # Half the clients left their game; the other half stay until their games expire.
        assert len(store) == sum(not p.leave for p in client_plans)
        clock.offset += 601
        status, body = call(_conn(server), "POST", "/api/sessions",
                            {"game": "wizard_arena_v0", "config": "2bots", "max_cycles": 2})
        assert status == 200 and len(store) == 1  # the expired games made room, and are gone
        gc.collect()
        assert len(sessions) == 1, f"{len(sessions)} games still held in memory"


def _conn(server):
    import http.client

    return http.client.HTTPConnection(server.host, server.port, timeout=60)
