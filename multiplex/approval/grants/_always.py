"""A human's "always" answer, kept on disk before it is acknowledged (docs/operations.md#what-survives-a-crash).

An answer over HTTP settles a prompt at once, but the parked run resumes (and
its decision is recorded) later, in a worker. Were the rule written only then,
or only the rule and no record, a crash in between would lose the audit trail
of an acknowledged answer. So an ``always`` answer is, in this order and before
the prompt is settled: recorded (``kind: answer``, who, choice, rule; fsync),
its rule written to ``config.yaml``, then the prompt answered. When either
write fails the prompt stays open and the caller gets :class:`AnswerNotSaved`
(the gateway answers 507), never ``{"ok": true}``.
"""

from __future__ import annotations

import errno
import threading
from dataclasses import dataclass

from multiplex._errors import RuleSyntaxError
from multiplex.approval.grants._bound_files import bindings_for
from multiplex.approval.records._records import DecisionRecorder
from multiplex.approval.waiting._answers import rules_to_save
from multiplex.approval.waiting._pending import Answer, Choice, PendingApproval
from multiplex.scopes import ProfileScope
from multiplex.shell import ParsedLine

__all__ = ["AlwaysAnswers", "AnswerNotSaved"]

_FULL = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)


class AnswerNotSaved(OSError):
    """An ``always`` answer whose record or rule could not be written; the prompt is still open."""

    def __str__(self) -> str:
        return str(self.strerror)

    @property
    def disk_full(self) -> bool:
        """The filesystem had no room (HTTP 507), rather than another failure (500)."""
        return self.errno in _FULL


@dataclass(frozen=True, slots=True)
class _Asked:
    scope: ProfileScope
    parsed: ParsedLine
    # The files each rule it may save runs, hashed when the prompt opened: what the human
    # was shown is what the rule holds for (docs/allowlist.md#bindings), not the file as
    # an agent may have changed it before the answer came.
    bound: dict[str, dict[str, str]]


def bound_at_prompt(
    request: PendingApproval, scope: ProfileScope, parsed: ParsedLine
) -> dict[str, dict[str, str]]:
    """The bindings of the rules an "always" answer to ``request`` may save, taken now."""
    rules = rules_to_save(parsed, Answer(Choice.ALWAYS))
    rules += [s.rule for s in request.why.suggestions if not s.redacted and s.rule not in rules]
    bound: dict[str, dict[str, str]] = {}
    for rule in rules:
        try:
            bound[rule] = bindings_for(rule, parsed, scope.cwd)
        except (OSError, RuleSyntaxError):
            continue  # taken at the answer instead, as before
    return bound


class AlwaysAnswers:
    """The gate's open prompts that an ``always`` answer may save a rule for."""

    def __init__(self, recorder: DecisionRecorder) -> None:
        self._recorder = recorder
        self._lock = threading.Lock()  # one answer at a time: check open, save, settle
        self._asked: dict[str, _Asked] = {}
        self._saved: dict[str, list[str]] = {}

    def opened(self, request: PendingApproval, scope: ProfileScope, parsed: ParsedLine) -> None:
        """``request`` leads a prompt of ``scope`` about ``parsed``."""
        bound = bound_at_prompt(request, scope, parsed)
        with self._lock:
            self._asked[request.id] = _Asked(scope, parsed, bound)

    def bound(self, request: PendingApproval) -> dict[str, dict[str, str]]:
        """The bindings taken when ``request``'s prompt opened (empty if none were)."""
        with self._lock:
            asked = self._asked.get(request.id)
        return asked.bound if asked is not None else {}

    def closed(self, request: PendingApproval) -> list[str] | None:
        """Forget ``request``; the rules its answer already saved, or None if none was."""
        with self._lock:
            self._asked.pop(request.id, None)
            return self._saved.pop(request.id, None)

    def answer(self, request: PendingApproval, answer: Answer) -> bool:
        """Settle ``request`` (its leader, for a follower); False if it was resolved already.

        Raises :class:`AnswerNotSaved` when an ``always`` answer cannot be kept.
        """
        target = request.leader or request
        with self._lock:
            asked = self._asked.get(target.id)
            if answer.choice is not Choice.ALWAYS or asked is None:
                return target.answer(answer)
            # Held while the rule is saved: a timeout or cancel meanwhile comes after the
            # answer, never between the saved rule and its acknowledgement.
            if not target.claim():
                return False
            try:
                rules = rules_to_save(asked.parsed, answer)
                if rules:
                    self._keep(target, asked, answer, rules)
                    self._saved[target.id] = rules
                return target.answer_claimed(answer)
            finally:
                target.release()

    def _keep(
        self, request: PendingApproval, asked: _Asked, answer: Answer, rules: list[str]
    ) -> None:
        scope = asked.scope
        try:
            self._recorder.record_answer(
                profile=scope.name,
                home=scope.home,
                session=scope.session,
                turn_id=scope.turn_id,
                context=scope.context.value,
                command=request.command,
                approval_id=request.id,
                choice=answer.choice.value,
                by=answer.by,
                rules=rules,
            )
        except OSError as exc:
            raise AnswerNotSaved(exc.errno, f"cannot record the answer: {exc.strerror}") from exc
        try:
            for rule in rules:  # bound to the workspace files it runs (docs/allowlist.md#bindings)
                bind = asked.bound.get(rule)
                if bind is None:  # a rule typed at the answer: its files as they are now
                    bind = bindings_for(rule, asked.parsed, scope.cwd)
                scope.profile.allowlist.grant_saved(rule, bind=bind)
        except OSError as exc:
            where = scope.profile.allowlist.config_path
            why = f"cannot save the rule to {where}: {exc.strerror or exc}"
            raise AnswerNotSaved(exc.errno, why) from exc
        except Exception as exc:  # a lock timeout, a config.yaml that no longer parses
            why = f"cannot save the rule to {scope.profile.allowlist.config_path}: {exc}"
            raise AnswerNotSaved(errno.EIO, why) from exc
