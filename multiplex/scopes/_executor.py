"""Carry the submitter's scope into threads (docs/multiplexing.md#the-model)."""

from __future__ import annotations

import contextvars
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import ParamSpec, TypeVar

__all__ = ["ScopedExecutor", "run_in_scope"]

P = ParamSpec("P")
R = TypeVar("R")


class ScopedExecutor(ThreadPoolExecutor):
    """A ThreadPoolExecutor whose tasks run in a copy of the SUBMITTER's context.

    The copy is taken at submit time, so a task sees the scope of the turn that
    submitted it, never the scope of whatever turn last used the worker thread.
    ``map`` goes through ``submit`` and is covered too.
    """

    def submit(self, fn: Callable[P, R], /, *args: P.args, **kwargs: P.kwargs) -> Future[R]:
        context = contextvars.copy_context()

        def call() -> R:
            return context.run(fn, *args, **kwargs)

        return super().submit(call)


def run_in_scope(fn: Callable[..., R], *args: object, **kwargs: object) -> Callable[..., R]:
    """A callable that runs ``fn`` in a copy of the current context.

    For executors and threads multiplex does not create. Each call runs in its
    own fresh copy, so the callable may be invoked concurrently.
    """
    context = contextvars.copy_context()

    def bound(*more: object, **more_kw: object) -> R:
        return context.copy().run(fn, *args, *more, **kwargs, **more_kw)

    bound.__name__ = getattr(fn, "__name__", "bound")
    bound.__doc__ = fn.__doc__
    return bound
