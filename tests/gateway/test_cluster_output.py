"""A command's output on a cluster node: live across nodes, and no write of its own
when the command ends at once (docs/cluster.md#cost)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.gateway.cluster_nodes import Node, make_cluster_homes
from tests.gateway.conftest import ADMIN, Api, SseReader

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def pair(redis_server: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[Node]]:
    if redis_server.proc is None:
        redis_server.start()
    root = tmp_path_factory.mktemp("pair")
    make_cluster_homes(root)
    nodes: list[Node] = []
    try:
        nodes.append(Node(root, "out-a", redis_server.url))
        nodes.append(Node(root, "out-b", redis_server.url, watch="off"))
        yield nodes
    finally:
        for node in nodes:
            node.stop()


def _scripts_of(api: Api, redis: Any, command: str) -> int:
    """The scripts Redis ran for one run of ``command`` (a node idle between runs runs
    none: its heartbeats and reads are plain commands)."""

    def calls() -> int:
        stats = redis.client().info("commandstats").get("cmdstat_evalsha", {})
        return int(stats.get("calls", 0))

    before = calls()
    run_id = api.submit([command], profile="delta")
    assert api.wait(run_id)["status"] == "completed"
    return calls() - before


def test_output_of_a_command_that_ends_at_once_shares_its_end_s_write(
    pair: list[Node], redis_server: Any
) -> None:
    a = pair[0].admin
    _scripts_of(a, redis_server, "sleep 0")  # the scripts are loaded by the first run
    silent = _scripts_of(a, redis_server, "sleep 0")
    assert silent == 2  # run.started; the command's end with the run's (docs/cluster.md#cost)
    # A loaded machine may take more than the 20 ms from the output to the command's
    # end, and the output then goes out alone: one run of ten that shares is enough,
    # and before the change none ever did.
    spoken = [_scripts_of(a, redis_server, "echo ok spoken") for _ in range(10)]
    assert silent in spoken, (silent, spoken)
    run_id = a.submit(["echo ok spoken"], profile="delta")
    assert a.wait(run_id)["results"][0]["stdout"] == "ok spoken\n"


def test_output_reaches_another_node_while_the_command_still_runs(pair: list[Node]) -> None:
    a, b = pair
    headers = {"Authorization": f"Bearer {ADMIN}"}
    with (
        httpx.Client(base_url=b.base, headers=headers) as client,
        client.stream("GET", "/v1/events", timeout=30) as response,
    ):
        stream = SseReader(response)
        run_id = a.admin.submit(["echo ok early; sleep 2; echo ok late"], profile="delta")
        name, data = stream.until(lambda n, d: d.get("run_id") == run_id and n != "run.started")
        early = time.monotonic()
        assert (name, data["text"], data["offset"]) == ("command.output", "ok early\n", 0)
        name, data = stream.until(lambda n, d: d.get("run_id") == run_id)
        assert (name, data["text"], data["offset"]) == ("command.output", "ok late\n", 9)
        assert time.monotonic() - early > 1.0  # the first line came as it was written
        name, data = stream.until(lambda n, d: d.get("run_id") == run_id)
        assert name == "command.finished" and data["stdout"] == "ok early\nok late\n"
        # One that ends at once: its output, held a moment, still comes before its end.
        run_id = a.admin.submit(["echo ok quick"], profile="delta")
        names = [stream.until(lambda n, d: d.get("run_id") == run_id)[0] for _ in range(4)]
        assert names == ["run.started", "command.output", "command.finished", "run.finished"]
