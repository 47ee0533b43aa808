"""The gateway's state: one per app, wired to one supervisor (docs/gateway.md)."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from multiplex.cluster import Cluster
from multiplex.gateway.events._event import make_event
from multiplex.gateway.events._events import EventHub
from multiplex.gateway.events._feed import DecisionFeed
from multiplex.gateway.http._auth import Authenticator
from multiplex.gateway.http._listeners import ListenerSeats, give_back_memory
from multiplex.gateway.http._logs import log_event
from multiplex.gateway.journal import open_journal
from multiplex.gateway.runs._offloop import OffLoop
from multiplex.gateway.runs._retained import RetainedOutput, journaled
from multiplex.gateway.runs._run import FINAL, Run
from multiplex.gateway.runs._runs import RunRegistry
from multiplex.gateway.runs._spill_files import SpillFiles
from multiplex.gateway.shared._shared import ClusterBridge, SharedHub
from multiplex.profiles import Profile, ReloadResult
from multiplex.supervision import ConfigReload, Supervisor

__all__ = ["Gateway"]

T = TypeVar("T")
# How long a read of a run that just ended waits for its end to be stored: past the
# cluster link's 3 s timeout, so a Redis that does not answer is what ends the wait.
STORED_WITHIN = 5.0


class Gateway:
    """Auth, runs, event fan-out and the decisions feed of one supervisor.

    Built by ``create_app``; subscribes to the supervisor's gate, recorder and
    profile reloads once. :meth:`begin_shutdown` and :meth:`drain` implement
    the graceful stop; the supervisor itself is closed by whoever opened it.
    """

    def __init__(
        self,
        sup: Supervisor,
        *,
        admin_token: str,
        max_workers: int = 256,
        keep_runs: int = 1000,
        max_runs_per_profile: int = 32,
    ) -> None:
        self.sup = sup
        self.auth = Authenticator(sup, admin_token)
        shared = sup.config.cluster
        self.hub = SharedHub() if shared is not None else EventHub()
        self.feed = DecisionFeed(sup.gate.recorder.redact)
        self.listeners = ListenerSeats(
            lambda: sup.config.gateway.max_listeners_per_profile, on_idle=give_back_memory
        )
        # docs/operations.md#what-survives-a-crash: what an earlier process left unfinished
        # ends now (its parked prompts recorded cancelled), before anything is served.
        journal, finished = open_journal(sup, keep=keep_runs)
        # docs/operations.md#finished-output: past the bound, output moves to the logs folder.
        bound = sup.config.gateway.retained_output_bytes
        spill = SpillFiles(
            max_files=keep_runs, max_bytes=4 * bound, redact=sup.gate.recorder.redact
        )
        self.retained = RetainedOutput(
            self._home_of, spill, bound=bound, on_moved=journaled(journal, sup.gate.recorder.redact)
        )
        self.runs = RunRegistry(
            sup,
            self.hub,
            self.feed,
            max_workers=max_workers,
            keep=keep_runs,
            per_profile=max_runs_per_profile,
            journal=journal,
            retained=self.retained,
        )
        if shared is None:  # in a cluster, Redis holds every node's run documents
            self.runs.restore(finished)
        # POST /v1/approvals/test: the gate's checks run here, never on the event loop.
        self._gate_pool = OffLoop(workers=2, name="multiplex-gate")
        # docs/cluster.md: only with a cluster: block; absent, nothing of it exists.
        self.cluster: ClusterBridge | None = None
        if shared is not None and isinstance(self.hub, SharedHub):
            self.cluster = ClusterBridge(sup, self.hub, self.runs, Cluster(shared))
        self._shutdown_lock = threading.Lock()
        self._drained = False
        self.shutting_down = False
        sup.gate.subscribe(self.runs.on_gate_event)
        sup.gate.asked_by = self.runs.asked_by  # docs/approvals.md#what-a-prompt-shows
        sup.gate.recorder.post_approval_response.append(self.feed.hook)
        for profile in sup.profiles.values():
            profile.on_reload(self._reloaded)
        self._limits = sup.config.gateway
        sup.on_profiles_changed(self._homes_changed)
        sup.on_config_reload(self._config_reloaded)

    def _homes_changed(self, added: list[Profile], removed: list[Profile]) -> None:
        limits = self.sup.config.gateway
        if limits.max_runs_per_profile != self._limits.max_runs_per_profile:
            # docs/gateway.md#limits: applies to the next run; running ones are not cut.
            self.runs.per_profile = limits.max_runs_per_profile
        if limits.retained_output_bytes != self.retained.bound:  # from the next finished run on
            self.retained.bound = limits.retained_output_bytes
            self.retained.files.max_bytes = 4 * limits.retained_output_bytes
        self._limits = limits
        # A new home's token works, a removed one's stops (docs/operations.md#live-reconfiguration).
        for profile in added:
            profile.on_reload(self._reloaded)
        self.auth.invalidate()
        log_event(
            "config.reload",
            added=[p.name for p in added],
            removed=[p.name for p in removed],
            profiles=len(self.sup.profiles),
        )

    async def document(self, run: Run) -> dict[str, Any]:
        """``GET /v1/runs/{id}`` of a run of this node: output moved to the logs folder
        read back off the loop (docs/operations.md#finished-output). A run that has just
        finished is shown so once its end is stored (journal, cluster), never before
        (docs/gateway.md#waiting-for-the-result)."""
        doc = run.snapshot()
        if doc["status"] in FINAL and not run.done.is_set():
            await asyncio.to_thread(run.done.wait, STORED_WITHIN)
            doc = run.snapshot()
        if self.retained.spilled(run):
            return await asyncio.to_thread(self.retained.fill, run, doc)
        return doc

    def _home_of(self, name: str) -> Path | None:
        profile = self.sup.profiles.get(name)
        return None if profile is None else profile.home

    def reload_config(self, cause: str) -> dict[str, Any]:
        """``SIGHUP`` / ``POST /v1/admin/reload``: multiplex.yaml, then every home, now."""
        result = self.sup.reload_config()
        for profile in list(self.sup.profiles.values()):
            profile.reload()
        body = result.as_dict()
        error = body["error"]
        fields = {k: v for k, v in body.items() if k != "error"}
        if error is not None:
            fields["error"] = self.sup.gate.recorder.redact(error)
        log_event("reload.requested", cause=cause, **fields)
        return {**body, "error": fields.get("error")}

    async def off_loop(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` in the gate pool: blocking work never runs on the event loop."""
        return await self._gate_pool.call(fn, *args)

    def _reloaded(self, profile: Profile, result: ReloadResult) -> None:
        self.auth.invalidate()  # even "unchanged": the .env (its token) may differ
        self.hub.revalidate()  # streams and waits of a rotated or removed token end now
        if not result.news:
            return
        fields: dict[str, Any] = {
            "profile": profile.name,
            "result": result.result,
            "epoch": profile.epoch,
            "status": profile.status,
        }
        if profile.error:
            fields["error"] = self.sup.gate.recorder.redact(profile.error)
        log_event("reload", **fields)
        # docs/gateway.md#server-sent-events: the dashboard shows it without waiting to poll.
        self.hub.publish_here(make_event("profile.reloaded", fields, profile.name))

    def _config_reloaded(self, result: ConfigReload) -> None:
        """``config.reloaded`` to every stream: what ``/readyz`` says of multiplex.yaml,
        no profile's name (a profile token sees it too)."""
        error = None if result.error is None else self.sup.gate.recorder.redact(result.error)
        data = {
            "ok": result.ok,
            "error": error,
            "restart_required": list(self.sup.restart_required),
        }
        self.hub.publish_here(make_event("config.reloaded", data, ""))

    @property
    def ready(self) -> bool:
        """``/readyz``: the watcher is alive (or watching is off by choice) and Redis answers."""
        if self.shutting_down:
            return False
        if self.cluster is not None and not self.cluster.up:
            return False
        if self.sup.config.watch.mode == "off":
            return True
        watcher = self.sup.watcher
        return watcher is not None and watcher.alive

    def begin_shutdown(self) -> None:
        """Stop taking runs, withdraw every pending approval, end every stream. Idempotent."""
        with self._shutdown_lock:
            if self.shutting_down:
                return
            self.shutting_down = True
        # docs/cluster.md#node-loss: parked runs go on elsewhere, not cancelled with the rest.
        self.runs.closing = True  # this node adopts nothing from now on, its own included
        moved = self.cluster.handover.leave() if self.cluster is not None else 0
        cancelled = self.runs.begin_shutdown()
        self.hub.close()
        log_event(
            "shutdown.begin",
            approvals_cancelled=cancelled,
            runs_handed_over=moved,
            runs_active=len(self.runs.active()),
        )

    def drain(self, grace: float) -> None:
        """Let running commands finish for up to ``grace`` seconds, then let go. Idempotent."""
        self.begin_shutdown()
        with self._shutdown_lock:
            if self._drained:
                return
            self._drained = True
        clean = self.runs.drain(grace)
        if not clean:  # finish or kill running commands
            killed = self.sup.kill_running()
            log_event("shutdown.killed", commands=killed)
            clean = self.runs.drain(5.0)
        with contextlib.suppress(ValueError):
            self.sup.gate.recorder.post_approval_response.remove(self.feed.hook)
        self._gate_pool.close()
        if self.runs.journal is not None:
            self.runs.journal.close()  # what ended during the drain is on disk
        log_event("shutdown.drained", clean=clean, runs_left=len(self.runs.active()))
