"""A cell's result and its record in ``logs/cells.jsonl`` (docs/kernels.md#results-and-records)."""

from __future__ import annotations

import hashlib
import logging
import time
from dataclasses import dataclass
from typing import Any

import orjson

from multiplex._errors import MultiplexError
from multiplex.profiles import append_bytes
from multiplex.scopes import ProfileScope

__all__ = [
    "CELL_OUTCOMES",
    "CellError",
    "CellResult",
    "KernelError",
    "RawCell",
    "cell_result",
    "record_cell",
    "refused_result",
]

log = logging.getLogger("multiplex.kernels")
# ok: ran; error: raised (the kernel lives on); timeout / cancelled: the kernel
# was killed; exited: sys.exit() ended the kernel; died: the kernel process
# died; refused: the cell did not run (no kernel could be had for it).
CELL_OUTCOMES = ("ok", "error", "timeout", "cancelled", "exited", "died", "refused")


class KernelError(MultiplexError, RuntimeError):
    """A kernel did not start, did not attach its tool channel, or outlived SIGKILL."""


@dataclass(slots=True)
class RawCell:
    """What one cell produced, before redaction."""

    status: str  # one of CELL_OUTCOMES but "refused"
    stdout: str = ""
    stderr: str = ""
    result: str | None = None
    error: dict[str, Any] | None = None
    truncated: bool = False
    execution_count: int | None = None
    note: str | None = None


@dataclass(frozen=True, slots=True)
class CellError:
    """The exception a cell raised (redacted)."""

    ename: str
    evalue: str
    traceback: str

    def as_dict(self) -> dict[str, str]:
        return {"ename": self.ename, "evalue": self.evalue, "traceback": self.traceback}


@dataclass(frozen=True, slots=True)
class CellResult:
    """One cell: its redacted output, the repr of its last expression, its error.

    ``notice`` says when the cell got a fresh kernel and why (first cell,
    ``reset``, a stale environment, the previous kernel ended) or what ended
    this one (timeout, cancel, ``sys.exit()``).
    """

    profile: str
    session: str
    outcome: str
    stdout: str = ""
    stderr: str = ""
    result: str | None = None
    error: CellError | None = None
    duration_ms: int = 0
    truncated: bool = False
    fresh_kernel: bool = False
    notice: str | None = None
    kernel_id: str | None = None
    execution_count: int | None = None
    tool_calls: int = 0

    @property
    def ok(self) -> bool:
        return self.outcome == "ok"

    def as_dict(self) -> dict[str, Any]:
        return {
            "profile": self.profile,
            "session": self.session,
            "outcome": self.outcome,
            "stdout": self.stdout,
            "stderr": self.stderr,
            "result": self.result,
            "error": None if self.error is None else self.error.as_dict(),
            "duration_ms": self.duration_ms,
            "truncated": self.truncated,
            "fresh_kernel": self.fresh_kernel,
            "notice": self.notice,
            "kernel_id": self.kernel_id,
            "execution_count": self.execution_count,
            "tool_calls": self.tool_calls,
        }


def cell_result(
    scope: ProfileScope,
    kernel_id: str,
    raw: RawCell,
    started: float,
    fresh: bool,
    notice: str | None,
    calls: int,
) -> CellResult:
    """The redacted result of a cell that ran (``started``: its ``time.monotonic()``)."""
    error = None
    if raw.error is not None:
        tb = raw.error.get("traceback") or []
        error = CellError(
            scope.redact(str(raw.error.get("ename", ""))),
            scope.redact(str(raw.error.get("evalue", ""))),
            scope.redact("\n".join(str(line) for line in tb)),
        )
    return CellResult(
        profile=scope.name,
        session=scope.session,
        outcome=raw.status,
        stdout=scope.redact(raw.stdout),
        stderr=scope.redact(raw.stderr),
        result=None if raw.result is None else scope.redact(raw.result),
        error=error,
        duration_ms=int((time.monotonic() - started) * 1000),
        truncated=raw.truncated,
        fresh_kernel=fresh,
        notice=notice,
        kernel_id=kernel_id,
        execution_count=raw.execution_count,
        tool_calls=calls,
    )


def refused_result(
    scope: ProfileScope, started: float, why: str, kernel_id: str | None = None
) -> CellResult:
    """A cell that did not run: ``why`` is its error and its notice (redacted)."""
    return CellResult(
        profile=scope.name,
        session=scope.session,
        outcome="refused",
        error=CellError("KernelUnavailable", scope.redact(why), ""),
        duration_ms=int((time.monotonic() - started) * 1000),
        notice=scope.redact(why),
        kernel_id=kernel_id,
    )


def record_cell(scope: ProfileScope, code: str, result: CellResult) -> None:
    """Append the cell to ``<home>/logs/cells.jsonl``; the code only as a digest of its redacted text."""
    entry = {
        "ts": time.time(),
        "profile": scope.name,
        "session": scope.session,
        "turn": scope.turn_id,
        "context": scope.context.value,
        "kernel": result.kernel_id,
        "outcome": result.outcome,
        "duration_ms": result.duration_ms,
        "code_sha256": hashlib.sha256(scope.redact(code).encode()).hexdigest(),
        "tool_calls": result.tool_calls,
        "fresh_kernel": result.fresh_kernel,
        **({"notice": result.notice} if result.notice else {}),
    }
    try:
        # docs/security.md#files-the-supervisor-writes: never through a link a cell planted.
        line = orjson.dumps(entry, option=orjson.OPT_APPEND_NEWLINE)
        append_bytes(scope.home, "logs/cells.jsonl", line)
    except OSError as exc:
        log.warning("profile %s: cannot append logs/cells.jsonl: %s", scope.name, exc)
