"""Heartbeats and node loss: runs fail and prompts end "node lost" (docs/cluster.md#node-loss)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from multiplex.cluster import NODE_LOST
from multiplex.cluster._cluster import LOST_LOOKS
from tests.cluster.conftest import NodeFactory


def test_a_silent_node_is_reaped_once(node: NodeFactory) -> None:
    a, b, c = (node(n, node_timeout=0.5) for n in "abc")

    async def scenario() -> None:
        await a.nodes.beat()
        await b.nodes.beat()
        await c.nodes.beat()
        a.runs.put({"run_id": "run-a", "profile": "alpha", "status": "running", "results": []})
        a.runs.put({"run_id": "run-old", "profile": "alpha", "status": "completed"})
        now = time.time()
        a.approvals.register(
            {"approval_id": "ap-a", "run_id": "run-a", "profile": "alpha", "created_at": now}
        )
        assert await b.nodes.lost() == []
        assert await b.nodes.alive() == ["a", "b", "c"]
        await asyncio.sleep(0.7)  # a stops beating; b and c go on
        await b.nodes.beat()
        await c.nodes.beat()
        assert await b.nodes.lost() == ["a"]
        assert await a.nodes.lost() == []  # a never sees itself as lost; b and c beat
        reaped = await asyncio.gather(b.nodes.reap("a"), c.nodes.reap("a"))
        winners = [r for r in reaped if r is not None]
        assert len(winners) == 1
        lost = winners[0]
        assert [r["run_id"] for r in lost.runs] == ["run-a"]
        assert lost.runs[0]["error"] == NODE_LOST
        assert [p["approval_id"] for p in lost.approvals] == ["ap-a"]
        row = await c.approvals.get("ap-a")
        assert row is not None and row["resolution"]["cancelled"] == NODE_LOST
        assert await c.nodes.lost() == []  # forgotten
        assert await b.approvals.list_open() == []

    asyncio.run(scenario())


def test_a_graceful_leave_is_not_a_loss(node: NodeFactory) -> None:
    a, b = node("a", node_timeout=0.5), node("b", node_timeout=0.5)

    async def scenario() -> None:
        await a.nodes.beat()
        await a.nodes.leave()
        await asyncio.sleep(0.6)
        await b.nodes.beat()
        assert await b.nodes.lost() == []

    asyncio.run(scenario())


def test_a_dead_node_is_found_within_node_timeout(node: NodeFactory, redis_server: Any) -> None:
    """The bound, from the settings and Redis itself (no clock): the heartbeat of a node
    that died just after beating expires by 0.7 x, and the others look every 0.1 x and
    reap on the LOST_LOOKS-th look in a row that finds it expired."""
    a = node("a", node_timeout=2.0)
    asyncio.run(a.nodes.beat())
    left = redis_server.client().pttl("multiplex:alive:a")
    assert 0 < left <= a.nodes.heartbeat_ms <= 1400
    interval_ms = a.nodes.interval * 1000
    assert a.nodes.heartbeat_ms + LOST_LOOKS * interval_ms <= 2000
    # A live node has 0.8 x node_timeout of missed beats before it is judged lost.
    assert a.nodes.heartbeat_ms - interval_ms + (LOST_LOOKS - 1) * interval_ms >= 0.8 * 2000
