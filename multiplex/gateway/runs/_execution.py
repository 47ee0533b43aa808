"""A run's execution: its commands or cells in worker threads, parked while a human decides (docs/gateway.md#limits).

Each run executes in worker threads of a :class:`ScopedExecutor` and calls
``Supervisor.run_or_park`` for its commands in order (``execute_code`` for its
cells), so the gate, the scope and the redaction are exactly those of any other
turn. When a human must answer, the worker thread is let go: the run is parked,
holding no thread, until the request is answered, cancelled or times out, and
then resumes in a worker. A refused command stops the run; the commands after
it are not run. Each command's output and end are published as they happen
(docs/gateway.md#server-sent-events).
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Callable
from typing import Any

from multiplex._errors import MultiplexError
from multiplex.approval._decision import Outcome
from multiplex.execution import RunResult
from multiplex.gateway.events._event import make_event
from multiplex.gateway.events._events import EventHub
from multiplex.gateway.events._feed import ASKED, DecisionFeed
from multiplex.gateway.runs._lifecycle import SHUTDOWN, RunLifecycle
from multiplex.gateway.runs._run import Run, cell_row, result_row
from multiplex.supervision import ParkedRun

__all__ = ["RunExecution"]

log = logging.getLogger("multiplex.gateway")


class RunExecution(RunLifecycle):
    """The execution half of a :class:`~multiplex.gateway.RunRegistry` (worker threads; a
    parked run holds none); it journals through :meth:`RunLifecycle._note`."""

    _hub: EventHub
    _feed: DecisionFeed

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
                self._hub.publish_output(
                    make_event("command.output", data, run.profile, run.run_id)
                )

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
            # Settled: running again, set here (the settled event that also says so comes
            # after this), so the line on disk is not the prompt's (docs/gateway.md#after-a-crash).
            run.pending = None
            if not run.finished:
                run.status = "running"
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
