"""The play server under load: many browser-API clients at once, some against a search agent.

    python -m benchmarks.play_load                       # 32 clients, 4 of them against ppo-search-v6
    python -m benchmarks.play_load --clients 16 --search 2 --out results/play_load.json

A server (``python -m play serve``) is started on 127.0.0.1 in a process of its own. Each client
plays one whole game through the JSON API the page uses: it starts a game,
asks for the state (``GET /api/sessions/{id}``, "a plain state request") before every step
(``--pace`` seconds apart on average, as the page paces the agents' moves), plays a
random legal move when it is to act and asks the agent to move (``/advance``) otherwise, and leaves
the game at the end (every other client leaves it to expire instead). Most clients play against
``random-v0`` in the four games; ``--search`` of them play Pan's Trial against a search agent whose
moves take far longer than a request.

Reported: the 95th percentile (and median, max) of the plain state requests of the random-agent
clients made while at least one search agent was thinking (goal: under 200 ms on two cores), every
client's requests and errors, and, as the machine's yardstick, PettingZoo's connect_four_v3 env steps
per second measured in the same run. Latency is measured here, never asserted in a test; the test
suite runs the same load (``tests/test_play_load.py``) and checks only that it has no error.
"""

from __future__ import annotations

import argparse
import http.client
import json
import pathlib
import random
import threading
import time
from dataclasses import dataclass, field
from typing import Any

#: (game, config, max_cycles) of the random-agent clients, taken in turn.
RANDOM_TABLES = [
    ("sequence_v0", "2p", None),
    ("pans_trial_v0", "default", None),
    ("dojo_v0", "2p", 20),
    ("wizard_arena_v0", "2bots", 15),
]
SEARCH_AGENT = "pans_trial_v0/ppo-search-v6"
#: A bound on any one client's requests: a client never loops for ever.
MAX_REQUESTS = 3000


@dataclass
class ClientPlan:
    game: str
    config: str
    max_cycles: int | None
    opponent: str
    seed: int
    leave: bool  # DELETE the game at the end (else it is left to expire)

    @property
    def searching(self) -> bool:
        return "search" in self.opponent


@dataclass
class ClientResult:
    plan: ClientPlan
    requests: int = 0
    moves: int = 0
    over: bool = False
    errors: list[str] = field(default_factory=list)
    state_latencies: list[float] = field(default_factory=list)  # seconds, while a search agent thinks


def plans(clients: int, search: int, search_agent: str = SEARCH_AGENT, search_cycles: int | None = None,
          seed: int = 0) -> list[ClientPlan]:
    """``clients`` plans: ``search`` against ``search_agent`` in its game, the rest against random-v0."""
    if not 0 <= search <= clients:
        raise ValueError(f"search clients must be between 0 and clients ({clients}), got {search}")
    out = []
    for i in range(clients):
        if i < search:
            game = search_agent.split("/", 1)[0]
            out.append(ClientPlan(game, "default", search_cycles, search_agent, seed + i, leave=i % 2 == 0))
        else:
            game, config, cycles = RANDOM_TABLES[i % len(RANDOM_TABLES)]
            out.append(ClientPlan(game, config, cycles, f"{game}/random-v0", seed + i, leave=i % 2 == 0))
    return out


class Searching:
    """How many search clients are in their game now (their agent thinks on most requests)."""

    def __init__(self, none_planned: bool = False) -> None:
        self.lock = threading.Lock()
        self.count = 0
        #: no client plays a search agent: every state request is measured (the baseline)
        self.none_planned = none_planned

    def __enter__(self) -> None:
        with self.lock:
            self.count += 1

    def __exit__(self, *exc: Any) -> None:
        with self.lock:
            self.count -= 1


def call(conn: http.client.HTTPConnection, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    """One request on a kept-alive connection: (status, JSON body)."""
    payload = None if body is None else json.dumps(body)
    conn.request(method, path, body=payload, headers={"Content-Type": "application/json"})
    response = conn.getresponse()
    raw = response.read()
    kind = response.getheader("Content-Type", "")
    if "application/json" not in kind:
        return response.status, {"error": f"not JSON ({kind}): {raw[:80]!r}"}
    return response.status, json.loads(raw)


def play_client(host: str, port: int, plan: ClientPlan, searching: Searching, pace: float = 0.0) -> ClientResult:
    """Play ``plan``'s game to its end through the API, waiting ``pace`` seconds between steps as
    the page does; every unexpected answer is an error."""
    result = ClientResult(plan)
    rng = random.Random(plan.seed)
    conn = http.client.HTTPConnection(host, port, timeout=120)
    try:
        status, state = call(conn, "POST", "/api/sessions", {
            "game": plan.game, "config": plan.config, "seat": 0, "opponents": plan.opponent,
            "seed": plan.seed, **({"max_cycles": plan.max_cycles} if plan.max_cycles else {})})
        result.requests += 1
        if status != 200:
            result.errors.append(f"start: {status} {state.get('error')}")
            return result
        sid = state["id"]
        while not state["over"] and result.requests < MAX_REQUESTS:
            if pace:
                time.sleep(pace * rng.uniform(0.5, 1.5))
            watched = (searching.count > 0 or searching.none_planned) and not plan.searching
            began = time.perf_counter()
            status, state = call(conn, "GET", f"/api/sessions/{sid}?since={state['num_moves']}")
            if watched:
                result.state_latencies.append(time.perf_counter() - began)
            result.requests += 1
            if status != 200:
                result.errors.append(f"state: {status} {state.get('error')}")
                return result
            if state["over"]:
                break
            if state["your_turn"]:
                move = rng.choice(state["moves"])
                status, state = call(conn, "POST", f"/api/sessions/{sid}/move", {"action": move["action"]})
                result.moves += 1
            else:
                status, state = call(conn, "POST", f"/api/sessions/{sid}/advance")
            result.requests += 1
            if status != 200:
                result.errors.append(f"step: {status} {state.get('error')}")
                return result
        result.over = bool(state["over"])
        if not result.over:
            result.errors.append(f"the game did not end within {MAX_REQUESTS} requests")
        if plan.leave:
            status, _ = call(conn, "DELETE", f"/api/sessions/{sid}")
            result.requests += 1
            if status != 200:
                result.errors.append(f"leave: {status}")
    except (OSError, http.client.HTTPException, ValueError, KeyError) as exc:
        result.errors.append(f"{type(exc).__name__}: {exc}")
    finally:
        conn.close()
    return result


def run_load(host: str, port: int, client_plans: list[ClientPlan], pace: float = 0.0) -> list[ClientResult]:
    """Every client in its own thread, all at once; returns when all have finished."""
    searching = Searching(none_planned=not any(p.searching for p in client_plans))
    results: list[ClientResult | None] = [None] * len(client_plans)

    def one(i: int) -> None:
        plan = client_plans[i]
        if plan.searching:
            with searching:
                results[i] = play_client(host, port, plan, searching, pace)
        else:
            results[i] = play_client(host, port, plan, searching, pace)

    threads = [threading.Thread(target=one, args=(i,), daemon=True) for i in range(len(client_plans))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return [r for r in results if r is not None]


def free_port() -> int:
    """A port of 127.0.0.1 that nothing listens on now."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """The play app served by uvicorn from a thread of this process, on a free port of 127.0.0.1."""

    def __init__(self, app: Any) -> None:
        import uvicorn

        self.host, self.port = "127.0.0.1", free_port()
        self.server = uvicorn.Server(uvicorn.Config(app, host=self.host, port=self.port, log_level="warning"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> Server:
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("the play server did not start within 30 s")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)


class ServerProcess:
    """``python -m play serve`` in a process of its own (as a user runs it), on a free port."""

    def __init__(self, max_games: int) -> None:
        self.host, self.port = "127.0.0.1", free_port()
        self.max_games = max_games
        self.process: Any = None

    def __enter__(self) -> ServerProcess:
        import os
        import subprocess
        import sys

        root = str(pathlib.Path(__file__).resolve().parents[1])
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([root, os.environ.get("PYTHONPATH", "")]))
        self.process = subprocess.Popen(
            [sys.executable, "-m", "play", "serve", "--port", str(self.port), "--max-games", str(self.max_games)],
            env=env, cwd=root, stdout=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while True:
            try:
                conn = http.client.HTTPConnection(self.host, self.port, timeout=5)
                conn.request("GET", "/favicon.ico")
                conn.getresponse().read()
                conn.close()
                return self
            except OSError:
                if time.monotonic() > deadline or self.process.poll() is not None:
                    self.process.kill()
                    raise RuntimeError("the play server did not start within 60 s") from None
                time.sleep(0.1)

    def __exit__(self, *exc: Any) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def summary(results: list[ClientResult], seconds: float) -> dict[str, Any]:
    latencies = [x for r in results for x in r.state_latencies]
    ms = (lambda v: None if v is None else round(v * 1000, 1))
    return {
        "clients": len(results),
        "search_clients": sum(r.plan.searching for r in results),
        "seconds": round(seconds, 2),
        "requests": sum(r.requests for r in results),
        "games_finished": sum(r.over for r in results),
        "errors": [f"{r.plan.game} vs {r.plan.opponent}: {e}" for r in results for e in r.errors],
        "state_requests_while_searching": len(latencies),
        "state_ms_p50": ms(percentile(latencies, 0.5)),
        "state_ms_p95": ms(percentile(latencies, 0.95)),
        "state_ms_max": ms(max(latencies) if latencies else None),
    }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    import torch

    torch.set_num_threads(1)
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=32, help="clients at once (default: 32)")
    parser.add_argument("--search", type=int, default=4, help="of them against the search agent (default: 4)")
    parser.add_argument("--search-agent", default=SEARCH_AGENT, help=f"default: {SEARCH_AGENT}")
    parser.add_argument("--search-cycles", type=int, default=None,
                        help="max_cycles of the search games (default: the whole game)")
    parser.add_argument("--pace", type=float, default=0.1,
                        help="seconds a client waits between steps, on average (the page waits 0.25; default: 0.1)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=pathlib.Path, default=None, help="write the report (JSON) here")
    args = parser.parse_args(argv)

    from benchmarks.timing import time_env
    from envs.provenance import provenance
    from pettingzoo.classic import connect_four_v3

    client_plans = plans(args.clients, args.search, args.search_agent, args.search_cycles, args.seed)
    c4 = time_env(connect_four_v3.env, 2.0)
    with ServerProcess(max(64, args.clients)) as server:
        began = time.perf_counter()
        results = run_load(server.host, server.port, client_plans, args.pace)
        report = summary(results, time.perf_counter() - began)
    report["pace_s"] = args.pace
    report["c4_env_steps_per_s"] = round(c4["steps_per_s"])
    report["goal"] = "state_ms_p95 under 200 ms"
    report["provenance"] = provenance(sorted({p.game for p in client_plans}))
    print(json.dumps({k: v for k, v in report.items() if k != "provenance"}, indent=1))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=1) + "\n")
        print(f"written to {args.out}")
    return report


if __name__ == "__main__":
    import sys

    from agents.errors import run_command

    sys.exit(run_command(main, "python -m benchmarks.play_load"))
