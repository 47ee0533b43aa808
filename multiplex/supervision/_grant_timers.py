"""Each profile's grants told as they expire or are spent, and counted (docs/allowlist.md#when-a-grant-ends).

A grant stops approving at its expiry whether or not anything watches (the
gate compares it with the clock at every decision). :class:`GrantTimers` makes
the moment visible: one wake-up at the earliest expiry ahead of each profile,
on the single deadline thread the approval timeouts use, tells the profile's
store (:meth:`~multiplex.profiles.AllowlistStore.expire_due`), which logs the
ending; every ending, expired or spent, is counted in
``multiplex_grants_ended_total{profile,reason}`` and observed in
``multiplex_revocation_latency_seconds`` (from the ending to its being told),
as a hand revocation is.
"""

from __future__ import annotations

import time

from multiplex._metrics import Metrics
from multiplex.approval.waiting._deadlines import DEADLINES
from multiplex.profiles import AllowlistStore, GrantEnded, Profile

__all__ = ["GrantTimers"]


class _Timer:
    """Wakes one store at the expiries it asks for (held weakly by the deadline thread)."""

    __slots__ = ("__weakref__", "store")

    def __init__(self, store: AllowlistStore) -> None:
        self.store = store

    def at(self, when: float) -> None:
        DEADLINES.call_at(time.monotonic() + max(0.0, when - time.time()), self)

    def expire(self) -> None:
        self.store.expire_due()


class GrantTimers:
    """One timer per served profile's store; the counts of the endings they tell."""

    def __init__(self, metrics: Metrics) -> None:
        self._metrics = metrics
        self._timers: dict[str, _Timer] = {}

    def watch(self, profile: Profile) -> None:
        """Tell ``profile``'s grant endings from now on (a loaded profile; again: nothing)."""
        store = profile.allowlist
        known = self._timers.get(profile.name)
        if known is not None and known.store is store:
            return
        if known is not None:  # the name now serves another home
            self._drop(known)
        timer = self._timers[profile.name] = _Timer(store)
        name = profile.name
        store.endings.on_ended = lambda ending: self._ended(name, ending)
        store.endings.schedule = timer.at
        store.endings.grants_changed(store.grants())

    def forget(self, profile: Profile) -> None:
        """``profile`` is no longer served: nothing of its store is told or counted any more."""
        known = self._timers.get(profile.name)
        if known is not None and profile.loaded and known.store is profile.allowlist:
            self._drop(self._timers.pop(profile.name))

    @staticmethod
    def _drop(timer: _Timer) -> None:
        timer.store.endings.on_ended = None
        timer.store.endings.schedule = None  # a wake-up already due finds nothing to tell

    def _ended(self, name: str, ending: GrantEnded) -> None:
        self._metrics.grants_ended.labels(name, ending.reason).inc()
        self._metrics.revocation_latency.observe(max(0.0, time.time() - ending.at))
