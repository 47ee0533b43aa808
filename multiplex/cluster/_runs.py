"""Run records in Redis: every node can show any node's run (docs/cluster.md#runs).

A record is the ``GET /v1/runs/{id}`` document as JSON, already redacted by
its node, under ``multiplex:run:<id>`` with the TTL ``cluster.run_ttl``; the
node executing it keeps the id in ``multiplex:node:<node>:runs`` until the run
is final, which is how a lost node's runs are found. Writes are one pipelined
round trip each, and never change a record that is already final.
"""

from __future__ import annotations

import json
import time
from typing import Any

from multiplex.cluster._link import RedisLink

__all__ = ["FINAL_STATUSES", "NODE_LOST", "RunStore"]

FINAL_STATUSES = frozenset({"completed", "failed", "cancelled"})
NODE_LOST = "node lost"

# Mark a lost node's run failed unless it finished meanwhile (atomic, so a
# run that completed on its own is never turned into a failure).
# Only a record the lost node holds fails: a run it handed over (its stop cut
# short before it left) is the queue's or another node's now.
_FAIL_LOST = """
local doc = redis.call('GET', KEYS[1])
redis.call('SREM', KEYS[2], ARGV[1])
if not doc then return false end
local run = cjson.decode(doc)
if run['status'] == 'completed' or run['status'] == 'failed' or run['status'] == 'cancelled' then
  return false
end
if run['node'] ~= ARGV[5] then return false end
run['status'] = 'failed'
run['error'] = ARGV[2]
run['finished_at'] = tonumber(ARGV[3])
run['pending_approval'] = cjson.null
local out = cjson.encode(run)
redis.call('SET', KEYS[1], out, 'EX', ARGV[4])
return out
"""


# A record that is final stays as it is: a node wrongly judged lost (a long
# pause, not a death) cannot turn the "node lost" failure the cluster already
# reported back into a success, and a late duplicate write changes nothing.
_PUT = """
local cur = redis.call('GET', KEYS[1])
if cur then
  local status = cjson.decode(cur)['status']
  if status == 'completed' or status == 'failed' or status == 'cancelled' then return 0 end
end
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
if ARGV[3] == '1' then redis.call('SREM', KEYS[2], ARGV[4]) else redis.call('SADD', KEYS[2], ARGV[4]) end
return 1
"""


def _doc(raw: str) -> dict[str, Any]:
    doc = dict(json.loads(raw))
    if doc.get("results") == {}:  # Lua's cjson writes an empty list as {}
        doc["results"] = []
    return doc


class RunStore:
    """Shared run records of every node."""

    def __init__(self, link: RedisLink) -> None:
        self._link = link
        self._ttl = max(1, int(link.config.run_ttl))
        self._fail_lost = link.aio.register_script(_FAIL_LOST)

    def record_key(self, run_id: str) -> str:
        return self._link.key("run", run_id)

    def node_key(self, node: str) -> str:
        return self._link.key("node", node, "runs")

    def queue_put(self, pipe: Any, doc: dict[str, Any], *, node: str | None = None) -> None:
        """Add the writes of :meth:`put` to ``pipe`` (one round trip with other writes)."""
        run_id = str(doc["run_id"])
        owner = node or self._link.node_id
        payload = json.dumps({**doc, "node": owner}, separators=(",", ":"))
        final = "1" if doc.get("status") in FINAL_STATUSES else "0"
        # EVAL, not a registered script: in a pipeline that would cost a SCRIPT
        # EXISTS round trip per write (Redis caches the compiled script either way).
        pipe.eval(
            _PUT,
            2,
            self.record_key(run_id),
            self.node_key(owner),
            payload,
            self._ttl,
            final,
            run_id,
        )

    def put(self, doc: dict[str, Any], *, node: str | None = None) -> None:
        """Store the run document (sync, from a worker thread); the node owns it until final."""

        def write() -> None:
            pipe = self._link.sync.pipeline(transaction=False)
            self.queue_put(pipe, doc, node=node)
            pipe.execute()

        self._link.call(write)

    async def get(self, run_id: str) -> dict[str, Any] | None:
        """The stored document (with its ``node``), or None if unknown or expired."""
        raw = await self._link.acall(self._link.aio.get(self.record_key(run_id)))
        return None if raw is None else _doc(raw)

    def get_sync(self, run_id: str) -> dict[str, Any] | None:
        raw = self._link.call(lambda: self._link.sync.get(self.record_key(run_id)))
        return None if raw is None else _doc(str(raw))

    async def owned_by(self, node: str) -> list[str]:
        """The ids of the runs ``node`` is executing (not yet final)."""
        members = await self._link.acall(self._link.aio.smembers(self.node_key(node)))
        return sorted(members)

    async def fail_lost(self, node: str, run_id: str) -> dict[str, Any] | None:
        """Mark ``run_id`` failed with cause "node lost" unless final; the new document or None."""
        out = await self._link.acall(
            self._fail_lost(
                keys=[self.record_key(run_id), self.node_key(node)],
                args=[run_id, NODE_LOST, repr(time.time()), self._ttl, node],
            )
        )
        return None if not out else _doc(out)
