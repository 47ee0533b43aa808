"""Runs: commands submitted over HTTP, executed one by one off the event loop (docs/gateway.md).

:class:`RunRegistry` admits a run, counts it against its profile (at most
``gateway.max_runs_per_profile`` runs of one profile are unfinished at once),
hands it to a worker thread (``gateway.runs._execution``), records how it ends
and keeps the last ``keep`` finished ones. When a human must answer, the gate's
``approval.request`` (whose ``run_id`` names the run) marks the run
``waiting_for_approval`` (``gateway.runs._run_prompts``). Each state change is
appended to the node's run journal when there is one
(docs/operations.md#what-survives-a-crash): before a command runs, its run is
on disk.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections import OrderedDict, deque
from typing import TYPE_CHECKING

from multiplex.gateway.events._event import make_event
from multiplex.gateway.events._events import EventHub
from multiplex.gateway.events._feed import DecisionFeed
from multiplex.gateway.http._logs import log_event
from multiplex.gateway.runs._execution import RunExecution
from multiplex.gateway.runs._lifecycle import SHUTDOWN
from multiplex.gateway.runs._run import Run
from multiplex.gateway.runs._run_prompts import RUN_CANCELLED, RunPrompts
from multiplex.scopes import ScopedExecutor
from multiplex.supervision import Supervisor

if TYPE_CHECKING:
    from multiplex.gateway.journal import RunJournal
    from multiplex.gateway.runs._retained import RetainedOutput

__all__ = ["SHUTDOWN", "RunRegistry", "ShuttingDown", "TooManyRuns"]


class ShuttingDown(RuntimeError):
    """The gateway is draining and accepts no new run."""


class TooManyRuns(RuntimeError):
    """The profile already has ``gateway.max_runs_per_profile`` runs running or parked."""


class RunRegistry(RunExecution, RunPrompts):
    """Every live run and the last ``keep`` finished ones, with their execution."""

    def __init__(
        self,
        sup: Supervisor,
        hub: EventHub,
        feed: DecisionFeed,
        *,
        max_workers: int = 256,
        keep: int = 1000,
        per_profile: int = 32,
        journal: RunJournal | None = None,
        retained: RetainedOutput | None = None,
    ) -> None:
        self._sup = sup
        self.journal = journal
        self.retained = retained  # docs/operations.md#finished-output: output past the bound
        self.per_profile = per_profile  # a live reload may change it (docs/gateway.md#limits)
        self._live: dict[str, int] = {}  # unfinished runs by profile, under _lock
        self._hub = hub
        self._feed = feed
        self._keep = keep
        self._runs: OrderedDict[str, Run] = OrderedDict()
        self._finished: deque[str] = deque()
        self._lock = threading.Lock()
        self._executor = ScopedExecutor(max_workers=max_workers, thread_name_prefix="multiplex-run")
        self.closing = False

    # -- lookup --------------------------------------------------------------------
    def get(self, run_id: str) -> Run | None:
        with self._lock:
            return self._runs.get(run_id)

    def asked_by(self, run_id: str) -> str:
        """Who submitted the run (docs/approvals.md#what-a-prompt-shows), "" if unknown."""
        run = self.get(run_id)
        return "" if run is None else run.asked_by

    def all(self) -> list[Run]:
        """Every run still known, oldest first (live ones and the last finished)."""
        with self._lock:
            return list(self._runs.values())

    def active(self) -> list[Run]:
        with self._lock:
            return [r for r in self._runs.values() if not r.finished]

    # -- submission ------------------------------------------------------------------
    def submit(
        self,
        profile: str,
        session_id: str,
        context: str,
        commands: list[str],
        *,
        code: list[str] | None = None,
        reset: bool = False,
        timeout: float | None = None,
        asked_by: str = "",
    ) -> Run:
        """Queue a run of commands (or of ``code`` cells); it starts in a worker thread at once.

        ``timeout`` shortens ``terminal.timeout`` for each of its commands; ``asked_by``
        names who submitted it in its prompts.
        """
        run = self.admit(
            profile, session_id, context, commands, code=code, reset=reset, asked_by=asked_by
        )
        run.timeout = timeout
        self._publish_run("run.started", run)
        self.start(run)
        return run

    def admit(
        self,
        profile: str,
        session_id: str,
        context: str,
        commands: list[str],
        *,
        code: list[str] | None = None,
        reset: bool = False,
        asked_by: str = "",
    ) -> Run:
        """A new run counted against its profile's limit; :meth:`start` it (after
        :meth:`announce`, in a cluster) or :meth:`abandon` it."""
        if self.closing:
            raise ShuttingDown(SHUTDOWN)
        run_id = f"run-{secrets.token_urlsafe(12)}"
        run = Run(run_id, profile, session_id, context, commands, code, asked_by=asked_by)
        run.reset = reset and bool(run.code)
        with self._lock:
            live = self._live.get(profile, 0)
            if live >= self.per_profile:
                # docs/gateway.md#limits: one profile's backlog never delays another's.
                raise TooManyRuns(
                    f"profile {profile!r} has {live} runs running or waiting "
                    f"(gateway.max_runs_per_profile: {self.per_profile})"
                )
            self._live[profile] = live + 1
            self._runs[run.run_id] = run
        return run

    async def announce(self, run: Run) -> None:
        """``run.started`` from the event loop, awaiting its write (a cluster's raises
        ``ClusterUnavailable`` when Redis cannot take it)."""
        await self._hub.apublish(make_event("run.started", run.snapshot(), run.profile, run.run_id))

    def abandon(self, run: Run, cause: str) -> None:
        """End an admitted run that never started (its announcement failed or was
        interrupted): ``failed`` with ``cause``, its place under the limit given back.

        Redis may still take an announcement its caller gave up on; the final
        document follows it (written on recovery while Redis is away), so no
        record stays ``queued``. A run drained meanwhile is left as it ended.
        """
        self._finish(run, "failed", cause)

    def start(self, run: Run) -> None:
        """Journal and log an admitted run and hand it to a worker thread."""
        self._note(run)  # queued (on the event loop: POST /v1/runs awaits it before 202)
        log_event(
            "run.started",
            run_id=run.run_id,
            profile=run.profile,
            session_id=run.session_id,
            context=run.context,
            commands=len(run.commands),
            cells=len(run.code),
        )
        try:
            self._executor.submit(self._execute, run)
        except RuntimeError:  # the executor was shut down under us
            self._finish(run, "cancelled", SHUTDOWN)

    def cancel(self, run: Run, cause: str = RUN_CANCELLED) -> int:
        """Withdraw the run's pending approvals and stop its running command; the rest never run."""
        with run.lock:
            if run.finished:
                return 0
            run.cancel_requested = True
        # A command already running is stopped too (its whole tree, its container), and a
        # running code cell: its kernel is killed (docs/kernels.md#lifecycle).
        self._sup.cancel_commands(run.run_id, wait=False)
        return self._sup.gate.cancel_run(run.run_id, cause) + self._sup.kernels.cancel_run(
            run.run_id, cause
        )

    def _finish(self, run: Run, status: str, error: str | None) -> None:
        with run.lock:
            if run.finished:
                return
            run.status = status
            run.error = error
            run.pending = None
            run.finished_at = time.time()
        self._note(run)
        self._sup.metrics.runs.labels(run.profile, status).inc()
        log_event(
            "run.finished",
            run_id=run.run_id,
            profile=run.profile,
            session_id=run.session_id,
            status=status,
            commands_run=len(run.results),
            duration_ms=int(((run.finished_at or 0) - run.created_at) * 1000),
            error=error,
        )
        self._publish_run("run.finished", run)
        self._hub.flush()  # stored before anyone is told the run ended
        if self.retained is not None:  # counted, past the bound the oldest output moved out
            self.retained.finished(run)
        run.ended()
        with self._lock:
            self._forget_live(run.profile)
            self._finished.append(run.run_id)
            forgotten = [self._finished.popleft() for _ in range(len(self._finished) - self._keep)]
            for run_id in forgotten:
                self._runs.pop(run_id, None)
        if self.retained is not None:
            for run_id in forgotten:
                self.retained.forget(run_id)

    def _publish_run(self, name: str, run: Run) -> None:
        if len(self._hub):  # nobody listening: skip building the snapshot
            self._hub.publish(make_event(name, run.snapshot(), run.profile, run.run_id))
