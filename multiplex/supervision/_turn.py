"""``Supervisor.turn(...)``: bind a scope for a block, sync or async (docs/multiplexing.md#the-model)."""

from __future__ import annotations

import os
from collections.abc import Callable
from contextvars import Token
from types import TracebackType
from typing import Protocol

from multiplex.approval._decision import Decision
from multiplex.approval.waiting._parked import Parked
from multiplex.approval.waiting._pending import PendingApproval
from multiplex.execution import RunResult
from multiplex.scopes import (
    ContextKind,
    ProfileScope,
    bind_token,
    previous_of,
    restore,
    unbind_token,
)

__all__ = ["ParkedRun", "Turn", "TurnHost", "draw_turn_id", "new_turn_id", "take_turn_id"]

_IDS_PER_DRAW = 256

# A turn id is 96 random bits (a counter would leak other profiles' activity).
# One getrandom call per 256 turns instead of one per turn: a turn is a few
# microseconds and the system call was a third of it. A draw's ids are cut in C
# (bytes.hex with a separator, then split) into one list that is only ever
# popped and extended in place: list.pop and list.extend are atomic, so no lock
# is on a turn's path; two threads that find it empty each draw, and every id is
# still given once. Forked children draw afresh.
_IDS: list[str] = []
os.register_at_fork(after_in_child=_IDS.clear)
# A turn's own id: the list's pop, a C call (IndexError when empty: then draw_turn_id()).
take_turn_id: Callable[[], str] = _IDS.pop


def draw_turn_id() -> str:
    """Draw the next ids and give one (what a turn calls when ``take_turn_id`` found none)."""
    drawn = os.urandom(12 * _IDS_PER_DRAW).hex(" ", 12)
    ids = ("t-" + drawn.replace(" ", " t-")).split(" ")
    given = ids.pop()
    _IDS.extend(ids)
    return given


def new_turn_id() -> str:
    """A fresh random turn id, ``t-`` and 24 hex digits (never repeats, never guessable)."""
    try:
        return take_turn_id()
    except IndexError:
        return draw_turn_id()


class TurnHost(Protocol):
    """What a turn is opened on (the Supervisor)."""

    _turn_end_hooks: list[Callable[[ProfileScope], None]]

    def _scope_for(
        self, name: str, session: str, context: ContextKind, parent: ProfileScope | None
    ) -> ProfileScope: ...


class Turn:
    """A context manager that binds one turn's scope and restores the previous one.

    The scope is built on entry (at the profile's current epoch). Entering inside
    another turn makes a delegated child: its ``parent`` is the enclosing scope.
    When it ends, each of the host's turn-end hooks (its live list) is called
    with the scope.
    """

    # The host and the arguments one by one: entering calls the host's method
    # straight from this frame (a bound method with *args is a call through C).
    __slots__ = ("_host", "_kind", "_name", "_parent", "_scope", "_session", "_token")

    def __init__(
        self,
        host: TurnHost,
        name: str,
        session: str,
        kind: ContextKind,
        parent: ProfileScope | None,
    ) -> None:
        self._host = host
        self._name = name
        self._session = session
        self._kind = kind
        self._parent = parent
        self._scope: ProfileScope | None = None
        self._token: Token[ProfileScope | None] | None = None

    @property
    def scope(self) -> ProfileScope | None:
        return self._scope

    def __enter__(self) -> ProfileScope:
        scope = self._scope = self._host._scope_for(
            self._name, self._session, self._kind, self._parent
        )
        self._token = bind_token(scope)
        return scope

    def suspend(self) -> None:
        """Unbind the scope from this context but keep the turn open (a parked run)."""
        if self._token is not None:
            restore(previous_of(self._token))

    def rebind(self) -> None:
        """Bind the open turn's scope again, in whatever thread resumes it."""
        if self._scope is not None:
            self._token = bind_token(self._scope)

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        token = self._token
        if token is not None:
            try:
                unbind_token(token)
            except (ValueError, RuntimeError):
                # Ended in another context than it was bound in (or after a
                # suspend there): put back what the bind replaced, as set would.
                restore(previous_of(token))
        scope = self._scope
        if scope is not None:
            self._scope = None
            for hook in self._host._turn_end_hooks:
                hook(scope)

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
