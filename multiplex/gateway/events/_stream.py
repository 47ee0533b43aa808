"""Server-sent-event answers the event hub writes itself (docs/gateway.md#server-sent-events).

An :class:`EventStream` sends its head (``: connected`` and what is re-sent on
connect) through ASGI, then hands its connection to its subscription
(:meth:`~multiplex.gateway.events._events.Subscription.write_to`): each event is
written by the hub's one callback per event, the same chunk for every stream,
and the stream's own task only waits for the client to leave or the stream to
end. Hundreds of listeners so cost one write each per event, not a task
switch, a generator step and the framework's send path each.

The connection comes from the gateway's HTTP protocol, as the ASGI scope
extension ``multiplex.transport`` (``_connections.py``): a function that
sends what the protocol gathered and returns the connection's transport.
Served by another ASGI server, the stream relays each event through ASGI.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from fastapi.responses import Response
from starlette.types import Receive, Scope, Send

from multiplex.gateway._gateway import Gateway
from multiplex.gateway.events._event import Event
from multiplex.gateway.events._events import EventHub, Subscription
from multiplex.gateway.http._auth import Principal
from multiplex.gateway.http._connections import TRANSPORT
from multiplex.gateway.http._listeners import Seat

__all__ = ["EventStream", "Opened", "event_stream"]

_HEADERS = [
    (b"content-type", b"text/event-stream; charset=utf-8"),
    (b"cache-control", b"no-cache"),
    (b"x-accel-buffering", b"no"),
]


def _never(event: Event) -> bool:
    return False


@dataclass(frozen=True, slots=True)
class Opened:
    """A stream ready to start: its subscription and head, what to skip, when it ends."""

    sub: Subscription
    head: bytes
    skip: Callable[[Event], bool] = _never  # queued before the head, already in it
    ends: Callable[[Event], bool] | None = None  # the stream's last event
    finished: bool = False  # the head says all: no live part


async def _disconnected(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


class EventStream(Response):
    """The answer of an SSE route: opened when it is sent, on the caller's seat."""

    def __init__(self, hub: EventHub, opening: Awaitable[Opened], seat: Seat) -> None:
        super().__init__(media_type="text/event-stream")
        self._hub = hub
        self._opening = opening
        self._seat = seat

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            opened = await self._opening
            try:
                await self._serve(opened, scope, receive, send)
            finally:
                self._hub.unsubscribe(opened.sub)
        finally:
            self._seat.release()

    async def _serve(self, opened: Opened, scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": _HEADERS})
        live = not opened.finished
        await send({"type": "http.response.body", "body": opened.head, "more_body": live})
        if not live:
            return
        gone = asyncio.ensure_future(_disconnected(receive))
        try:
            connection = (scope.get("extensions") or {}).get(TRANSPORT, {}).get("transport")
            if connection is not None:
                ended = opened.sub.write_to(connection(), opened.skip, opened.ends)
                await asyncio.wait((gone, ended), return_when=asyncio.FIRST_COMPLETED)
            else:
                gone.add_done_callback(lambda _: opened.sub.close())
                await _relay(opened, send)
            if not gone.done():
                await send({"type": "http.response.body", "body": b"", "more_body": False})
        finally:
            gone.cancel()


async def _relay(opened: Opened, send: Send) -> None:
    # Without the connection: each event through ASGI, as any stream.
    async for item in opened.sub.events():
        if item is None:
            frame = b": keepalive\n\n"
        elif opened.skip(item):
            continue
        else:
            frame = item.frame()
        await send({"type": "http.response.body", "body": frame, "more_body": True})
        if item is not None and opened.ends is not None and opened.ends(item):
            return


def event_stream(gw: Gateway, caller: Principal, opening: Awaitable[Opened]) -> Response:
    """An SSE answer on one of the caller's listener seats (429 without one)."""
    try:
        seat = gw.listeners.take(caller.label)
    except BaseException:
        if asyncio.iscoroutine(opening):
            opening.close()  # never started: nothing subscribed
        raise
    return EventStream(gw.hub, opening, seat)
