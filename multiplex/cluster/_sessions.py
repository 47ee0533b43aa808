"""Session grants and session yolo held in Redis, read at every decision (docs/cluster.md#sessions).

:class:`SharedSessionTable` replaces a profile's in-memory session table in
cluster mode. It caches nothing: each ``get`` reads Redis, so a grant made on
one node holds on every node at once and a reset on one node is seen by every
later decision everywhere. When Redis cannot be read the session has no grant
and no yolo (docs/approvals.md: when in doubt the gate asks); a grant that
cannot be written is not remembered, so the next identical command asks again.
:meth:`~SharedSessionTable.broadcast_reset` publishes a reset on
``multiplex:reset`` so every node withdraws the session's waits (with the
cause "session reset") and ends its kernels there.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any

from multiplex.approval._sessions import SessionState, SessionTable
from multiplex.cluster._link import ClusterUnavailable, RedisLink
from multiplex.shell import RuleSet

__all__ = ["RESET_CHANNEL", "SharedSessionTable"]

log = logging.getLogger("multiplex.cluster")
RESET_CHANNEL = "reset"

_GRANT = """
local old = redis.call('HGET', KEYS[1], 'grants')
local grants = old and cjson.decode(old) or {}
local seen = {}
for _, r in ipairs(grants) do seen[r] = true end
for _, r in ipairs(cjson.decode(ARGV[1])) do
  if not seen[r] then grants[#grants + 1] = r; seen[r] = true end
end
redis.call('HSET', KEYS[1], 'grants', cjson.encode(grants))
redis.call('EXPIRE', KEYS[1], ARGV[2])
return #grants
"""


class SharedSessionTable(SessionTable):
    """The sessions of ONE profile, shared by every node through Redis."""

    def __init__(self, profile: str, link: RedisLink) -> None:
        super().__init__(profile)
        self._link = link
        self._ttl = max(1, int(link.config.run_ttl))
        self._grant = link.sync.register_script(_GRANT)
        self.reset_channel = link.key(RESET_CHANNEL)

    def _key(self, session: str) -> str:
        return self._link.key("sess", self.profile, session)

    def get(self, session: str) -> SessionState:
        try:
            fields = self._link.call(lambda: self._link.sync.hgetall(self._key(session)))
        except ClusterUnavailable:
            return SessionState()  # stale or unknown: no grant is honoured
        return _state(fields)

    def grant(self, session: str, rules: list[str]) -> None:
        if not rules:
            return
        key, payload = self._key(session), json.dumps(rules)
        try:
            self._link.call(lambda: self._grant(keys=[key], args=[payload, self._ttl]))
        except ClusterUnavailable:
            log.warning("session grant not stored (redis unavailable): it will be asked again")

    def set_yolo(self, session: str, on: bool) -> None:
        key = self._key(session)

        def write() -> None:
            pipe = self._link.sync.pipeline(transaction=False)
            pipe.hset(key, "yolo", "1" if on else "0")
            pipe.expire(key, self._ttl)
            pipe.execute()

        self._link.call(write)  # raises: a yolo switch nobody can see must not look set

    def reset(self, session: str) -> bool:
        return int(self._link.call(lambda: self._link.sync.delete(self._key(session)))) > 0

    def broadcast_reset(self, session: str, cause: str = "session reset") -> int:
        """Tell every node to end the session's waits and kernels; how many nodes heard it."""
        message = json.dumps(
            {
                "profile": self.profile,
                "session": session,
                "cause": cause,
                "node": self._link.node_id,
            }
        )
        return int(self._link.call(lambda: self._link.sync.publish(self.reset_channel, message)))

    def sessions(self) -> dict[str, SessionState]:
        prefix = self._key("")
        try:
            keys = self._link.call(lambda: list(self._link.sync.scan_iter(prefix + "*", 500)))
            pipe = self._link.sync.pipeline(transaction=False)
            for key in keys:
                pipe.hgetall(key)
            values = self._link.call(pipe.execute) if keys else []
        except ClusterUnavailable:
            return {}
        return {k[len(prefix) :]: _state(v) for k, v in zip(keys, values, strict=True)}


def _state(fields: Mapping[Any, Any]) -> SessionState:
    if not fields:
        return SessionState()
    grants = json.loads(fields["grants"]) if fields.get("grants") else []
    if isinstance(grants, dict):  # cjson writes an empty list as {}
        grants = []
    return SessionState(RuleSet(grants), fields.get("yolo") == "1")
