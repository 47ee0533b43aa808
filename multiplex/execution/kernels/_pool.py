"""Every session kernel of a supervisor: caps, eviction, reaping, disposal (docs/kernels.md#lifecycle).

``KernelPool.execute`` runs one cell of a turn in the kernel of its owner
(:func:`key_of`), starting one when needed, and returns a redacted
:class:`CellResult`. Limits: ``code_execution.max_session_kernels`` per profile,
``max_kernels`` (multiplex.yaml) for the whole supervisor, least recently used
idle kernel evicted first; ``kernel_idle_timeout`` reaps. Every kill proves
the process tree dead before it returns.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from multiplex._metrics import Metrics
from multiplex.execution.kernels._cells import (
    CellResult,
    KernelError,
    RawCell,
    cell_result,
    record_cell,
    refused_result,
)
from multiplex.execution.kernels._channel import CellAuthority, Dispatch
from multiplex.execution.kernels._slots import (
    KERNELS_KEY,
    KernelSlot,
    KernelTable,
    key_of,
)
from multiplex.execution.kernels._spawn import fingerprint, spawn_for
from multiplex.scopes import ProfileScope

if TYPE_CHECKING:
    from multiplex.execution.kernels._process import KernelProcess

__all__ = ["KernelPool"]

log = logging.getLogger("multiplex.kernels")
REAP_INTERVAL = 5.0
_STALE = "a fresh kernel: the profile's cwd, env or credentials changed since the last one started"


class KernelPool:
    """The supervisor's kernels, by profile; thread-safe."""

    def __init__(
        self,
        *,
        metrics: Metrics,
        dispatch: Dispatch,
        max_kernels: int = 16,
        hidden: Callable[[], Sequence[Path]] = tuple,
    ) -> None:
        self.max_kernels = max_kernels
        self._metrics = metrics
        self._dispatch = dispatch
        self._hidden = hidden
        self._tables: dict[str, KernelTable] = {}
        self._lock = threading.Lock()
        self._closed = False
        self._wake = threading.Event()
        self._reaper: threading.Thread | None = None

    # -- running a cell ----------------------------------------------------------------
    def execute(
        self,
        scope: ProfileScope,
        code: str,
        *,
        reset: bool = False,
        timeout: float | None = None,
        run_id: str | None = None,
    ) -> CellResult:
        """Run ``code`` as one cell in the kernel of ``scope``'s owner."""
        started = time.monotonic()
        if self._closed:
            return self._refused(scope, code, started, "the supervisor is closing")
        if scope.backend != "local":
            return self._refused(
                scope,
                code,
                started,
                f"code execution runs only for the local backend (terminal.backend: {scope.backend})",
            )
        self.reap()
        while True:
            slot = self._slot(scope)
            if isinstance(slot, str):
                return self._refused(scope, code, started, slot)
            with slot.lock:
                if slot.removed:
                    continue  # evicted between lookup and lock: take a new slot
                return self._in_slot(slot, scope, code, reset, timeout, run_id, started)

    def _in_slot(
        self,
        slot: KernelSlot,
        scope: ProfileScope,
        code: str,
        reset: bool,
        timeout: float | None,
        run_id: str | None,
        started: float,
    ) -> CellResult:
        settings = scope.view.code_execution
        notice = self._check(slot, scope, reset)
        fresh = slot.process is None
        if slot.process is None:
            try:
                slot.process = self._spawn(scope)
                slot.renew_id()
            except KernelError as exc:
                return self._refused(scope, code, started, str(exc), slot=slot)
            slot.epoch = scope.epoch
            if slot.process.start_notes:
                notes = " ".join(slot.process.start_notes)
                notice = f"{notice}; {notes}" if notice else notes
        proc = slot.process
        authority = CellAuthority(scope, run_id, settings.max_tool_calls)
        slot.cell, slot.cancel_cause = authority, None
        slot.cancel.clear()
        proc.channel.open_cell(authority)
        limit = settings.timeout if timeout is None else timeout
        try:
            raw = proc.run_cell(code, authority.token, limit, slot.cancel)
        finally:
            proc.channel.close_cell(authority)
            slot.cell = None
            slot.touch(settings.kernel_idle_timeout)
        notice = self._after(slot, scope, raw, limit) or notice
        result = cell_result(scope, slot.id, raw, started, fresh, notice, authority.calls)
        record_cell(scope, code, result)
        self._metrics.kernel_cells.labels(scope.name, result.outcome).inc()
        return result

    def _check(self, slot: KernelSlot, scope: ProfileScope, reset: bool) -> str | None:
        """End the slot's process when it must not serve this cell; the notice for the cell."""
        proc = slot.process
        if proc is None:
            note, slot.ended_note = slot.ended_note, None
            return note
        if reset:
            self._end(slot, "reset")
            return "a fresh kernel: reset"
        if not proc.alive():
            self._end(slot, "died")
            return "a fresh kernel: the previous one had ended"
        if slot.epoch != scope.epoch:
            # Env frozen at spawn: a reload that changed cwd, env or credentials makes it stale.
            if proc.spawn.fingerprint != fingerprint(scope):
                self._end(slot, "stale")
                return _STALE
            slot.epoch = scope.epoch
        return None

    def _after(
        self, slot: KernelSlot, scope: ProfileScope, raw: RawCell, limit: float
    ) -> str | None:
        if raw.status == "timeout":
            self._metrics.kernel_kills.labels(scope.name, "timeout").inc()
            note = f"the kernel was killed after code_execution.timeout {limit:g}s; the next cell starts a fresh one"
        elif raw.status == "cancelled":
            cause = slot.cancel_cause or "cancelled"
            self._metrics.kernel_kills.labels(scope.name, "cancelled").inc()
            note = f"the kernel was killed: {cause}; the next cell starts a fresh one"
        elif raw.status in ("exited", "died"):
            note = f"{raw.note}; the next cell starts a fresh one"
        else:
            return None
        slot.process = None
        slot.ended_note = f"a fresh kernel: {note.split(';')[0]}"
        return note

    def _spawn(self, scope: ProfileScope) -> KernelProcess:
        # jupyter-client and zmq load with the first kernel, not with every CLI call.
        from multiplex.execution.kernels._process import KernelProcess

        spawn = spawn_for(scope)
        proc = KernelProcess.start(scope, spawn, self._dispatch, hidden=self._hidden())
        self._metrics.kernel_spawns.labels(scope.name).inc()
        self._start_reaper()
        return proc

    def _refused(
        self,
        scope: ProfileScope,
        code: str,
        started: float,
        why: str,
        *,
        slot: KernelSlot | None = None,
    ) -> CellResult:
        result = refused_result(scope, started, why, None if slot is None else slot.id)
        record_cell(scope, code, result)
        self._metrics.kernel_cells.labels(scope.name, "refused").inc()
        return result

    # -- slots and caps -------------------------------------------------------------------
    def table(self, scope: ProfileScope) -> KernelTable:
        """The kernels of ``scope``'s profile (its per-profile resource)."""

        def create(profile: object) -> KernelTable:
            table = KernelTable(scope.name)
            self._tables[scope.name] = table
            return table

        return scope.profile.resource(KERNELS_KEY, create)

    def _slot(self, scope: ProfileScope) -> KernelSlot | str:
        key = key_of(scope)
        limit = scope.view.code_execution.max_session_kernels
        victims: list[KernelSlot] = []
        with self._lock:
            table = self.table(scope)
            slot = table.slots.get(key)
            if slot is not None:
                return slot
            need = len(table) - limit + 1
            if self._pick([table], need, victims) < need:
                return self._unlock(
                    victims,
                    f"code_execution.max_session_kernels ({limit}) kernels of profile "
                    f"{scope.name!r} are all running cells",
                )
            total = sum(len(t) for t in self._tables.values()) - len(victims)
            need = total - self.max_kernels + 1
            if self._pick(list(self._tables.values()), need, victims) < need:
                return self._unlock(
                    victims, f"max_kernels ({self.max_kernels}) kernels are all running cells"
                )
            for victim in victims:
                self._remove(victim)
            slot = KernelSlot(key)
            table.slots[key] = slot
        for victim in victims:
            try:
                self._end(victim, "evicted")
                self._metrics.kernel_evictions.labels(victim.key.profile).inc()
            finally:
                victim.lock.release()
        return slot

    @staticmethod
    def _pick(tables: list[KernelTable], count: int, victims: list[KernelSlot]) -> int:
        """Add up to ``count`` idle slots, least recently used first, locked; return how many."""
        picked = 0
        if count <= 0:
            return 0
        for slot in sorted(
            (s for t in tables for s in t.slots.values()), key=lambda s: s.last_used
        ):
            if picked >= count:
                break
            if slot not in victims and slot.lock.acquire(blocking=False):
                victims.append(slot)
                picked += 1
        return picked

    @staticmethod
    def _unlock(victims: list[KernelSlot], why: str) -> str:
        for victim in victims:
            victim.lock.release()
        return why

    def _remove(self, slot: KernelSlot) -> None:
        slot.removed = True
        table = self._tables.get(slot.key.profile)
        if table is not None and table.slots.get(slot.key) is slot:
            del table.slots[slot.key]

    def _end(self, slot: KernelSlot, cause: str) -> None:
        """Kill the slot's process (caller holds the slot lock); proven dead on return."""
        proc, slot.process = slot.process, None
        if proc is not None:
            proc.kill()
            if cause not in ("evicted", "reaped"):
                self._metrics.kernel_kills.labels(slot.key.profile, cause).inc()

    # -- disposal ------------------------------------------------------------------------
    def _stop(self, slot: KernelSlot, cause: str, *, wait: float = 30.0) -> None:
        """Remove a slot and end its kernel; a running cell is cancelled with ``cause``."""
        with self._lock:
            self._remove(slot)
        if not slot.lock.acquire(blocking=False):
            slot.cancel_cause = cause
            slot.cancel.set()
            if not slot.lock.acquire(timeout=wait):
                log.warning("kernel %s did not stop within %gs", slot.id, wait)
                return
        try:
            self._end(slot, cause)
        finally:
            slot.lock.release()

    def _select(self, keep: Callable[[KernelSlot], bool]) -> list[KernelSlot]:
        with self._lock:
            return [s for t in self._tables.values() for s in list(t.slots.values()) if keep(s)]

    def dispose_session(self, profile: str, session: str, cause: str = "session reset") -> int:
        """End the session's kernels and those of turns delegated from it; return how many."""
        slots = self._select(
            lambda s: (
                s.key.profile == profile
                and (s.key.session == session or (profile, session) in s.key.chain)
            )
        )
        for slot in slots:
            self._stop(slot, cause)
        return len(slots)

    def cancel_run(self, run_id: str, cause: str = "run cancelled") -> int:
        """Cancel the cell running for ``run_id``: its kernel is killed."""
        slots = self._select(lambda s: s.cell is not None and s.cell.run_id == run_id)
        for slot in slots:
            slot.cancel_cause = cause
            slot.cancel.set()
        return len(slots)

    def reap(self, now: float | None = None) -> int:
        """End every idle kernel past its profile's ``kernel_idle_timeout``; return how many."""
        now = time.monotonic() if now is None else now
        slots = self._select(
            lambda s: s.process is not None and not s.busy and s.idle_for(now) > s.idle_timeout
        )
        reaped = 0
        for slot in slots:
            if not slot.lock.acquire(blocking=False):
                continue  # a cell just started on it
            try:
                if slot.idle_for(now) <= slot.idle_timeout:
                    continue
                with self._lock:
                    self._remove(slot)
                self._end(slot, "reaped")
                self._metrics.kernel_reaps.labels(slot.key.profile).inc()
                reaped += 1
            finally:
                slot.lock.release()
        return reaped

    def _start_reaper(self) -> None:
        with self._lock:
            if self._reaper is not None or self._closed:
                return
            self._reaper = threading.Thread(
                target=self._reap_loop, name="multiplex-kernel-reaper", daemon=True
            )
            self._reaper.start()

    def _reap_loop(self) -> None:
        while not self._wake.wait(REAP_INTERVAL):
            try:
                self.reap()
            except Exception:
                log.exception("kernel reaper failed")

    # -- reading -----------------------------------------------------------------------------
    def kernels(self, visible: Callable[[str], bool] | None = None) -> list[dict[str, object]]:
        """Live kernels (``GET /v1/kernels``), oldest first; ``visible`` filters by profile."""
        rows = [
            s.describe()
            for s in self._select(lambda s: s.process is not None)
            if visible is None or visible(s.key.profile)
        ]
        return sorted(rows, key=lambda r: str(r["kernel_id"]))

    def __len__(self) -> int:
        return len(self._select(lambda s: s.process is not None))

    def close(self) -> int:
        """End every kernel (supervisor close); running cells are cancelled. Idempotent."""
        self._closed = True
        self._wake.set()
        slots = self._select(lambda s: True)
        for slot in slots:
            self._stop(slot, "supervisor closing")
        return len(slots)
