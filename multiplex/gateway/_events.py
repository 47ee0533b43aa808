"""Fan-out of approval and run events to server-sent-event streams (docs/gateway.md).

Events are published from any thread (the gate calls its listeners from the
waiting worker thread); each subscriber lives on the event loop that created
it and receives events through ``loop.call_soon_threadsafe``, so publishing
never blocks and never touches a loop from the wrong thread. A subscriber that
falls too far behind is closed rather than allowed to grow without bound: its
client reconnects and is re-sent every open approval request.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from multiplex.gateway._json import dumps

if TYPE_CHECKING:
    from multiplex.cluster import SharedEvent

__all__ = [
    "KEEPALIVE_SECONDS",
    "Event",
    "EventHub",
    "Subscription",
    "from_shared",
    "make_event",
    "sse",
    "stream_order",
]

KEEPALIVE_SECONDS = 15.0
_QUEUE_LIMIT = 1000


@dataclass(frozen=True, slots=True)
class Event:
    """One event: its SSE name, JSON payload, and whose it is (for filtering)."""

    name: str
    data: dict[str, Any]
    profile: str
    run_id: str | None = None
    encoded: bytes = field(default=b"", compare=False)
    # In a cluster: the event's place in the shared stream, sent as the SSE ``id``
    # a reconnecting client gives back as ``Last-Event-ID`` (docs/gateway.md#server-sent-events).
    position: str | None = None

    def frame(self) -> bytes:
        return self.encoded or sse(self.name, self.data, self.position)

    def positioned(self, position: str) -> Event:
        """The same event with its stream position (its frame carries ``id:``)."""
        # The frame without an id is the tail of the one with it: encode the data once.
        frame = (
            b"id: " + position.encode() + b"\n" + self.encoded
            if self.encoded and self.position is None
            else sse(self.name, self.data, position)
        )
        return Event(self.name, self.data, self.profile, self.run_id, frame, position)


def sse(name: str, data: dict[str, Any], position: str | None = None) -> bytes:
    """One ``text/event-stream`` frame: ``id:`` (if any), ``event: name``, one ``data:`` line."""
    # JSON escapes every newline inside strings: the data stays one line.
    head = b"" if position is None else b"id: " + position.encode() + b"\n"
    return head + b"event: " + name.encode() + b"\ndata: " + dumps(data) + b"\n\n"


def stream_order(position: str) -> tuple[int, int]:
    """A Redis stream id as a sortable pair (``1712345678901-3`` -> (1712345678901, 3))."""
    ms, _, seq = position.partition("-")
    return int(ms), int(seq or 0)


def make_event(name: str, data: dict[str, Any], profile: str, run_id: str | None = None) -> Event:
    """An event with its frame encoded once, however many streams carry it."""
    return Event(name, data, profile, run_id, sse(name, data))


def from_shared(shared: SharedEvent) -> Event:
    """An event read back from a cluster's stream, its frame made of the JSON as stored."""
    raw, name = shared.raw, shared.name
    if not name.isprintable():  # one line, as every name this code writes
        name = name.encode("unicode_escape").decode("ascii")
    if not raw or "\n" in raw or "\r" in raw:  # not as this code stores it: encode again
        return make_event(name, shared.data, shared.profile, shared.run_id).positioned(
            shared.position
        )
    head = b"id: " + shared.position.encode() + b"\nevent: " + name.encode()
    frame = head + b"\ndata: " + raw.encode() + b"\n\n"
    return Event(name, shared.data, shared.profile, shared.run_id, frame, shared.position)


_CLOSE = object()


class Subscription:
    """One stream's queue of events, filtered by ``accepts``."""

    def __init__(
        self,
        hub: EventHub,
        accepts: Callable[[Event], bool],
        valid: Callable[[], bool] | None = None,
        on_close: Callable[[], None] | None = None,
    ) -> None:
        self._hub = hub
        self.accepts = accepts
        self.valid = valid
        self._on_close = on_close
        self._loop = asyncio.get_running_loop()
        self._queue: asyncio.Queue[object] = asyncio.Queue()
        self.closed = False

    def _put(self, item: object) -> None:
        # Runs on this subscription's loop.
        if self.closed:
            return
        if item is _CLOSE or self._queue.qsize() >= _QUEUE_LIMIT:
            self.closed = True
            self._queue.put_nowait(_CLOSE)
            if self._on_close is not None:
                self._on_close()
            return
        self._queue.put_nowait(item)

    def offer(self, event: Event) -> None:
        """Thread-safe: queue ``event`` if this stream wants it."""
        if self.closed or not self.accepts(event):
            return
        try:
            self._loop.call_soon_threadsafe(self._put, event)
        except RuntimeError:  # the loop is closed: the stream is gone
            self.closed = True

    def close(self) -> None:
        """Thread-safe: end the stream after what is already queued."""
        try:
            self._loop.call_soon_threadsafe(self._put, _CLOSE)
        except RuntimeError:
            self.closed = True

    async def events(self, keepalive: float = KEEPALIVE_SECONDS) -> AsyncIterator[Event | None]:
        """Queued events in order; ``None`` after ``keepalive`` seconds of silence."""
        try:
            while True:
                try:
                    async with asyncio.timeout(keepalive):  # no task per wait, unlike wait_for
                        item = await self._queue.get()
                except TimeoutError:
                    yield None
                    continue
                if item is _CLOSE:
                    return
                assert isinstance(item, Event)
                yield item
        finally:
            self._hub.unsubscribe(self)


class EventHub:
    """Every live SSE subscription of one gateway."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._subs: list[Subscription] = []
        self._closed = False

    def subscribe(
        self,
        accepts: Callable[[Event], bool],
        valid: Callable[[], bool] | None = None,
        on_close: Callable[[], None] | None = None,
        *,
        follow: bool = False,
    ) -> Subscription:
        """A new subscription (call on the event loop that will read it).

        ``valid`` is asked by :meth:`revalidate`; once it says False the stream
        ends (its token was rotated or removed) and ``on_close`` runs on the loop.
        ``follow``: the stream will follow every node's events (:meth:`listening`).
        """
        sub = Subscription(self, accepts, valid, on_close)
        with self._lock:
            if self._closed:
                sub.closed = True
                sub._queue.put_nowait(_CLOSE)
            else:
                self._subs.append(sub)
                if follow:
                    self._follows(sub)
        return sub

    def _follows(self, sub: Subscription) -> None:
        """Under the lock, as ``sub`` is added: it follows every node's events."""

    def unsubscribe(self, sub: Subscription) -> None:
        with self._lock:
            if sub in self._subs:
                self._subs.remove(sub)

    def publish(self, event: Event) -> None:
        """Thread-safe, non-blocking: offer ``event`` to every subscription."""
        with self._lock:
            subs = list(self._subs)
        for sub in subs:
            sub.offer(event)

    async def apublish(self, event: Event) -> None:
        """:meth:`publish` from the event loop (a cluster's hub awaits its write)."""
        self.publish(event)

    def publish_soon(self, event: Event) -> None:
        """Publish ``event`` with this thread's next :meth:`publish` or :meth:`flush`.

        Here at once; a hub that writes events elsewhere may gather them (one
        write for a command's end and the run's end that follows it).
        """
        self.publish(event)

    def flush(self) -> None:
        """Publish what this thread left to :meth:`publish_soon` (call before waiting)."""

    async def listening(self, sub: Subscription) -> None:
        """Return once ``sub`` (subscribed with ``follow``) is offered every event published
        from now on, from anywhere.

        Here at once (every event is published in this process); on a cluster
        node, once the node reads the other nodes' events too.
        """

    def __len__(self) -> int:
        with self._lock:
            return len(self._subs)

    def revalidate(self) -> int:
        """Thread-safe: end every subscription whose ``valid`` now says False; return how many."""
        with self._lock:
            subs = [s for s in self._subs if s.valid is not None]
        ended = 0
        for sub in subs:
            if not sub.closed and not sub.valid():  # type: ignore[misc]
                sub.close()
                ended += 1
        return ended

    def close(self) -> None:
        """End every stream (shutdown); later subscriptions end at once."""
        with self._lock:
            self._closed = True
            subs, self._subs = self._subs, []
        for sub in subs:
            sub.close()
