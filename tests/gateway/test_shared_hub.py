"""Which of a cluster node's streams is sent which event, and from where (docs/cluster.md#events)."""

from __future__ import annotations

import asyncio

import pytest

from multiplex.cluster import SharedEvent
from multiplex.gateway.events._event import Event, from_shared, make_event
from multiplex.gateway.events._events import Subscription
from multiplex.gateway.shared._shared_hub import SharedHub


async def _drain(sub: Subscription) -> list[Event]:
    await asyncio.sleep(0)  # offers arrive through call_soon_threadsafe
    return sub.pending()


def test_a_following_stream_gets_local_events_only_from_the_shared_stream() -> None:
    async def scenario() -> None:
        hub = SharedHub()
        follows = hub.subscribe(lambda e: True, follow=True)
        local = hub.subscribe(lambda e: True)  # a local run's own stream
        event = make_event("run.started", {"run_id": "r1"}, "alpha", "r1")
        hub.deliver(event, "5-0")  # the stream took it at 5-0
        assert [e.position for e in await _drain(local)] == ["5-0"]
        assert await _drain(follows) == []  # not twice: it comes from the reader
        read = SharedEvent(
            "5-0", "run.started", "alpha", "r1", "a", {"run_id": "r1"}, '{"run_id":"r1"}'
        )
        hub.publish_shared(from_shared(read))
        assert [e.frame() for e in await _drain(follows)] == [
            b'id: 5-0\nevent: run.started\ndata: {"run_id":"r1"}\n\n'
        ]
        assert await _drain(local) == []
        # Not in the stream (Redis away): every stream at once, without a position.
        hub.deliver(event, None)
        assert [e.position for e in await _drain(follows)] == [None]
        assert [e.position for e in await _drain(local)] == [None]

    asyncio.run(scenario())


def test_a_stream_that_follows_must_say_so_when_it_subscribes() -> None:
    async def scenario() -> None:
        hub = SharedHub()
        late = hub.subscribe(lambda e: True)
        with pytest.raises(ValueError, match="follow=True"):
            await hub.listening(late)

    asyncio.run(scenario())
