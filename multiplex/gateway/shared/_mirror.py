"""A node's events copied to the cluster's stream with the run documents they change (docs/cluster.md#cost).

:class:`EventMirror` is the :class:`~multiplex.gateway.ClusterBridge`'s writer:
a batch of local events goes to Redis in one script, each run's last document
with it, and each event comes back with its position for the local streams.
An event another script already appended is not written again: its position
is taken from there. Those are a leading prompt's ``approval.request``,
written by the script that registers the prompt, and its ``approval.resolved``
when an answer wins, written by the script that resolves it (on whichever node
answered; see :meth:`announcement`).
Everything written is redacted first.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable
from typing import Any

from multiplex.approval.waiting._pending import PendingApproval
from multiplex.cluster import Announcement, Cluster, ClusterUnavailable, Outgoing, encode
from multiplex.gateway.events._event import Event
from multiplex.gateway.events._events import EventHub
from multiplex.gateway.runs._run import Run
from multiplex.gateway.runs._runs import RunRegistry
from multiplex.gateway.shared._redacted import redacted

__all__ = ["REDIS_UNAVAILABLE", "EventMirror", "redacted"]

REDIS_UNAVAILABLE = "cluster: redis unavailable"
_ASKED, _RESOLVED = "approval.request", "approval.resolved"
_KEEP_WRITTEN = 4096  # positions of appended events not yet published here (a bound, not a budget)


class EventMirror:
    """Local events to Redis, one round trip per batch (see the module docstring)."""

    def __init__(
        self, runs: RunRegistry, hub: EventHub, cluster: Cluster, redact: Callable[[str], str]
    ) -> None:
        self._runs = runs
        self._hub = hub
        self._cluster = cluster
        self._redact = redact
        self._lock = threading.Lock()
        self._unsynced: set[str] = set()  # runs whose document Redis missed
        # (event, approval id) -> its position, and whether its run's document went with it
        self._written: OrderedDict[tuple[str, str], tuple[str, bool]] = OrderedDict()

    # -- what Redis missed ----------------------------------------------------------------
    def unsynced(self, run_ids: Iterable[str]) -> None:
        with self._lock:
            self._unsynced.update(run_ids)

    def take_unsynced(self) -> set[str]:
        with self._lock:
            missed, self._unsynced = self._unsynced, set()
        return missed

    # -- a leading prompt's approval.request, appended by the script that registers it ---
    def announcement(self, request: PendingApproval, row: dict[str, Any]) -> Announcement:
        """The ``approval.request`` of ``request`` (``row``: its redacted row) with its run's
        document as they will be once announced, for the registering script; and what
        an answer that wins appends then (the start of ``approval.resolved``, the run's
        document once resumed).

        Called in the thread that opens the prompt, just before it is announced:
        what that thread still holds back is written first, so the stream keeps
        each run's order.
        """
        self._hub.flush()
        run = self._runs.get(request.run_id) if request.run_id else None
        waiting = resumed = None
        if run is not None and run.profile == request.profile:
            with run.lock:
                withdrawn = run.cancel_requested or self._runs.closing
            if not withdrawn:  # else the prompt is withdrawn at once; that event writes it
                doc = redacted(run.snapshot(), self._redact)
                waiting = {**doc, "status": "waiting_for_approval"}
                waiting["pending_approval"] = {
                    k: v for k, v in row.items() if k not in ("run_id", "profile", "session_id")
                }
                resumed = {**doc, "status": "running", "pending_approval": None}
        publisher = self._cluster.publisher
        head = {k: row[k] for k in ("approval_id", "run_id", "profile", "session_id")}
        return Announcement(
            publisher.inline(_ASKED, row, request.profile, request.run_id, waiting),
            encode(head)[:-1],
            b"" if resumed is None else publisher.stored(resumed),
        )

    def announced(self, request: PendingApproval, position: str) -> None:
        self._note(_ASKED, request.id, position, True)

    def resolved(self, approval_id: str, position: str | None, doc: bool) -> bool:
        """The prompt's ``approval.resolved`` was appended by the answer that won; True
        when its run's document went with it (announcing it then writes nothing)."""
        if position is None:
            return False
        self._note(_RESOLVED, approval_id, position, doc)
        return doc

    def _note(self, name: str, approval_id: str, position: str, doc: bool) -> None:
        with self._lock:
            self._written[(name, approval_id)] = (position, doc)
            while len(self._written) > _KEEP_WRITTEN:
                self._written.popitem(last=False)

    # -- batches ----------------------------------------------------------------------------
    def mirror(self, events: list[Event]) -> list[str | None]:
        """Copy local events (and the run documents they changed) to Redis in one round trip;
        each one's position, or None (Redis away, or an event other nodes do not need).
        Never raises."""
        shared, stored, runs, known = self._outgoing(events)
        if not shared and not stored:
            return self._positioned(events, [], known)
        # Redis away: the run documents are written again on recovery (resync), the
        # final one of a run that finished meanwhile included. Known away, it is not
        # tried: a silent Redis would hold every event for the socket timeout.
        try:
            if not self._cluster.up:
                raise ClusterUnavailable(REDIS_UNAVAILABLE)
            positions = self._cluster.publish_many(shared, stored)
        except ClusterUnavailable:
            self.unsynced(runs)
            return self._positioned(events, [], known)
        return self._positioned(events, positions, known)

    async def amirror(self, events: list[Event]) -> list[str | None]:
        """:meth:`mirror` on the event loop, for a new run: raises ``ClusterUnavailable``
        (the run is refused), and a silent Redis holds back this request, not the loop."""
        shared, stored, _runs, known = self._outgoing(events)
        if not shared and not stored:
            return self._positioned(events, [], known)
        positions = await self._cluster.apublish_many(shared, stored)
        return self._positioned(events, positions, known)

    @staticmethod
    def _positioned(
        events: list[Event], positions: list[str], known: dict[int, str]
    ) -> list[str | None]:
        them = iter(positions)
        return [
            known.get(i) if i in known or e.name == "reload" else next(them, None)
            for i, e in enumerate(events)
        ]

    def _outgoing(
        self, events: list[Event]
    ) -> tuple[list[Outgoing], list[dict[str, Any]], dict[str, Run], dict[int, str]]:
        shared: list[Outgoing] = []
        docs: dict[str, dict[str, Any] | None] = {}  # the last document of each run
        runs: dict[str, Run] = {}
        known: dict[int, str] = {}  # events appended already, by their index
        for index, event in enumerate(events):
            if event.name == "reload":
                continue
            if event.name in (_ASKED, _RESOLVED):
                with self._lock:
                    written = self._written.pop(
                        (event.name, str(event.data.get("approval_id"))), None
                    )
                if written is not None:
                    known[index], with_doc = written
                    run = self._runs.get(event.run_id) if event.run_id else None
                    if not with_doc and run is not None:  # the document is still to write
                        runs[run.run_id] = run
                        docs.pop(run.run_id, None)
                        docs[run.run_id] = None
                    continue
            data = redacted(event.data, self._redact)
            shared.append((event.name, data, event.profile, event.run_id))
            run = self._runs.get(event.run_id) if event.run_id else None
            if run is not None:
                # Every run event changes the run's document: store it with the events
                # (run.started and run.finished carry the document itself: redact it once;
                # a document a later event of the batch carries is not stored twice).
                runs[run.run_id] = run
                docs.pop(run.run_id, None)
                whole = event.name in ("run.started", "run.finished")
                docs[run.run_id] = data if whole else None
        stored = [
            doc if doc is not None else redacted(runs[run_id].snapshot(), self._redact)
            for run_id, doc in docs.items()
        ]
        return shared, stored, runs, known
