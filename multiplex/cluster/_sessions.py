"""Session grants and session yolo held in Redis, read at every decision (docs/cluster.md#sessions).

:class:`SharedSessionTable` replaces a profile's in-memory session table in
cluster mode. It caches no grant: each ``get`` that may find one reads Redis,
so a grant made on one node holds on every node and a reset on one node is seen
by every later decision everywhere. What a node may remember is only the
absence of any: :class:`EmptyProfiles` (fail closed, see there). When Redis
cannot be read the session has no grant and no yolo (docs/approvals.md: when
in doubt the gate asks); a grant that cannot be written is not remembered, so
the next identical command asks again.
:meth:`~SharedSessionTable.broadcast_reset` publishes a reset on
``multiplex:reset`` so every node withdraws the session's waits (with the
cause "session reset") and ends its kernels there.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Mapping
from typing import Any

from multiplex.approval.grants._sessions import SessionState, SessionTable
from multiplex.cluster._link import ClusterUnavailable, RedisLink
from multiplex.shell import RuleSet

__all__ = ["RESET_CHANNEL", "SESSIONS_CHANNEL", "EmptyProfiles", "SharedSessionTable"]

log = logging.getLogger("multiplex.cluster")
RESET_CHANNEL = "reset"
SESSIONS_CHANNEL = "sessions"  # "this profile may hold session state now"
_NO_STATE = SessionState()

# KEYS[1]: the session; KEYS[2]: the profile's sessions with state. ARGV: the
# rules (JSON), the TTL, the session id, the channel and its message.
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
redis.call('SADD', KEYS[2], ARGV[3])
redis.call('EXPIRE', KEYS[2], ARGV[2])
redis.call('PUBLISH', ARGV[4], ARGV[5])
return #grants
"""

# KEYS[1]: the session. ARGV[1]: the rule to take back. 1 if the session held it.
_REVOKE = """
local old = redis.call('HGET', KEYS[1], 'grants')
if not old then return 0 end
local kept, found = {}, 0
for _, r in ipairs(cjson.decode(old)) do
  if r == ARGV[1] then found = 1 else kept[#kept + 1] = r end
end
if found == 1 then redis.call('HSET', KEYS[1], 'grants', cjson.encode(kept)) end
return found
"""


class EmptyProfiles:
    """The profiles this node knows to hold no session state: their decisions need not read Redis.

    Fail closed: only the absence of any grant and yolo is remembered, never a
    grant (a grant is honoured only as read from Redis). A profile is known
    empty when a read found neither the session asked for nor any other
    session with state (``multiplex:sessions:<profile>``), and only for as long
    as this node's subscription that found it stays up: every grant and every
    yolo switched on, on any node, publishes on ``multiplex:sessions`` first
    thing in the same script, and every node forgets the profile on it (the
    node that writes forgets it before and after its write). A read that an
    invalidation overtook is not remembered. The cost of the rare race (a grant
    made on another node whose message is still on its way) is one prompt
    more, never one less.
    """

    def __init__(self, epoch: Callable[[], int | None]) -> None:
        self._epoch = epoch  # the live subscription's number, None while there is none
        self._lock = threading.Lock()
        self._known: dict[str, int] = {}  # profile -> epoch of the subscription that saw it empty
        self._generation = 0

    def empty(self, profile: str) -> bool:
        epoch = self._epoch()
        return epoch is not None and self._known.get(profile) == epoch

    def ticket(self) -> tuple[int, int | None]:
        """Take before a read; hand to :meth:`found_empty` after it."""
        with self._lock:
            return self._generation, self._epoch()

    def found_empty(self, profile: str, ticket: tuple[int, int | None]) -> None:
        generation, epoch = ticket
        with self._lock:
            if epoch is not None and generation == self._generation and self._epoch() == epoch:
                self._known[profile] = epoch

    def forget(self, profile: str | None = None) -> None:
        """``profile`` (every profile with None) may hold state now: read Redis again."""
        with self._lock:
            self._generation += 1
            if profile is None:
                self._known.clear()
            else:
                self._known.pop(profile, None)

    def on_message(self, message: dict[str, Any]) -> None:
        self.forget(str(message.get("profile")))


class SharedSessionTable(SessionTable):
    """The sessions of ONE profile, shared by every node through Redis."""

    def __init__(self, profile: str, link: RedisLink, empty: EmptyProfiles) -> None:
        super().__init__(profile)
        self._link = link
        self._empty = empty
        self._ttl = max(1, int(link.config.run_ttl))
        self._grant = link.sync.register_script(_GRANT)
        self._revoke = link.sync.register_script(_REVOKE)
        self.reset_channel = link.key(RESET_CHANNEL)
        self._with_state = link.key("sessions", profile)
        self._changed = (
            link.key(SESSIONS_CHANNEL),
            json.dumps({"profile": profile, "node": link.node_id}, separators=(",", ":")),
        )

    def _key(self, session: str) -> str:
        return self._link.key("sess", self.profile, session)

    def get(self, session: str) -> SessionState:
        if self._empty.empty(self.profile):
            return _NO_STATE
        ticket = self._empty.ticket()

        def read() -> list[Any]:
            pipe = self._link.sync.pipeline(transaction=False)
            pipe.hgetall(self._key(session))
            pipe.scard(self._with_state)
            return list(pipe.execute())

        try:
            fields, others = self._link.call(read)
        except ClusterUnavailable:
            return _NO_STATE  # stale or unknown: no grant is honoured
        if not fields and not others:
            self._empty.found_empty(self.profile, ticket)
        return _state(fields)

    def grant(self, session: str, rules: list[str]) -> None:
        if not rules:
            return
        keys = [self._key(session), self._with_state]
        args: list[str | int] = [json.dumps(rules), self._ttl, session, *self._changed]
        self._empty.forget(self.profile)
        try:
            self._link.call(lambda: self._grant(keys=keys, args=args))
        except ClusterUnavailable:
            log.warning("session grant not stored (redis unavailable): it will be asked again")
        finally:
            self._empty.forget(self.profile)

    def set_yolo(self, session: str, on: bool) -> None:
        key = self._key(session)

        def write() -> None:
            pipe = self._link.sync.pipeline(transaction=False)
            pipe.hset(key, "yolo", "1" if on else "0")
            pipe.expire(key, self._ttl)
            if on:
                pipe.sadd(self._with_state, session)
            # Renewed with every session it may hold: a session with grants whose
            # TTL this write renews must not outlive its place in the set.
            pipe.expire(self._with_state, self._ttl)
            if on:
                pipe.publish(*self._changed)
            pipe.execute()

        self._empty.forget(self.profile)
        try:
            self._link.call(write)  # raises: a yolo switch nobody can see must not look set
        finally:
            self._empty.forget(self.profile)

    def revoke(self, session: str, rule: str) -> bool:
        # raises when Redis cannot be written: a grant taken back must never look gone
        key = self._key(session)
        return int(self._link.call(lambda: self._revoke(keys=[key], args=[rule]))) == 1

    def reset(self, session: str) -> bool:
        def write() -> list[Any]:
            pipe = self._link.sync.pipeline(transaction=False)
            pipe.delete(self._key(session))
            pipe.srem(self._with_state, session)
            return list(pipe.execute())

        return int(self._link.call(write)[0]) > 0

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
