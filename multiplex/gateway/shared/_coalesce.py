"""Coalescing across nodes: a prompt follows an identical open one on another node (docs/cluster.md#approvals).

When a node's gate opens a prompt that no local prompt of the session
already leads, :meth:`RemoteLeaders.coalesce` asks Redis in the round trip
that registers it: either it leads everywhere (and, in the same round trip,
its ``approval.request`` event is appended with its run's document), or
another node's identical prompt is open and this one follows it. That leader is represented here by a
stand-in :class:`PendingApproval` with the leader's id, text and deadline: an
answer to the follower answers it (the cluster's single resolution decides),
and the leader's resolution, published on ``multiplex:resolved``, settles the
stand-in and with it every follower on this node.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from multiplex.approval._decision import Danger
from multiplex.approval.waiting._pending import Arbiter, PendingApproval
from multiplex.approval.waiting._why import Why
from multiplex.cluster import Announcement, Cluster, ClusterUnavailable

__all__ = ["RemoteLeaders"]


def _why(row: dict[str, Any]) -> Why:
    patterns = tuple(
        (str(p.get("name", "")), str(p.get("description", "")))
        for p in row.get("patterns") or ()
        if isinstance(p, dict)
    )
    dangers = tuple(
        Danger(str(d.get("pattern", "")), str(d.get("segment", "")))
        for d in row.get("dangers") or ()
        if isinstance(d, dict)
    )
    return Why(
        cwd=str(row.get("cwd") or ""),
        backend=str(row.get("backend") or ""),
        step=str(row.get("step") or "ask"),
        reason=str(row.get("reason") or ""),
        patterns=patterns,
        dangers=dangers,
    )


class RemoteLeaders:
    """This node's stand-ins for other nodes' prompts that local prompts follow."""

    def __init__(
        self,
        cluster: Cluster,
        arbiter: Arbiter,
        row_of: Callable[[PendingApproval], dict[str, Any]],
        announce: Callable[[PendingApproval, dict[str, Any]], Announcement | None] = (
            lambda r, row: None
        ),
        announced: Callable[[PendingApproval, str], None] = lambda r, position: None,
    ) -> None:
        self._cluster = cluster
        self._arbiter = arbiter
        self._row_of = row_of  # the redacted row GET /v1/approvals shows
        # The approval.request event a leading prompt appends in the same round
        # trip, and what to do with its position.
        self._announce = announce
        self._announced = announced
        self._lock = threading.Lock()
        self._by_id: dict[str, PendingApproval] = {}

    def coalesce(self, request: PendingApproval) -> PendingApproval | None:
        """Register ``request`` as the cluster's leader, or return the leader it follows."""
        if not self._cluster.up:
            return None  # registered on recovery (resync) as a leader of its own
        mine = self._row_of(request)
        try:
            claim = self._cluster.approvals.claim(mine, request.key, self._announce(request, mine))
        except ClusterUnavailable:
            return None
        row = claim.leader
        if row is None:
            if claim.position is not None:
                self._announced(request, claim.position)
            request.shared = True  # registered: the gate event need not do it again
            if not request.open and request.resolution is not None:
                # Withdrawn while it was being registered: do not leave it listed.
                self._arbiter(request, request.resolution)
            return None
        leader_id = str(row["approval_id"])
        with self._lock:
            stand_in = self._by_id.get(leader_id)
            if stand_in is None or not stand_in.open:
                stand_in = self._stand_in(request, row)
                self._by_id[leader_id] = stand_in
        return stand_in

    def _stand_in(self, request: PendingApproval, row: dict[str, Any]) -> PendingApproval:
        expires = float(row.get("expires_at") or time.time())
        stand_in = PendingApproval(
            profile=request.profile,
            session=request.session,
            turn_id="",
            command=request.command,
            display=str(row.get("command") or request.display),
            timeout=max(0.0, expires - time.time()),
            context=request.context,
            run_id=row.get("run_id"),
            key=request.key,
            why=_why(row),
        )
        leader_id = str(row["approval_id"])
        stand_in.id = leader_id
        stand_in.created_at = float(row.get("created_at") or stand_in.created_at)
        stand_in.expires_at = expires
        stand_in.shared = True
        stand_in.arbiter = self._arbiter  # an answer here goes through the single resolution

        def forget() -> None:
            with self._lock:
                if self._by_id.get(leader_id) is stand_in:
                    del self._by_id[leader_id]

        stand_in.when_settled(forget)
        return stand_in

    def get(self, approval_id: str) -> PendingApproval | None:
        with self._lock:
            return self._by_id.get(approval_id)
