"""The event hub of a cluster node: local fan-out behind a copy to the shared stream (docs/cluster.md#events).

:class:`SharedHub` sends every local event to the cluster's stream (through
its :class:`~multiplex.gateway.shared._shared.ClusterBridge`) before its own streams,
so they carry its position. Events a worker leaves to :meth:`SharedHub.publish_soon`
(a command's end) go out with that thread's next event or flush, in one write;
a command's output (:meth:`SharedHub.publish_output`) waits a moment for its
run's next event the same way (``shared._linger``).
Streams that follow the cluster say so when they subscribe (``follow=True``)
and wait for :meth:`SharedHub.listening`; the node reads the shared stream only while one does, and those streams get every
event from there, this node's own included (:meth:`SharedHub.publish_shared`),
in stream order: the positions a stream is sent only grow, so a client that
resumes from the last one misses nothing. The other streams (a local run's)
get this node's events at once. An event the stream did not take (Redis away)
goes to every stream at once, without a position.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from multiplex.gateway.events._event import Event
from multiplex.gateway.events._events import EventHub, Subscription
from multiplex.gateway.shared._linger import Lingering

if TYPE_CHECKING:
    from multiplex.gateway.shared._shared import ClusterBridge

__all__ = ["SharedHub"]


class SharedHub(EventHub):
    """The local fan-out, plus a copy of every local event to the cluster's stream."""

    def __init__(self) -> None:
        super().__init__()
        self.bridge: ClusterBridge | None = None
        self._held = threading.local()  # this thread's events left to publish_soon
        self._following: set[Subscription] = set()  # streams that want other nodes' events
        self._lingering = Lingering(self._send)

    def publish(self, event: Event) -> None:
        self._lingering.send_with([*self._take(), event])

    def publish_output(self, event: Event) -> None:
        if self.bridge is None or event.run_id is None or not self._lingering.hold(event):
            self.publish(event)

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
            self._lingering.send_with(events)

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
            self.deliver(event, position)

    async def apublish(self, event: Event) -> None:
        """:meth:`publish` from the event loop, awaiting the write (raises ``ClusterUnavailable``)."""
        if self.bridge is None:
            super().publish(event)
            return
        self.deliver(event, (await self.bridge.amirror([event]))[0])

    def deliver(self, event: Event, position: str | None) -> None:
        """A local event the stream took at ``position`` (or did not: None) to this node's streams."""
        if position is None:  # not in the stream: every stream here now, or none ever
            super().publish(event)
        else:  # the streams that follow the cluster read it from the stream, in its order
            self._offer(event.positioned(position), following=False)

    def publish_shared(self, event: Event) -> None:
        """An event read from the shared stream (any node's): to the streams that follow it."""
        self._offer(event, following=True)

    def _offer(self, event: Event, *, following: bool) -> None:
        with self._lock:
            subs = [s for s in self._subs if (s in self._following) is following]
        self._fan(event, subs)

    def _follows(self, sub: Subscription) -> None:
        # From its first moment: offered a local event directly before it followed,
        # it could be offered the same again by the reader.
        self._following.add(sub)

    async def listening(self, sub: Subscription) -> None:
        if not sub.closed and sub not in self._following:
            raise ValueError("a stream that follows the cluster subscribes with follow=True")
        if self.bridge is not None:
            await self.bridge.cluster.following()

    def unsubscribe(self, sub: Subscription) -> None:
        super().unsubscribe(sub)
        with self._lock:
            self._following.discard(sub)

    def close(self) -> None:
        self._lingering.close()
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
