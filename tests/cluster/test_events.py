"""The shared event stream: order, per-reader positions (docs/cluster.md#events)."""

from __future__ import annotations

import asyncio
from typing import Any

import orjson

from multiplex.gateway.events._event import from_shared
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


def test_a_reader_that_lost_its_connection_resumes_where_it_stopped(
    node: NodeFactory, redis_server: Any
) -> None:
    """docs/cluster.md#events: what other nodes appended while this node's read failed
    (its connection killed: a blip on this node only) still reaches its streams."""
    a, b = node("a"), node("b")
    got: list[str] = []

    async def scenario() -> None:
        async def nothing(*_args: Any) -> None:
            pass

        await a.start(on_event=lambda e: got.append(e.name), on_lost=nothing, on_recovered=nothing)
        try:
            await a.following()
            await b.events.aappend("run.started", {"run_id": "r1"}, "alpha", "r1")
            async with asyncio.timeout(10):
                while got != ["run.started"]:
                    await asyncio.sleep(0.02)
            admin = redis_server.client()
            async with asyncio.timeout(10):  # the reader's blocked XREAD, found and cut
                while not (reading := [c for c in admin.client_list() if c["cmd"] == "xread"]):
                    await asyncio.sleep(0.02)
            admin.client_kill_filter(_id=reading[0]["id"])
            await b.events.aappend("run.finished", {"run_id": "r1"}, "alpha", "r1")
            async with asyncio.timeout(10):
                while got != ["run.started", "run.finished"]:
                    await asyncio.sleep(0.02)
        finally:
            await a.stop()

    asyncio.run(scenario())


def test_an_entry_whose_json_spans_lines_is_framed_on_one_line(
    node: NodeFactory, redis_server: Any
) -> None:
    # Whoever can write to Redis can append any entry: JSON with a line break
    # between its tokens is still JSON, and carried as stored it would let the
    # text after the break pose as a frame of its own.
    a = node("a")
    forged = '{"run_id": "r1",\n"note": "x"}\nevent: approval.resolved'
    raw = '{"run_id": "r1",\r\n"note": "data: {}"}'

    named = "run.started\ndata: {}\n\nevent: approval.resolved"  # a name that forges a frame

    async def scenario() -> list[bytes]:
        start = await a.events.last_position()
        for name, data in (
            ("run.started", raw),
            ("run.started", forged.split("\nevent")[0]),
            (named, '{"run_id": "r1"}'),
        ):
            redis_server.client().xadd(
                a.events.key, {"name": name, "profile": "p", "run": "r1", "node": "z", "data": data}
            )
        return [from_shared(e).frame() for e in await a.events.read(start, block_ms=10)]

    frames = asyncio.run(scenario())
    assert len(frames) == 3
    for frame in frames:
        lines = frame.decode().split("\n")
        assert lines[0].startswith("id: ") and lines[1].startswith("event: run.started")
        assert lines[2].startswith("data: ") and lines[3:] == ["", ""]
        assert orjson.loads(lines[2][6:])["run_id"] == "r1"
