"""The hand-off queue is a reliable queue: a run taken by a node that dies is asked again (docs/cluster.md#node-loss)."""

from __future__ import annotations

import asyncio
from typing import Any

from multiplex.cluster import HANDOFF_OWNER, HandOff
from tests.cluster.conftest import NodeFactory


def _parked(run_id: str) -> HandOff:
    doc = {"run_id": run_id, "profile": "alpha", "session_id": "s1", "results": []}
    return HandOff(doc, ["echo first", "echo handed-over"], 1)


def _members(redis_server: Any, key: str) -> set[str]:
    return set(redis_server.client().smembers(key))


def test_a_run_taken_by_a_node_that_dies_before_claiming_is_requeued(
    node: NodeFactory, redis_server: Any
) -> None:
    ghost, b = node("ghost", node_timeout=0.5), node("b", node_timeout=0.5)

    async def scenario() -> None:
        await ghost.nodes.beat()
        await b.nodes.beat()
        ghost.handoff.put(_parked("run-1"))
        taken = await ghost.handoff.take()  # ... and ghost dies before it claims the run
        assert taken is not None and taken.run_id == "run-1"
        assert await b.handoff.take() is None  # held for ghost, not lost, not offered twice
        assert _members(redis_server, "multiplex:node:ghost:runs") == {"run-1"}
        await asyncio.sleep(0.7)
        await b.nodes.beat()
        assert await b.nodes.lost() == ["ghost"]
        lost = await b.nodes.reap("ghost")
        assert lost is not None
        assert lost.requeued == ["run-1"]
        assert lost.runs == []  # not failed: nothing of it ran on ghost
        record = await b.runs.get("run-1")
        assert record is not None and record["status"] == "queued"
        assert _members(redis_server, f"multiplex:node:{HANDOFF_OWNER}:runs") == {"run-1"}
        again = await b.handoff.take()
        assert again is not None and again.commands == ["echo first", "echo handed-over"]
        assert again.start == 1
        assert await b.handoff.claim(again)
        record = await b.runs.get("run-1")
        assert record is not None
        assert (record["status"], record["node"]) == ("running", "b")
        assert _members(redis_server, "multiplex:node:b:runs") == {"run-1"}
        assert await b.handoff.requeue("b") == []  # claimed: no longer held

    asyncio.run(scenario())


def test_a_claimed_run_of_a_lost_node_fails_node_lost_and_is_not_run_twice(
    node: NodeFactory,
) -> None:
    ghost, b = node("ghost", node_timeout=0.5), node("b", node_timeout=0.5)

    async def scenario() -> None:
        await ghost.nodes.beat()
        ghost.handoff.put(_parked("run-2"))
        taken = await ghost.handoff.take()
        assert taken is not None and await ghost.handoff.claim(taken)
        await asyncio.sleep(0.7)  # ghost dies after claiming: its command may have started
        await b.nodes.beat()
        lost = await b.nodes.reap("ghost")
        assert lost is not None and lost.requeued == []
        assert [(r["run_id"], r["error"]) for r in lost.runs] == [("run-2", "node lost")]
        assert await b.handoff.take() is None

    asyncio.run(scenario())


def test_a_run_that_ended_while_queued_is_not_resumed(node: NodeFactory) -> None:
    b = node("b")

    async def scenario() -> None:
        b.handoff.put(_parked("run-3"))
        b.runs.put({"run_id": "run-3", "profile": "alpha", "status": "cancelled"})
        taken = await b.handoff.take()
        assert taken is not None
        assert not await b.handoff.claim(taken)
        record = await b.runs.get("run-3")
        assert record is not None and record["status"] == "cancelled"
        assert await b.runs.owned_by("b") == []
        assert await b.handoff.requeue("b") == []

    asyncio.run(scenario())


def test_a_node_that_does_not_serve_the_profile_gives_the_run_back(
    node: NodeFactory, redis_server: Any
) -> None:
    b, c = node("b"), node("c")

    async def scenario() -> None:
        b.handoff.put(_parked("run-4"))
        taken = await b.handoff.take()
        assert taken is not None
        await b.handoff.give_back(taken)
        assert await b.runs.owned_by("b") == []
        assert _members(redis_server, f"multiplex:node:{HANDOFF_OWNER}:runs") == {"run-4"}
        again = await c.handoff.take()
        assert again is not None and again.run_id == "run-4"

    asyncio.run(scenario())


def test_a_claim_repeated_after_its_answer_was_lost_gets_the_same_answer(
    node: NodeFactory, redis_server: Any
) -> None:
    # A node whose claim raised (Redis applied it, the answer never came back)
    # claims again before taking anything; only the node it was made for wins.
    a, b = node("a"), node("b")

    async def scenario() -> None:
        a.handoff.put(_parked("run-3"))
        taken = await a.handoff.take()
        assert taken is not None
        assert await a.handoff.claim(taken)
        assert await a.handoff.claim(taken)  # the retry: still a's, nothing written twice
        record = await a.runs.get("run-3")
        assert record is not None and (record["status"], record["node"]) == ("running", "a")
        assert await b.handoff.claim(taken) is False  # never held for b
        assert await a.handoff.requeue("a") == []
        assert _members(redis_server, "multiplex:node:a:runs") == {"run-3"}
        assert _members(redis_server, "multiplex:node:b:runs") == set()

        a.handoff.put(_parked("run-4"))
        lost = await a.handoff.take()
        assert lost is not None
        assert await a.handoff.requeue("a") == ["run-4"]  # as a reaper would
        assert await a.handoff.claim(lost) is False  # no longer held: not a's to resume
        record = await a.runs.get("run-4")
        assert record is not None and record["status"] == "queued"

    asyncio.run(scenario())


def test_a_node_reaped_after_handing_a_run_over_does_not_fail_it(
    node: NodeFactory, redis_server: Any
) -> None:
    """The stopping node may die before it leaves (a stop cut short by SIGKILL):
    what it handed over is no longer its run, wherever it is now."""
    a, b = node("a", node_timeout=0.5), node("b", node_timeout=0.5)

    async def scenario() -> None:
        await a.nodes.beat()
        await b.nodes.beat()
        doc = {"run_id": "run-3", "profile": "alpha", "session_id": "s1", "results": []}
        a.runs.put({**doc, "status": "waiting_for_approval"})  # parked on a
        a.handoff.put(_parked("run-3"))  # a begins a graceful stop ... and is killed
        assert "run-3" not in _members(redis_server, "multiplex:node:a:runs")
        taken = await b.handoff.take()
        assert taken is not None and await b.handoff.claim(taken)
        await asyncio.sleep(0.7)
        await b.nodes.beat()
        assert await b.nodes.lost() == ["a"]
        lost = await b.nodes.reap("a")
        assert lost is not None and lost.runs == []
        record = await b.runs.get("run-3")
        assert record is not None
        assert (record["status"], record["node"]) == ("running", "b")

    asyncio.run(scenario())


def test_a_lost_node_fails_only_runs_whose_record_is_its_own(
    node: NodeFactory, redis_server: Any
) -> None:
    a, b = node("a", node_timeout=0.5), node("b", node_timeout=0.5)

    async def scenario() -> None:
        await a.nodes.beat()
        await b.nodes.beat()
        b.runs.put({"run_id": "run-4", "profile": "alpha", "status": "running", "results": []})
        # A stale membership: a's set names a run whose record another node holds.
        redis_server.client().sadd("multiplex:node:a:runs", "run-4")
        await asyncio.sleep(0.7)
        await b.nodes.beat()
        lost = await b.nodes.reap("a")
        assert lost is not None and lost.runs == []
        record = await b.runs.get("run-4")
        assert record is not None and record["status"] == "running"
        assert "run-4" not in _members(redis_server, "multiplex:node:a:runs")

    asyncio.run(scenario())
