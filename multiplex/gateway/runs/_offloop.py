"""Run short blocking calls off the event loop at the least cost per call.

The gate's pure checks (``POST /v1/approvals/test``) take tens of microseconds
for an ordinary line but may take far longer for a pathological one, so they
never run on the event loop. A general executor hop (``run_in_executor``:
a concurrent future, a wrapper future, their callbacks) costs more than the
check itself; here a call is one ``SimpleQueue.put``, a worker, and one
``call_soon_threadsafe`` back.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import queue
import threading
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["OffLoop"]

T = TypeVar("T")
_Job = tuple[Callable[..., Any], tuple[Any, ...], asyncio.AbstractEventLoop, "asyncio.Future[Any]"]
_STOP = None


def _settle(future: asyncio.Future[Any], value: Any, error: BaseException | None) -> None:
    if future.cancelled():
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(value)


class OffLoop:
    """``await pool.call(fn, *args)``: ``fn(*args)`` in one of ``workers`` daemon threads."""

    def __init__(self, workers: int = 2, name: str = "multiplex-gate") -> None:
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._closed = False
        self._threads = [
            threading.Thread(target=self._work, name=f"{name}_{i}", daemon=True)
            for i in range(workers)
        ]
        for thread in self._threads:
            thread.start()

    async def call(self, fn: Callable[..., T], *args: Any) -> T:
        """The result of ``fn(*args)`` run in a worker (in a copy of the caller's context)."""
        if self._closed:
            raise RuntimeError("the gateway is shutting down")
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        context = contextvars.copy_context()
        self._jobs.put((context.run, (fn, *args), loop, future))
        return await future

    def _work(self) -> None:
        while (job := self._jobs.get()) is not _STOP:
            fn, args, loop, future = job
            value: Any = None
            error: BaseException | None = None
            try:
                value = fn(*args)
            except BaseException as exc:  # handed to the awaiting request, never lost
                error = exc
            with contextlib.suppress(RuntimeError):  # the loop closed: nobody awaits it
                loop.call_soon_threadsafe(_settle, future, value, error)

    def close(self) -> None:
        """Stop the workers after the calls already queued."""
        self._closed = True
        for _ in self._threads:
            self._jobs.put(_STOP)
