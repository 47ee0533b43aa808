"""When a grant stops approving: its expiry passes, or its last use is taken (docs/allowlist.md#when-a-grant-ends).

An expired or spent grant stops approving at once: the rules in effect are
computed against the clock at every decision. :class:`GrantEndings` makes that
moment visible as a hand revocation is: one INFO line naming the file and the
rule, and its owner told through :attr:`GrantEndings.on_ended` (the supervisor counts it in
``multiplex_grants_ended_total`` and ``multiplex_revocation_latency_seconds``).
An expiry is found by :meth:`GrantEndings.due`, which the owner's timer calls at
the time :meth:`GrantEndings.grants_changed` asked it to (the earliest expiry
still ahead); a spent grant is told by the store as it writes the last use.
Each ending is told once in a process; a grant that had ended before the
process first read it is not told at all.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from multiplex.profiles.allowlist._grants import GrantText

__all__ = ["GrantEnded", "GrantEndings"]

log = logging.getLogger("multiplex.profiles")


@dataclass(frozen=True, slots=True)
class GrantEnded:
    """One grant that stopped approving, and when (its expiry, or the last use's time)."""

    path: Path
    rule: str
    reason: Literal["expired", "spent"]
    at: float


class GrantEndings:
    """The endings of one store's grants: found, logged once, told to the owner."""

    def __init__(self, path: Path, clock: Callable[[], float]) -> None:
        self._path = path
        self._clock = clock
        self._lock = threading.Lock()
        self._checked = clock()  # expiries up to here are told (or were past at start)
        self._scheduled: float | None = None  # the expiry the timer was asked to call at
        # Set by the owner (the supervisor): told each ending; asked to call due() at a time.
        self.on_ended: Callable[[GrantEnded], None] | None = None
        self.schedule: Callable[[float], None] | None = None

    def next_expiry(self, grants: Iterable[GrantText]) -> float | None:
        """The earliest expiry not told yet of a grant with a use left, or None."""
        with self._lock:
            checked = self._checked
        ahead = [
            g.expires.timestamp()
            for g in grants
            if g.expires is not None and g.uses != 0 and g.expires.timestamp() > checked
        ]
        return min(ahead, default=None)

    def grants_changed(self, grants: Iterable[GrantText]) -> None:
        """The store's entries changed: ask the timer for an earlier expiry if there is one."""
        schedule = self.schedule
        if schedule is None:
            return
        earliest = self.next_expiry(grants)
        with self._lock:
            if earliest is None or (self._scheduled is not None and self._scheduled <= earliest):
                return
            self._scheduled = earliest
        schedule(earliest)

    def due(self, grants: Iterable[GrantText]) -> list[GrantEnded]:
        """Tell every grant whose expiry passed since the last call; ask for the next one."""
        grants = tuple(grants)
        now = self._clock()
        with self._lock:
            since, self._checked = self._checked, max(self._checked, now)
            self._scheduled = None
        ended = [
            GrantEnded(self._path, g.rule, "expired", g.expires.timestamp())
            for g in grants
            if g.expires is not None and g.uses != 0 and since < g.expires.timestamp() <= now
        ]
        for ending in ended:
            self._tell(ending)
        self.grants_changed(grants)
        return ended

    def spent(self, grant: GrantText) -> None:
        """``grant``'s last use was just written."""
        self._tell(GrantEnded(self._path, grant.rule, "spent", self._clock()))

    def _tell(self, ending: GrantEnded) -> None:
        how = "its last use was taken" if ending.reason == "spent" else "it expired"
        log.info(
            "%s: command_allowlist: grant %r approves nothing now: %s",
            ending.path,
            ending.rule,
            how,
        )
        told = self.on_ended
        if told is not None:
            try:
                told(ending)
            except Exception:  # the owner's bug never stops the store
                log.exception("%s: telling a grant's ending failed", ending.path)
