"""A gateway's part in moving parked runs between nodes (docs/cluster.md#node-loss).

:meth:`HandOver.leave` runs when the node begins a graceful stop, before its
prompts are withdrawn: each parked command run whose remaining command lines
hold nothing to redact leaves this node for ``multiplex:handoff``.
:meth:`HandOver.adopting` runs on every node's event loop and resumes what it
finds there. A run that cannot move (Redis away, a secret in a command line)
ends here as in a lone process: cancelled, "supervisor shutting down".
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any

from multiplex.cluster import Cluster, ClusterUnavailable, HandOff
from multiplex.gateway.runs._run import Run
from multiplex.gateway.runs._runs import RunRegistry
from multiplex.supervision import Supervisor

__all__ = ["ADOPT_SECONDS", "HandOver"]

log = logging.getLogger("multiplex.gateway")
ADOPT_SECONDS = 0.5  # how often a node looks for runs to carry on


class HandOver:
    """Hand parked runs over when this node stops; adopt the ones others hand over."""

    def __init__(
        self,
        sup: Supervisor,
        runs: RunRegistry,
        cluster: Cluster,
        redact: Callable[[str], str],
        doc_of: Callable[[Run], dict[str, Any]],
    ) -> None:
        self._sup = sup
        self._runs = runs
        self._cluster = cluster
        self._redact = redact
        self._doc_of = doc_of  # the run's record as stored (redacted)
        self._claiming: HandOff | None = None  # taken, claim sent, answer not heard yet

    def _movable(self, run: Run, start: int) -> bool:
        # The queue holds command lines as written: only those with nothing to hide.
        return all(self._redact(line) == line for line in run.commands[start:])

    def leave(self) -> int:
        """Move this node's parked runs to the queue; how many moved."""
        if not self._cluster.up:
            return 0
        moved = 0
        for detached in self._runs.detach_parked(self._movable):
            run = detached.run
            item = HandOff(self._doc_of(run), list(run.commands), detached.start)
            try:
                self._cluster.handoff.put(item)
                moved += 1
            except ClusterUnavailable:
                log.warning("run %s could not be handed over (redis unavailable)", run.run_id)
        return moved

    async def adopting(self) -> None:
        """Resume handed-over runs of the profiles this node serves, until cancelled."""
        while True:
            await asyncio.sleep(ADOPT_SECONDS)
            if self._runs.closing or not self._cluster.up:
                continue
            with contextlib.suppress(ClusterUnavailable):
                # A claim whose answer was lost (Redis went away meanwhile) first: Redis
                # may have made the run this node's, and only this node can resume it.
                if self._claiming is not None:
                    await self._adopt(self._claiming)
                # Taken on an earlier pass but not claimed (Redis went away between): back
                # on the queue, for this node or another to take again.
                await self._cluster.handoff.requeue(self._cluster.node_id)
                while not self._runs.closing:
                    item = await self._cluster.handoff.take()
                    if item is None:
                        break
                    if item.doc.get("profile") not in self._sup.profiles:
                        await self._cluster.handoff.give_back(item)
                        break
                    await self._adopt(item)

    async def _adopt(self, item: HandOff) -> None:
        # The item stays in _claiming until Redis answers: a ClusterUnavailable
        # leaves it there for the next pass to claim again (the claim is idempotent).
        self._claiming = item
        won = await self._cluster.handoff.claim(item)
        self._claiming = None
        if won:
            await asyncio.to_thread(self._runs.adopt, item.doc, item.commands, item.start)
