"""One node's share of the cluster: the stores and the loops that keep it in step (docs/cluster.md).

:class:`Cluster` builds every store on one :class:`RedisLink` and runs, on the
node's event loop, the heartbeat, the search for lost nodes, the health probe
(``up`` for ``/readyz``), the subscriptions and the event-stream reader. The
reader reads only while someone on this node follows the other nodes' events
(:meth:`Cluster.following`): a node nobody streams from reads nothing. What
the node does with a lost node, a remote event or a recovered Redis is the
gateway's business: it passes those callbacks to :meth:`Cluster.start`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from multiplex.cluster._approvals import ApprovalStore
from multiplex.cluster._events import EventLog, SharedEvent
from multiplex.cluster._handoff import HandOffQueue
from multiplex.cluster._link import CLOSE_SECONDS, ClusterUnavailable, RedisLink, end_if_cancelled
from multiplex.cluster._nodes import LostNode, NodeRegistry
from multiplex.cluster._publish import Outgoing, Publisher
from multiplex.cluster._runs import RunStore
from multiplex.cluster._sessions import SESSIONS_CHANNEL, EmptyProfiles, SharedSessionTable
from multiplex.cluster._signals import Signals
from multiplex.supervision import ClusterConfig

__all__ = ["HEALTH_SECONDS", "Cluster"]

log = logging.getLogger("multiplex.cluster")
HEALTH_SECONDS = 0.5
BATCH_SECONDS = 0.020  # docs/cluster.md#events: what a busy stream gathers before a read
LOST_LOOKS = 3  # looks in a row (one heartbeat interval apart) before a node is reaped


class Cluster:
    """The shared state of one node: runs, approvals, events, sessions, signals, nodes.

    Made with one PING: credentials Redis refuses raise ``ConfigError`` here,
    while a Redis that does not answer only leaves the node not ready.
    """

    def __init__(self, config: ClusterConfig) -> None:
        self.config = config
        self.node_id = config.node_id
        self.link = RedisLink(config)
        self.link.check_credentials()  # a wrong password fails the start, in one line
        self.runs = RunStore(self.link)
        self.approvals = ApprovalStore(self.link)
        self.events = EventLog(self.link)
        self.signals = Signals(self.link)
        self.empty_profiles = EmptyProfiles(self.signals.epoch)
        self.signals.on_now(SESSIONS_CHANNEL, self.empty_profiles.on_message)
        self.handoff = HandOffQueue(self.link, self.runs)
        self.nodes = NodeRegistry(self.link, self.runs, self.approvals, self.handoff)
        self.publisher = Publisher(self.link, self.events, self.runs)
        self._tasks: list[asyncio.Task[None]] = []
        # The reader's position: None while it is idle, "$" for "the end, once Redis answers".
        self._after: str | None = None
        self._wake = asyncio.Event()

    def session_table(self, profile: str) -> SharedSessionTable:
        return SharedSessionTable(profile, self.link, self.empty_profiles)

    @property
    def up(self) -> bool:
        return self.link.up

    def publish(
        self,
        name: str,
        data: dict[str, Any],
        profile: str,
        run_id: str | None,
        *,
        run_doc: dict[str, Any] | None = None,
    ) -> str:
        """Sync: append an event and store the run document it changes, in one round trip.

        Both must already be redacted. Returns the event's position in the stream.
        """
        docs = [] if run_doc is None else [run_doc]
        return self.publisher.publish([(name, data, profile, run_id)], docs)[0]

    def publish_many(
        self, events: Sequence[Outgoing], run_docs: Sequence[dict[str, Any]] = ()
    ) -> list[str]:
        """Sync: append several events and store the run documents they change, in one round trip."""
        return self.publisher.publish(events, run_docs)

    async def apublish_many(
        self, events: Sequence[Outgoing], run_docs: Sequence[dict[str, Any]] = ()
    ) -> list[str]:
        """:meth:`publish_many` on the event loop (raises ``ClusterUnavailable``)."""
        return await self.publisher.apublish(events, run_docs)

    async def start(
        self,
        *,
        on_event: Callable[[SharedEvent], None],
        on_lost: Callable[[LostNode], Awaitable[None]],
        on_recovered: Callable[[], Awaitable[None]],
        wanted: Callable[[], bool] = lambda: True,
    ) -> None:
        """Join (first heartbeat), subscribe, and start the loops on the running event loop.

        Every node's events, this one's too, go to ``on_event`` in stream order
        from a call of :meth:`following` on, for as long as ``wanted()`` says
        someone here follows them.
        Starts even when Redis is down: the node is then not ready until it answers.
        """
        self._on_recovered = on_recovered
        self._on_lost = on_lost
        with contextlib.suppress(ClusterUnavailable):
            await self.nodes.beat()
        loop = asyncio.get_running_loop()
        self._tasks = [
            loop.create_task(self._beating(), name="cluster-heartbeat"),
            loop.create_task(self._health(), name="cluster-health"),
            loop.create_task(self._tail(on_event, wanted), name="cluster-events"),
            loop.create_task(self.signals.run(on_recovered), name="cluster-signals"),
        ]
        await self.signals.wait_subscribed(2.0)

    async def following(self) -> None:
        """Return once every event appended from now on, by any node, goes to ``on_event``.

        Call it on the event loop after ``wanted()`` turned true. With Redis away
        the reader starts from the stream's end once Redis answers.
        """
        if self._after is not None:
            return  # reading already, from a position older than now
        try:
            position = await self.events.last_position()
        except ClusterUnavailable:
            position = "$"
        if self._after is None:  # another caller may have started it meanwhile
            self._after = position
            self._wake.set()

    async def stop(self, *, leave: bool = True) -> None:
        """Cancel the loops; ``leave`` removes this node so nobody reaps it."""
        for task in self._tasks:
            task.cancel()
        if self._tasks:
            # A loop that does not end promptly is left behind: a stop never hangs.
            done, stuck = await asyncio.wait(self._tasks, timeout=CLOSE_SECONDS)
            for task in done:
                if not task.cancelled():
                    task.exception()  # retrieved: a loop that failed was logged where it ran
            for task in stuck:
                log.warning("cluster task %s did not stop; left behind", task.get_name())
        self._tasks = []
        if leave:
            with contextlib.suppress(ClusterUnavailable):
                await self.nodes.leave()
        await self.link.aclose()

    async def _beating(self) -> None:
        # docs/cluster.md#node-loss: a node is reaped only when LOST_LOOKS looks in a
        # row, each after a heartbeat of this node's own that Redis took, found its
        # heartbeat expired. A Redis that stood still (paused, swapped out) for longer
        # than a heartbeat lets every heartbeat expire at once: the others beat
        # again within a look of its return, and nobody is judged lost for it.
        missing: dict[str, int] = {}  # node -> looks in a row that found it expired
        while True:
            try:
                await self.nodes.beat()
                expired = await self.nodes.lost()
            except ClusterUnavailable:
                missing.clear()  # this node's own view failed: it judges nobody
            else:
                missing = {node: missing.get(node, 0) + 1 for node in expired}
                for node in [n for n, looks in missing.items() if looks >= LOST_LOOKS]:
                    del missing[node]
                    with contextlib.suppress(ClusterUnavailable):
                        await self._reap(node)
            end_if_cancelled()
            await asyncio.sleep(self.nodes.interval)

    async def _reap(self, node: str) -> None:
        lost = await self.nodes.reap(node)
        if lost is not None:
            log.warning(
                "node %s lost: %d runs failed, %d approvals cancelled, %d requeued",
                node,
                len(lost.runs),
                len(lost.approvals),
                len(lost.requeued),
            )
            await self._on_lost(lost)

    async def _health(self) -> None:
        # From the link's birth, not from now: an outage the first heartbeat (in
        # start) found is recovered from like any other.
        settled = 0
        while True:
            # Counted, not sampled: an outage a worker's call saw begin and end
            # while one ping was on its way is still resynchronised.
            now = await self.link.ping()
            end_if_cancelled()
            if now and self.link.outages != settled:
                settled = self.link.outages
                log.warning("redis is back: resynchronising node %s", self.node_id)
                with contextlib.suppress(ClusterUnavailable):
                    await self.nodes.beat()
                    await self._on_recovered()
            await asyncio.sleep(HEALTH_SECONDS)

    async def _tail(
        self, on_event: Callable[[SharedEvent], None], wanted: Callable[[], bool]
    ) -> None:
        while True:
            if self._after is None or not wanted():
                # Nobody here follows the stream: read nothing until :meth:`following`.
                self._after = None
                self._wake.clear()
                await self._wake.wait()
                continue
            try:
                if self._after == "$":
                    self._after = await self.events.last_position()
                batch = await self.events.read(self._after)
                end_if_cancelled()
                for event in batch:
                    on_event(event)
                if batch:
                    self._after = batch[-1].position
                    # Let a busy stream gather (each append wakes the read): one read
                    # carries many events.
                    await asyncio.sleep(BATCH_SECONDS)
            except ClusterUnavailable:
                # Resume where the reading stopped: a Redis that came back kept the
                # entries appended meanwhile, and a restarted one numbers its new
                # stream from its clock, after every position read before.
                await asyncio.sleep(HEALTH_SECONDS)
