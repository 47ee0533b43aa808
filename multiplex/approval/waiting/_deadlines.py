"""One timer thread for the timeouts of every parked approval (docs/gateway.md#limits).

A run parked on a human holds no thread, so nothing sits in ``Event.wait``
to notice that ``approvals.timeout`` passed. :data:`DEADLINES` calls each
registered callback once at its monotonic deadline, from a single daemon
thread, however many waits are parked. Callbacks are held weakly through the
object they belong to: a request settled early is simply forgotten.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import threading
import time
import weakref
from typing import Protocol

__all__ = ["DEADLINES", "Deadlines", "Expiring"]

log = logging.getLogger("multiplex.approval")


class Expiring(Protocol):
    """Something with an ``expire()`` to call once its deadline passes."""

    def expire(self) -> None: ...


class Deadlines:
    """Calls ``target.expire()`` at a monotonic time, from one daemon thread."""

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, weakref.ref[Expiring]]] = []
        self._seq = itertools.count()
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None

    def call_at(self, when: float, target: Expiring) -> None:
        """Call ``target.expire()`` at ``time.monotonic() >= when`` (unless it is gone)."""
        with self._cond:
            heapq.heappush(self._heap, (when, next(self._seq), weakref.ref(target)))
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._loop, name="multiplex-deadlines", daemon=True
                )
                self._thread.start()
            self._cond.notify()  # the new deadline may be the earliest

    def __len__(self) -> int:
        with self._cond:
            return len(self._heap)

    def _due(self) -> list[weakref.ref[Expiring]]:
        with self._cond:
            while True:
                now = time.monotonic()
                if self._heap and self._heap[0][0] <= now:
                    due = []
                    while self._heap and self._heap[0][0] <= now:
                        due.append(heapq.heappop(self._heap)[2])
                    return due
                self._cond.wait(None if not self._heap else self._heap[0][0] - now)

    def _loop(self) -> None:
        while True:
            for ref in self._due():
                target = ref()
                if target is None:
                    continue
                try:
                    target.expire()
                except Exception:  # one failing callback never stops the others' timeouts
                    log.exception("an approval deadline callback failed")


DEADLINES = Deadlines()
