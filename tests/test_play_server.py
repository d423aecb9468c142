"""The play server's API without a browser: agents that fit the table, JSON errors for every request,
games expiring by idle time, a full server refusing with 503, the favicon; and the terminal's answer
to an opponent trained for another table."""

from __future__ import annotations

import http.client
import json
import logging
import os
import pathlib
import re
import select
import socket
import subprocess
import sys

import pytest

pytest.importorskip("uvicorn")
pytest.importorskip("starlette")

from benchmarks.play_load import Server, ServerProcess, call  # noqa: E402  (after the skip checks)
from play.session import Session, SessionError, agent_misfit, agents_for, make_game  # noqa: E402
from play.web import MAX_BODY, Store, StoreFull, create_app  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]
TEAMS = "sequence_v0/ppo-teams-v1"  # trained for 2 teams of 2


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _session() -> Session:
    return Session("wizard_arena_v0", ["human", "wizard_arena_v0/random-v0"], config="2bots", seed=1)


# ----------------------------------------------------------------------------------------------
# Which agents may sit at a table
def test_a_policy_is_offered_only_at_the_table_it_was_trained_for():
    two = agents_for("sequence_v0", "2p")
    teams = agents_for("sequence_v0", "2x2")
    assert TEAMS not in two and TEAMS in teams
    assert "sequence_v0/ppo-v1" in two and "sequence_v0/ppo-v1" not in teams
    for table in (two, teams):  # heuristics and random sit anywhere
        assert {"sequence_v0/heuristic-v1", "sequence_v0/random-v0"} <= set(table)
    misfit = agent_misfit(TEAMS, make_game("sequence_v0", "2p"))
    assert "trained for another table" in misfit and "players_per_team" in misfit
    assert agent_misfit(TEAMS, make_game("sequence_v0", "2x2")) is None


def test_a_session_refuses_an_opponent_trained_for_another_table():
    with pytest.raises(SessionError, match=r"seat 1: sequence_v0/ppo-teams-v1 was trained for another table.*"
                                           r"agents for this table: [^\[]*sequence_v0/ppo-v1"):
        Session("sequence_v0", ["human", TEAMS], config="2p")


def test_the_terminal_says_so_in_one_line_and_exits_non_zero():
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-m", "play", "terminal", "sequence_v0", "--opponents", TEAMS],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert done.returncode != 0
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        "python -m play: error: seat 1: sequence_v0/ppo-teams-v1 was trained for another")
    assert done.returncode == 2


# ----------------------------------------------------------------------------------------------
# The store: expiry by idle time, a game in use never dropped, full means refused
def test_idle_games_expire_and_used_ones_stay():
    clock = Clock()
    store = Store(limit=3, idle_seconds=60, clock=clock)
    old, kept = store.add(_session(), 0), store.add(_session(), 0)
    clock.now += 50
    store.get(kept)  # asked about: its idle time starts again
    clock.now += 20
    with pytest.raises(KeyError):
        store.get(old)
    assert store.get(kept).seat == 0 and len(store) == 1


def test_a_game_being_worked_on_never_expires():
    clock = Clock()
    store = Store(limit=2, idle_seconds=10, clock=clock)
    sid = store.add(_session(), 0)
    store.get(sid).busy = 1  # an agent thinking in it for longer than the idle time
    clock.now += 100
    store.expire()
    assert len(store) == 1
    store.get(sid).busy = 0
    clock.now += 11
    store.expire()
    assert len(store) == 0


def test_a_full_store_refuses_rather_than_drop_a_live_game():
    clock = Clock()
    store = Store(limit=2, idle_seconds=10, clock=clock)
    first = store.add(_session(), 0)
    store.add(_session(), 0)
    with pytest.raises(StoreFull, match="the server is full: 2 games"):
        store.add(_session(), 0)
    assert store.get(first)  # still there
    clock.now += 11  # both idle now: a new game takes a place
    store.add(_session(), 0)
    assert len(store) == 1


def test_a_store_needs_room_and_time():
    with pytest.raises(ValueError):
        Store(limit=0)
    with pytest.raises(ValueError):
        Store(idle_seconds=0)


# ----------------------------------------------------------------------------------------------
# Through HTTP
def _conn(server) -> http.client.HTTPConnection:
    return http.client.HTTPConnection(server.host, server.port, timeout=60)


START = {"game": "wizard_arena_v0", "config": "2bots", "opponents": "wizard_arena_v0/random-v0", "max_cycles": 5}


def test_full_server_answers_503_and_expired_games_404():
    clock = Clock()
    store = Store(limit=2, idle_seconds=30, clock=clock)
    with Server(create_app(store)) as server:
        conn = _conn(server)
        ids = [call(conn, "POST", "/api/sessions", START)[1]["id"] for _ in range(2)]
        status, body = call(conn, "POST", "/api/sessions", START)
        assert status == 503 and "the server is full: 2 games" in body["error"]
        status, body = call(conn, "GET", f"/api/sessions/{ids[0]}")
        assert status == 200 and body["id"] == ids[0]
        clock.now += 31
        status, body = call(conn, "GET", f"/api/sessions/{ids[0]}")
        assert status == 404 and "expired after 30 s unused" in body["error"]
        status, body = call(conn, "POST", "/api/sessions", START)
        assert status == 200
        assert call(conn, "DELETE", f"/api/sessions/{body['id']}")[0] == 200
        assert call(conn, "DELETE", f"/api/sessions/{body['id']}")[0] == 404
        assert len(store) == 0


def test_every_answer_a_page_can_get_is_json(caplog):
    failing = {"on": False}

    def on_response(session, seat, body):
        if failing["on"]:
            raise RuntimeError("a fault planted by the test")

    with Server(create_app(on_response=on_response)) as server:
        conn = _conn(server)
        status, body = call(conn, "GET", "/api/games")
        catalogue = {g["name"]: g for g in body["games"]}
        assert TEAMS not in catalogue["sequence_v0"]["agents_by_config"]["2p"]
        assert TEAMS in catalogue["sequence_v0"]["agents_by_config"]["2x2"]
        status, body = call(conn, "POST", "/api/sessions",
                            {"game": "sequence_v0", "config": "2p", "opponents": TEAMS})
        assert status == 400 and "trained for another table" in body["error"]
        status, body = call(conn, "GET", "/api/nothing-here")
        assert status == 404 and "/api/nothing-here" in body["error"]
        status, body = call(conn, "PUT", "/api/sessions")
        assert status == 405 and "error" in body
        failing["on"] = True
        with caplog.at_level(logging.ERROR, logger="play.web"):
            status, body = call(conn, "POST", "/api/sessions", START)
        # the page is told that something failed and where to look, never what (no type, no traceback)
        said = re.fullmatch(r"internal error \(id ([0-9a-f]{8})\); see the server log", body["error"])
        assert status == 500 and said, body
        logged = [r for r in caplog.records if r.name == "play.web"]
        assert len(logged) == 1 and said.group(1) in logged[0].getMessage()
        assert "POST /api/sessions" in logged[0].getMessage()
        assert logged[0].exc_info[0] is RuntimeError and "a fault planted by the test" in caplog.text
        assert "Traceback" in caplog.text
        conn = _conn(server)  # the failed request may have closed the connection
        conn.request("GET", "/favicon.ico")
        response = conn.getresponse()
        icon = response.read()
        assert response.status == 200 and response.getheader("Content-Type") == "image/x-icon"
        assert icon[:4] == b"\x00\x00\x01\x00"  # an ICO file's header


def test_two_moves_at_once_cannot_both_land():
    import threading

    with Server(create_app()) as server:
        status, state = call(_conn(server), "POST", "/api/sessions", dict(START, seed=3))
        assert status == 200 and state["your_turn"]
        sid, action = state["id"], state["moves"][0]["action"]
        answers: list[tuple[int, dict]] = []

        def click():
            answers.append(call(_conn(server), "POST", f"/api/sessions/{sid}/move", {"action": action}))

        threads = [threading.Thread(target=click) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sorted(a[0] for a in answers) == [200, 400, 400, 400]
        assert all("not your turn" in a[1]["error"] for a in answers if a[0] == 400)
        status, state = call(_conn(server), "GET", f"/api/sessions/{sid}")
        assert state["num_moves"] == 1


# ----------------------------------------------------------------------------------------------
# Limits before work: an over-large body is refused unread, and an unexpected error says only its id
MB = 1024 * 1024


def _rss(pid: int) -> int:
    """The resident memory of process ``pid`` in bytes (Linux)."""
    for line in pathlib.Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS line")


def _send_large(host: str, port: int, total: int, chunked: bool, piece: int = 64 * 1024) -> tuple[int, bytes]:
    """POST a body of ``total`` bytes (declared by Content-Length, or chunked) piece by piece, stopping
    as soon as the server answers or closes; returns (body bytes sent, the answer)."""
    head = ("POST /api/sessions HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n"
            + ("Transfer-Encoding: chunked\r\n" if chunked else f"Content-Length: {total}\r\n") + "\r\n")
    data = b"x" * piece
    sent = 0
    with socket.create_connection((host, port), timeout=60) as sock:
        sock.sendall(head.encode())
        try:
            while sent < total and not select.select([sock], [], [], 0)[0]:
                sock.sendall(f"{piece:x}\r\n".encode() + data + b"\r\n" if chunked else data)
                sent += piece
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server answered and closed the connection: the rest is never read
        answer = b""
        try:
            while chunk := sock.recv(65536):
                answer += chunk
        except ConnectionResetError:
            pass
    return sent, answer


def _status_and_error(answer: bytes) -> tuple[int, str]:
    head, _, body = answer.partition(b"\r\n\r\n")
    return int(head.split()[1]), json.loads(body)["error"]


@pytest.mark.skipif(not pathlib.Path("/proc/self/status").exists(), reason="reads the memory of a process from /proc")
def test_a_60_mb_body_is_refused_413_unread_and_the_server_memory_stays_flat():
    with ServerProcess(max_games=4) as server:
        pid = server.process.pid
        status, _ = call(_conn(server), "POST", "/api/sessions", START)  # a game, to warm the server up
        assert status == 200
        before = _rss(pid)
        sent, answer = _send_large(server.host, server.port, 60 * MB, chunked=False)
        after = _rss(pid)
        status, said = _status_and_error(answer)
        assert status == 413 and said.startswith("the request body is larger than 16 KiB")
        # at most what the sockets' buffers took before the answer came back; the server read none of it
        assert sent <= 16 * MB, sent
        assert after - before < 8 * MB, (before, after)
        # the server goes on serving
        status, body = call(_conn(server), "POST", "/api/sessions", START)
        assert status == 200 and not body["over"]


def test_a_chunked_body_is_read_only_past_the_limit_and_one_within_it_is_served():
    with Server(create_app()) as server:
        sent, answer = _send_large(server.host, server.port, 60 * MB, chunked=True)
        status, said = _status_and_error(answer)
        assert status == 413 and "16 KiB" in said
        assert sent <= 16 * MB, sent
        # a chunked body within the limit reaches the app whole
        body = json.dumps(START).encode()
        with socket.create_connection((server.host, server.port), timeout=60) as sock:
            sock.sendall(b"POST /api/sessions HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n"
                         b"Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n")
            for part in (body[:10], body[10:]):
                sock.sendall(f"{len(part):x}\r\n".encode() + part + b"\r\n")
            sock.sendall(b"0\r\n\r\n")
            answer = b""
            while chunk := sock.recv(65536):
                answer += chunk
        head, _, text = answer.partition(b"\r\n\r\n")
        assert head.split()[1] == b"200" and json.loads(text)["game"] == "wizard_arena_v0"
        # a body just over the limit with its length given: 413 as well, through an ordinary client
        conn = _conn(server)
        conn.request("POST", "/api/sessions", body=b" " * (MAX_BODY + 1), headers={"Content-Type": "application/json"})
        response = conn.getresponse()
        assert response.status == 413 and "larger than" in json.loads(response.read())["error"]
