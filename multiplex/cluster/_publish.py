"""A node's events and the run documents they change, written in one script (docs/cluster.md#cost).

One :class:`Publisher` call appends a batch of events to ``multiplex:events``
and stores the documents of the runs they changed, as one Lua script: one
round trip, one reply, atomic (a reader never sees the event without the
document it describes). A document is written under the same rule as
:meth:`~multiplex.cluster.RunStore.put`: a record that is already final stays
as it is. A document that is also an event's data (``run.started``,
``run.finished`` carry the document itself) is encoded once for both.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from multiplex.cluster._events import MAXLEN, EventLog, encode
from multiplex.cluster._link import RedisLink
from multiplex.cluster._runs import FINAL_STATUSES, RunStore

__all__ = ["ANNOUNCE_LUA", "Inline", "Outgoing", "Publisher"]

# (name, redacted data, profile, run id)
Outgoing = tuple[str, dict[str, Any], str, str | None]

# KEYS[1]: the stream; then, per document, its record and its node's runs.
# ARGV: maxlen, ttl, the number of events, five fields per event, then per
# document its JSON, "1" if final, and its run id. Returns the events' positions.
_PUBLISH = """
local out = {}
local i = 4
for e = 1, tonumber(ARGV[3]) do
  out[e] = redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], '*', 'name', ARGV[i],
    'profile', ARGV[i + 1], 'run', ARGV[i + 2], 'node', ARGV[i + 3], 'data', ARGV[i + 4])
  i = i + 5
end
for k = 2, #KEYS, 2 do
  local cur = redis.call('GET', KEYS[k])
  local s = cur and cjson.decode(cur)['status']
  if not (s == 'completed' or s == 'failed' or s == 'cancelled') then
    redis.call('SET', KEYS[k], ARGV[i], 'EX', ARGV[2])
    if ARGV[i + 1] == '1' then
      redis.call('SREM', KEYS[k + 1], ARGV[i + 2])
    else
      redis.call('SADD', KEYS[k + 1], ARGV[i + 2])
    end
  end
  i = i + 3
end
return out
"""


# For another script that appends one event itself (and stores its run's
# document, never final here) in its own round trip: ``announce(k, a)`` reads
# KEYS[k..k+2] and ARGV[a..a+7] as :meth:`Publisher.inline` lays them out and
# returns the event's position.
ANNOUNCE_LUA = """
local function announce(k, a)
  local pos = redis.call('XADD', KEYS[k], 'MAXLEN', '~', ARGV[a], '*', 'name', ARGV[a + 1],
    'profile', ARGV[a + 2], 'run', ARGV[a + 3], 'node', ARGV[a + 4], 'data', ARGV[a + 5])
  if ARGV[a + 6] ~= '' then
    local cur = redis.call('GET', KEYS[k + 1])
    local s = cur and cjson.decode(cur)['status']
    if not (s == 'completed' or s == 'failed' or s == 'cancelled') then
      redis.call('SET', KEYS[k + 1], ARGV[a + 6], 'EX', ARGV[a + 7])
      redis.call('SADD', KEYS[k + 2], ARGV[a + 3])
    end
  end
  return pos
end
"""

# KEYS and ARGV of one event for ANNOUNCE_LUA
Inline = tuple[list[str], list[Any]]


def _with_node(doc: bytes, node: bytes) -> bytes:
    """``doc`` (an encoded JSON object) with a last ``"node"`` member, without re-encoding it."""
    if doc == b"{}":
        return b'{"node":' + node + b"}"
    return doc[:-1] + b',"node":' + node + b"}"


class Publisher:
    """Append events and store run documents of one node, one round trip per batch."""

    def __init__(self, link: RedisLink, events: EventLog, runs: RunStore) -> None:
        self._link = link
        self._events = events
        self._runs = runs
        self._ttl = max(1, int(link.config.run_ttl))
        self._node = encode(link.node_id)
        self._script = link.sync.register_script(_PUBLISH)
        self._ascript = link.aio.register_script(_PUBLISH)

    def publish(self, events: Sequence[Outgoing], docs: Sequence[dict[str, Any]] = ()) -> list[str]:
        """Sync (any thread): the events' positions in the stream, in order.

        Every ``data`` and document must already be redacted.
        """
        keys, args = self._request(events, docs)
        reply = self._link.call(lambda: self._script(keys=keys, args=args))
        return [str(position) for position in reply or []]

    async def apublish(
        self, events: Sequence[Outgoing], docs: Sequence[dict[str, Any]] = ()
    ) -> list[str]:
        """:meth:`publish` on the event loop: a silent Redis holds back this call, not the loop."""
        keys, args = self._request(events, docs)
        reply = await self._link.acall(self._ascript(keys=keys, args=args))
        return [str(position) for position in reply or []]

    def inline(
        self,
        name: str,
        data: dict[str, Any],
        profile: str,
        run_id: str | None,
        doc: dict[str, Any] | None,
    ) -> Inline:
        """One event (and the document of its run) for a script of another store to
        append in its own round trip (``ANNOUNCE_LUA``); both already redacted."""
        run = run_id or ""
        keys = [
            self._events.key,
            self._runs.record_key(run),
            self._runs.node_key(self._link.node_id),
        ]
        stored = b"" if doc is None else self.stored(doc)
        args: list[Any] = [MAXLEN, name, profile, run, self._link.node_id, encode(data), stored]
        return keys, [*args, self._ttl]

    def stored(self, doc: dict[str, Any]) -> bytes:
        """A run document as this node stores it (with its ``node``)."""
        return _with_node(encode(doc), self._node)

    @property
    def stream(self) -> str:
        return self._events.key

    def _request(
        self, events: Sequence[Outgoing], docs: Sequence[dict[str, Any]]
    ) -> tuple[list[str], list[Any]]:
        encoded: dict[int, bytes] = {}

        def once(value: dict[str, Any]) -> bytes:
            key = id(value)
            if key not in encoded:
                encoded[key] = encode(value)
            return encoded[key]

        node = self._link.node_id
        keys: list[str] = [self._events.key]
        args: list[Any] = [MAXLEN, self._ttl, len(events)]
        for name, data, profile, run_id in events:
            args += [name, profile, run_id or "", node, once(data)]
        for doc in docs:
            run_id = str(doc["run_id"])
            keys += [self._runs.record_key(run_id), self._runs.node_key(node)]
            final = "1" if doc.get("status") in FINAL_STATUSES else "0"
            args += [_with_node(once(doc), self._node), final, run_id]
        return keys, args
