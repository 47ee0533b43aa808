"""A command's output events held a moment on a cluster node, to share a write (docs/cluster.md#cost).

Each ``command.output`` event sent to the shared stream on its own costs a Redis
round trip. :class:`Lingering` holds a run's output events for at most
:data:`LINGER_S`: if the run's next event (its ``command.finished``, most often)
comes first, they go out in front of it in the same write; otherwise one thread,
the hub's for its lifetime, sends them when the time is up. A run's events reach
the stream in the order they were published: the held ones and the event that
takes them are sent under the run's own lock, which the timed send takes too.
"""

from __future__ import annotations

import heapq
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from multiplex.gateway.events._event import Event

__all__ = ["LINGER_S", "Lingering"]

log = logging.getLogger("multiplex.cluster")

# As long as a busy shared stream gathers between two reads (docs/cluster.md#cost):
# a client following the output sees it no later than it would anyway.
LINGER_S = 0.02


@dataclass(slots=True)
class _Held:
    """One run's output events waiting, and the lock its sends are made under."""

    events: list[Event] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


class Lingering:
    """Output events held per run; ``send(events)`` writes a batch (the hub's)."""

    def __init__(self, send: Callable[[list[Event]], None]) -> None:
        self._send = send
        self._held: dict[str, _Held] = {}
        self._due: list[tuple[float, str]] = []  # (deadline, run id), a heap
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None
        self._closed = False

    def hold(self, event: Event) -> bool:
        """Hold ``event`` (its run's); False once closed (the caller sends it itself)."""
        assert event.run_id is not None
        with self._cond:
            if self._closed:
                return False
            held = self._held.get(event.run_id)
            if held is None:
                held = self._held[event.run_id] = _Held()
            held.events.append(event)
            if len(held.events) == 1:  # the first since the last send: time it
                heapq.heappush(self._due, (time.monotonic() + LINGER_S, event.run_id))
                if self._thread is None:
                    self._thread = threading.Thread(
                        target=self._run, name="multiplex-output-linger", daemon=True
                    )
                    self._thread.start()
                self._cond.notify()
        return True

    def send_with(self, events: list[Event]) -> None:
        """Send ``events`` (all of one run, or none with a run), after that run's held ones."""
        run_id = events[-1].run_id if events else None
        held = self._held.get(run_id) if run_id is not None else None
        if run_id is None or held is None:
            self._send(events)
            return
        with held.lock:
            self._send([*self._take(held), *events])
        self._forget(run_id, held)

    def _take(self, held: _Held) -> list[Event]:
        with self._cond:
            events, held.events = held.events, []
        return events

    def _forget(self, run_id: str, held: _Held) -> None:
        with self._cond:
            if not held.events and self._held.get(run_id) is held:
                del self._held[run_id]

    def _flush(self, run_id: str) -> None:
        held = self._held.get(run_id)
        if held is None:
            return
        with held.lock:
            events = self._take(held)
            if events:
                self._send(events)
        self._forget(run_id, held)

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._closed and (not self._due or self._due[0][0] > time.monotonic()):
                    self._cond.wait(self._due[0][0] - time.monotonic() if self._due else None)
                if self._closed:
                    return
                _, run_id = heapq.heappop(self._due)
            try:
                self._flush(run_id)
            except Exception:  # a send that failed must not end the thread: log, go on
                log.exception("sending held command output of %s failed", run_id)

    def close(self) -> None:
        """Send everything held now; later events are not held."""
        with self._cond:
            self._closed = True
            self._cond.notify()
            runs = list(self._held)
        if self._thread is not None:
            self._thread.join(5)
        for run_id in runs:
            self._flush(run_id)
