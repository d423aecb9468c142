"""Past one machine: the league, the tournament and the simulator played on a Ray cluster
(``--ray-address``) give the same results as the local pool for the same seed.

The test starts its own cluster on 127.0.0.1, a head node and one worker node of one CPU each, so
Ray's pool (one process per CPU of the cluster) has a worker on each node. Needs the ``rllib``
extra (``pip install -e '.[rllib]'``); CI installs only ``.[dev]``, so the module is skipped there
with that reason. Starting the nodes takes a while on a busy machine: everything shares one cluster.
"""

from __future__ import annotations

import shutil
import tempfile

import pytest

ray = pytest.importorskip(
    "ray", reason="ray is not installed: these tests need the rllib extra (pip install -e '.[rllib]')"
)

from ray.cluster_utils import Cluster  # noqa: E402

from agents import pool  # noqa: E402
from tools import simulate, tournament  # noqa: E402
from training.league import matches  # noqa: E402

NODE = {"num_cpus": 1, "node_ip_address": "127.0.0.1", "object_store_memory": 100 * 1024 * 1024}


@pytest.fixture(scope="module")
def address():
    import ray._private.ray_constants as ray_constants

    folder = tempfile.mkdtemp(prefix="trl-ray-", dir="/tmp")  # short: Ray's socket paths live below it
    with pytest.MonkeyPatch.context() as patch:
        # Ray's own files (and the "current cluster" note that a plain ray.init() follows) in a folder
        # of this test's, so that no other Ray user on the machine joins this cluster by mistake.
        patch.setenv("RAY_TMPDIR", folder)
        # Ray turns 127.0.0.1 into the machine's network address before it connects, unless told the
        # cluster is local only (its setting for laptops); the nodes listen on 127.0.0.1 alone.
        patch.setenv("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
        patch.setattr(ray_constants, "ENABLE_RAY_CLUSTER", False)
        cluster = Cluster(initialize_head=True, connect=False, head_node_args={**NODE, "include_dashboard": False})
        try:
            cluster.add_node(**NODE)
            cluster.wait_for_nodes()
            yield cluster.address
        finally:
            ray.shutdown()
            cluster.shutdown()
            shutil.rmtree(folder, ignore_errors=True)


def node_of(_task) -> str:
    """The Ray node a pool process runs on."""
    return ray.get_runtime_context().get_node_id()


def test_the_cluster_has_a_head_and_a_worker_node_and_the_pool_uses_both(address):
    assert pool.map_ordered(abs, [-3, 4, -5], ray_address=address) == [3, 4, 5]
    alive = [node for node in ray.nodes() if node["Alive"]]
    assert len(alive) == 2 and {node["NodeManagerAddress"] for node in alive} == {"127.0.0.1"}
    used = set(pool.map_ordered(node_of, range(8), ray_address=address))
    assert used == {node["NodeID"] for node in alive}


def test_the_league_on_ray_gives_the_local_results(address):
    lineups = [("sequence_v0/heuristic-v1", "sequence_v0/random-v0")]
    local = matches.evaluate("sequence_v0", lineups, games=4, workers=1, progress=False)
    remote = matches.evaluate("sequence_v0", lineups, games=4, workers=None, progress=False, ray_address=address)
    assert remote["ray_address"] == address
    for key in ("games", "lineups", "league", "games_per_lineup", "stop_reason", "end_reasons"):
        assert remote[key] == local[key], key


def test_the_tournament_on_ray_prints_the_local_tables(address, capsys):
    argv = ["--num-bots", "3", "--games", "3", "-H", "3", "--map-size", "8", "--max-cycles", "30", "--plain",
            "--no-progress", "--boards"]
    tournament.main(argv)
    local = capsys.readouterr().out
    tournament.main(argv + ["--ray-address", address])
    assert capsys.readouterr().out == local


def test_the_simulator_on_ray_reports_the_local_numbers(address, tmp_path):
    argv = ["dojo_v0", "--games", "2", "--agents", "random", "--no-progress", "--max-cycles", "30",
            "--out", str(tmp_path / "sim.png"), "--vary", "num_players=2,3"]
    local = simulate.main(argv)
    remote = simulate.main(argv + ["--ray-address", address])
    assert remote["default"] == local["default"] and remote["variants"] == local["variants"]
