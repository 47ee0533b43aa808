"""One TCP connection of a proxied exchange, read through awaitables or spliced.

asyncio's StreamReader copies every chunk into and out of its buffer; a tunnel
should not. A :class:`Stream` is read like a stream while the proxy parses a
request head, then :func:`splice` joins two of them so that each chunk the
kernel hands over is written straight to the other transport (one write,
which copies only what the socket did not take at once). Flow control pauses
the reading side while the writing side's buffer is full.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Callable

__all__ = ["HeadTooLong", "Stream", "splice"]

# Past this many unread bytes a stream stops reading until the parser catches up.
_HIGH_WATER = 1 << 20


class HeadTooLong(ValueError):
    """A delimited read found no delimiter within its limit."""


class Stream(asyncio.Protocol):
    """A connection's reading and writing ends; ``last_active`` is the loop time of its last chunk."""

    def __init__(
        self, loop: asyncio.AbstractEventLoop, on_made: Callable[[Stream], None] | None = None
    ) -> None:
        self.loop = loop
        self.transport: asyncio.Transport | None = None
        self.last_active = loop.time()
        self.lost = loop.create_future()
        self._on_made = on_made
        self._buffer = bytearray()
        self._eof = False
        self._waiter: asyncio.Future[None] | None = None
        self._peer: Stream | None = None
        self._peer_eof_sent = False
        self._write_paused = False
        self._drain_waiter: asyncio.Future[None] | None = None
        self._read_paused = False

    # --- asyncio.Protocol ---------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        sock = transport.get_extra_info("socket")
        if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
            # asyncio sets this only when the listening socket was made with
            # proto=IPPROTO_TCP; without it a response head and body sent as two
            # writes wait out the client's delayed ACK (40 ms a request).
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if self._on_made is not None:
            self._on_made(self)

    def data_received(self, data: bytes) -> None:
        self.last_active = self.loop.time()
        peer = self._peer
        if peer is not None:
            if peer.transport is not None:
                peer.transport.write(data)
            return
        self._buffer += data
        if len(self._buffer) > _HIGH_WATER and self.transport is not None:
            self._read_paused = True
            self.transport.pause_reading()
        self._wake()

    def eof_received(self) -> bool:
        self._eof = True
        self._wake()
        if self._peer is not None:
            self._forward_eof()
        return True  # keep the transport open: the other direction may still flow

    def connection_lost(self, exc: Exception | None) -> None:
        self._eof = True
        self._wake()
        self._write_paused = False
        if self._drain_waiter is not None and not self._drain_waiter.done():
            self._drain_waiter.set_result(None)
        if not self.lost.done():
            self.lost.set_result(None)
        if self._peer is not None:
            self._peer.close()

    def pause_writing(self) -> None:
        self._write_paused = True
        if self._peer is not None and self._peer.transport is not None:
            self._peer.transport.pause_reading()

    def resume_writing(self) -> None:
        self._write_paused = False
        if self._peer is not None and self._peer.transport is not None:
            self._peer.transport.resume_reading()
        if self._drain_waiter is not None and not self._drain_waiter.done():
            self._drain_waiter.set_result(None)

    @property
    def at_eof(self) -> bool:
        return self._eof

    # --- reading while parsing ------------------------------------------------

    async def read_until(self, separator: bytes, limit: int) -> bytes:
        """Bytes up to and including ``separator``; HeadTooLong past ``limit``, EOFError at EOF."""
        start = 0
        while True:
            index = self._buffer.find(separator, start)
            if index >= 0 and index + len(separator) <= limit:
                return self._take(index + len(separator))
            if index >= 0 or len(self._buffer) >= limit:
                raise HeadTooLong(f"no {separator!r} within {limit} bytes")
            if self._eof:
                raise EOFError("connection closed mid-message")
            start = max(0, len(self._buffer) - len(separator) + 1)
            await self._wait()

    async def read_exactly(self, count: int) -> bytes:
        """Exactly ``count`` bytes; EOFError if the connection ends first."""
        while len(self._buffer) < count:
            if self._eof:
                raise EOFError("connection closed mid-message")
            await self._wait()
        return self._take(count)

    async def read_some(self, most: int) -> bytes:
        """Up to ``most`` bytes as soon as any are there; b"" at EOF."""
        while not self._buffer and not self._eof:
            await self._wait()
        return self._take(min(most, len(self._buffer)))

    async def peek(self) -> int | None:
        """The next byte without consuming it, or None at EOF."""
        while not self._buffer:
            if self._eof:
                return None
            await self._wait()
        return self._buffer[0]

    # --- writing ---------------------------------------------------------------

    def write(self, data: bytes) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(data)

    async def drain(self) -> None:
        """Wait while the transport's write buffer is over its high-water mark."""
        while self._write_paused and not self.lost.done():
            self._drain_waiter = self.loop.create_future()
            await self._drain_waiter

    def close(self) -> None:
        """Close after what is buffered is sent."""
        if self.transport is not None:
            self.transport.close()

    def abort(self) -> None:
        if self.transport is not None:
            self.transport.abort()

    # --- internals ---------------------------------------------------------------

    def _take(self, count: int) -> bytes:
        data = bytes(self._buffer[:count])
        del self._buffer[:count]
        if self._read_paused and len(self._buffer) <= _HIGH_WATER // 2:
            self._read_paused = False
            if self.transport is not None:
                self.transport.resume_reading()
        return data

    async def _wait(self) -> None:
        self._waiter = self.loop.create_future()
        try:
            await self._waiter
        finally:
            self._waiter = None

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    def _forward_eof(self) -> None:
        peer = self._peer
        assert peer is not None
        if peer.transport is None or peer.transport.is_closing():
            return
        if peer._eof:
            peer.close()  # both directions have ended
            self.close()
        elif peer.transport.can_write_eof():
            peer.transport.write_eof()
        else:
            peer.close()


async def splice(a: Stream, b: Stream) -> None:
    """Join ``a`` and ``b`` both ways until both are closed; any unread bytes go first."""
    for src, dst in ((a, b), (b, a)):
        leftover = src._take(len(src._buffer))
        if leftover:
            dst.write(leftover)
    a._peer, b._peer = b, a
    for side in (a, b):
        if side._read_paused and side.transport is not None:
            side._read_paused = False
            side.transport.resume_reading()
        if side._write_paused:
            side.pause_writing()
    for side, other in ((a, b), (b, a)):
        if side.lost.done():
            other.close()
        elif side._eof:
            side._forward_eof()
    await asyncio.gather(a.lost, b.lost)
