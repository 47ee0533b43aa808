"""Every decision counted, logged (redacted) and announced (docs/approvals.md#records)."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

from multiplex._metrics import Metrics
from multiplex.approval._decision import Danger, DecidedBy, Decision
from multiplex.approval.records._record_health import RecordHealth
from multiplex.profiles import append_bytes
from multiplex.redaction import KnownValues, redact_always, redact_command

__all__ = [
    "ANSWERED_BY",
    "MCP_CLIENT",
    "DecisionRecorder",
    "PostApprovalResponse",
    "answered_by",
    "unrecorded_cause",
]

# docs/approvals.md#records: who answered, in every record.
MCP_CLIENT = "mcp-client"  # an answer's ``by`` from an MCP client: ``mcp-client:<its name>``
# redact(): texts up to this long are remembered, at most this many per set of known values.
_SHORT = 160
_SHORT_ENTRIES = 4096
# redact(): texts up to this long are also read as command lines (their shell
# quoting undone); longer ones are outputs, except where redact_command says so.
_COMMAND_SIZE = 64 * 1024
ANSWERED_BY = ("admin", "profile-token", "mcp-client", "terminal", "policy", "rule", "nobody")
_BY_DECIDER = {
    DecidedBy.RULE: "rule",
    DecidedBy.POLICY: "policy",
    DecidedBy.SMART: "policy",
    DecidedBy.NOBODY: "nobody",
    DecidedBy.USER: "terminal",
}


def answered_by(decision: Decision, by: str | None) -> str:
    """Who answered: the answer's ``by`` (``admin``, ``profile:<name>``, a terminal)
    when a human did, else what decided (a rule, a policy, nobody)."""
    if by is not None:
        return _human(by)
    return _BY_DECIDER.get(decision.decided_by, "policy")


def _human(by: str) -> str:
    if by == "admin":
        return "admin"
    if by.startswith("profile:"):
        return "profile-token"
    if by.startswith(MCP_CLIENT):
        return "mcp-client"  # docs/agents.md#asking-through-the-client
    return "terminal"  # the terminal prompt, or an embedding program's own answer


log = logging.getLogger("multiplex.approval")


def unrecorded_cause(exc: OSError) -> str:
    """The one-line cause of a decision refused because it could not be recorded."""
    return f"cannot record the decision: {exc.strerror or exc}"


class PostApprovalResponse(Protocol):
    """Hook called after every ASKED approval, answered or not.

    ``choice`` is ``once``/``session``/``always``/``deny`` when a human answered,
    ``cancelled`` or ``timeout`` when nobody did.
    """

    def __call__(
        self, decision: Decision, *, choice: str, profile: str, session: str, command: str
    ) -> None: ...


class DecisionRecorder:
    """Counts, logs and announces decisions; never raises into the gate."""

    def __init__(self, metrics: Metrics, known_secrets: Callable[[], KnownValues]) -> None:
        self._metrics = metrics
        self._known = known_secrets
        self.post_approval_response: list[PostApprovalResponse] = []
        self.health = RecordHealth()  # docs/operations.md#a-full-disk
        # (the known values, their short texts already redacted): see redact().
        self._short: tuple[KnownValues | None, dict[str, str]] = (None, {})

    def redact(self, text: str) -> str:
        """Audit-grade redaction: every profile's known values and every pattern.

        A text of up to 64 KiB is also read as a command line: a known value
        its shell quoting spells is masked (``redact_command``); longer texts
        are outputs, and a command of any length goes through
        :meth:`redact_command`.

        The answer depends only on the text and the known values (the shapes
        are fixed), and the same short texts (statuses, names, commands) recur
        in every record and shared document: those are remembered for the
        current set of known values. A reload that changes any secret makes a
        new set, which starts with nothing remembered; a thread still holding
        the old set writes only to the old set's memo.
        """
        known = self._known()
        if len(text) > _SHORT:
            if len(text) <= _COMMAND_SIZE:
                return redact_command(text, known)
            return redact_always(text, known)
        state = self._short
        if state[0] is not known:
            state = self._short = (known, {})
        memo = state[1]
        masked = memo.get(text)
        if masked is None:
            masked = redact_command(text, known)
            if len(memo) >= _SHORT_ENTRIES:
                memo.clear()
            memo[text] = masked
        return masked

    def redact_command(self, command: str) -> str:
        """:meth:`redact` for a command line of any length: also a known value its
        shell quoting spells is masked (docs/redaction.md#commands)."""
        if len(command) <= _COMMAND_SIZE:
            return self.redact(command)
        return redact_command(command, self._known())

    def pattern(self, profile: str, name: str, outcome: str) -> None:
        """Count a named gate pattern (``multiplex_gate_patterns_total``)."""
        self._metrics.patterns.labels(profile, name, outcome).inc()

    def record_egress(
        self,
        *,
        profile: str,
        home: Path,
        session: str,
        turn_id: str,
        context: str,
        command: str,
        refused: str,
    ) -> None:
        """Keep one egress refusal (docs/execution.md#egress) beside the gate's decisions."""
        target = refused.removeprefix("refused ").split(" ", 1)[0]
        entry = {
            "ts": time.time(),
            "profile": profile,
            "session": session,
            "turn": turn_id,
            "context": context,
            "kind": "egress",
            "command": self.redact(f"egress {target}"),
            "run_command": self.redact_command(command),
            "outcome": "blocked",
            "cause": self.redact(f"egress proxy: {refused}"),
            "decided_by": "policy",
            "answered_by": "nobody",
            "rule": "terminal.egress",
        }
        self._append(profile, home, entry)

    def record_handed_over(
        self,
        *,
        profile: str,
        home: Path,
        session: str,
        turn_id: str,
        context: str,
        command: str,
        cause: str,
        epoch: int | None,
        dangers: Sequence[Danger] = (),
        extra: dict[str, Any] | None = None,
    ) -> None:
        """Keep a question the gate would ask but handed to someone else (an agent's
        own hook: docs/agents.md): ``outcome: ask``, never approved, denied or
        cancelled, since nobody here answered it (docs/approvals.md#records)."""
        entry = {
            "ts": time.time(),
            "profile": profile,
            "session": session,
            "turn": turn_id,
            "context": context,
            "command": self.redact_command(command),
            "outcome": "ask",
            "cause": self.redact(cause),
            "decided_by": "nobody",
            "answered_by": "nobody",
            "rule": None,
            "epoch": epoch,
            "waited_ms": 0,
            "dangers": [
                {"pattern": d.pattern, "segment": self.redact_command(d.segment)} for d in dangers
            ],
            **(extra or {}),
        }
        self._append(profile, home, entry)

    def record(
        self,
        *,
        profile: str,
        home: Path,
        session: str,
        turn_id: str,
        context: str,
        command: str,
        decision: Decision,
        choice: str | None = None,
        extra: dict[str, Any] | None = None,
        by: str | None = None,
        dangers: Sequence[Danger] = (),
    ) -> OSError | None:
        """Count, append and announce one decision; the error if it could not be appended.

        The gate refuses an approved decision whose record failed
        (docs/operations.md#a-full-disk); the hooks are told either way.
        """
        self._metrics.decisions.labels(
            profile, decision.outcome.value, decision.decided_by.value
        ).inc()
        entry = {
            "ts": time.time(),
            "profile": profile,
            "session": session,
            "turn": turn_id,
            "context": context,
            "command": self.redact_command(command),
            "outcome": decision.outcome.value,
            "cause": self.redact(decision.cause),
            "decided_by": decision.decided_by.value,
            "answered_by": answered_by(decision, by),
            "rule": decision.rule,
            "epoch": decision.epoch,
            "waited_ms": decision.waited_ms,
            # Segments come redacted from the gate; redacted again: a record is audit-grade.
            "dangers": [
                {"pattern": d.pattern, "segment": self.redact_command(d.segment)} for d in dangers
            ],
            **({"choice": choice} if choice else {}),
            **({"by": by} if by else {}),  # the answerer as named (``mcp-client:<name>``, ...)
            **(extra or {}),
        }
        failed = self._append(profile, home, entry)
        if choice is not None:
            for hook in list(self.post_approval_response):
                try:
                    hook(
                        decision,
                        choice=choice,
                        profile=profile,
                        session=session,
                        command=self.redact_command(command),
                    )
                except Exception:
                    log.exception("post_approval_response hook failed")
        return failed

    def record_answer(
        self,
        *,
        profile: str,
        home: Path,
        session: str,
        turn_id: str,
        context: str,
        command: str,
        approval_id: str,
        choice: str,
        by: str | None,
        rules: Sequence[str],
    ) -> None:
        """Keep a human's ``always`` answer on disk (fsync) before its rule is written.

        docs/operations.md#what-survives-a-crash: an acknowledged answer has
        this record even if the process dies before the run resumes (the run's
        own decision follows then). Raises ``OSError`` when it cannot be kept:
        the answer must then not be acknowledged.
        """
        entry = {
            "ts": time.time(),
            "profile": profile,
            "session": session,
            "turn": turn_id,
            "context": context,
            "kind": "answer",
            "command": self.redact_command(command),
            "outcome": "answered",
            "cause": f"answered {choice} by {by or 'nobody'}",
            "decided_by": "user",
            "answered_by": _human(by) if by else "nobody",
            "by": by,
            "choice": choice,
            "rule": "; ".join(rules) or None,
            "approval_id": approval_id,
        }
        failed = self._append(profile, home, entry, sync=True)
        if failed is not None:
            raise failed

    def _append(
        self, profile: str, home: Path, entry: dict[str, Any], *, sync: bool = False
    ) -> OSError | None:
        # docs/security.md#files-the-supervisor-writes: opened without following
        # links, so a command cannot point the log at ~/.bashrc.
        try:
            line = json.dumps(entry, ensure_ascii=False) + "\n"
            # A lone surrogate (a command read from JSON's "\\udce9") as its JSON escape:
            # the line stays valid UTF-8 and reads back as the same text.
            data = line.encode("utf-8", "backslashreplace")
            append_bytes(home, "logs/decisions.jsonl", data, sync=sync)
        except OSError as exc:
            log.warning("profile %s: cannot append logs/decisions.jsonl: %s", profile, exc)
            self.health.failed(home, unrecorded_cause(exc), exc.errno)
            return exc
        self.health.succeeded(home)
        return None
