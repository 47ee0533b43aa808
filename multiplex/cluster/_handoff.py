"""Parked runs handed from a node that stops gracefully to one that carries on (docs/cluster.md#node-loss).

A stopping node stores each parked run's record (status ``queued``) and pushes
``{"doc", "commands", "start"}`` on ``multiplex:handoff``, in one round trip;
any node serving the profile takes it and resumes the run from command
``start``. Only command lines with nothing to redact are handed over (the
queue holds them as written: never a secret in the clear); the gateway keeps
the others to itself and cancels them as a lone process would.

Taking is a reliable-queue move, never a bare pop: one script moves the item
from the queue into the taking node's ``multiplex:handoff:taken:<node>`` hash
and the run into that node's runs. The node then *claims* it (the record says
``running`` on that node, the item leaves the hash) before any command starts.
A node that dies between taking and claiming leaves the item in its hash: the
node that reaps it puts it back on the queue (:meth:`HandOffQueue.requeue`), so
the run is asked again elsewhere instead of staying ``queued`` forever. One that
dies after claiming is like any lost node: the run ends ``failed``, "node lost"
(its command may have started). A claim whose answer is lost is repeated
before the node takes anything else; Redis answers it as it did the first time.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from multiplex.cluster._link import RedisLink
from multiplex.cluster._runs import RunStore

__all__ = ["HANDOFF_OWNER", "HandOff", "HandOffQueue"]

HANDOFF_OWNER = "handoff"  # the pseudo-node that holds a run between two nodes

_FINAL = "s == 'completed' or s == 'failed' or s == 'cancelled'"

# KEYS: queue, taken hash of the node, the node's runs, the hand-off owner's runs.
# Pop the oldest item and hold it for the taking node, atomically.
_TAKE = """
local raw = redis.call('LPOP', KEYS[1])
if not raw then return false end
local run_id = tostring(cjson.decode(raw)['doc']['run_id'])
redis.call('HSET', KEYS[2], run_id, raw)
redis.call('SREM', KEYS[4], run_id)
redis.call('SADD', KEYS[3], run_id)
return raw
"""

# Same KEYS; ARGV: run id. Back on the queue: a node that does not serve the
# profile, or the reaper of a node that died holding it.
_RETURN = """
local raw = redis.call('HGET', KEYS[2], ARGV[1])
if not raw then return 0 end
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('SREM', KEYS[3], ARGV[1])
redis.call('SADD', KEYS[4], ARGV[1])
redis.call('RPUSH', KEYS[1], raw)
return 1
"""

# KEYS: the run's record, taken hash, the node's runs; ARGV: the record as
# running on the node, TTL, run id, node id. 1 = the node may resume the run;
# 0 = it ended meanwhile (final records are never written again) or is no
# longer held for the node. A retry of a claim whose answer was lost (the item
# already left the hash, the record says running on this node) answers 1 again.
_CLAIM = (
    """
local held = redis.call('HDEL', KEYS[2], ARGV[3])
local cur = redis.call('GET', KEYS[1])
if cur then
  local d = cjson.decode(cur)
  local s = d['status']
  if """
    + _FINAL
    + """ then
    redis.call('SREM', KEYS[3], ARGV[3])
    return 0
  end
  if held == 0 then
    if s == 'running' and d['node'] == ARGV[4] then return 1 end
    return 0
  end
elseif held == 0 then
  return 0
end
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
return 1
"""
)


@dataclass(frozen=True, slots=True)
class HandOff:
    """One run waiting for a node: its record, its command lines, where to resume."""

    doc: dict[str, Any]
    commands: list[str]
    start: int

    @property
    def run_id(self) -> str:
        return str(self.doc["run_id"])


class HandOffQueue:
    """The queue of handed-over runs, shared by every node."""

    def __init__(self, link: RedisLink, runs: RunStore) -> None:
        self._link = link
        self._runs = runs
        self.key = link.key("handoff")
        self._ttl = max(1, int(link.config.run_ttl))

    def _taken(self, node: str) -> str:
        return self._link.key("handoff", "taken", node)

    def _keys(self, node: str) -> list[str]:
        return [self.key, self._taken(node), self._runs.node_key(node), self._owner]

    @property
    def _owner(self) -> str:
        return self._runs.node_key(HANDOFF_OWNER)

    def put(self, item: HandOff) -> None:
        """Sync (the stopping node): store the queued record and enqueue the run."""
        doc = {**item.doc, "status": "queued", "pending_approval": None}
        payload = json.dumps(
            {"doc": doc, "commands": item.commands, "start": item.start}, separators=(",", ":")
        )

        def write() -> None:
            pipe = self._link.sync.pipeline(transaction=False)
            self._runs.queue_put(pipe, doc, node=HANDOFF_OWNER)
            # No longer this node's: were it reaped before it leaves, the run is not its.
            pipe.srem(self._runs.node_key(self._link.node_id), str(doc["run_id"]))
            pipe.rpush(self.key, payload)
            pipe.execute()

        self._link.call(write)

    async def take(self) -> HandOff | None:
        """The oldest waiting run, held for this node until it claims or returns it."""
        aio = self._link.aio
        raw = await self._link.acall(aio.eval(_TAKE, 4, *self._keys(self._link.node_id)))
        if raw is None:
            return None
        data = json.loads(raw)
        return HandOff(dict(data["doc"]), [str(c) for c in data["commands"]], int(data["start"]))

    async def claim(self, item: HandOff) -> bool:
        """Make a taken run this node's (``running`` here) before it resumes; False if it ended.

        Safe to repeat: a node whose claim raised (the answer was lost) claims again
        before anything else and gets the same answer if Redis had applied it.
        """
        node = self._link.node_id
        doc = {**item.doc, "status": "running", "node": node}
        payload = json.dumps(doc, separators=(",", ":"))
        keys = [self._runs.record_key(item.run_id), self._taken(node), self._runs.node_key(node)]
        won = await self._link.acall(
            self._link.aio.eval(_CLAIM, 3, *keys, payload, self._ttl, item.run_id, node)
        )
        return bool(won)

    async def give_back(self, item: HandOff) -> None:
        """Return a run this node cannot resume (it does not serve the profile)."""
        await self._return(self._link.node_id, item.run_id)

    async def requeue(self, node: str) -> list[str]:
        """Put back on the queue what a lost ``node`` took and never claimed; their run ids."""
        held = await self._link.acall(self._link.aio.hkeys(self._taken(node)))
        back = [run_id for run_id in sorted(held) if await self._return(node, run_id)]
        return back

    async def _return(self, node: str, run_id: str) -> bool:
        aio = self._link.aio
        return bool(await self._link.acall(aio.eval(_RETURN, 4, *self._keys(node), run_id)))
