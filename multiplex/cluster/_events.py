"""Every node's events in one Redis stream (docs/cluster.md#events).

Each event a node publishes is appended to ``multiplex:events`` (capped at
about ``MAXLEN`` entries) with its name, profile, run and the node it came
from. A reader keeps its own position (the last stream id it delivered), so a
connection can resume where it stopped; a node reads the stream once and fans
out to the streams of its own that follow the cluster, its own events included,
so each of them is sent every event in stream order (docs/cluster.md#events).
Open requests are re-delivered from :class:`~multiplex.cluster.ApprovalStore`
on connect, not from the stream.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import orjson

from multiplex.cluster._link import RedisLink

__all__ = ["MAXLEN", "EventLog", "SharedEvent", "encode"]

MAXLEN = 100_000


def encode(data: Any) -> bytes:
    """Compact UTF-8 JSON (orjson); the standard library for what orjson refuses.

    orjson refuses integers beyond 64 bits and lone surrogates; those fall back
    (surrogates escaped) rather than failing the write.
    """
    try:
        return orjson.dumps(data)
    except TypeError:
        return json.dumps(data, separators=(",", ":")).encode()


@dataclass(frozen=True, slots=True)
class SharedEvent:
    """One event read back from the stream, with its position."""

    position: str
    name: str
    profile: str
    run_id: str | None
    node: str
    data: dict[str, Any]
    raw: str = ""  # ``data`` as stored: compact JSON, which a frame can carry as it is


def _shared(position: Any, fields: dict[str, Any]) -> SharedEvent:
    raw = fields["data"]
    return SharedEvent(
        position=str(position),
        name=fields["name"],
        profile=fields["profile"],
        run_id=fields["run"] or None,
        node=fields["node"],
        data=dict(orjson.loads(raw)),
        raw=raw if isinstance(raw, str) else raw.decode(),
    )


def _fields(name: str, data: dict[str, Any], profile: str, run_id: str | None, node: str) -> Any:
    return {
        "name": name,
        "profile": profile,
        "run": run_id or "",
        "node": node,
        "data": encode(data),
    }


class EventLog:
    """Append to and read from the shared event stream."""

    def __init__(self, link: RedisLink) -> None:
        self._link = link
        self.key = link.key("events")

    def queue_append(
        self, pipe: Any, name: str, data: dict[str, Any], profile: str, run_id: str | None = None
    ) -> None:
        """Add the append to ``pipe`` (one round trip with the run record it changes)."""
        fields = _fields(name, data, profile, run_id, self._link.node_id)
        pipe.xadd(self.key, fields, maxlen=MAXLEN, approximate=True)

    def append(
        self, name: str, data: dict[str, Any], profile: str, run_id: str | None = None
    ) -> str:
        """Sync append (any thread); the new entry's position. ``data`` must be redacted."""
        fields = _fields(name, data, profile, run_id, self._link.node_id)
        return str(
            self._link.call(
                lambda: self._link.sync.xadd(self.key, fields, maxlen=MAXLEN, approximate=True)
            )
        )

    async def aappend(
        self,
        name: str,
        data: dict[str, Any],
        profile: str,
        run_id: str | None = None,
        *,
        node: str | None = None,
    ) -> str:
        """The same from the event loop; ``node`` names the node the event is about."""
        fields = _fields(name, data, profile, run_id, node or self._link.node_id)
        position = await self._link.acall(
            self._link.aio.xadd(self.key, fields, maxlen=MAXLEN, approximate=True)
        )
        return str(position)

    async def last_position(self) -> str:
        """The newest entry's position ("0-0" when the stream is empty): read after it."""
        entries = await self._link.acall(self._link.aio.xrevrange(self.key, count=1))
        return str(entries[0][0]) if entries else "0-0"

    async def since(self, after: str, *, count: int = 1000) -> list[SharedEvent]:
        """Up to ``count`` entries after position ``after``, without waiting (a reconnect's replay)."""
        entries = await self._link.acall(
            self._link.aio.xrange(self.key, min="(" + after, max="+", count=count)
        )
        return [_shared(position, fields) for position, fields in entries or []]

    async def read(self, after: str, *, block_ms: int = 500, count: int = 500) -> list[SharedEvent]:
        """Entries after position ``after``, waiting up to ``block_ms`` for the first one."""
        reply = await self._link.acall(
            self._link.aio.xread({self.key: after}, count=count, block=block_ms)
        )
        out: list[SharedEvent] = []
        for _stream, entries in reply or []:
            for position, fields in entries:
                out.append(_shared(position, fields))
        return out
