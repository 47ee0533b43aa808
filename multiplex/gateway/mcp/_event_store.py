"""Resumable MCP streams: the last messages of each session, in memory (docs/agents.md#mcp-over-http).

The SDK's stream ids are request ids, the same in every session, so each
event is kept under the session that wrote it: a ``Last-Event-ID`` replays
only the same session's stream, never another caller's. Bounded: the oldest
events are dropped first, and none survive a restart.
"""

from __future__ import annotations

import itertools
import secrets
from collections import OrderedDict
from contextvars import ContextVar

from mcp.server.streamable_http import EventCallback, EventId, EventMessage, EventStore, StreamId
from mcp_types import JSONRPCMessage

__all__ = ["STREAM_OWNER", "MemoryEventStore"]

# Which session's events a request may write and replay: set by the endpoint per request.
STREAM_OWNER: ContextVar[str | None] = ContextVar("multiplex_mcp_stream_owner", default=None)


class MemoryEventStore(EventStore):
    """The last ``limit`` events of this process, each replayable by its own session only."""

    def __init__(self, limit: int = 1024) -> None:
        self.limit = limit
        self._events: OrderedDict[str, tuple[str | None, StreamId, JSONRPCMessage | None]] = (
            OrderedDict()
        )
        self._prefix = secrets.token_hex(6)  # ids of an earlier process never match
        self._count = itertools.count()

    async def store_event(self, stream_id: StreamId, message: JSONRPCMessage | None) -> EventId:
        event_id = f"{self._prefix}-{next(self._count)}"
        self._events[event_id] = (STREAM_OWNER.get(), stream_id, message)
        while len(self._events) > self.limit:
            self._events.popitem(last=False)
        return event_id

    async def replay_events_after(
        self, last_event_id: EventId, send_callback: EventCallback
    ) -> StreamId | None:
        found = self._events.get(last_event_id)
        owner = STREAM_OWNER.get()
        if found is None or owner is None or found[0] != owner:
            return None  # unknown, dropped, or another session's event
        _, stream_id, _ = found
        after = False
        for event_id, (who, stream, message) in list(self._events.items()):
            if event_id == last_event_id:
                after = True
            elif after and who == owner and stream == stream_id and message is not None:
                await send_callback(EventMessage(message, event_id))
        return stream_id
