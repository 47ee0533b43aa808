"""docs/agents.md#mcp-over-http: a resumed stream replays its own session's events only."""

from __future__ import annotations

from typing import Any

import anyio
from mcp_types import JSONRPCNotification

from multiplex.gateway.mcp import MemoryEventStore
from multiplex.gateway.mcp._event_store import STREAM_OWNER


def _note(n: int) -> Any:
    return JSONRPCNotification(jsonrpc="2.0", method="notifications/progress", params={"n": n})


def _as(owner: str | None, fn: Any, *args: Any) -> Any:
    async def main() -> Any:
        token = STREAM_OWNER.set(owner)
        try:
            return await fn(*args)
        finally:
            STREAM_OWNER.reset(token)

    return anyio.run(main)


def test_replay_is_per_session_and_bounded() -> None:
    store = MemoryEventStore(limit=5)
    # Both sessions' streams are named "1" (the SDK's stream ids are request ids).
    first = _as("session-a", store.store_event, "1", None)  # a priming event
    _as("session-a", store.store_event, "1", _note(1))
    _as("session-b", store.store_event, "1", _note(99))
    _as("session-a", store.store_event, "2", _note(50))
    _as("session-a", store.store_event, "1", _note(2))
    sent: list[Any] = []

    async def collect(event: Any) -> None:
        sent.append(event)

    assert _as("session-a", store.replay_events_after, first, collect) == "1"
    assert [e.message.params["n"] for e in sent] == [1, 2]  # not b's, not stream 2's
    sent.clear()
    # Another session, or none, presenting a's event id gets nothing.
    assert _as("session-b", store.replay_events_after, first, collect) is None
    assert _as(None, store.replay_events_after, first, collect) is None
    assert sent == []
    _as("session-a", store.store_event, "1", _note(3))  # the oldest is dropped
    assert _as("session-a", store.replay_events_after, first, collect) is None
