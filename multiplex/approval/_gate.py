"""The approval gate: docs/approvals.md#order-of-checks in order, asking when it must, truthful always."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from multiplex._metrics import Metrics
from multiplex.approval._decision import (
    Danger,
    DecidedBy,
    Decision,
    Outcome,
    TraceStep,
    Verdict,
    VerdictOutcome,
)
from multiplex.approval._place import place_of
from multiplex.approval._recheck import recheck_decision
from multiplex.approval._smart import SmartApprover, consult
from multiplex.approval._static_checks import (
    CONTAINER_BACKENDS,
    CheckInput,
    Conclusion,
    dangers_of,
    nothing_held,
    run_static_checks,
)
from multiplex.approval.grants._suggest import with_suggestions
from multiplex.approval.records._records import DecisionRecorder, unrecorded_cause
from multiplex.approval.waiting._asking import PENDING_KEY, SESSIONS_KEY, Asking
from multiplex.approval.waiting._parked import Parked
from multiplex.approval.waiting._why import why_asked
from multiplex.redaction import KnownValues
from multiplex.scopes import ContextKind, ProfileScope, ProfileView
from multiplex.shell import ParsedLine, parse_line

__all__ = ["PENDING_KEY", "SESSIONS_KEY", "Gate"]


class Gate(Asking):
    """Decides every command of every profile, each with that profile's rules.

    ``evaluate`` is pure (``Supervisor.test``); ``decide`` may ask a human and
    records the decision. A command may run only on ``Outcome.APPROVED``. Asking,
    answers and ending waits come from :class:`~multiplex.approval.waiting._asking.Asking`.
    """

    def __init__(
        self,
        *,
        metrics: Metrics,
        current_view: Callable[[str], ProfileView],
        known_secrets: Callable[[], KnownValues],
        served_homes: Callable[[], tuple[tuple[str, Path], ...]] = tuple,
    ) -> None:
        super().__init__(metrics, DecisionRecorder(metrics, known_secrets))
        self._served_homes = served_homes
        self._current_view = current_view
        self._smart: dict[str | None, tuple[SmartApprover, float]] = {}
        # docs/approvals.md#what-a-prompt-shows: set by the layer that knows it. The
        # sandbox a local profile's commands get (bwrap or none), given its backend and
        # terminal.sandbox.
        self.sandbox_of: Callable[[str, str], str | None] = lambda backend, setting: None

    # -- who answers ------------------------------------------------------------
    def set_smart_approver(
        self, approver: SmartApprover | None, *, profile: str | None = None, timeout: float = 10.0
    ) -> None:
        """The approver consulted in ``mode: smart`` (per profile, or for all)."""
        if approver is None:
            self._smart.pop(profile, None)
        else:
            self._smart[profile] = (approver, timeout)

    def _can_answer(self, scope: ProfileScope) -> bool:
        # docs/approvals.md#who-can-answer: gateway/api turns are answered through the API; hook
        # ones by the agent's own prompt; interactive ones need a registered prompter;
        # cron/webhook/single_query: nobody.
        if scope.context.unattended:
            return False
        if scope.context in (ContextKind.GATEWAY, ContextKind.API, ContextKind.HOOK):
            return True
        return self._prompter_for(scope) is not None

    # -- evaluation -------------------------------------------------------------
    def _inputs(self, scope: ProfileScope, parsed: ParsedLine) -> tuple[CheckInput, ProfileView]:
        # Rules come from the profile's CURRENT epoch and live store: a
        # revocation takes effect at once, even inside a running turn.
        view = self._current_view(scope.name)
        session = self.sessions(scope.profile).get(scope.session)
        data = CheckInput(
            parsed=parsed,
            approvals=view.approvals,
            backend=view.backend,
            host_access=view.host_access,
            allowlist=(allowlist := scope.profile.allowlist.ruleset(scope.cwd)),
            held=allowlist.held if allowlist.binds else nothing_held,
            session_grants=session.grants,
            session_yolo=session.yolo,
            place=place_of(scope, self._served_homes()),
            search_path=scope.env.get("PATH", ""),
        )
        return data, view

    def evaluate(self, scope: ProfileScope, command: str, *, spend: bool = False) -> Verdict:
        """What the gate would do (steps 1-9, then "ask"); asks nobody. Writes nothing but,
        with ``spend`` (an agent's hook: its ``allow`` runs the command), the use it takes
        of each limited grant that approves it (docs/allowlist.md#uses)."""
        parsed = parse_line(command)
        data, view = self._inputs(scope, parsed)
        trace, end, finding = run_static_checks(data)
        if spend and _by_allow_rules(end) and not self._spend(scope, parsed):
            data, view = self._inputs(scope, parsed)  # another process took the last use
            trace, end, finding = run_static_checks(data)
            if _by_allow_rules(end) and not self._spend(scope, parsed):
                trace.append(TraceStep("allowlist", "ask", "a use of the grant could not be taken"))
                end = None
        dangers = dangers_of(data, finding, end)
        if end is None:
            if view.approvals.mode == "smart":
                has = scope.name in self._smart or None in self._smart
                trace.append(
                    TraceStep(
                        "smart",
                        "skipped",
                        "would consult the smart approver" if has else "no approver configured",
                    )
                )
            end = self._unattended(scope, view, trace) or Conclusion(
                "ask", "a human must approve", None, None, "ask"
            )
            if end.step == "ask":
                trace.append(TraceStep("ask", "ask", f"context {scope.context.value}"))
        return Verdict(
            scope.name,
            command,
            _OUTCOMES[end.outcome],
            end.cause,
            end.decided_by,
            end.rule,
            tuple([c.argv for c in parsed.commands]),
            tuple(trace),
            dangers,
        )

    def _unattended(
        self, scope: ProfileScope, view: ProfileView, trace: list[TraceStep]
    ) -> Conclusion | None:
        if self._can_answer(scope):
            trace.append(
                TraceStep("unattended", "pass", f"context {scope.context.value} can answer")
            )
            return None
        policy = view.approvals.unattended
        cause = f"unattended: {scope.context.value}"
        outcome = "approved" if policy == "approve" else "blocked"
        trace.append(TraceStep("unattended", outcome, f"approvals.unattended: {policy}"))
        return Conclusion(outcome, cause, DecidedBy.POLICY, None, "unattended")

    def decide(self, scope: ProfileScope, command: str, *, run_id: str | None = None) -> Decision:
        """Decide one command: steps 1-11; may wait for a human; always recorded."""
        step = self.begin(scope, command, run_id=run_id)
        return step.wait() if isinstance(step, Parked) else step

    def begin(
        self, scope: ProfileScope, command: str, *, run_id: str | None = None
    ) -> Decision | Parked:
        """:meth:`decide`, but a wait for a human comes back as :class:`Parked`, to be ended
        (``wait()``, or ``when_settled`` then ``finish()``): only then is it rechecked and recorded."""
        parsed = parse_line(command)
        data, view = self._inputs(scope, parsed)
        trace, end, finding = run_static_checks(data)
        if _by_allow_rules(end) and not self._spend(scope, parsed):
            # docs/allowlist.md#uses: another process took the grant's last use first.
            data, view = self._inputs(scope, parsed)
            trace, end, finding = run_static_checks(data)
            if _by_allow_rules(end) and not self._spend(scope, parsed):
                trace.append(TraceStep("allowlist", "ask", "a use of the grant could not be taken"))
                end = None
        if end is None:
            end = self._smart_step(scope, view, command, trace) or self._unattended(
                scope, view, trace
            )
        if finding is not None:  # docs/security.md#the-gates-named-patterns
            self.recorder.pattern(scope.name, finding.pattern.name, end.outcome if end else "ask")
        # docs/approvals.md#what-a-prompt-shows: every danger, redacted like the command.
        dangers = tuple(
            Danger(d.pattern, self.recorder.redact_command(d.segment))
            for d in dangers_of(data, finding, end)
        )
        if end is None:
            why = replace(
                why_asked(scope, view.backend, trace, finding, dangers),
                sandbox=self._sandbox(view),
                network=view.terminal.network,
                egress_allow=tuple(view.terminal.egress.allow),
            )
            why = with_suggestions(  # docs/approvals.md#suggestions: what "always" saves
                why, parsed, scope.home, scope.cwd, scope.name, self.recorder.redact_command
            )
            record = functools.partial(self._conclude, scope, command, parsed, dangers=why.dangers)
            return self._ask(scope, view, command, parsed, run_id, why, record)
        outcome = Outcome.APPROVED if end.outcome == "approved" else Outcome.BLOCKED
        decision = Decision(
            outcome, end.cause, end.decided_by or DecidedBy.POLICY, end.rule, view.epoch
        )
        return self._conclude(scope, command, parsed, decision, None, dangers=dangers)

    def _sandbox(self, view: ProfileView) -> str:
        if view.backend in CONTAINER_BACKENDS:
            return "container"
        if view.backend != "local":
            return "remote host"
        return self.sandbox_of(view.backend, view.terminal.sandbox) or view.terminal.sandbox

    def _spend(self, scope: ProfileScope, parsed: ParsedLine) -> bool:
        """Take a use of each limited grant approving ``parsed``; False if one had none left."""
        argvs = [c.assignments + c.argv for c in parsed.commands]
        return scope.profile.allowlist.ruleset(scope.cwd).spend(argvs)

    def _conclude(
        self,
        scope: ProfileScope,
        command: str,
        parsed: ParsedLine,
        decision: Decision,
        choice: str | None,
        by: str | None = None,
        *,
        dangers: tuple[Danger, ...] = (),
        extra: dict[str, Any] | None = None,
    ) -> Decision:
        decision = self.recheck(scope, command, parsed, decision)
        record = functools.partial(
            self.recorder.record,
            profile=scope.name,
            home=scope.home,
            session=scope.session,
            turn_id=scope.turn_id,
            context=scope.context.value,
            command=command,
            choice=choice,
            by=by,
            dangers=dangers,
            extra=extra,
        )
        failed = record(decision=decision)
        if failed is not None and decision.approved:
            # docs/operations.md#a-full-disk: what cannot be recorded is not carried out.
            decision = Decision(
                Outcome.BLOCKED,
                unrecorded_cause(failed),
                DecidedBy.POLICY,
                None,
                decision.epoch,
                decision.waited_ms,
            )
            record(decision=decision)  # kept if the disk has room again by now
        return decision

    def _smart_step(
        self, scope: ProfileScope, view: ProfileView, command: str, trace: list[TraceStep]
    ) -> Conclusion | None:
        if view.approvals.mode != "smart":
            return None
        entry = self._smart.get(scope.name) or self._smart.get(None)
        if entry is None:
            trace.append(TraceStep("smart", "escalate", "no approver configured"))
            return None
        verdict, detail = consult(entry[0], command, scope, entry[1])
        trace.append(TraceStep("smart", verdict, detail))
        if verdict == "approve":
            return Conclusion("approved", detail, DecidedBy.SMART, None, "smart")
        if verdict == "deny":
            return Conclusion("blocked", detail, DecidedBy.SMART, None, "smart")
        return None

    # -- step 11 ------------------------------------------------------------------
    def recheck(
        self, scope: ProfileScope, command: str, parsed: ParsedLine, decision: Decision
    ) -> Decision:
        """Just before running: a deny added or the granting rule revoked meanwhile blocks."""
        if not decision.approved:
            return decision
        return recheck_decision(
            decision,
            parsed,
            self._current_view(scope.name),
            scope.profile.allowlist.ruleset(scope.cwd, spent=True),  # its own use may be the last
            lambda: self.sessions(scope.profile).get(scope.session).grants,
            lambda: place_of(scope, self._served_homes()).cwd,  # only on a new epoch
        )


# VerdictOutcome by value: a dict lookup, where calling the enum costs a lookup and more.
_OUTCOMES = {outcome.value: outcome for outcome in VerdictOutcome}


def _by_allow_rules(end: Conclusion | None) -> bool:
    """Approved at the allowlist step (the file's rules, a session's grants, or both)."""
    return end is not None and end.step == "allowlist" and end.outcome == "approved"
