"""What running one command produced: ``Execution`` (raw) and ``RunResult`` (decided, redacted)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from multiplex.approval._decision import Decision

__all__ = ["Execution", "RunResult"]


@dataclass(frozen=True, slots=True)
class Execution:
    """What running one command produced (before redaction).

    ``backend`` and ``sandbox`` name what ran it (``local``/``bwrap``,
    ``local``/``none``, ``docker``/``podman``, ``ssh``/``ssh``); ``error`` is a
    one-line reason when the command could not run at all.
    """

    exit_code: int | None
    stdout: str
    stderr: str
    timed_out: bool = False
    truncated: bool = False
    duration_ms: int = 0
    error: str | None = None
    backend: str = "local"
    sandbox: str = "none"
    cancelled: bool = False
    # docs/execution.md#egress: what the egress proxy refused this command, one line each.
    egress_refused: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class RunResult:
    """One command's decision and, when it ran, its exit code and redacted output."""

    command: str
    decision: Decision
    exit_code: int | None = None
    stdout: str = ""
    stderr: str = ""
    timed_out: bool = False
    truncated: bool = False
    duration_ms: int = 0
    mounts: tuple[dict[str, str], ...] = field(default=())
    backend: str = "local"
    sandbox: str | None = None  # None: the command did not run
    egress_refused: tuple[str, ...] = ()  # docs/execution.md#egress, redacted
    error: str | None = None  # approved, but the command could not start: why (redacted)

    @property
    def ok(self) -> bool:
        return self.decision.approved and self.exit_code == 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "command": self.command,
            "decision": {
                "outcome": self.decision.outcome.value,
                "cause": self.decision.cause,
                "decided_by": self.decision.decided_by.value,
                "rule": self.decision.rule,
                "message": self.decision.message,
            },
            "exit_code": self.exit_code,
            "stdout": self.stdout,
            "stderr": self.stderr,
            "timed_out": self.timed_out,
            "truncated": self.truncated,
            "duration_ms": self.duration_ms,
            "mounts": list(self.mounts),
            "backend": self.backend,
            "sandbox": self.sandbox,
            "error": self.error,
        }
