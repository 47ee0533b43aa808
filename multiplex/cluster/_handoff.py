"""Parked runs handed from a node that stops gracefully to one that carries on (docs/cluster.md#node-loss).

A stopping node stores each parked run's record (status ``queued``) and pushes
``{"doc", "commands", "start"}`` on ``multiplex:handoff``, in one round trip;
any node serving the profile pops it and resumes the run from command
``start``. Only command lines with nothing to redact are handed over (the
queue holds them as written: never a secret in the clear); the gateway keeps
the others to itself and cancels them as a lone process would.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from multiplex.cluster._link import RedisLink
from multiplex.cluster._runs import RunStore

__all__ = ["HANDOFF_OWNER", "HandOff", "HandOffQueue"]

HANDOFF_OWNER = "handoff"  # the pseudo-node that holds a run between two nodes


@dataclass(frozen=True, slots=True)
class HandOff:
    """One run waiting for a node: its record, its command lines, where to resume."""

    doc: dict[str, Any]
    commands: list[str]
    start: int


class HandOffQueue:
    """The queue of handed-over runs, shared by every node."""

    def __init__(self, link: RedisLink, runs: RunStore) -> None:
        self._link = link
        self._runs = runs
        self.key = link.key("handoff")

    def put(self, item: HandOff) -> None:
        """Sync (the stopping node): store the queued record and enqueue the run."""
        doc = {**item.doc, "status": "queued", "pending_approval": None}
        payload = json.dumps(
            {"doc": doc, "commands": item.commands, "start": item.start}, separators=(",", ":")
        )

        def write() -> None:
            pipe = self._link.sync.pipeline(transaction=False)
            self._runs.queue_put(pipe, doc, node=HANDOFF_OWNER)
            pipe.rpush(self.key, payload)
            pipe.execute()

        self._link.call(write)

    async def take(self) -> HandOff | None:
        """The oldest waiting run, now this node's to resume (None when there is none)."""
        raw = await self._link.acall(self._link.aio.lpop(self.key))
        if raw is None:
            return None
        data = json.loads(raw)
        doc = dict(data["doc"])
        await self._link.acall(
            self._link.aio.srem(self._runs.node_key(HANDOFF_OWNER), str(doc["run_id"]))
        )
        return HandOff(doc, [str(c) for c in data["commands"]], int(data["start"]))

    async def give_back(self, item: HandOff) -> None:
        """Return a run this node cannot resume (it does not serve the profile)."""
        payload = json.dumps(
            {"doc": item.doc, "commands": item.commands, "start": item.start},
            separators=(",", ":"),
        )
        await self._link.acall(self._link.aio.rpush(self.key, payload))
