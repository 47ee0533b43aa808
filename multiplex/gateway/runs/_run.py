"""One run of ``POST /v1/runs`` as the API shows it (docs/gateway.md#runs)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from multiplex.approval.waiting._pending import PendingApproval
from multiplex.execution import RunResult
from multiplex.execution.kernels import CellResult
from multiplex.supervision import ParkedRun

__all__ = ["FINAL", "Run", "approval_row", "cell_row", "result_row"]

FINAL = frozenset({"completed", "failed", "cancelled"})


def approval_row(request: PendingApproval) -> dict[str, Any]:
    """An open approval as the API shows it (``command`` is the redacted display)."""
    return {
        "approval_id": request.id,
        "run_id": request.run_id,
        "profile": request.profile,
        "session_id": request.session,
        "command": request.display,
        "context": request.context,
        "asked_by": request.asked_by,
        "created_at": request.created_at,
        "expires_at": request.expires_at,
        **request.why.as_dict(),
    }


def result_row(result: RunResult, redact: Callable[[str], str]) -> dict[str, Any]:
    """One command's entry in ``results``: the command and cause redacted like the logs.

    docs/security.md#tokens-and-ids: ``results[].command`` and the ``command.finished``
    events built from this row never carry a secret value the command line held.
    """
    d = result.decision
    return {
        "command": redact(result.command),
        "decision": {
            "outcome": d.outcome.value,
            "cause": redact(d.cause),
            "decided_by": d.decided_by.value,
            "rule": d.rule,
            "message": d.message,
        },
        "exit_code": result.exit_code,
        "stdout": result.stdout,
        "stderr": result.stderr,
        # Cut at its cap (docs/execution.md): the client must not take it for the whole.
        "truncated": result.truncated,
        "timed_out": result.timed_out,
        "output_dropped": None,  # docs/gateway.md#output-kept-and-dropped
        "backend": result.backend,
        "sandbox": result.sandbox,
        "egress_refused": [redact(line) for line in result.egress_refused],
        "error": None if result.error is None else redact(result.error),
    }


def cell_row(index: int, result: CellResult) -> dict[str, Any]:
    """One code cell's entry in ``results`` (docs/kernels.md#over-http); all text redacted."""
    return {
        "index": index,
        "outcome": result.outcome,
        "stdout": result.stdout,
        "stderr": result.stderr,
        "output_dropped": None,
        "result": result.result,
        "error": None if result.error is None else result.error.as_dict(),
        "duration_ms": result.duration_ms,
        "truncated": result.truncated,
        "fresh_kernel": result.fresh_kernel,
        "notice": result.notice,
        "kernel_id": result.kernel_id,
    }


class Run:
    """One submitted run; every field is read and written under its lock."""

    def __init__(
        self,
        run_id: str,
        profile: str,
        session_id: str,
        context: str,
        commands: list[str],
        code: list[str] | None = None,
        *,
        asked_by: str = "",
    ) -> None:
        self.run_id = run_id
        # docs/approvals.md#what-a-prompt-shows: who submitted it (a token, an MCP client).
        self.asked_by = asked_by
        self.profile = profile
        self.session_id = session_id
        self.context = context
        self.commands = tuple(commands)
        self.code = tuple(code or ())  # Python cells for the session's kernel instead of commands
        self.kind = "code" if self.code else "commands"
        self.reset = False  # code runs: the first cell discards the kernel's state
        self.timeout: float | None = (
            None  # shortens terminal.timeout for each command (MCP's timeout_s)
        )
        self.created_at = time.time()
        self.finished_at: float | None = None
        self.status = "queued"
        self.results: list[dict[str, Any]] = []
        self.pending: PendingApproval | None = None
        self.parked: ParkedRun | None = None  # while a human decides, no thread holds the run
        self.parked_index: int | None = None  # which command is parked
        self.error: str | None = None
        self.cancel_requested = False
        self.done = threading.Event()
        self.lock = threading.Lock()
        self._on_done: list[Callable[[], None]] = []

    @property
    def finished(self) -> bool:
        return self.status in FINAL

    def on_done(self, callback: Callable[[], None]) -> None:
        """Call ``callback()`` once the run has finished (at once if it has).

        It runs in the thread that finished the run: hand off, never block.
        """
        with self.lock:
            if not self.finished:
                self._on_done.append(callback)
                return
        callback()

    def ended(self) -> None:
        """Called once, after the run finished: wake whoever waits for it."""
        self.done.set()
        with self.lock:
            callbacks, self._on_done = self._on_done, []
        for callback in callbacks:
            callback()

    def snapshot(self) -> dict[str, Any]:
        """The ``GET /v1/runs/{id}`` document."""
        with self.lock:
            pending = self.pending
            return {
                "run_id": self.run_id,
                "profile": self.profile,
                "session_id": self.session_id,
                "context": self.context,
                "asked_by": self.asked_by,
                "status": self.status,
                "kind": self.kind,
                "results": list(self.results),
                "pending_approval": None
                if pending is None
                else {
                    "approval_id": pending.id,
                    "command": pending.display,
                    "context": pending.context,
                    "asked_by": pending.asked_by,
                    "created_at": pending.created_at,
                    "expires_at": pending.expires_at,
                    **pending.why.as_dict(),
                },
                "created_at": self.created_at,
                "finished_at": self.finished_at,
                "error": self.error,
            }
