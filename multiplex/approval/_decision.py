"""Typed, truthful results of the approval gate (docs/approvals.md#outcomes-and-what-the-agent-sees, docs/design.md#the-python-api)."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

from multiplex.shell.parsing._parsed import slot_setters

__all__ = [
    "Danger",
    "DecidedBy",
    "Decision",
    "Outcome",
    "TraceStep",
    "Verdict",
    "VerdictOutcome",
]


class Outcome(enum.StrEnum):
    """What finally happened to a command (docs/approvals.md#outcomes-and-what-the-agent-sees)."""

    APPROVED = "approved"
    DENIED = "denied"  # only ever when a human answered deny
    CANCELLED = "cancelled"  # nobody answered and the wait ended; the cause says why
    TIMEOUT = "timeout"  # approvals.timeout passed with no answer
    BLOCKED = "blocked"  # a rule or policy refused it without asking anyone


class DecidedBy(enum.StrEnum):
    """Who decided (docs/approvals.md#outcomes-and-what-the-agent-sees)."""

    RULE = "rule"
    USER = "user"
    POLICY = "policy"
    SMART = "smart"
    NOBODY = "nobody"


class VerdictOutcome(enum.StrEnum):
    """What the gate WOULD do for a command (``Supervisor.test``)."""

    APPROVED = "approved"
    BLOCKED = "blocked"
    ASK = "ask"


@dataclass(frozen=True, slots=True)
class TraceStep:
    """One step of docs/approvals.md#order-of-checks as evaluated: its name, result and a detail line."""

    step: str
    result: str
    detail: str = ""

    def as_dict(self) -> dict[str, str]:
        return {"step": self.step, "result": self.result, "detail": self.detail}


@dataclass(frozen=True, slots=True)
class Danger:
    """One named pattern the gate found and the part of the line it came from.

    ``segment`` is the source text of the simple command, word or script payload
    (docs/approvals.md#what-a-prompt-shows).
    """

    pattern: str
    segment: str

    def as_dict(self) -> dict[str, str]:
        return {"pattern": self.pattern, "segment": self.segment}


@dataclass(frozen=True, slots=True)
class Decision:
    """The gate's final, truthful decision about one command.

    A command runs only when ``outcome`` is ``approved`` (fail closed).
    ``message`` is what the agent is shown: it never says a user denied a
    prompt nobody answered.
    """

    outcome: Outcome
    cause: str
    decided_by: DecidedBy
    rule: str | None = None
    epoch: int = 0
    waited_ms: int = 0

    @property
    def approved(self) -> bool:
        return self.outcome is Outcome.APPROVED

    @property
    def message(self) -> str:
        """The text rendered to the agent for this decision."""
        return render_message(self)

    def as_dict(self) -> dict[str, Any]:
        return {
            "outcome": self.outcome.value,
            "cause": self.cause,
            "decided_by": self.decided_by.value,
            "rule": self.rule,
            "epoch": self.epoch,
            "waited_ms": self.waited_ms,
            "message": self.message,
        }


def render_message(decision: Decision) -> str:
    """docs/approvals.md#outcomes-and-what-the-agent-sees: truthful attribution of every outcome."""
    cause = decision.cause
    match decision.outcome:
        case Outcome.APPROVED:
            return f"Approved ({decision.decided_by.value}: {cause})."
        case Outcome.DENIED:
            why = f": {cause}" if cause else ""
            return f"BLOCKED: the user denied this command{why}. Do not retry it; ask the user how to proceed."
        case Outcome.CANCELLED:
            return (
                f"BLOCKED: the command was not approved: the approval prompt was not answered ({cause}). "
                "Silence is not consent, so it did not run; no user refused it."
            )
        case Outcome.TIMEOUT:
            return (
                f"BLOCKED: the command was not approved: the approval prompt was not answered in time ({cause}). "
                "Silence is not consent, so it did not run."
            )
        case Outcome.BLOCKED:
            by = {
                DecidedBy.RULE: "a rule",
                DecidedBy.POLICY: "policy",
                DecidedBy.SMART: "the smart approver",
                DecidedBy.NOBODY: "policy",
                DecidedBy.USER: "policy",
            }[decision.decided_by]
            rule = f" (rule: {decision.rule})" if decision.rule else ""
            return f"BLOCKED by {by}: {cause}{rule}. No user was asked."
    raise AssertionError(decision.outcome)  # pragma: no cover


@dataclass(frozen=True, slots=True, init=False)
class Verdict:
    """What the gate would do for a command, with its trace; writes nothing."""

    profile: str
    command: str
    outcome: VerdictOutcome
    cause: str
    decided_by: DecidedBy | None
    rule: str | None
    segments: tuple[tuple[str, ...], ...]
    trace: tuple[TraceStep, ...] = field(default=())
    # Every danger of the line in line order; the outcome is the most severe's.
    dangers: tuple[Danger, ...] = field(default=())

    def __init__(
        self,
        profile: str,
        command: str,
        outcome: VerdictOutcome,
        cause: str,
        decided_by: DecidedBy | None,
        rule: str | None,
        segments: tuple[tuple[str, ...], ...],
        trace: tuple[TraceStep, ...] = (),
        dangers: tuple[Danger, ...] = (),
    ) -> None:
        # One is made every decision: its slots set directly (see slot_setters).
        put = _VERDICT_FIELDS
        put[0](self, profile)
        put[1](self, command)
        put[2](self, outcome)
        put[3](self, cause)
        put[4](self, decided_by)
        put[5](self, rule)
        put[6](self, segments)
        put[7](self, trace)
        put[8](self, dangers)

    def as_dict(self) -> dict[str, Any]:
        """The JSON shape of ``approvals test --json`` (docs/cli.md)."""
        return {
            "profile": self.profile,
            "command": self.command,
            "outcome": self.outcome.value,
            "cause": self.cause,
            "decided_by": self.decided_by.value if self.decided_by else None,
            "rule": self.rule,
            "segments": [list(s) for s in self.segments],
            "trace": [t.as_dict() for t in self.trace],
            "dangers": [d.as_dict() for d in self.dangers],
        }


_VERDICT_FIELDS = slot_setters(
    Verdict, "profile command outcome cause decided_by rule segments trace dangers"
)
