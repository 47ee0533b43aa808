"""One write per response: a response's head goes out with its body (docs/gateway.md#performance).

uvicorn writes an answer's status line and headers, then its body, as two
transport writes: two system calls and two TCP segments for every small JSON
answer, and two wake-ups of the client. :class:`GatheringHttp` is uvicorn's
httptools protocol with a transport that gathers what is written during one
turn of the event loop and sends it in one write at the end of that turn.
Order is kept: ``close`` sends what is gathered first, ``abort`` drops it, and
the size uvicorn's flow control asks for counts the gathered bytes.
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

__all__ = ["GatheringHttp"]


class _Gathered:
    """A transport whose writes within one loop turn become one write."""

    __slots__ = ("_loop", "_pending", "_transport")

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self._transport = transport
        self._loop = loop
        self._pending: list[bytes] = []

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if not data:
            return
        if not self._pending:
            self._loop.call_soon(self._flush)
        self._pending.append(bytes(data))

    def write_whole(self, data: bytes) -> None:
        """A whole answer: sent now when nothing is gathered (no turn to wait for), else after it."""
        if self._pending:
            self._pending.append(data)
        elif not self._transport.is_closing():
            self._transport.write(data)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def _flush(self) -> None:
        if not self._pending:
            return
        data = b"".join(self._pending) if len(self._pending) > 1 else self._pending[0]
        self._pending = []
        if not self._transport.is_closing():
            self._transport.write(data)

    def direct(self) -> asyncio.Transport:
        """The transport itself, once what is gathered went out (an event stream's
        chunks are one write each anyway: _stream.py)."""
        self._flush()
        return self._transport

    def close(self) -> None:
        self._flush()
        self._transport.close()

    def abort(self) -> None:
        self._pending = []
        self._transport.abort()

    def get_write_buffer_size(self) -> int:
        return self._transport.get_write_buffer_size() + sum(len(p) for p in self._pending)

    def __getattr__(self, name: str) -> Any:  # pause_reading, get_extra_info, is_closing, ...
        return getattr(self._transport, name)


class GatheringHttp(HttpToolsProtocol):
    """uvicorn's httptools protocol, writing each loop turn's output at once."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(_Gathered(transport, self.loop))  # type: ignore[arg-type]

    def write_whole(self, data: bytes) -> None:
        """Write a whole answer (head and body) in one write, without waiting for the turn's end."""
        gathered: Any = self.transport  # a _Gathered
        gathered.write_whole(data)
