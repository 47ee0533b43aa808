"""Runs: commands submitted over HTTP, executed one by one off the event loop (docs/gateway.md).

Each run executes in worker threads of a :class:`ScopedExecutor` and calls
``Supervisor.run_or_park`` for its commands in order, so the gate, the scope
and the redaction are exactly those of any other turn. When a human must
answer, the gate's ``approval.request`` (whose ``run_id`` names the run) marks
the run ``waiting_for_approval`` and the worker thread is let go: the run is
parked, holding no thread, until the request is answered, cancelled or times
out, and then resumes in a worker (docs/gateway.md#limits). A refused command
stops the run; the commands after it are not run. At most
``gateway.max_runs_per_profile`` runs of one profile are unfinished at once.
Each state change is appended to the node's run journal when there is one
(docs/operations.md#what-survives-a-crash): before a command runs, its run is
on disk.
"""

from __future__ import annotations

import functools
import logging
import secrets
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from multiplex._errors import MultiplexError
from multiplex.approval._decision import Outcome
from multiplex.execution import RunResult
from multiplex.gateway.events._events import EventHub, make_event
from multiplex.gateway.events._feed import ASKED, DecisionFeed
from multiplex.gateway.http._logs import log_event
from multiplex.gateway.runs._lifecycle import SHUTDOWN, RunLifecycle
from multiplex.gateway.runs._run import Run, cell_row, result_row
from multiplex.gateway.runs._run_prompts import RUN_CANCELLED, RunPrompts
from multiplex.scopes import ScopedExecutor
from multiplex.supervision import ParkedRun, Supervisor

if TYPE_CHECKING:
    from multiplex.gateway.journal import RunJournal
    from multiplex.gateway.runs._retained import RetainedOutput

__all__ = ["SHUTDOWN", "RunRegistry", "ShuttingDown", "TooManyRuns"]

log = logging.getLogger("multiplex.gateway")


class ShuttingDown(RuntimeError):
    """The gateway is draining and accepts no new run."""


class TooManyRuns(RuntimeError):
    """The profile already has ``gateway.max_runs_per_profile`` runs running or parked."""


class RunRegistry(RunLifecycle, RunPrompts):
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

    # -- execution (worker threads; a parked run holds none) -----------------------------
    def _execute(self, run: Run) -> None:
        with run.lock:
            if run.finished:
                return
            if run.cancel_requested or self.closing:
                start = False
            else:
                run.status, start = "running", True
        if not start:
            self._finish(run, "cancelled", SHUTDOWN if self.closing else None)
            return
        if self.journal is not None:
            self.journal.barrier()  # queued, on disk before its first command runs
        if self.retained is not None:
            self.retained.prepare(run.profile)  # its logs/runs/ exists: the sandbox hides it
        if run.code:
            self._guarded(self._cells, run)
        else:
            self._guarded(self._commands, run, 0)

    def _cells(self, run: Run) -> None:
        """Run the code cells in order in the session's kernel; a cell that is not ok ends the run."""
        for index, code in enumerate(run.code):
            self._hub.flush()  # the last cell's end goes out before this one starts
            with run.lock:
                stop = run.cancel_requested or self.closing
            if stop:
                self._finish(run, "cancelled", SHUTDOWN if self.closing else None)
                return
            try:
                result = self._sup.execute_code(
                    code,
                    profile=run.profile,
                    session=run.session_id,
                    context=run.context,
                    reset=run.reset and index == 0,
                    run_id=run.run_id,
                )
            except (MultiplexError, ValueError, OSError) as exc:
                self._finish(run, "failed", " ".join(str(exc).split())[:500])
                return
            row = cell_row(index, result)
            with run.lock:
                run.results.append(row)
            if len(self._hub):
                self._hub.publish_soon(
                    make_event(
                        "cell.finished",
                        {"run_id": run.run_id, "profile": run.profile, **row},
                        run.profile,
                        run.run_id,
                    )
                )
            if result.outcome != "ok":
                ended = {"cancelled": "cancelled", "exited": "completed"}
                self._finish(run, ended.get(result.outcome, "failed"), None)
                return
        self._finish(run, "completed", None)

    def _guarded(self, step: Callable[..., None], run: Run, *args: Any) -> None:
        try:
            step(run, *args)
        except Exception as exc:  # never leave a run "running" forever
            log.exception("run %s failed", run.run_id)
            self._finish(run, "failed", f"internal error: {type(exc).__name__}")
        finally:
            self._hub.flush()

    def _commands(self, run: Run, start: int) -> None:
        """Run commands from ``start`` until one parks, is refused, or all are done."""
        for index in range(start, len(run.commands)):
            self._hub.flush()  # the last command's end goes out before this one starts
            with run.lock:
                stop = run.cancel_requested or self.closing
            if stop:
                self._finish(run, "cancelled", SHUTDOWN if self.closing else None)
                return
            try:
                step = self._sup.run_or_park(
                    run.commands[index],
                    profile=run.profile,
                    session=run.session_id,
                    context=run.context,
                    run_id=run.run_id,
                    timeout=run.timeout,
                    on_output=self._output_of(run, index),
                )
            except (MultiplexError, ValueError, OSError) as exc:
                # e.g. the profile broke since submission, or a NUL byte in the line.
                self._finish(run, "failed", " ".join(str(exc).split())[:500])
                return
            if isinstance(step, ParkedRun):
                # docs/gateway.md#limits: the worker thread is free while a human decides.
                with run.lock:
                    run.parked, run.parked_index = step, index
                step.when_settled(functools.partial(self._wake, run, step, index))
                return
            if not self._ran(run, index, step):
                return
        with run.lock:
            stop = run.cancel_requested or self.closing
        # A cancel that stopped the last command mid-run still cancels the run.
        self._finish(run, "cancelled" if stop else "completed", None)

    def _output_of(self, run: Run, index: int) -> Callable[[str, str], None]:
        """docs/gateway.md#server-sent-events: ``command.output`` as the command writes.

        Redacted whole lines; ``offset`` counts the characters of that stream sent
        before, so a client that connected late knows it missed the start.
        """
        sent = {"stdout": 0, "stderr": 0}

        def publish(stream: str, text: str) -> None:
            offset = sent.get(stream, 0)
            sent[stream] = offset + len(text)
            if len(self._hub):  # nothing is built for events nobody listens to
                data = {"run_id": run.run_id, "profile": run.profile, "index": index}
                data.update(stream=stream, offset=offset, text=text)
                self._hub.publish(make_event("command.output", data, run.profile, run.run_id))

        return publish

    def _wake(self, run: Run, parked: ParkedRun, index: int) -> None:
        # Called in whichever thread settled the request (often the event loop): hand off.
        try:
            self._executor.submit(self._guarded, self._resume, run, parked, index)
        except RuntimeError:  # the pool is shut down (after the grace period)
            threading.Thread(
                target=self._guarded, args=(self._resume, run, parked, index), daemon=True
            ).start()

    def _resume(self, run: Run, parked: ParkedRun, index: int) -> None:
        with run.lock:
            if run.parked is not parked:
                return  # abandoned or handed over at shutdown
            run.parked, run.parked_index = None, None
        self._note(run)  # running again, on disk before the answered command runs
        try:
            result = parked.resume()
        except (MultiplexError, ValueError, OSError) as exc:
            self._finish(run, "failed", " ".join(str(exc).split())[:500])
            return
        if self._ran(run, index, result):
            self._commands(run, index + 1)

    def _ran(self, run: Run, index: int, result: RunResult) -> bool:
        """Record one command's result; False when the run ends with it."""
        row = result_row(result, self._sup.gate.recorder.redact)
        with run.lock:
            run.results.append(row)
        decision = result.decision
        if decision.decided_by not in ASKED:  # asked ones arrive through the hook
            self._feed.add(
                decision, profile=run.profile, session=run.session_id, command=result.command
            )
        if len(self._hub):
            for refused in result.egress_refused:  # docs/execution.md#egress
                self._hub.publish_soon(
                    make_event(
                        "egress.refused",
                        {
                            "run_id": run.run_id,
                            "profile": run.profile,
                            "index": index,
                            "message": self._sup.gate.recorder.redact(refused),
                        },
                        run.profile,
                        run.run_id,
                    )
                )
            # Sent with the run's end when that follows (one write in a cluster).
            self._hub.publish_soon(
                make_event(
                    "command.finished",
                    {"run_id": run.run_id, "profile": run.profile, "index": index, **row},
                    run.profile,
                    run.run_id,
                )
            )
        if not decision.approved:
            # docs/gateway.md: commands after a refused one are not run.
            status = "cancelled" if decision.outcome is Outcome.CANCELLED else "failed"
            self._finish(run, status, None)
            return False
        if row["error"] is not None:
            # docs/gateway.md#runs: approved, but it could not start: the run failed, and why.
            self._finish(run, "failed", f"command {index + 1} did not run: {row['error']}")
            return False
        return True

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
