"""The gateway in cluster mode: its runs, prompts, events and reloads shared through Redis (docs/cluster.md).

:class:`ClusterBridge` is built by the :class:`~multiplex.gateway.Gateway`
when ``multiplex.yaml`` has a ``cluster:`` block, and only then. It

- replaces every profile's session table with the Redis one (read at every decision);
- registers each prompt this node parks and makes every way it ends go through
  the single-resolution script (the gate's arbiter), applying winners that
  arrive from other nodes;
- mirrors this node's events, and the run documents they change, to Redis in
  one round trip (a command's end and the run's end that follows it in one),
  and feeds other nodes' events to the local streams that follow them;
- publishes a reload signal after a reload or an ``always`` grant here, and
  re-reads a profile's files when another node signals one;
- settles lost nodes' runs and prompts, and resynchronises after Redis returns.

Everything stored is redacted first (commands, outputs, causes).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import threading
from collections.abc import Iterator
from typing import Any

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from multiplex.approval._decision import Decision
from multiplex.approval._gate import SESSIONS_KEY
from multiplex.approval.waiting._pending import PendingApproval, Resolution
from multiplex.cluster import (
    CANCEL_CHANNEL,
    CLOSE_SECONDS,
    NODE_LOST,
    RELOAD_CHANNEL,
    Cluster,
    ClusterUnavailable,
    LostNode,
    Outcome,
    SharedEvent,
    resolution_doc,
    resolution_of,
)
from multiplex.gateway.events._event import Event, from_shared, make_event
from multiplex.gateway.runs._run import approval_row
from multiplex.gateway.runs._runs import RunRegistry, ShuttingDown
from multiplex.gateway.shared._coalesce import RemoteLeaders
from multiplex.gateway.shared._handover import HandOver
from multiplex.gateway.shared._mirror import REDIS_UNAVAILABLE, EventMirror, redacted
from multiplex.gateway.shared._shared_hub import SharedHub
from multiplex.profiles import Profile, ReloadResult
from multiplex.supervision import Supervisor

__all__ = ["REDIS_UNAVAILABLE", "ClusterBridge", "SharedHub"]

log = logging.getLogger("multiplex.cluster")
_from_signal: contextvars.ContextVar[bool] = contextvars.ContextVar("from_signal", default=False)


class _ClusterMetrics(Collector):
    """``/metrics``: whether this node reaches Redis, and its round trips to it."""

    def __init__(self, cluster: Cluster) -> None:
        self._cluster = cluster

    def collect(self) -> Iterator[Metric]:
        yield GaugeMetricFamily(
            "multiplex_cluster_redis_up",
            "1 while this node reaches Redis, else 0.",
            value=1.0 if self._cluster.up else 0.0,
        )
        yield CounterMetricFamily(
            "multiplex_cluster_redis_round_trips",
            "Round trips from this node to Redis (a command, a script or a pipeline is one).",
            value=float(self._cluster.link.round_trips),
        )


class ClusterBridge:
    """One gateway's share of the cluster (see the module docstring)."""

    def __init__(
        self, sup: Supervisor, hub: SharedHub, runs: RunRegistry, cluster: Cluster
    ) -> None:
        self.sup = sup
        self.hub = hub
        self.runs = runs
        self.cluster = cluster
        self.node_id = cluster.node_id
        self._redact = sup.gate.recorder.redact
        self._lock = threading.Lock()
        self._unsynced: dict[str, Resolution] = {}  # resolved here while Redis was away
        self._unsignalled: set[str] = set()  # reloads here no other node heard of (Redis away)
        hub.bridge = self
        self.handover = HandOver(
            sup, runs, cluster, self._redact, lambda run: redacted(run.snapshot(), self._redact)
        )
        self._adopter: asyncio.Task[None] | None = None
        self.writer = EventMirror(runs, hub, cluster, self._redact)
        self.remote_leaders = RemoteLeaders(
            cluster,
            self.arbitrate,
            lambda r: redacted(approval_row(r), self._redact),
            self.writer.announcement,
            self.writer.announced,
        )
        if sup.metrics.registry is not None:  # an exported supervisor (docs/operations.md#metrics)
            sup.metrics.registry.register(_ClusterMetrics(cluster))
        for profile in sup.profiles.values():
            self._install(profile)
        sup.on_profiles_changed(self._homes_changed)
        sup.gate.recorder.post_approval_response.append(self._answered)
        sup.gate.subscribe(self.on_gate_event)  # before the run registry: register, then announce
        signals = cluster.signals
        signals.on("resolved", self._on_resolved)
        signals.on("reset", self._on_reset)
        signals.on(RELOAD_CHANNEL, self._on_reload)
        signals.on(CANCEL_CHANNEL, self._on_cancel)

    def _install(self, profile: Profile) -> None:
        # Before any decision: the gate never sees an in-memory session table.
        profile.resource(SESSIONS_KEY, lambda p: self.cluster.session_table(p.name))
        table = self.sup.gate.pending(profile)
        table.arbiter = self.arbitrate
        table.coalescer = self.remote_leaders.coalesce
        profile.on_reload(self._reloaded)

    def _homes_changed(self, added: list[Profile], removed: list[Profile]) -> None:
        for profile in added:  # a home added by a reload of multiplex.yaml
            self._install(profile)

    # -- lifecycle (the gateway's event loop) ------------------------------------------
    async def start(self) -> None:
        await self.cluster.start(
            on_event=self._on_shared_event,
            on_lost=self._on_lost,
            on_recovered=self._resync,
            wanted=lambda: self.hub.followed,
        )
        self._adopter = asyncio.get_running_loop().create_task(
            self.handover.adopting(), name="cluster-adopt"
        )

    async def stop(self) -> None:
        if self._adopter is not None:
            self._adopter.cancel()
            await asyncio.wait([self._adopter], timeout=CLOSE_SECONDS)  # a stop never hangs
        await self.cluster.stop(leave=True)

    @property
    def up(self) -> bool:
        return self.cluster.up

    def check_ready(self) -> None:
        """Refuse new work while Redis is away (the route answers 503)."""
        if not self.cluster.up:
            raise ShuttingDown(REDIS_UNAVAILABLE)

    # -- prompts -------------------------------------------------------------------------
    def on_gate_event(self, event: str, request: PendingApproval) -> None:
        if event != "approval.request" or request.leader is not None or request.shared:
            return
        self._register(request)

    def _register(self, request: PendingApproval) -> None:
        row = redacted(approval_row(request), self._redact)
        try:
            self.cluster.approvals.register(row)
        except ClusterUnavailable:
            return  # registered again when Redis returns (resync)
        if not request.open and request.resolution is not None:
            # Withdrawn between opening and registering: do not leave it listed.
            self._push(request.id, request.resolution)

    def arbitrate(self, request: PendingApproval, proposed: Resolution) -> Resolution:
        """The gate's arbiter: the first resolution stored in Redis is the one applied."""
        if not self.cluster.up:
            with self._lock:
                self._unsynced[request.id] = proposed
            return proposed
        try:
            outcome = self.cluster.approvals.resolve(request.id, self.stored_resolution(proposed))
        except ClusterUnavailable:
            with self._lock:
                self._unsynced[request.id] = proposed
            return proposed
        self.writer.resolved(request.id, outcome.position, outcome.doc)
        if outcome.won or outcome.resolution is None:
            return proposed  # won, or never registered (Redis restarted): ours stands
        return resolution_of(outcome.resolution)

    def stored_resolution(self, resolution: Resolution) -> dict[str, Any]:
        """``resolution`` as Redis stores and publishes it: redacted (an approver's
        reason is free text; a cause may quote a command)."""
        return dict(redacted(resolution_doc(resolution), self._redact))

    def _push(self, approval_id: str, resolution: Resolution) -> None:
        try:
            self.cluster.approvals.resolve(approval_id, self.stored_resolution(resolution))
        except ClusterUnavailable:
            with self._lock:
                self._unsynced[approval_id] = resolution

    async def _on_resolved(self, message: dict[str, Any]) -> None:
        approval_id = str(message.get("approval_id"))
        local = self.sup.gate.find(approval_id)
        written = False
        if local is not None and isinstance(message.get("position"), str):
            # The answer's script appended the approval.resolved this settling announces.
            written = self.writer.resolved(
                approval_id, message["position"], message.get("doc") == 1
            )
        request = local or self.remote_leaders.get(approval_id)
        if request is not None:
            await self._settle(request, resolution_of(message), written)

    async def answer(
        self,
        approval_id: str,
        doc: dict[str, Any],
        *,
        run_id: str | None = None,
        profile: str = "",
    ) -> Outcome:
        """Resolve a prompt of any node (an answer or a cancellation); ``won`` False if it
        was not open. With ``run_id`` (and ``profile``) only that run's prompt
        (:meth:`ApprovalStore.aresolve <multiplex.cluster.ApprovalStore.aresolve>`)."""
        outcome = await self.cluster.approvals.aresolve(
            approval_id, doc, run_id=run_id, profile=profile
        )
        if outcome.won:
            local = self.sup.gate.find(approval_id)
            written = local is not None and self.writer.resolved(
                approval_id, outcome.position, outcome.doc
            )
            request = local or self.remote_leaders.get(approval_id)
            if request is not None:  # ours: no need to wait for our own message
                await self._settle(request, resolution_of(outcome.resolution or doc), written)
        return outcome

    @staticmethod
    async def _settle(request: PendingApproval, resolution: Resolution, written: bool) -> None:
        # Settling announces the resolution, which writes to Redis unless the answer's
        # script already wrote it all: then here, else off the loop.
        if written:
            request.settle(resolution)
        else:
            await asyncio.to_thread(request.settle, resolution)

    # -- events --------------------------------------------------------------------------
    def mirror(self, events: list[Event]) -> list[str | None]:
        """See :meth:`EventMirror.mirror`."""
        return self.writer.mirror(events)

    async def amirror(self, events: list[Event]) -> list[str | None]:
        """See :meth:`EventMirror.amirror`."""
        return await self.writer.amirror(events)

    def _on_shared_event(self, shared: SharedEvent) -> None:
        if self.hub.local_listeners:  # nobody streams from this node: nothing to build
            self.hub.publish_shared(from_shared(shared))

    # -- sessions, cancels, reloads ---------------------------------------------------------
    async def _on_reset(self, message: dict[str, Any]) -> None:
        if message.get("node") == self.node_id:
            return
        name, session = str(message.get("profile")), str(message.get("session"))
        if name in self.sup.profiles:
            # Waits and kernels held here; the shared grants are already gone.
            cause = str(message.get("cause") or "session reset")
            await asyncio.to_thread(self.sup.reset_session, name, session, cause)

    def broadcast_reset(self, profile: str, session: str, cause: str) -> None:
        table = self.cluster.session_table(profile)
        table.broadcast_reset(session, cause)

    async def _on_cancel(self, message: dict[str, Any]) -> None:
        run = self.runs.get(str(message.get("run_id")))
        if run is not None:
            await asyncio.to_thread(self.runs.cancel, run)

    def _reloaded(self, profile: Profile, result: ReloadResult) -> None:
        if result.news and not _from_signal.get():
            self.signal_reload(profile.name)

    def _answered(self, decision: Decision, **fields: Any) -> None:
        # An "always" answer wrote a rule here: every node re-reads the file.
        if fields.get("choice") == "always":
            self.signal_reload(str(fields.get("profile")))

    def signal_reload(self, profile: str) -> None:
        try:
            self.cluster.signals.publish(RELOAD_CHANNEL, {"profile": profile})
        except ClusterUnavailable:
            with self._lock:
                self._unsignalled.add(profile)
            log.warning(
                "reload signal for %s not sent: redis unavailable (sent on its return)", profile
            )

    def _reload_from_signal(self, name: str) -> None:
        token = _from_signal.set(True)
        try:
            self.sup.reload(name)
        finally:
            _from_signal.reset(token)

    async def _on_reload(self, message: dict[str, Any]) -> None:
        name = str(message.get("profile"))
        if message.get("node") != self.node_id and name in self.sup.profiles:
            await asyncio.to_thread(self._reload_from_signal, name)

    # -- lost nodes and a returning Redis ---------------------------------------------------
    async def _on_lost(self, lost: LostNode) -> None:
        for row in lost.approvals:
            data = {
                "approval_id": row.get("approval_id"),
                "run_id": row.get("run_id"),
                "profile": row.get("profile"),
                "session_id": row.get("session_id"),
                "outcome": "cancelled",
                "cause": NODE_LOST,
            }
            await self._announce("approval.cancelled", data)
        for doc in lost.runs:
            doc = {k: v for k, v in doc.items() if k != "node"}
            await self._announce("run.finished", doc)

    async def _announce(self, name: str, data: dict[str, Any]) -> None:
        profile, run_id = str(data.get("profile")), data.get("run_id")
        position = None
        with contextlib.suppress(ClusterUnavailable):
            position = await self.cluster.events.aappend(name, data, profile, run_id)
        self.hub.deliver(make_event(name, data, profile, run_id), position)

    async def _resync(self) -> None:
        """Redis is back (perhaps empty), or this node's subscription is: write again what
        this node holds, then settle its prompts answered meanwhile."""
        await asyncio.to_thread(self._resync_sync)
        await self._settle_missed()

    async def _settle_missed(self) -> None:
        """Each open prompt of this node that Redis holds resolved: its answer came while the
        subscription that carries answers was down (pub/sub keeps nothing), so apply it now."""
        for table in self.sup.gate.tables().values():
            for request in table.list_open():
                try:
                    row = await self.cluster.approvals.get(request.id)
                except ClusterUnavailable:
                    return  # away again: the next recovery looks once more
                if row is not None and row["state"] == "resolved" and row.get("resolution"):
                    await self._settle(request, resolution_of(row["resolution"]), False)

    def _resync_sync(self) -> None:
        with self._lock:
            unsignalled, self._unsignalled = self._unsignalled, set()
            unsynced, self._unsynced = self._unsynced, {}
        for name in sorted(unsignalled):  # first: a revocation, perhaps
            self.signal_reload(name)
        for approval_id, resolution in unsynced.items():
            self._push(approval_id, resolution)
        # Every open prompt this node leads, those registered before too: a Redis
        # that came back empty (or was flushed) lost them, and registering again
        # leaves a prompt Redis still knows (perhaps resolved meanwhile) as it is.
        for table in self.sup.gate.tables().values():
            for request in table.list_open():
                if request.leader is None:
                    self._register(request)
        missed = self.writer.take_unsynced()
        runs = {r.run_id: r for r in self.runs.active()}
        for run_id in sorted(missed):
            run = self.runs.get(run_id)
            if run is not None:  # not yet forgotten (gateway keep_runs)
                runs.setdefault(run_id, run)
        for index, run in enumerate(runs.values()):
            try:
                self.cluster.runs.put(redacted(run.snapshot(), self._redact))
            except ClusterUnavailable:  # away again: what is left waits for the next recovery
                self.writer.unsynced(r.run_id for r in list(runs.values())[index:])
                break
        # The signals this node may have missed meanwhile: every home is read again
        # (on a shared folder without events, such as NFS, nothing else would tell it).
        for name in list(self.sup.profiles):
            try:
                self._reload_from_signal(name)
            except Exception:  # one home never stops the others' reading
                log.exception("profile %s: re-read after redis returned failed", name)
