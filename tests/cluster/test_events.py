"""The shared event stream: order, per-reader positions (docs/cluster.md#events)."""

from __future__ import annotations

import asyncio

import orjson

from tests.cluster.conftest import NodeFactory


def test_events_from_two_nodes_are_read_in_order_from_any_position(node: NodeFactory) -> None:
    a, b = node("a"), node("b")

    async def scenario() -> tuple[list[str], list[str], list[str]]:
        start = await b.events.last_position()
        assert start == "0-0"
        a.events.append("run.started", {"run_id": "r1"}, "alpha", "r1")
        mid = await b.events.aappend("approval.request", {"approval_id": "x"}, "beta", "r2")
        a.events.append("run.finished", {"run_id": "r1", "status": "completed"}, "alpha", "r1")
        everything = await b.events.read(start, block_ms=10)
        after_mid = await a.events.read(mid, block_ms=10)  # another reader, its own position
        nothing = await a.events.read(everything[-1].position, block_ms=10)
        assert everything[1].node == "b" and everything[0].run_id == "r1"
        assert everything[2].data == {"run_id": "r1", "status": "completed"}
        return (
            [e.name for e in everything],
            [e.name for e in after_mid],
            [e.name for e in nothing],
        )

    everything, after_mid, nothing = asyncio.run(scenario())
    assert everything == ["run.started", "approval.request", "run.finished"]
    assert after_mid == ["run.finished"]
    assert nothing == []


def test_a_blocked_reader_wakes_on_the_next_event(node: NodeFactory) -> None:
    a, b = node("a"), node("b")

    async def scenario() -> list[str]:
        start = await b.events.last_position()
        reader = asyncio.create_task(b.events.read(start, block_ms=400))
        await asyncio.sleep(0.05)
        await a.events.aappend("approval.cancelled", {"approval_id": "y"}, "alpha")
        return [e.name for e in await reader]

    assert asyncio.run(scenario()) == ["approval.cancelled"]


def test_a_batch_is_one_round_trip_in_order_with_its_run_documents(node: NodeFactory) -> None:
    """docs/cluster.md#cost: a command's end and the run's end are written together."""
    a, b = node("a"), node("b")
    running = {"run_id": "r9", "profile": "alpha", "status": "running", "results": []}
    done = {**running, "status": "completed", "results": [{"stdout": "é ok\n"}]}

    async def scenario() -> None:
        start = await b.events.last_position()
        a.publish("run.started", running, "alpha", "r9", run_doc=running)
        assert await b.runs.owned_by("a") == ["r9"]
        trips = a.link.round_trips
        batch = [
            ("command.finished", {"run_id": "r9", "index": 0}, "alpha", "r9"),
            ("run.finished", done, "alpha", "r9"),
        ]
        positions = a.publish_many(batch, [done])
        assert a.link.round_trips == trips + 1
        events = await b.events.read(start, block_ms=10)
        assert [e.name for e in events] == ["run.started", "command.finished", "run.finished"]
        assert [e.position for e in events[1:]] == positions
        assert events[2].data == done
        stored = await b.runs.get("r9")
        assert stored == {**done, "node": "a"}
        assert await b.runs.owned_by("a") == []  # final: no longer the node's
        # A final record is never written again, though the event is still appended.
        a.publish("run.finished", {**done, "status": "failed"}, "alpha", "r9", run_doc=running)
        assert (await b.runs.get("r9")) == {**done, "node": "a"}
        # A reader reads its own node's entries too, each with the data as stored.
        own = await a.events.read(start, block_ms=10)
        assert [e.position for e in own] == [e.position for e in events] + [
            await a.events.last_position()
        ]
        assert [orjson.loads(e.raw) for e in own[:3]] == [e.data for e in events]

    asyncio.run(scenario())
