"""How a run registry stops, and how a parked run moves to another node (docs/cluster.md#node-loss).

A graceful stop refuses new runs, withdraws every pending approval and lets
running commands finish. In a cluster a run parked on a human whose command
has not started is not dropped: :meth:`RunLifecycle.detach_parked` takes it out
of this node (its prompt withdrawn, nothing run), the bridge stores it for
another node, and that node's :meth:`RunLifecycle.adopt` carries it on from the
parked command, asking again. Each of these moves is journaled
(docs/operations.md#what-survives-a-crash), and a restarted gateway's finished
runs come back from its journal through :meth:`RunLifecycle.restore`.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from multiplex.approval.waiting._pending import PendingApproval
from multiplex.gateway.http._logs import log_event
from multiplex.gateway.runs._run import Run
from multiplex.scopes import ScopedExecutor

if TYPE_CHECKING:
    from multiplex.gateway.journal import RunJournal
    from multiplex.gateway.runs._retained import RetainedOutput
    from multiplex.supervision import Supervisor

__all__ = ["SHUTDOWN", "Detached", "RunLifecycle"]

SHUTDOWN = "supervisor shutting down"


@dataclass(frozen=True, slots=True)
class Detached:
    """A parked run taken out of this node: resume it at command ``start``."""

    run: Run
    start: int


class RunLifecycle:
    """Shutdown, drain, hand-over and adoption of a :class:`RunRegistry`'s runs."""

    _sup: Supervisor
    _lock: threading.Lock
    _runs: OrderedDict[str, Run]
    _live: dict[str, int]
    _finished: deque[str]
    _keep: int
    _executor: ScopedExecutor
    journal: RunJournal | None
    retained: RetainedOutput | None
    closing: bool

    def active(self) -> list[Run]:
        raise NotImplementedError

    def _finish(self, run: Run, status: str, error: str | None) -> None:
        raise NotImplementedError

    def _publish_run(self, name: str, run: Run) -> None:
        raise NotImplementedError

    def _commands(self, run: Run, start: int) -> None:
        raise NotImplementedError

    def _guarded(self, step: Callable[..., None], run: Run, *args: Any) -> None:
        raise NotImplementedError

    def restore(self, runs: Iterable[Run]) -> None:
        """Finished runs of an earlier process (its journal), oldest first, within ``keep``;
        their output counted against ``gateway.retained_output_bytes`` as a new run's is."""
        with self._lock:
            for run in runs:
                self._runs[run.run_id] = run
                self._finished.append(run.run_id)
            while len(self._finished) > self._keep:
                self._runs.pop(self._finished.popleft(), None)
            kept = [self._runs[run_id] for run_id in self._finished]
        if self.retained is not None:
            self.retained.restored(kept)

    def _note(
        self, run: Run, request: PendingApproval | None = None, *, moved: bool = False
    ) -> None:
        """Journal the run's state: on disk before this returns, unless on the event loop."""
        if self.journal is not None:
            self.journal.note(run, request, moved=moved)

    def _forget_live(self, profile: str) -> None:
        left = self._live.get(profile, 1) - 1
        if left > 0:
            self._live[profile] = left
        else:
            self._live.pop(profile, None)

    # -- a graceful stop -------------------------------------------------------------
    def begin_shutdown(self) -> int:
        """Refuse new runs and withdraw every pending approval (SIGTERM/SIGINT)."""
        self.closing = True
        return self._sup.gate.cancel_all(SHUTDOWN)

    def drain(self, grace: float) -> bool:
        """Wait up to ``grace`` seconds for running commands; True if all ended."""
        deadline = time.monotonic() + grace
        for run in self.active():
            run.done.wait(max(0.0, deadline - time.monotonic()))
        self._executor.shutdown(wait=False, cancel_futures=True)
        left = self.active()
        for run in left:
            with run.lock:
                never_started = run.status == "queued"
                parked, run.parked = run.parked, None
            if parked is not None:  # its wake-up was queued in the pool just shut down
                parked.abandon()
            if never_started or parked is not None:
                self._finish(run, "cancelled", SHUTDOWN)
        return not self.active()

    # -- hand-over (cluster) ----------------------------------------------------------
    def detach_parked(self, movable: Callable[[Run, int], bool]) -> list[Detached]:
        """Take out every parked command run that ``movable(run, start)`` accepts.

        Each is gone from this registry before its prompt is withdrawn, so the
        withdrawal neither wakes nor finishes it here; it stays unfinished for
        whoever adopts it. Call before :meth:`begin_shutdown`.
        """
        taken: list[tuple[Detached, Any]] = []
        with self._lock:
            for run in list(self._runs.values()):
                with run.lock:
                    start, parked = run.parked_index, run.parked
                    if run.finished or parked is None or start is None or run.kind != "commands":
                        continue
                    if not movable(run, start):
                        continue
                    run.parked, run.parked_index = None, None
                    run.pending = None
                    run.status = "queued"
                del self._runs[run.run_id]
                self._forget_live(run.profile)
                taken.append((Detached(run, start), parked))
        for detached, parked in taken:
            self._note(detached.run, moved=True)  # no longer this node's to report
            parked.abandon()  # the prompt is withdrawn; the command never ran here
            detached.run.done.set()  # a "wait" on this node answers with the queued run
            log_event(
                "run.handed_over",
                run_id=detached.run.run_id,
                profile=detached.run.profile,
                next_command=detached.start,
            )
        return [d for d, _ in taken]

    def adopt(
        self,
        doc: dict[str, Any],
        commands: list[str],
        start: int,
    ) -> Run:
        """Carry on a run another node handed over, from command ``start`` (asked again)."""
        run = Run(
            str(doc["run_id"]),
            str(doc["profile"]),
            str(doc["session_id"]),
            str(doc["context"]),
            commands,
            asked_by=str(doc.get("asked_by") or ""),  # its next prompt names who asked
        )
        run.created_at = float(doc.get("created_at") or run.created_at)
        run.results = list(doc.get("results") or [])
        run.status = "running"
        with self._lock:
            self._runs[run.run_id] = run
            self._live[run.profile] = self._live.get(run.profile, 0) + 1
        self._note(run)
        log_event("run.resumed", run_id=run.run_id, profile=run.profile, next_command=start)
        self._publish_run("run.resumed", run)
        try:
            self._executor.submit(self._guarded, self._commands, run, start)
        except RuntimeError:  # this node is stopping too
            self._finish(run, "cancelled", SHUTDOWN)
        return run
