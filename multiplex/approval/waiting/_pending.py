"""Approval requests that wait for a human, and every way a wait ends (docs/approvals.md#outcomes-and-what-the-agent-sees, docs/approvals.md#sessions).

A request is resolved exactly once: answered (once/session/always/deny),
cancelled with a cause (nobody answered), or timed out. Identical concurrent
requests in one session are coalesced: followers wait on the leader and get
its resolution, cancellation cause included.
"""

from __future__ import annotations

import enum
import secrets
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from multiplex.approval.waiting._why import Why, visible

__all__ = [
    "Answer",
    "Arbiter",
    "Choice",
    "PendingApproval",
    "PendingTable",
    "Resolution",
    "command_block",
]


def command_block(text: str, indent: str = "    ") -> str:
    """A command as a prompt shows it: each of its lines indented (a line of its own can
    never pass for the prompt's ``where:`` or ``why:``), its control characters escaped."""
    return "\n".join(indent + visible(line) for line in text.split("\n"))


class Choice(enum.StrEnum):
    """A human's answer to an approval request."""

    ONCE = "once"
    SESSION = "session"
    ALWAYS = "always"
    DENY = "deny"


@dataclass(frozen=True, slots=True)
class Answer:
    """What the approver said; ``rule`` is the prefix chosen for ``always``/``session``."""

    choice: Choice
    rule: str | None = None
    reason: str | None = None
    by: str = "user"


@dataclass(frozen=True, slots=True)
class Resolution:
    """How a wait ended: exactly one of ``answer``, ``cancelled`` or ``timed_out``."""

    answer: Answer | None = None
    cancelled: str | None = None
    timed_out: bool = False
    waited_ms: int = 0


# docs/security.md#tokens-and-ids: 96 random bits, no counter a profile could read
# the other profiles' approval counts from.
_ID_BYTES = 12

# Consulted before a leader's wait ends (docs/cluster.md#approvals): given the
# resolution this process proposes, returns the one that actually won.
Arbiter = Callable[["PendingApproval", Resolution], Resolution]


class PendingApproval:
    """One open approval request of one profile's session."""

    def __init__(
        self,
        *,
        profile: str,
        session: str,
        turn_id: str,
        command: str,
        display: str,
        timeout: float,
        context: str,
        run_id: str | None,
        key: tuple[str, str, str],
        why: Why | None = None,
        asked_by: str = "",
    ) -> None:
        self.id = f"ap-{secrets.token_hex(_ID_BYTES)}"
        self.profile = profile
        self.session = session
        self.turn_id = turn_id
        self.command = command
        self.display = display  # redacted text shown to approvers
        self.context = context
        self.run_id = run_id
        self.key = key
        self.why = why or Why()
        # docs/approvals.md#what-a-prompt-shows: the client or token whose run asked ("" if none).
        self.asked_by = asked_by
        self.created_at = time.time()
        self.expires_at = self.created_at + timeout
        self.parent_turns: frozenset[str] = frozenset()
        # Coalescing: a follower waits on its own object (so its turn, run or
        # session can withdraw it alone) but shares the leader's answer.
        self.leader: PendingApproval | None = None
        self._followers: list[PendingApproval] = []
        self._started = time.monotonic()
        self._timeout = timeout
        self._done = threading.Event()
        self._lock = threading.Lock()
        self._resolution: Resolution | None = None
        self.arbiter: Arbiter | None = None
        self.shared = False  # registered in the cluster already (docs/cluster.md#approvals)
        self._settled: list[Callable[[], None]] = []
        self._claimed = False  # an answer is being saved: other endings wait for it
        self._deferred: tuple[Resolution, bool] | None = None  # an ending that waits, decided

    @property
    def open(self) -> bool:
        return not self._done.is_set()

    @property
    def resolution(self) -> Resolution | None:
        return self._resolution

    def _resolve(
        self, resolution: Resolution, *, decided: bool = False, claimed: bool = False
    ) -> bool:
        if self._resolution is not None:
            return False
        if self._claimed and not claimed:
            with self._lock:
                if self._claimed and self._resolution is None:
                    # An answer is being saved: this ending comes after it, if still due.
                    self._deferred = self._deferred or (resolution, decided)
                    return False
        if self.arbiter is not None and not decided and self.leader is None:
            resolution = self.arbiter(self, resolution)
        with self._lock:
            if self._resolution is not None:
                return False
            waited = int((time.monotonic() - self._started) * 1000)
            self._resolution = Resolution(
                resolution.answer, resolution.cancelled, resolution.timed_out, waited
            )
            followers, self._followers = self._followers, []
            settled, self._settled = self._settled, []
        self._done.set()
        for follower in followers:  # a cancelled leader cancels them with the same cause
            follower._resolve(resolution)
        for callback in settled:
            callback()
        return True

    @property
    def deadline(self) -> float:
        """When ``approvals.timeout`` passes (``time.monotonic()`` clock)."""
        return self._started + self._timeout

    def when_settled(self, callback: Callable[[], None]) -> None:
        """Call ``callback()`` once, right after the request is resolved (at once if it is).

        It runs in whichever thread resolves the request (an answer, a cancel,
        the deadline timer), so it must only hand work off, never block.
        """
        with self._lock:
            if self._resolution is None:
                self._settled.append(callback)
                return
        callback()

    def claim(self) -> bool:
        """Hold the open request while an answer is saved (an ``always`` rule written
        before it is acknowledged): a timeout, cancel or other answer meanwhile waits, and
        applies at :meth:`release` only if the held answer was not given. False if the
        request is resolved or held already."""
        with self._lock:
            if self._resolution is not None or self._claimed:
                return False
            self._claimed = True
            return True

    def answer_claimed(self, answer: Answer) -> bool:
        """The held answer (after :meth:`claim`)."""
        return self._resolve(Resolution(answer=answer), claimed=True)

    def release(self) -> None:
        """End the hold; an ending that waited applies now if the request is still open."""
        with self._lock:
            self._claimed = False
            deferred, self._deferred = self._deferred, None
        if deferred is not None:
            self._resolve(deferred[0], decided=deferred[1])

    def expire(self) -> None:
        """``approvals.timeout`` passed: time out the wait (and a shared prompt with it)."""
        if not self.open:
            return
        if self.leader is not None:
            self.leader.expire()  # the shared prompt timed out for every run waiting on it
        self._resolve(Resolution(timed_out=True))

    def follow(self, leader: PendingApproval) -> None:
        """Share ``leader``'s resolution (an identical prompt already open)."""
        self.leader = leader
        self._started, self._timeout = leader._started, leader._timeout
        self.expires_at = leader.expires_at
        with leader._lock:
            if leader._resolution is None:
                leader._followers.append(self)
                return
        self._resolve(leader._resolution)

    def answer(self, answer: Answer) -> bool:
        """Record a human's answer; False if the request was already resolved.

        Answering a follower answers the shared prompt (its leader).
        """
        if self.leader is not None:
            return self.leader.answer(answer)
        return self._resolve(Resolution(answer=answer))

    def cancel(self, cause: str) -> bool:
        """End the wait with nobody having answered; the cause says why."""
        return self._resolve(Resolution(cancelled=cause))

    def settle(self, resolution: Resolution) -> bool:
        """Apply a resolution already decided elsewhere (the cluster's stored winner).

        The arbiter is not consulted; False if the request was already resolved.
        """
        return self._resolve(resolution, decided=True)

    def wait(self) -> Resolution:
        """Block until resolved or ``approvals.timeout`` passes."""
        remaining = self._timeout - (time.monotonic() - self._started)
        if not self._done.wait(max(0.0, remaining)):
            self._resolve(Resolution(timed_out=True))
            self._done.wait()  # held by an answer being saved: settled when the hold ends
        resolution = self._resolution
        assert resolution is not None
        return resolution

    def as_dict(self) -> dict[str, object]:
        return {
            "approval_id": self.id,
            "profile": self.profile,
            "session": self.session,
            "run_id": self.run_id,
            "command": self.display,
            "context": self.context,
            "asked_by": self.asked_by,
            "created_at": self.created_at,
            "expires_at": self.expires_at,
            **self.why.as_dict(),
        }


Listener = Callable[[str, PendingApproval], None]


class PendingTable:
    """The open approval requests of ONE profile (a per-profile resource)."""

    def __init__(self, profile: str) -> None:
        self.profile = profile
        self._lock = threading.Lock()
        self._open: dict[str, PendingApproval] = {}
        self._by_key: dict[tuple[str, str, str], PendingApproval] = {}
        self._listeners: list[Listener] = []
        self.arbiter: Arbiter | None = None  # given to every request it opens
        # In a cluster: the identical open prompt of another node to follow, or None
        # (then this one leads everywhere). Called outside the lock (it asks Redis).
        self.coalescer: Callable[[PendingApproval], PendingApproval | None] | None = None

    def subscribe(self, listener: Listener) -> None:
        """``listener(event, request)`` for approval.request / .resolved / .cancelled."""
        self._listeners.append(listener)

    def _emit(self, event: str, request: PendingApproval) -> None:
        for listener in list(self._listeners):
            listener(event, request)

    def open(self, request: PendingApproval) -> bool:
        """Register ``request``; True if it leads, False if it follows an identical open one.

        A leader is announced as ``approval.request``; a follower as
        ``approval.joined`` (its ``leader`` is the prompt a human sees).
        """
        request.arbiter = self.arbiter
        with self._lock:
            leader = self._by_key.get(request.key)
            self._open[request.id] = request
            if leader is not None and leader.open:
                request.follow(leader)
            else:
                self._by_key[request.key] = request
                leader = None
        if leader is None and self.coalescer is not None:
            # Another node's identical prompt leads: this one (and any local
            # follower it already has) shares its answer.
            leader = self.coalescer(request)
            if leader is not None:
                request.follow(leader)
        self._emit("approval.request" if leader is None else "approval.joined", request)
        return leader is None

    def close(self, request: PendingApproval) -> None:
        """Forget a resolved request and tell listeners how it ended."""
        with self._lock:
            self._open.pop(request.id, None)
            if self._by_key.get(request.key) is request:
                del self._by_key[request.key]
        resolution = request.resolution
        if resolution is not None and resolution.answer is not None:
            self._emit("approval.resolved", request)
        else:
            self._emit("approval.cancelled", request)

    def get(self, approval_id: str) -> PendingApproval | None:
        return self._open.get(approval_id)

    def list_open(self) -> list[PendingApproval]:
        """The open prompts (leaders; followers share their leader's prompt)."""
        with self._lock:
            return [r for r in self._open.values() if r.open and r.leader is None]

    def __len__(self) -> int:
        return len(self._open)

    def cancel_where(self, predicate: Callable[[PendingApproval], bool], cause: str) -> int:
        """Cancel every open request matching ``predicate``; return how many."""
        targets: Iterable[PendingApproval]
        with self._lock:
            targets = [r for r in self._open.values() if predicate(r)]
        return sum(1 for r in targets if r.cancel(cause))
