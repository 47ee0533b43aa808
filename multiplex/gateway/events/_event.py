"""One event of the gateway and its server-sent-event frame (docs/gateway.md#server-sent-events).

The frame is encoded once, however many streams send it; in a cluster an event
carries its place in the shared stream as the frame's ``id:``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from multiplex.gateway.http._json import dumps

if TYPE_CHECKING:
    from multiplex.cluster import SharedEvent

__all__ = ["Event", "from_shared", "make_event", "sse", "stream_order"]


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
