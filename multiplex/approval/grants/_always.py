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


class AlwaysAnswers:
    """The gate's open prompts that an ``always`` answer may save a rule for."""

    def __init__(self, recorder: DecisionRecorder) -> None:
        self._recorder = recorder
        self._lock = threading.Lock()  # one answer at a time: check open, save, settle
        self._asked: dict[str, _Asked] = {}
        self._saved: dict[str, list[str]] = {}

    def opened(self, request: PendingApproval, scope: ProfileScope, parsed: ParsedLine) -> None:
        """``request`` leads a prompt of ``scope`` about ``parsed``."""
        with self._lock:
            self._asked[request.id] = _Asked(scope, parsed)

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
                bind = bindings_for(rule, asked.parsed, scope.cwd)
                scope.profile.allowlist.grant_saved(rule, bind=bind)
        except OSError as exc:
            where = scope.profile.allowlist.config_path
            why = f"cannot save the rule to {where}: {exc.strerror or exc}"
            raise AnswerNotSaved(exc.errno, why) from exc
        except Exception as exc:  # a lock timeout, a config.yaml that no longer parses
            why = f"cannot save the rule to {scope.profile.allowlist.config_path}: {exc}"
            raise AnswerNotSaved(errno.EIO, why) from exc
