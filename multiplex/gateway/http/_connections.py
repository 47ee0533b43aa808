"""Bounds on the gateway's connections (docs/operations.md#connections-and-streams).

A client that opens connections and never finishes a request head holds a
descriptor each, for ever: uvicorn's ``timeout_keep_alive`` only runs between
requests, and its ``limit_concurrency`` answers 503 only once a head was
parsed. So the gateway's HTTP protocol (:class:`GuardedHttp`, the class uvicorn
is given as ``http=``, one instance per accepted connection) holds the bounds
itself, before uvicorn sees a byte:

- **connections in total and per client address** (``gateway.max_connections``,
  ``gateway.max_connections_per_client``; an IPv6 client is its /64): one over
  either is answered a short 503 and closed at once, while the connections
  already open are served as before;
- **the time to send a head** (``gateway.header_timeout_s``): from the
  connection's start, and again from the first byte of each later request on a
  kept-alive connection, to the end of the head; a connection that takes longer
  is aborted;
- **the size of a head** (``gateway.max_head_bytes``): a head that grows past it
  is answered 431 and the connection closed, before the parser has gathered
  more (a header streamed for ever would cost memory and, the parser joining
  its pieces, time);
- **the time to send a body** (``gateway.body_timeout_s``): from the end of a
  head to the end of its body (a client that announced ten bytes and sends
  none held its connection for ever, unauthenticated: the token is read after
  the body); a connection that takes longer is aborted.

Both caps are read per connection, so a live reload applies to the next one.
Everything here runs on the event loop's thread.
"""

from __future__ import annotations

import asyncio
import ipaddress
import weakref
from collections.abc import Callable, Iterator
from typing import Any, ClassVar

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from multiplex.gateway.http._gathered import GatheringHttp
from multiplex.supervision import GatewayConfig

__all__ = ["TRANSPORT", "ConnectionGuard", "ConnectionMetrics", "GuardedHttp", "client_key"]

# The ASGI scope extension that carries the connection's transport (_stream.py).
TRANSPORT = "multiplex.transport"


def _refusal(text: str) -> bytes:
    body = text.encode() + b"\n"
    head = (
        b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain; charset=utf-8\r\n"
        b"retry-after: 1\r\nconnection: close\r\ncontent-length: %d\r\n\r\n" % len(body)
    )
    return head + body


_TOO_LARGE = b"request head too large (gateway.max_head_bytes)\n"
_HEAD_TOO_LARGE = (
    b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-type: text/plain; charset=utf-8\r\n"
    b"connection: close\r\ncontent-length: %d\r\n\r\n%s" % (len(_TOO_LARGE), _TOO_LARGE)
)


class _HeadTooLarge(Exception):
    """Raised in the parser's header callback: it stops parsing the head."""


_REFUSED = {
    "per_client": _refusal(
        "too many connections from this address (gateway.max_connections_per_client)"
    ),
    "total": _refusal("too many connections (gateway.max_connections)"),
}


def client_key(peer: Any) -> str:
    """Whose connection this is: the peer's IPv4 address, its IPv6 /64, or ``""`` (a Unix socket)."""
    if not isinstance(peer, tuple) or not peer:
        return ""
    try:
        address = ipaddress.ip_address(peer[0])
    except ValueError:
        return str(peer[0])
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.IPv6Network((address, 64), strict=False))
    return str(address)


class ConnectionGuard:
    """The open connections of one server, counted per client and in total."""

    def __init__(self, limits: Callable[[], GatewayConfig]) -> None:
        self._limits = limits
        self._held: dict[str, int] = {}
        self.total = 0
        self.refused = {"per_client": 0, "total": 0}
        self.head_timeouts = 0
        self.heads_too_large = 0
        self.body_timeouts = 0

    def admit(self, key: str) -> str | None:
        """Count a new connection of ``key``; or the cap it is over (``total``, ``per_client``)."""
        limits = self._limits()
        if self.total >= limits.max_connections:
            reason = "total"
        elif self._held.get(key, 0) >= limits.max_connections_per_client:
            reason = "per_client"
        else:
            self._held[key] = self._held.get(key, 0) + 1
            self.total += 1
            return None
        self.refused[reason] += 1
        return reason

    def release(self, key: str) -> None:
        """One connection of ``key`` ended."""
        held = self._held.get(key, 0) - 1
        if held > 0:
            self._held[key] = held
        else:
            self._held.pop(key, None)
        self.total -= 1

    def held(self, key: str) -> int:
        """Open connections of ``key`` now."""
        return self._held.get(key, 0)

    @property
    def header_timeout(self) -> float:
        return self._limits().header_timeout_s

    @property
    def body_timeout(self) -> float:
        return self._limits().body_timeout_s

    @property
    def max_head_bytes(self) -> int:
        return self._limits().max_head_bytes


class GuardedHttp(GatheringHttp):
    """uvicorn's protocol behind the connection bounds; :meth:`bound` makes one for a guard."""

    guard: ClassVar[ConnectionGuard]
    _key: str | None = None  # set while the connection is counted
    _head_timer: asyncio.TimerHandle | None = None
    _head_begun = False  # a request's first byte is in, the end of its head is not
    _in_head = True  # bytes received now are a head's (until its end)
    _head_bytes = 0  # received while a head is not whole (one header sent without end)
    _head_size = 0  # the head's URL and headers as parsed (a whole head of many headers)
    _too_large = False
    _body_timer: asyncio.TimerHandle | None = None
    _extensions: dict[str, Any]

    @classmethod
    def bound(cls, guard: ConnectionGuard) -> type[GuardedHttp]:
        """This protocol counting its connections in ``guard``."""
        return type("GuardedHttp", (cls,), {"guard": guard})

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        key = client_key(transport.get_extra_info("peername"))
        refused = self.guard.admit(key)
        if refused is not None:
            # Never handed to uvicorn: no parser runs, the descriptor is freed now.
            transport.write(_REFUSED[refused])
            transport.close()
            return
        self._key = key
        self._arm()
        # Held weakly: the scope is the protocol's, and a bound method in it would make a
        # reference cycle that keeps every closed connection until a full collection.
        transport_of = _stream_transport(weakref.ref(self))
        self._extensions = {TRANSPORT: {"transport": transport_of}}  # one per connection
        super().connection_made(transport)

    def connection_lost(self, exc: Exception | None) -> None:
        if self._key is None:
            return  # refused
        self._disarm()
        self._body_done()
        self.guard.release(self._key)
        self._key = None
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._key is None:
            return
        if self.transport.is_closing():
            return  # a head answered 431: nothing more of it is parsed
        if self._in_head:
            self._head_bytes += len(data)
        super().data_received(data)
        if self._in_head and self._head_bytes > self.guard.max_head_bytes:
            self._too_large, self._in_head = True, False  # (once: nothing more is read)
            self.send_400_response("")
        # A later request on a kept-alive connection whose head is not all in: its head has
        # its own deadline, from this turn (a head that came whole needs no timer).
        if self._head_begun and self._head_timer is None and not self.transport.is_closing():
            self._arm()

    def on_message_begin(self) -> None:
        self._head_begun = True
        super().on_message_begin()
        # An event stream's events are written to the connection by the hub (_stream.py).
        self.scope["extensions"] = self._extensions

    def on_url(self, url: bytes) -> None:
        self._head_size += len(url)
        super().on_url(url)

    def on_header(self, name: bytes, value: bytes) -> None:
        self._head_size += len(name) + len(value) + 4
        if self._head_size > self.guard.max_head_bytes:
            self._too_large = True
            raise _HeadTooLarge  # the parser stops; uvicorn answers through send_400_response
        super().on_header(name, value)

    def send_400_response(self, msg: str) -> None:
        if not self._too_large:
            super().send_400_response(msg)
            return
        self.guard.heads_too_large += 1
        self._disarm()
        self.transport.write(_HEAD_TOO_LARGE)
        self.transport.close()

    def on_headers_complete(self) -> None:
        self._head_begun = self._in_head = False
        self._head_bytes = self._head_size = 0
        self._disarm()
        # The body's deadline (a request with none completes at once, in this same turn).
        self._body_timer = self.loop.call_later(self.guard.body_timeout, self._body_late)
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        self._body_done()
        self._in_head = True  # what comes next on a kept-alive connection is a head
        super().on_message_complete()

    def _body_done(self) -> None:
        if self._body_timer is not None:
            self._body_timer.cancel()
            self._body_timer = None

    def _body_late(self) -> None:
        self._body_timer = None
        self.guard.body_timeouts += 1
        self.transport.abort()

    def _arm(self) -> None:
        self._head_timer = self.loop.call_later(self.guard.header_timeout, self._head_late)

    def _disarm(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_late(self) -> None:
        self._head_timer = None
        self.guard.head_timeouts += 1
        self.transport.abort()  # nothing is owed to a client that never asked


class ConnectionMetrics(Collector):
    """``/metrics``: open connections, refusals by cap, heads too slow, open event streams."""

    def __init__(self, guard: ConnectionGuard, listeners: Callable[[], int]) -> None:
        self._guard = guard
        self._listeners = listeners

    def collect(self) -> Iterator[Metric]:
        yield GaugeMetricFamily(
            "multiplex_gateway_connections",
            "Open HTTP connections (at most gateway.max_connections).",
            value=float(self._guard.total),
        )
        refused = CounterMetricFamily(
            "multiplex_gateway_connections_refused",
            "Connections closed at once: over gateway.max_connections (total) or "
            "gateway.max_connections_per_client (per_client).",
            labels=("cap",),
        )
        for cap, count in sorted(self._guard.refused.items()):
            refused.add_metric((cap,), float(count))
        yield refused
        yield CounterMetricFamily(
            "multiplex_gateway_header_timeouts",
            "Connections closed because their request head took longer than gateway.header_timeout_s.",
            value=float(self._guard.head_timeouts),
        )
        yield CounterMetricFamily(
            "multiplex_gateway_heads_too_large",
            "Requests answered 431: their head grew past gateway.max_head_bytes.",
            value=float(self._guard.heads_too_large),
        )
        yield CounterMetricFamily(
            "multiplex_gateway_body_timeouts",
            "Connections closed because a request body took longer than gateway.body_timeout_s.",
            value=float(self._guard.body_timeouts),
        )
        yield GaugeMetricFamily(
            "multiplex_gateway_event_streams",
            "Open server-sent-event streams (each profile at most gateway.max_listeners_per_profile).",
            value=float(self._listeners()),
        )


def _stream_transport(protocol: weakref.ref[GuardedHttp]) -> Callable[[], asyncio.Transport]:
    def transport() -> asyncio.Transport:
        # What was gathered goes first; then the hub writes to the connection itself.
        live = protocol()
        if live is None:
            raise ConnectionError("the connection has closed")
        gathered: Any = live.transport  # GatheringHttp's: a _Gathered
        direct: asyncio.Transport = gathered.direct()
        return direct

    return transport
