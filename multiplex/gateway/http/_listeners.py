"""Seats for event streams: at most ``gateway.max_listeners_per_profile`` per profile (docs/gateway.md#limits).

Each server-sent-event stream (``/v1/events``, a run's ``/events``) takes a
seat for its caller before its answer starts, and gives it back when its
answer ends however it ends (:func:`sse_response` in ``_http.py`` does both).
A profile's token and the admin token (all admin streams together) each have
their own seats; one more stream than the cap answers 429.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from fastapi import HTTPException

__all__ = ["ListenerSeats", "Seat"]


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

    def __init__(self, cap: Callable[[], int]) -> None:
        self._cap = cap
        self._lock = threading.Lock()
        self._held: dict[str, int] = {}
        self._total = 0

    def take(self, owner: str) -> Seat:
        """A seat for ``owner``; ``HTTPException`` 429 when it holds the cap already."""
        cap = self._cap()
        with self._lock:
            held = self._held.get(owner, 0)
            if held < cap:
                self._held[owner] = held + 1
                self._total += 1
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

    def held(self, owner: str) -> int:
        with self._lock:
            return self._held.get(owner, 0)

    def __len__(self) -> int:
        with self._lock:
            return self._total
