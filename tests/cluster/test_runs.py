"""Run records with their TTL, and failing a lost node's runs (docs/cluster.md#runs)."""

from __future__ import annotations

import asyncio
from typing import Any

from multiplex.cluster import NODE_LOST
from tests.cluster.conftest import NodeFactory


def _doc(run_id: str, status: str) -> dict[str, object]:
    return {"run_id": run_id, "profile": "alpha", "status": status, "results": []}


def test_a_record_written_on_one_node_is_read_on_another(
    node: NodeFactory, redis_server: Any
) -> None:
    a, b = node("a", run_ttl=120), node("b")

    async def scenario() -> None:
        a.runs.put(_doc("run-1", "running"))
        doc = await b.runs.get("run-1")
        assert doc is not None and doc["status"] == "running" and doc["node"] == "a"
        assert doc["results"] == []
        assert 0 < redis_server.client().ttl("multiplex:run:run-1") <= 120
        assert await b.runs.owned_by("a") == ["run-1"]
        a.runs.put(_doc("run-1", "completed"))
        assert await b.runs.owned_by("a") == []  # final: no longer the node's
        assert await b.runs.get("run-unknown") is None

    asyncio.run(scenario())


def test_the_default_ttl_is_a_day(node: NodeFactory, redis_server: Any) -> None:
    node("a").runs.put(_doc("run-2", "queued"))
    assert 86_000 < redis_server.client().ttl("multiplex:run:run-2") <= 86_400


def test_a_lost_nodes_run_fails_unless_it_finished(node: NodeFactory) -> None:
    a, b = node("a"), node("b")
    a.runs.put(_doc("run-live", "waiting_for_approval"))
    a.runs.put(_doc("run-done", "running"))
    a.runs.put(_doc("run-done", "completed"))

    async def scenario() -> None:
        failed = await b.runs.fail_lost("a", "run-live")
        assert failed is not None
        assert (failed["status"], failed["error"], failed["pending_approval"]) == (
            "failed",
            NODE_LOST,
            None,
        )
        assert failed["finished_at"] is not None and failed["results"] == []
        assert await b.runs.fail_lost("a", "run-done") is None
        again = await b.runs.get("run-done")
        assert again is not None and again["status"] == "completed"
        assert await b.runs.owned_by("a") == []

    asyncio.run(scenario())


def test_a_final_record_is_never_overwritten(node: NodeFactory) -> None:
    """A node judged lost while it only paused cannot turn "node lost" into a success."""
    a, b = node("a"), node("b")
    a.runs.put(_doc("run-paused", "running"))

    async def scenario() -> None:
        assert await b.runs.fail_lost("a", "run-paused") is not None
        a.runs.put(_doc("run-paused", "completed"))  # the paused node wakes up and writes
        seen = await b.runs.get("run-paused")
        assert seen is not None and (seen["status"], seen["error"]) == ("failed", NODE_LOST)
        assert await b.runs.owned_by("a") == []
        a.runs.put(_doc("run-paused", "running"))  # nor back to running
        again = await b.runs.get("run-paused")
        assert again is not None and again["status"] == "failed"
        assert await b.runs.owned_by("a") == []

    asyncio.run(scenario())
