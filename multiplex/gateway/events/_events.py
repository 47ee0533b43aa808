"""Fan-out of approval and run events to server-sent-event streams (docs/gateway.md).

Events are published from any thread (the gate calls its listeners from the
waiting worker thread). Each subscriber lives on the event loop that created
it; an event is filtered in the publishing thread and handed to each loop in
one ``loop.call_soon_threadsafe``, however many streams want it, so
publishing never blocks and never touches a loop from the wrong thread. Every
stream sends the same encoded frame. A subscriber that falls too far behind
is closed rather than allowed to grow without bound: its client reconnects
and is re-sent every open approval request."""

from __future__ import annotations

import asyncio
import threading
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterable

from multiplex.gateway.events._event import Event

__all__ = ["KEEPALIVE_SECONDS", "EventHub", "Subscription"]

KEEPALIVE_SECONDS = 15.0
_QUEUE_LIMIT = 1000
_TICKS = 4  # keepalive ticks per KEEPALIVE_SECONDS


_CLOSE = object()
_KEEPALIVE = None  # in a queue: a keepalive is due
# A stream written by the hub itself further behind than this is disconnected.
_BUFFER_LIMIT = 1024 * 1024


def _chunk(frame: bytes) -> bytes:
    """``frame`` as one chunk of a chunked HTTP/1.1 body."""
    return b"%x\r\n%b\r\n" % (len(frame), frame)


_KEEPALIVE_CHUNK = _chunk(b": keepalive\n\n")


class Subscription:
    """One stream's queue of events, filtered by ``accepts``."""

    __slots__ = (
        "_ended",
        "_ends",
        "_hub",
        "_loop",
        "_on_close",
        "_queue",
        "_transport",
        "_waiter",
        "accepts",
        "closed",
        "quiet",
        "valid",
    )

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
        self._queue: deque[object] = deque()
        self._waiter: asyncio.Future[None] | None = None
        self.closed = False
        self.quiet = 0  # keepalive ticks since something was queued
        # Written by the hub itself (write_to): where, when it ended, after which event.
        self._transport: asyncio.WriteTransport | None = None
        self._ended: asyncio.Future[None] | None = None
        self._ends: Callable[[Event], bool] | None = None

    def _put(self, item: object) -> None:
        # Runs on this subscription's loop.
        if self.closed:
            return
        if self._transport is not None:
            if item is _CLOSE:
                self._end()
            elif isinstance(item, Event):
                self._write(_chunk(item.frame()), item)
            else:
                self._write(_KEEPALIVE_CHUNK, None)
            return
        if item is _CLOSE or len(self._queue) >= _QUEUE_LIMIT:
            self.closed = True
            self._queue.append(_CLOSE)
            if self._on_close is not None:
                self._on_close()
        else:
            self._queue.append(item)
            self.quiet = 0
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def write_to(
        self,
        transport: asyncio.WriteTransport,
        skip: Callable[[Event], bool],
        ends: Callable[[Event], bool] | None = None,
    ) -> asyncio.Future[None]:
        """On the loop: from now on the hub writes each event to ``transport`` itself, as
        one HTTP chunk (the same bytes for every stream); what is queued goes first,
        but what ``skip`` says. Done when the stream ends: closed, too far behind
        (the connection is dropped), or after the event ``ends`` says is its last."""
        self._ended = self._loop.create_future()
        self._transport, self._ends = transport, ends
        queued = list(self._queue)
        self._queue.clear()
        for item in queued:
            if item is _CLOSE:
                self._end()
            elif isinstance(item, Event) and not self.closed and not skip(item):
                self._write(_chunk(item.frame()), item)
        return self._ended

    def _write(self, chunk: bytes, event: Event | None) -> None:
        transport = self._transport
        assert transport is not None
        if transport.is_closing():
            self._end()
        elif transport.get_write_buffer_size() > _BUFFER_LIMIT:
            transport.abort()  # too slow a reader: it reconnects (docs/gateway.md#server-sent-events)
            self._end()
        else:
            transport.write(chunk)
            self.quiet = 0
            if event is not None and self._ends is not None and self._ends(event):
                self._end()

    def _end(self) -> None:
        if not self.closed:
            self.closed = True
            if self._on_close is not None:
                self._on_close()
        if self._ended is not None and not self._ended.done():
            self._ended.set_result(None)

    def offer(self, event: Event) -> None:
        """Thread-safe: queue ``event`` if this stream wants it."""
        self._hub._fan(event, (self,))

    def close(self) -> None:
        """Thread-safe: end the stream after what is already queued."""
        try:
            self._loop.call_soon_threadsafe(self._put, _CLOSE)
        except RuntimeError:
            self.closed = True

    def pending(self) -> list[Event]:
        """On the loop: take what is queued now (tests)."""
        taken = [item for item in self._queue if isinstance(item, Event)]
        self._queue.clear()
        return taken

    async def events(self) -> AsyncIterator[Event | None]:
        """Queued events in order; ``None`` when a keepalive is due (after
        ``KEEPALIVE_SECONDS`` of silence)."""
        queue = self._queue
        try:
            while True:
                while not queue:
                    self._waiter = self._loop.create_future()
                    try:
                        await self._waiter
                    finally:
                        self._waiter = None
                item = queue.popleft()
                if item is _CLOSE:
                    return
                assert item is _KEEPALIVE or isinstance(item, Event)
                yield item
        finally:
            self._hub.unsubscribe(self)


def _deliver(event: Event, subs: list[Subscription]) -> None:
    # On the subscriptions' loop: one callback per event and loop, however many listen;
    # a stream the hub writes itself gets the same chunk as every other.
    chunk = b""
    for sub in subs:
        if sub._transport is None:
            sub._put(event)
        elif not sub.closed:
            chunk = chunk or _chunk(event.frame())
            sub._write(chunk, event)


class EventHub:
    """Every live SSE subscription of one gateway.

    An event is filtered where it is published and handed to each event loop
    in one callback, which appends it to the queues of the streams that want
    it; each stream's task then only writes. One timer per loop sends the
    keepalives, not one per stream.
    """

    def __init__(self, keepalive: float = KEEPALIVE_SECONDS) -> None:
        self._lock = threading.Lock()
        self._subs: dict[Subscription, None] = {}
        self._closed = False
        self._keepalive = keepalive
        self._ticking: set[asyncio.AbstractEventLoop] = set()

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
                sub._queue.append(_CLOSE)
            else:
                self._subs[sub] = None
                if follow:
                    self._follows(sub)
                if sub._loop not in self._ticking:
                    self._ticking.add(sub._loop)
                    sub._loop.call_later(self._keepalive / _TICKS, self._tick, sub._loop)
        return sub

    def _tick(self, loop: asyncio.AbstractEventLoop) -> None:
        # Every quarter of the keepalive: a stream quiet for four ticks gets one.
        with self._lock:
            subs = [s for s in self._subs if s._loop is loop]
            if not subs:
                self._ticking.discard(loop)
                return
        for sub in subs:
            sub.quiet += 1
            if sub.quiet >= _TICKS and not sub._queue:  # one behind needs none
                sub._put(_KEEPALIVE)
        loop.call_later(self._keepalive / _TICKS, self._tick, loop)

    def _follows(self, sub: Subscription) -> None:
        """Under the lock, as ``sub`` is added: it follows every node's events."""

    def unsubscribe(self, sub: Subscription) -> None:
        with self._lock:
            self._subs.pop(sub, None)

    def _fan(self, event: Event, subs: Iterable[Subscription]) -> None:
        """Thread-safe: ``event`` to those of ``subs`` that want it."""
        by_loop: dict[asyncio.AbstractEventLoop, list[Subscription]] = {}
        for sub in subs:
            if not sub.closed and sub.accepts(event):
                by_loop.setdefault(sub._loop, []).append(sub)
        for loop, wanted in by_loop.items():
            try:
                loop.call_soon_threadsafe(_deliver, event, wanted)
            except RuntimeError:  # the loop is closed: the streams are gone
                for sub in wanted:
                    sub.closed = True

    def publish(self, event: Event) -> None:
        """Thread-safe, non-blocking: offer ``event`` to every subscription."""
        with self._lock:
            subs = list(self._subs)
        self._fan(event, subs)

    def publish_here(self, event: Event) -> None:
        """``event`` to this process's streams only, never to a cluster's shared stream:
        what this node alone did (its own reload of its own files)."""
        with self._lock:
            subs = list(self._subs)
        self._fan(event, subs)

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

    def publish_output(self, event: Event) -> None:
        """A command's output: here at once; a hub that writes events elsewhere may hold
        it a moment to send it with its run's next event."""
        self.publish(event)

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
            subs, self._subs = list(self._subs), {}
        for sub in subs:
            sub.close()
