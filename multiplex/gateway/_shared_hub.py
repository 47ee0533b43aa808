"""The event hub of a cluster node: local fan-out behind a copy to the shared stream (docs/cluster.md#events).

:class:`SharedHub` sends every local event to the cluster's stream (through
its :class:`~multiplex.gateway._shared.ClusterBridge`) before its own streams,
so they carry its position. Events a worker leaves to :meth:`SharedHub.publish_soon`
(a command's end) go out with that thread's next event or flush, in one write.
Streams that want other nodes' events say so with :meth:`SharedHub.listening`;
the node reads the shared stream only while one does.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from multiplex.gateway._events import Event, EventHub, Subscription

if TYPE_CHECKING:
    from multiplex.gateway._shared import ClusterBridge

__all__ = ["SharedHub"]


class SharedHub(EventHub):
    """The local fan-out, plus a copy of every local event to the cluster's stream."""

    def __init__(self) -> None:
        super().__init__()
        self.bridge: ClusterBridge | None = None
        self._held = threading.local()  # this thread's events left to publish_soon
        self._following: set[Subscription] = set()  # streams that want other nodes' events

    def publish(self, event: Event) -> None:
        self._send([*self._take(), event])

    def publish_soon(self, event: Event) -> None:
        if self.bridge is None:
            super().publish(event)
            return
        held: list[Event] | None = getattr(self._held, "events", None)
        if held is None:
            self._held.events = held = []
        held.append(event)

    def flush(self) -> None:
        events = self._take()
        if events:
            self._send(events)

    def _take(self) -> list[Event]:
        held: list[Event] | None = getattr(self._held, "events", None)
        if not held:
            return []
        self._held.events = []
        return held

    def _send(self, events: list[Event]) -> None:
        # To the stream first (one write for them all): the local streams then carry
        # each event's position too.
        positions = self.bridge.mirror(events) if self.bridge is not None else [None] * len(events)
        for event, position in zip(events, positions, strict=True):
            super().publish(event if position is None else event.positioned(position))

    async def apublish(self, event: Event) -> None:
        """:meth:`publish` from the event loop, awaiting the write (raises ``ClusterUnavailable``)."""
        if self.bridge is None:
            super().publish(event)
            return
        position = (await self.bridge.amirror([event]))[0]
        super().publish(event if position is None else event.positioned(position))

    def publish_local(self, event: Event) -> None:
        """An event from another node: to this node's streams only."""
        super().publish(event)

    async def listening(self, sub: Subscription) -> None:
        with self._lock:
            self._following.add(sub)
        if self.bridge is not None:
            await self.bridge.cluster.following()

    def unsubscribe(self, sub: Subscription) -> None:
        super().unsubscribe(sub)
        with self._lock:
            self._following.discard(sub)

    def close(self) -> None:
        super().close()
        with self._lock:
            self._following.clear()

    @property
    def followed(self) -> bool:
        """Whether a stream here wants other nodes' events (the stream reader runs only then)."""
        return bool(self._following)

    @property
    def local_listeners(self) -> int:
        return super().__len__()

    def __len__(self) -> int:
        # Other nodes' streams listen too: never skip building an event.
        return max(1, super().__len__())
