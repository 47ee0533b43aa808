"""Open approvals shared by every node, resolved exactly once (docs/cluster.md#approvals).

A node registers each prompt it parks (the redacted row ``GET /v1/approvals``
shows, never the raw command) under ``multiplex:ap:<id>`` and in the
``multiplex:ap:open`` index. Every way a prompt ends, an answer on any node,
a cancellation or a timeout on its own node, a lost node, goes through one
Lua script: the first resolution wins atomically, is stored, leaves the index
and is published on ``multiplex:resolved`` so the waiting node applies it;
every later one is refused and sees the winner.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass
from typing import Any

import orjson

from multiplex.approval.waiting._pending import Answer, Choice, Resolution
from multiplex.cluster._events import MAXLEN, encode
from multiplex.cluster._link import RedisLink
from multiplex.cluster._publish import ANNOUNCE_LUA, Inline

__all__ = [
    "RESOLVED_CHANNEL",
    "ApprovalStore",
    "Claim",
    "Outcome",
    "resolution_doc",
    "resolution_of",
]

RESOLVED_CHANNEL = "resolved"

# An answer that wins also appends the prompt's approval.resolved event (from
# the 'head' the prompt's node stored when it registered it, ARGV[11] its end)
# and, when the run's document is still the one written with the prompt, puts
# the document the run will have once resumed; the position and whether the
# document was written go with the message to the prompt's node.
_RESOLVE = """
local state = redis.call('HGET', KEYS[1], 'state')
if state ~= 'open' then
  if state then
    return {0, redis.call('HGET', KEYS[1], 'resolution'), redis.call('HGET', KEYS[1], 'pos')}
  end
  return {0, false}
end
local node = redis.call('HGET', KEYS[1], 'node')
redis.call('HSET', KEYS[1], 'state', 'resolved', 'resolution', ARGV[2])
redis.call('EXPIRE', KEYS[1], ARGV[4])
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('SREM', ARGV[5] .. node .. ':aps', ARGV[1])
local pos, doc = false, 0
local head = ARGV[11] ~= '' and redis.call('HGET', KEYS[1], 'head')
if head then
  local r = cjson.decode(redis.call('HGET', KEYS[1], 'row'))
  local run = type(r['run_id']) == 'string' and r['run_id'] or ''
  pos = redis.call('XADD', ARGV[8], 'MAXLEN', '~', ARGV[9], '*', 'name', 'approval.resolved',
    'profile', r['profile'], 'run', run, 'node', node, 'data', head .. ARGV[11])
  redis.call('HSET', KEYS[1], 'pos', pos)
  local resumed = redis.call('HGET', KEYS[1], 'resumed')
  if resumed and resumed ~= '' and run ~= '' then
    local cur = redis.call('GET', ARGV[10] .. run)
    if cur and redis.sha1hex(cur) == redis.call('HGET', KEYS[1], 'waiting') then
      redis.call('SET', ARGV[10] .. run, resumed, 'EX', ARGV[4])
      doc = 1
    end
  end
end
local message = ARGV[2]
if pos then
  message = string.sub(ARGV[2], 1, -2) .. ',"position":"' .. pos .. '","doc":' .. doc .. '}'
end
redis.call('PUBLISH', ARGV[3], message)
return {1, ARGV[2], pos, doc}
"""

# An answer over HTTP names the run it answers: when the stored prompt is that
# run's (and, for a profile's token, that profile's), it is resolved in the same
# round trip; {2, false} sends the caller to the full check (a coalesced
# follower's run shows its leader's prompt; an unknown one gets its 404 or 409).
_ANSWER = (
    """
local row = redis.call('HGET', KEYS[1], 'row')
if not row then return {2, false} end
local r = cjson.decode(row)
if r['run_id'] ~= ARGV[6] or (ARGV[7] ~= '' and r['profile'] ~= ARGV[7]) then
  return {2, false}
end
"""
    + _RESOLVE
)

# Register only once: a prompt already known (perhaps resolved meanwhile) is left alone.
_REGISTER = """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'row', ARGV[1], 'state', 'open', 'node', ARGV[2])
redis.call('EXPIRE', KEYS[1], ARGV[3])
redis.call('ZADD', KEYS[2], ARGV[4], ARGV[5])
redis.call('SADD', KEYS[3], ARGV[5])
return 1
"""

# Coalescing across nodes (docs/cluster.md#approvals): the first open prompt for
# (profile, session, command) leads; a later one anywhere follows it. Returns
# {1, false, position} when this prompt leads (it is registered as by _REGISTER
# and, given KEYS[5..7] and ARGV[8..], its approval.request event is appended
# with its run's document, see ANNOUNCE_LUA), or {0, row} with the open leader's row.
_CLAIM = (
    ANNOUNCE_LUA
    + """
local cur = redis.call('GET', KEYS[1])
if cur and cur ~= ARGV[1] then
  if redis.call('HGET', ARGV[3] .. cur, 'state') == 'open' then
    return {0, redis.call('HGET', ARGV[3] .. cur, 'row')}
  end
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
local pos = false
if redis.call('EXISTS', KEYS[2]) == 0 then
  redis.call('HSET', KEYS[2], 'row', ARGV[4], 'state', 'open', 'node', ARGV[5])
  redis.call('EXPIRE', KEYS[2], ARGV[6])
  redis.call('ZADD', KEYS[3], ARGV[7], ARGV[1])
  redis.call('SADD', KEYS[4], ARGV[1])
  if #KEYS > 4 then
    pos = announce(5, 8)
    redis.call('HSET', KEYS[2], 'head', ARGV[16], 'resumed', ARGV[17],
      'waiting', redis.sha1hex(ARGV[14]))
  end
end
return {1, false, pos}
"""
)

_LIST_OPEN = """
local ids = redis.call('ZRANGE', KEYS[1], 0, -1)
local rows = {}
for _, id in ipairs(ids) do
  local row = redis.call('HGET', ARGV[1] .. id, 'row')
  if row then rows[#rows + 1] = row end
end
return rows
"""


def resolution_doc(resolution: Resolution) -> dict[str, Any]:
    """A resolution as stored and published (an answer's reason is the approver's own text)."""
    answer = resolution.answer
    if answer is not None:
        return {
            "answer": {
                "choice": answer.choice.value,
                "rule": answer.rule,
                "reason": answer.reason,
                "by": answer.by,
            }
        }
    if resolution.timed_out:
        return {"timed_out": True}
    return {"cancelled": resolution.cancelled or "withdrawn"}


def resolution_of(doc: dict[str, Any]) -> Resolution:
    """The inverse of :func:`resolution_doc`; an unreadable answer is a cancellation, never approval."""
    answer = doc.get("answer")
    if isinstance(answer, dict):
        try:
            choice = Choice(str(answer.get("choice")))
        except ValueError:
            return Resolution(cancelled="unreadable answer in the cluster")
        return Resolution(
            answer=Answer(
                choice,
                rule=answer.get("rule") or None,
                reason=answer.get("reason") or None,
                by=str(answer.get("by") or "user"),
            )
        )
    if doc.get("timed_out"):
        return Resolution(timed_out=True)
    return Resolution(cancelled=str(doc.get("cancelled") or "withdrawn"))


@dataclass(frozen=True, slots=True)
class Announcement:
    """What a leading prompt's registration appends and leaves for its answer (see
    :meth:`ApprovalStore.claim`): its ``approval.request`` (``inline``), the start of
    its ``approval.resolved`` data (``head``: the JSON object without its closing
    brace) and its run's document once resumed (``resumed``, empty for none)."""

    inline: Inline
    head: bytes
    resumed: bytes = b""


@dataclass(frozen=True, slots=True)
class Claim:
    """What :meth:`ApprovalStore.claim` found: the leader to follow (None: this prompt
    leads), and the position of the ``approval.request`` it appended (if asked to)."""

    leader: dict[str, Any] | None
    position: str | None = None


@dataclass(frozen=True, slots=True)
class Outcome:
    """The result of one resolution attempt: whether it won, and the winning resolution."""

    won: bool
    resolution: dict[str, Any] | None
    # False: the prompt was not the named run's (:meth:`ApprovalStore.aresolve`); nothing changed.
    matched: bool = True
    # The winning answer's approval.resolved in the stream, and whether its run's
    # document was written with it (the prompt's node then writes neither again).
    position: str | None = None
    doc: bool = False


class ApprovalStore:
    """Shared open approvals and their single resolution."""

    def __init__(self, link: RedisLink) -> None:
        self._link = link
        self._ttl = max(1, int(link.config.run_ttl))
        self._open = link.key("ap", "open")
        self._prefix = link.key("ap", "")
        self._node_prefix = link.key("node", "")
        self._stream = link.key("events")
        self._run_prefix = link.key("run", "")
        self.channel = link.key(RESOLVED_CHANNEL)
        self._resolve_sync = link.sync.register_script(_RESOLVE)
        self._resolve_aio = link.aio.register_script(_RESOLVE)
        self._answer_aio = link.aio.register_script(_ANSWER)
        self._list_aio = link.aio.register_script(_LIST_OPEN)
        self._register = link.sync.register_script(_REGISTER)
        self._claim = link.sync.register_script(_CLAIM)

    def _key(self, approval_id: str) -> str:
        return self._prefix + approval_id

    def node_key(self, node: str) -> str:
        return f"{self._node_prefix}{node}:aps"

    def register(self, row: dict[str, Any]) -> bool:
        """Publish an open prompt (sync, from the waiting thread); ``row`` must be redacted.

        False if the prompt was already known (registering again never reopens it).
        """
        approval_id = str(row["approval_id"])
        node = self._link.node_id
        payload = encode({**row, "node": node})
        keys = [self._key(approval_id), self._open, self.node_key(node)]
        args: list[bytes | str | int] = [
            payload,
            node,
            self._ttl,
            repr(float(row["created_at"])),
            approval_id,
        ]
        return bool(self._link.call(lambda: self._register(keys=keys, args=args)))

    def claim(
        self, row: dict[str, Any], key: tuple[str, str, str], announce: Announcement | None = None
    ) -> Claim:
        """Lead the prompt ``key`` (registering ``row``, as :meth:`register`), or follow.

        ``leader`` is None when this prompt leads; else the row of the open
        prompt it follows, wherever it lives. ``key`` is (profile, session,
        command): only its hash is stored. ``announce`` (from
        :meth:`Publisher.inline <multiplex.cluster.Publisher.inline>`): the
        ``approval.request`` event to append, with its run's document, when this
        prompt leads (``position``), and what an answer that wins appends in its
        turn (:class:`Announcement`). One round trip, in place of :meth:`register`'s
        and the event's.
        """
        approval_id = str(row["approval_id"])
        node = self._link.node_id
        digest = hashlib.sha256("\0".join(key).encode()).hexdigest()
        ttl_ms = max(1, int((float(row["expires_at"]) - time.time()) * 1000))
        payload = encode({**row, "node": node})
        keys = [
            self._link.key("coalesce", digest),
            self._key(approval_id),
            self._open,
            self.node_key(node),
        ]
        args: list[Any] = [
            approval_id,
            ttl_ms,
            self._prefix,
            payload,
            node,
            self._ttl,
            repr(float(row["created_at"])),
        ]
        if announce is not None:
            keys += announce.inline[0]
            args += [*announce.inline[1], announce.head, announce.resumed]
        reply = self._link.call(lambda: self._claim(keys=keys, args=args))
        if int(reply[0]) == 1:
            position = reply[2] if len(reply) > 2 and reply[2] else None
            return Claim(None, None if position is None else str(position))
        return Claim(dict(orjson.loads(reply[1])) if reply[1] else None, None)

    def _args(
        self, approval_id: str, resolution: dict[str, Any], run_id: str = "", profile: str = ""
    ) -> tuple[list[str], list[Any]]:
        payload = encode(
            {**resolution, "approval_id": approval_id, "resolved_on": self._link.node_id}
        )
        answer = resolution.get("answer")
        # The end of the approval.resolved data, as the prompt's node would write it.
        tail = (
            b',"choice":'
            + encode(answer.get("choice"))
            + b',"by":'
            + encode(answer.get("by"))
            + b"}"
            if isinstance(answer, dict)
            else b""
        )
        return [self._key(approval_id), self._open], [
            *(approval_id, payload, self.channel, self._ttl, self._node_prefix),
            *(run_id, profile, self._stream, MAXLEN, self._run_prefix, tail),
        ]

    @staticmethod
    def _outcome(reply: Any) -> Outcome:
        won, raw = int(reply[0]), reply[1]
        if won == 2:
            return Outcome(False, None, matched=False)
        position = str(reply[2]) if len(reply) > 2 and reply[2] else None
        written = len(reply) > 3 and int(reply[3]) == 1
        return Outcome(won == 1, orjson.loads(raw) if raw else None, position=position, doc=written)

    def resolve(self, approval_id: str, resolution: dict[str, Any]) -> Outcome:
        """Sync: resolve ``approval_id`` if still open; else the resolution that won (or None)."""
        keys, args = self._args(approval_id, resolution)
        return self._outcome(self._link.call(lambda: self._resolve_sync(keys=keys, args=args)))

    async def aresolve(
        self,
        approval_id: str,
        resolution: dict[str, Any],
        *,
        run_id: str | None = None,
        profile: str = "",
    ) -> Outcome:
        """The same from the event loop (answers arriving over HTTP).

        With ``run_id`` only a prompt of that run (and of ``profile``, unless
        empty) is resolved; any other gives ``matched=False`` and changes nothing.
        """
        if run_id is None:
            keys, args = self._args(approval_id, resolution)
            script = self._resolve_aio(keys=keys, args=args)
        else:
            keys, args = self._args(approval_id, resolution, run_id, profile)
            script = self._answer_aio(keys=keys, args=args)
        return self._outcome(await self._link.acall(script))

    async def get(self, approval_id: str) -> dict[str, Any] | None:
        """The prompt's row and state (``state``: open or resolved), or None."""
        fields = await self._link.acall(self._link.aio.hgetall(self._key(approval_id)))
        if not fields or "row" not in fields:
            return None
        row = dict(orjson.loads(fields["row"]))
        row["state"] = fields.get("state", "open")
        if fields.get("resolution"):
            row["resolution"] = orjson.loads(fields["resolution"])
        return row

    async def list_open(self) -> list[dict[str, Any]]:
        """Every node's open prompts, oldest first (one round trip)."""
        rows = await self._link.acall(self._list_aio(keys=[self._open], args=[self._prefix]))
        return [dict(orjson.loads(r)) for r in rows]

    async def open_on(self, node: str) -> list[str]:
        """The ids of the prompts parked on ``node``."""
        return sorted(await self._link.acall(self._link.aio.smembers(self.node_key(node))))
