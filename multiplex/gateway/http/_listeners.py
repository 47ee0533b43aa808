"""Seats for event streams: at most ``gateway.max_listeners_per_profile`` per profile (docs/gateway.md#limits).

Each server-sent-event stream (``/v1/events``, a run's ``/events``) takes a
seat for its caller before its answer starts, and gives it back when its
answer ends however it ends (:func:`sse_response` in ``_http.py`` does both).
A profile's token and the admin token (all admin streams together) each have
their own seats; one more stream than the cap answers 429.

When a burst of streams has closed (the open ones fall at least
:data:`BURST` below the most open since the last time), the seats call their
``on_idle`` once, :data:`SETTLE` seconds later so that the rest of the burst
has closed too: the gateway gives back to the system what the streams'
connections left freed but held (:func:`give_back_memory`;
docs/operations.md#connections-and-streams).
"""

from __future__ import annotations

import ctypes
import gc
import sys
import threading
from collections.abc import Callable

from fastapi import HTTPException

__all__ = ["BURST", "SETTLE", "ListenerSeats", "Seat", "give_back_memory"]

BURST = 64  # streams closed since the peak before the memory they held is given back
SETTLE = 2.0  # seconds from the burst's detection to the give-back: its other streams close

_giving_back = threading.Lock()


def _trim() -> None:
    try:
        # A full collection is the only way to empty the interpreter's free lists
        # (tuples, dicts, lists, floats): blocks kept there pin the pages around them.
        gc.collect()
        if sys.platform == "linux":
            # glibc keeps freed heap pages for the process; malloc_trim returns them.
            ctypes.CDLL(None).malloc_trim(0)
    finally:
        _giving_back.release()


def give_back_memory() -> bool:
    """Collect and return freed heap to the system, in a thread of its own; False if one runs."""
    if not _giving_back.acquire(blocking=False):
        return False
    try:
        threading.Thread(target=_trim, name="multiplex-give-back", daemon=True).start()
    except BaseException:
        _giving_back.release()
        raise
    return True


class Seat:
    """One stream's place; :meth:`release` gives it back (once, however often called)."""

    __slots__ = ("_owner", "_seats")

    def __init__(self, seats: ListenerSeats, owner: str) -> None:
        self._seats: ListenerSeats | None = seats
        self._owner = owner

    def release(self) -> None:
        seats, self._seats = self._seats, None
        if seats is not None:
            seats._release(self._owner)


class ListenerSeats:
    """Open event streams per owner (``profile:NAME`` or ``admin``), thread-safe."""

    def __init__(self, cap: Callable[[], int], on_idle: Callable[[], object] | None = None) -> None:
        self._cap = cap
        self._on_idle = on_idle
        self._lock = threading.Lock()
        self._held: dict[str, int] = {}
        self._total = 0
        self._peak = 0  # the most open since on_idle was last called
        self._settling: threading.Timer | None = None  # on_idle's call, once a burst closed

    def take(self, owner: str) -> Seat:
        """A seat for ``owner``; ``HTTPException`` 429 when it holds the cap already."""
        cap = self._cap()
        with self._lock:
            held = self._held.get(owner, 0)
            if held < cap:
                self._held[owner] = held + 1
                self._total += 1
                self._peak = max(self._peak, self._total)
                return Seat(self, owner)
        who = "the admin token" if owner == "admin" else owner.removeprefix("profile:")
        raise HTTPException(
            status_code=429,
            detail=f"{who} has {held} event streams open "
            f"(gateway.max_listeners_per_profile: {cap}); close one first",
            headers={"Retry-After": "5"},
        )

    def _release(self, owner: str) -> None:
        with self._lock:
            held = self._held.get(owner, 0) - 1
            if held > 0:
                self._held[owner] = held
            else:
                self._held.pop(owner, None)
            self._total -= 1
            burst = self._peak - self._total >= BURST and self._settling is None
            if burst and self._on_idle is not None:
                self._settling = threading.Timer(SETTLE, self._settled)
                self._settling.daemon = True
                self._settling.start()

    def _settled(self) -> None:
        with self._lock:
            self._peak = self._total
            self._settling = None
        if self._on_idle is not None:
            self._on_idle()

    def held(self, owner: str) -> int:
        with self._lock:
            return self._held.get(owner, 0)

    def __len__(self) -> int:
        with self._lock:
            return self._total
