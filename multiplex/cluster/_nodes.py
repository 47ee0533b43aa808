"""Node heartbeats and node-loss detection (docs/cluster.md#node-loss).

Each node refreshes ``multiplex:alive:<node>`` (expiring after 0.7 x
``cluster.node_timeout``) ten times per timeout and is a member of
``multiplex:nodes``. Every node looks, after each heartbeat of its own, for
members whose heartbeat expired; one found so three looks in a row is lost
(``Cluster``: a Redis that stood still lets every heartbeat expire at once,
and a look right after its return must not judge the others by it). The
first to claim a lost node (SET NX) fails the runs it was executing with the
cause "node lost" and cancels its parked prompts with the same cause, through
the same single-resolution script as any answer, then forgets the node. Runs
it had taken from the hand-off queue and not yet claimed go back on the queue
(docs/cluster.md#node-loss).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from multiplex.cluster._approvals import ApprovalStore
from multiplex.cluster._handoff import HandOffQueue
from multiplex.cluster._link import RedisLink
from multiplex.cluster._runs import NODE_LOST, RunStore

__all__ = ["LostNode", "NodeRegistry"]


@dataclass(frozen=True, slots=True)
class LostNode:
    """What reaping one lost node did: the runs failed, the prompts cancelled, the runs requeued."""

    node: str
    runs: list[dict[str, Any]] = field(default_factory=list)
    approvals: list[dict[str, Any]] = field(default_factory=list)
    requeued: list[str] = field(default_factory=list)


class NodeRegistry:
    """Heartbeats of this node and detection of the others' loss."""

    def __init__(
        self, link: RedisLink, runs: RunStore, approvals: ApprovalStore, handoff: HandOffQueue
    ) -> None:
        self._link = link
        self._runs = runs
        self._approvals = approvals
        self._handoff = handoff
        self._timeout_ms = int(link.config.node_timeout * 1000)
        # docs/cluster.md#node-loss: a dead node's heartbeat expires at most 0.7 x
        # node_timeout after its death, and the others look every 0.1 x and reap
        # on the third look in a row that finds it expired: it is settled within
        # node_timeout. A live node beats every 0.1 x, so it is judged lost only
        # after missing 0.8 x node_timeout of beats.
        self._beat_ms = int(self._timeout_ms * 0.7)
        self._members = link.key("nodes")

    @property
    def interval(self) -> float:
        """Seconds between heartbeats, and between looks for lost nodes."""
        return max(0.05, self._link.config.node_timeout / 10)

    @property
    def heartbeat_ms(self) -> int:
        """How long one heartbeat keeps a node alive."""
        return self._beat_ms

    def _alive(self, node: str) -> str:
        return self._link.key("alive", node)

    async def beat(self) -> None:
        """Refresh this node's heartbeat (one round trip)."""
        pipe = self._link.aio.pipeline(transaction=False)
        pipe.set(self._alive(self._link.node_id), repr(time.time()), px=self._beat_ms)
        pipe.sadd(self._members, self._link.node_id)
        await self._link.acall(pipe.execute())

    async def leave(self) -> None:
        """A graceful stop: no longer a member, so nobody reaps this node."""
        pipe = self._link.aio.pipeline(transaction=False)
        pipe.delete(self._alive(self._link.node_id))
        pipe.srem(self._members, self._link.node_id)
        await self._link.acall(pipe.execute())

    async def alive(self) -> list[str]:
        """The nodes whose heartbeat has not expired."""
        members = sorted(await self._link.acall(self._link.aio.smembers(self._members)))
        if not members:
            return []
        values = await self._link.acall(self._link.aio.mget([self._alive(n) for n in members]))
        return [n for n, v in zip(members, values, strict=True) if v is not None]

    async def lost(self) -> list[str]:
        """Members whose heartbeat expired (this node is never among them)."""
        members = sorted(await self._link.acall(self._link.aio.smembers(self._members)))
        others = [n for n in members if n != self._link.node_id]
        if not others:
            return []
        values = await self._link.acall(self._link.aio.mget([self._alive(n) for n in others]))
        return [n for n, v in zip(others, values, strict=True) if v is None]

    async def reap(self, node: str) -> LostNode | None:
        """Claim a lost node and settle its runs and prompts; None if another node claimed it."""
        claim = self._link.key("reaping", node)
        won = await self._link.acall(
            self._link.aio.set(claim, self._link.node_id, nx=True, px=self._timeout_ms * 4)
        )
        if not won:
            return None
        result = LostNode(node)
        for approval_id in await self._approvals.open_on(node):
            outcome = await self._approvals.aresolve(approval_id, {"cancelled": NODE_LOST})
            if outcome.won:
                row = await self._approvals.get(approval_id)
                if row is not None:
                    result.approvals.append(row)
        # Taken from the hand-off queue but never claimed: nothing of it ran here.
        result.requeued.extend(await self._handoff.requeue(node))
        for run_id in await self._runs.owned_by(node):
            doc = await self._runs.fail_lost(node, run_id)
            if doc is not None:
                result.runs.append(doc)
        pipe = self._link.aio.pipeline(transaction=False)
        pipe.srem(self._members, node)
        pipe.delete(claim)
        await self._link.acall(pipe.execute())
        return result
