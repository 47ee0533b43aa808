"""The gate's waiting half: asking a human, the answer, and every way a wait ends (docs/approvals.md#asking).

:class:`Asking` is the base of :class:`~multiplex.approval.Gate`. It keeps each
profile's open requests and session grants, the prompters that deliver an
interactive prompt, turns a resolution into a decision and the rules an answer
grants, and withdraws waits when their turn, session or run ends
(docs/approvals.md#sessions). Deciding whether to ask at all stays in ``_gate``.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable

from multiplex._metrics import Metrics
from multiplex.approval._decision import Decision
from multiplex.approval.grants._always import AlwaysAnswers
from multiplex.approval.grants._bound_files import bindings_for
from multiplex.approval.grants._sessions import SessionTable
from multiplex.approval.records._records import DecisionRecorder
from multiplex.approval.waiting._answers import decision_for, rules_to_save
from multiplex.approval.waiting._parked import Parked
from multiplex.approval.waiting._pending import (
    Answer,
    Choice,
    PendingApproval,
    PendingTable,
    Resolution,
)
from multiplex.approval.waiting._prompt import Prompter, PromptUndeliverable
from multiplex.approval.waiting._why import Why
from multiplex.profiles import Profile
from multiplex.scopes import ContextKind, ProfileScope, ProfileView
from multiplex.shell import ParsedLine

__all__ = ["PENDING_KEY", "SESSIONS_KEY", "Asking"]

log = logging.getLogger("multiplex.approval")
SESSIONS_KEY = "approval.sessions"
PENDING_KEY = "approval.pending"
Listener = Callable[[str, PendingApproval], None]


class Asking:
    """Every profile's open approval requests, and the session grants their answers give."""

    def __init__(self, metrics: Metrics, recorder: DecisionRecorder) -> None:
        self._metrics = metrics
        self.recorder = recorder
        self.always = AlwaysAnswers(recorder)  # docs/operations.md#what-survives-a-crash
        self._prompters: dict[tuple[str | None, str | None], Prompter] = {}
        self._tables: dict[str, PendingTable] = {}
        self._listeners: list[Listener] = []
        self._lock = threading.Lock()
        # Called once, when the first pending table is made (see when_waiting).
        self._first_table: list[Callable[[], None]] | None = []
        # docs/approvals.md#what-a-prompt-shows: who asked, given the run id; set by
        # the layer that knows (the gateway's runs).
        self.asked_by: Callable[[str], str] = lambda run_id: ""

    # -- per-profile state ------------------------------------------------------
    def sessions(self, profile: Profile) -> SessionTable:
        return profile.resource(SESSIONS_KEY, lambda p: SessionTable(p.name))

    def pending(self, profile: Profile) -> PendingTable:
        def create(p: Profile) -> PendingTable:
            table = PendingTable(p.name)
            table.subscribe(self._fan_out)
            with self._lock:
                self._tables[p.name] = table
                first, self._first_table = self._first_table, None
            for callback in first or ():
                callback()  # before the table is returned: before any request waits in it
            return table

        return profile.resource(PENDING_KEY, create)

    def when_waiting(self, callback: Callable[[], None]) -> None:
        """``callback()`` once the first profile's pending table is made (now, if one is).

        No request can wait before that, so what only matters while one may
        (withdrawing a turn's waits when it ends) can start there.
        """
        with self._lock:
            later = self._first_table
            if later is not None:
                later.append(callback)
                return
        callback()

    def tables(self) -> dict[str, PendingTable]:
        with self._lock:
            return dict(self._tables)

    def subscribe(self, listener: Listener) -> None:
        """``listener(event, request)`` for every profile's approval events."""
        self._listeners.append(listener)

    def unsubscribe(self, listener: Listener) -> None:
        """Stop calling ``listener`` (a no-op if it was not subscribed)."""
        with contextlib.suppress(ValueError):
            self._listeners.remove(listener)

    def _fan_out(self, event: str, request: PendingApproval) -> None:
        for listener in list(self._listeners):
            try:
                listener(event, request)
            except Exception:
                log.exception("approval listener failed")

    # -- who is prompted --------------------------------------------------------
    def set_prompter(
        self, prompter: Prompter | None, *, profile: str | None = None, session: str | None = None
    ) -> None:
        """Register (or with None, remove) the prompter for interactive turns."""
        key = (profile, session)
        if prompter is None:
            self._prompters.pop(key, None)
        else:
            self._prompters[key] = prompter

    def _prompter_for(self, scope: ProfileScope) -> Prompter | None:
        for key in ((scope.name, scope.session), (scope.name, None), (None, None)):
            if key in self._prompters:
                return self._prompters[key]
        return None

    # -- asking -----------------------------------------------------------------
    def _ask(
        self,
        scope: ProfileScope,
        view: ProfileView,
        command: str,
        parsed: ParsedLine,
        run_id: str | None,
        why: Why,
        record: Callable[..., Decision],
    ) -> Parked:
        """Open (or join) the request; once resolved, ``record(decision, choice, by)``
        rechecks and records its decision (``Gate._conclude``)."""
        table = self.pending(scope.profile)
        request = PendingApproval(
            profile=scope.name,
            session=scope.session,
            turn_id=scope.turn_id,
            command=command,
            display=self.recorder.redact_command(command),
            timeout=view.approvals.timeout,
            context=scope.context.value,
            run_id=run_id,
            key=(scope.name, scope.session, command),
            why=why,
            asked_by=self.asked_by(run_id) if run_id else "",
        )
        request.parent_turns = frozenset(_ancestors(scope))
        leader = table.open(request)
        interrupted = False
        if leader:
            self._metrics.pending.labels(scope.name).inc()
            self._metrics.prompts.labels(scope.name).inc()
            self.always.opened(request, scope, parsed)
            try:
                self._deliver(scope, request)
            except KeyboardInterrupt:  # Ctrl-C as the prompt appeared: the same as at it
                request.cancel("interrupted")
                interrupted = True

        def conclude(resolution: Resolution) -> Decision:
            table.close(request)
            saved = None
            bound: dict[str, dict[str, str]] = {}
            if leader:
                self._metrics.pending.labels(scope.name).dec()
                bound = self.always.bound(request)  # (taken when the prompt opened)
                saved = self.always.closed(request)
                if resolution.answer is not None:
                    approved = resolution.answer.choice is not Choice.DENY
                    self._metrics.answered(scope.name, approved, resolution.waited_ms / 1000)
            decision, choice = self._resolved(scope, view, parsed, resolution, leader, saved, bound)
            by = resolution.answer.by if resolution.answer is not None else None
            # Which prompt it answered: a restart reads it (docs/gateway.md#after-a-crash).
            ids = {"approval_id": request.id, **({"run_id": run_id} if run_id else {})}
            return record(decision, choice, by, extra=ids)

        return Parked(request, conclude, interrupted=interrupted)

    def _deliver(self, scope: ProfileScope, request: PendingApproval) -> None:
        if scope.context is not ContextKind.INTERACTIVE:
            return  # gateway/api: listeners (SSE, /v1/approvals) carry it
        prompter = self._prompter_for(scope)
        try:
            if prompter is None:
                raise PromptUndeliverable("no prompter is registered")
            prompter.deliver(request)
        except PromptUndeliverable as exc:
            request.cancel(f"prompt could not be delivered: {exc}")
        except Exception as exc:  # a raising prompter is "cancelled", never "denied"
            request.cancel(f"prompt callback raised {type(exc).__name__}")

    def _resolved(
        self,
        scope: ProfileScope,
        view: ProfileView,
        parsed: ParsedLine,
        res: Resolution,
        leader: bool,
        saved: list[str] | None = None,
        bound: dict[str, dict[str, str]] | None = None,
    ) -> tuple[Decision, str]:
        if saved is not None:  # an "always" answer saved its rules as it came (Gate.answer)
            return decision_for(res, epoch=view.epoch, timeout=view.approvals.timeout, saved=saved)
        rules = rules_to_save(parsed, res.answer) if res.answer is not None else []
        if leader and rules and res.answer is not None:
            # Followers share the answer; only the leader records the grant.
            if res.answer.choice is Choice.SESSION:
                self.sessions(scope.profile).grant(scope.session, rules)
            else:
                for rule in rules:  # bound to the files it runs (docs/allowlist.md#bindings)
                    bind = (bound or {}).get(rule)
                    if bind is None:  # not one the prompt offered: its files as they are now
                        bind = bindings_for(rule, parsed, scope.cwd)
                    scope.profile.allowlist.grant(rule, bind=bind)  # never raises on a failed write
        return decision_for(res, epoch=view.epoch, timeout=view.approvals.timeout, saved=rules)

    def answer(self, request: PendingApproval, answer: Answer) -> bool:
        """A human's answer to ``request``; False if it was resolved already.

        An ``always`` answer is recorded (fsync) and its rule saved before the
        prompt is settled; raises ``AnswerNotSaved`` (the prompt stays open)
        when either cannot be written (docs/operations.md#what-survives-a-crash).
        """
        return self.always.answer(request, answer)

    # -- ending waits -------------------------------------------------------------
    def cancel_turn(self, scope: ProfileScope) -> None:
        """A turn ended: its waits, and its delegated children's, are withdrawn."""
        table = scope.get_resource(PENDING_KEY)
        if isinstance(table, PendingTable) and len(table):
            table.cancel_where(
                lambda r: r.turn_id == scope.turn_id,
                "the turn ended before the prompt was answered",
            )
            table.cancel_where(lambda r: scope.turn_id in r.parent_turns, "parent delegation ended")

    def reset_session(self, profile: Profile, session: str, cause: str = "session reset") -> int:
        """Drop the session's grants and yolo and cancel its waits (``/new``, ``/reset``)."""
        self.sessions(profile).reset(session)
        return self.pending(profile).cancel_where(lambda r: r.session == session, cause)

    def revoke_grant(self, profile: Profile, session: str, rule: str | None = None) -> bool:
        """Take back one session grant, or (``rule`` None) all its grants and yolo.

        Waiting commands are not cancelled (that is :meth:`reset_session`); a
        parked command the grant had vouched for is re-checked like any revocation.
        True if the session held what was taken back.
        """
        table = self.sessions(profile)
        return table.reset(session) if rule is None else table.revoke(session, rule)

    def cancel_run(self, run_id: str, cause: str = "run cancelled") -> int:
        return sum(
            t.cancel_where(lambda r: r.run_id == run_id, cause) for t in self.tables().values()
        )

    def cancel_all(self, cause: str) -> int:
        return sum(t.cancel_where(lambda r: True, cause) for t in self.tables().values())

    def find(self, approval_id: str) -> PendingApproval | None:
        for table in self.tables().values():
            request = table.get(approval_id)
            if request is not None:
                return request
        return None


def _ancestors(scope: ProfileScope) -> list[str]:
    ids: list[str] = []
    parent = scope.parent
    while parent is not None:
        ids.append(parent.turn_id)
        parent = parent.parent
    return ids
