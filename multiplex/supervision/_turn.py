"""``Supervisor.turn(...)``: bind a scope for a block, sync or async (docs/multiplexing.md#the-model)."""

from __future__ import annotations

from collections.abc import Callable
from types import TracebackType

from multiplex.scopes import ContextKind, ProfileScope, bind, restore

__all__ = ["Turn"]


class Turn:
    """A context manager that binds one turn's scope and restores the previous one.

    The scope is built on entry (at the profile's current epoch). Entering inside
    another turn makes a delegated child: its ``parent`` is the enclosing scope.
    """

    __slots__ = ("_args", "_build", "_ended", "_previous", "_scope")

    def __init__(
        self,
        build: Callable[[str, str, ContextKind, ProfileScope | None], ProfileScope],
        args: tuple[str, str, ContextKind, ProfileScope | None],
        ended: Callable[[ProfileScope], None],
    ) -> None:
        self._build = build
        self._args = args
        self._ended = ended
        self._scope: ProfileScope | None = None
        self._previous: ProfileScope | None = None

    @property
    def scope(self) -> ProfileScope | None:
        return self._scope

    def __enter__(self) -> ProfileScope:
        scope = self._build(*self._args)
        self._previous = bind(scope)
        self._scope = scope
        return scope

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
