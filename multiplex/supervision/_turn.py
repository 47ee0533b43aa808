"""``Supervisor.turn(...)``: bind a scope for a block, sync or async (docs/multiplexing.md#the-model)."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from types import TracebackType

from multiplex.approval._decision import Decision
from multiplex.approval.waiting._parked import Parked
from multiplex.approval.waiting._pending import PendingApproval
from multiplex.execution import RunResult
from multiplex.scopes import ContextKind, ProfileScope, bind, restore

__all__ = ["ParkedRun", "Turn", "new_turn_id"]

_IDS_PER_DRAW = 256


class _TurnIds:
    # A turn id is 96 random bits (a counter would leak other profiles' activity).
    # One getrandom call per 256 turns instead of one per turn: a turn is a few
    # microseconds and the system call was a third of it. Forked children draw afresh.
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._hex = ""
        self._at = 0

    def reset(self) -> None:
        self._hex, self._at = "", 0

    def next(self) -> str:
        with self._lock:
            at = self._at
            if at >= len(self._hex):
                self._hex, at = os.urandom(12 * _IDS_PER_DRAW).hex(), 0
            self._at = at + 24
            return "t-" + self._hex[at : at + 24]


_TURN_IDS = _TurnIds()
os.register_at_fork(after_in_child=_TURN_IDS.reset)


def new_turn_id() -> str:
    """A fresh random turn id, ``t-`` and 24 hex digits (never repeats, never guessable)."""
    return _TURN_IDS.next()


class Turn:
    """A context manager that binds one turn's scope and restores the previous one.

    The scope is built on entry (at the profile's current epoch). Entering inside
    another turn makes a delegated child: its ``parent`` is the enclosing scope.
    """

    __slots__ = (
        "_build",
        "_context",
        "_ended",
        "_name",
        "_parent",
        "_previous",
        "_scope",
        "_session",
    )

    def __init__(
        self,
        build: Callable[[str, str, ContextKind, ProfileScope | None], ProfileScope],
        args: tuple[str, str, ContextKind, ProfileScope | None],
        ended: Callable[[ProfileScope], None],
    ) -> None:
        self._build = build
        self._name, self._session, self._context, self._parent = args
        self._ended = ended
        self._scope: ProfileScope | None = None
        self._previous: ProfileScope | None = None

    @property
    def scope(self) -> ProfileScope | None:
        return self._scope

    def __enter__(self) -> ProfileScope:
        scope = self._build(self._name, self._session, self._context, self._parent)
        self._previous = bind(scope)
        self._scope = scope
        return scope

    def suspend(self) -> None:
        """Unbind the scope from this context but keep the turn open (a parked run)."""
        restore(self._previous)

    def rebind(self) -> None:
        """Bind the open turn's scope again, in whatever thread resumes it."""
        if self._scope is not None:
            self._previous = bind(self._scope)

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        restore(self._previous)
        scope, self._scope = self._scope, None
        if scope is not None:
            self._ended(scope)

    async def __aenter__(self) -> ProfileScope:
        return self.__enter__()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.__exit__(exc_type, exc, tb)


class ParkedRun:
    """A command of ``Supervisor.run_or_park`` waiting for a human, its turn kept open.

    Nothing waits in a thread: ``when_settled(callback)`` is called once the
    request is answered, cancelled or times out, then :meth:`resume` (in any
    thread) rebinds the turn's scope, decides, runs the command if approved
    and ends the turn. :meth:`abandon` ends it without running anything.
    """

    def __init__(
        self,
        turn: Turn,
        scope: ProfileScope,
        parked: Parked,
        execute: Callable[[Decision], RunResult],
    ) -> None:
        self.scope = scope
        self._turn = turn
        self._parked = parked
        self._execute = execute

    @property
    def request(self) -> PendingApproval:
        return self._parked.request

    def when_settled(self, callback: Callable[[], None]) -> None:
        """``callback()`` once settled, from the resolving thread: hand off, never block."""
        self._parked.when_settled(callback)

    def resume(self) -> RunResult:
        """Decide (recheck, record) and, when approved, run the command in its scope."""
        self._turn.rebind()
        try:
            return self._execute(self._parked.finish())
        finally:
            self._turn.__exit__(None, None, None)

    def abandon(self) -> None:
        """End the turn without running the command (shutdown after the grace period)."""
        self._parked.request.cancel("supervisor shutting down")
        self._turn.rebind()
        try:
            self._parked.finish()
        finally:
            self._turn.__exit__(None, None, None)
