"""The memory finished runs' output may hold, fair per profile (docs/operations.md#finished-output).

The registry hands every finished run here. Its ``stdout`` and ``stderr``
(UTF-8 bytes, every command's or cell's) are counted against its profile.
While the node's count is over ``gateway.retained_output_bytes``, the profile
holding most over its fair share (the bound divided by the profiles with output
held) gives up its oldest finished run's output: it is written to
``<home>/logs/runs/<run_id>.json`` (:class:`SpillFiles`) and those results
keep ``stdout: null``, ``stderr: null`` and ``output_dropped:`` :data:`SPILLED`;
``GET /v1/runs/{id}`` reads it back (:meth:`RetainedOutput.fill`). When the
file cannot be written (a full disk, a link), or later rotation removes it,
``output_dropped`` says so instead. Nothing here ever raises into the
registry, and the run document itself always stays.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from multiplex.gateway.runs._run import Run
from multiplex.gateway.runs._spill_files import FOLDER, SpillFiles
from multiplex.gateway.shared._redacted import redacted

if TYPE_CHECKING:
    from multiplex.gateway.journal import RunJournal

__all__ = ["SPILLED", "RetainedOutput", "journaled", "output_bytes"]

log = logging.getLogger("multiplex.gateway")

SPILLED = "kept in the profile's logs/runs/ folder: GET /v1/runs/{id} serves it"
_STREAMS = ("stdout", "stderr")


def _size(text: Any) -> int:
    if not isinstance(text, str):
        return 0
    return len(text) if text.isascii() else len(text.encode("utf-8", "replace"))


def output_bytes(results: list[dict[str, Any]]) -> int:
    """The UTF-8 bytes of every ``stdout`` and ``stderr`` in ``results``."""
    return sum(_size(row.get(s)) for row in results for s in _STREAMS)


class RetainedOutput:
    """Counts finished runs' output per profile and moves it out past ``bound`` bytes.

    ``home_of(profile)`` is the served profile's home (None once it is not
    served); ``on_moved(run)`` is called after a run's results changed (the
    registry journals it, so a restart serves the same).
    """

    def __init__(
        self,
        home_of: Callable[[str], Path | None],
        files: SpillFiles,
        *,
        bound: int,
        on_moved: Callable[[Run], None] | None = None,
    ) -> None:
        self._home_of = home_of
        self.files = files
        self.bound = bound
        self._on_moved = on_moved
        self._lock = threading.Lock()
        self._held: dict[str, OrderedDict[str, tuple[Run, int]]] = {}  # oldest first
        self._bytes: dict[str, int] = {}
        self._moving: set[str] = set()  # picked, its file not written yet
        self._spilled: dict[str, Run] = {}  # known runs whose output is in a file
        self._prepared: set[str] = set()

    # -- what is held ----------------------------------------------------------------
    def held(self) -> dict[str, int]:
        """Each profile's finished output counted in memory, in bytes."""
        with self._lock:
            return {name: n for name, n in self._bytes.items() if n}

    @property
    def total(self) -> int:
        with self._lock:
            return sum(self._bytes.values())

    def spilled(self, run: Run) -> bool:
        with self._lock:
            return run.run_id in self._spilled

    # -- the registry's calls ----------------------------------------------------------
    def prepare(self, profile: str) -> None:
        """Make the profile's ``logs/runs/`` before its first command (the sandbox hides it)."""
        if profile in self._prepared:
            return
        home = self._home_of(profile)
        if home is None:
            return
        try:
            self.files.prepare(home)
        except OSError as exc:  # tried again at the next run; spilling says why it failed
            log.debug("cannot make %s/%s: %s", home, FOLDER, exc)
            return
        self._prepared.add(profile)

    def finished(self, run: Run) -> None:
        """Count a run that just finished; move output out while over the bound."""
        with run.lock:
            size = output_bytes(run.results)
        if size == 0:
            return
        with self._lock:
            self._hold(run, size)
            picked = self._pick()
        self._move_out(picked)

    def restored(self, runs: list[Run]) -> None:
        """Count the finished runs of an earlier process (its journal), then settle."""
        with self._lock:
            for run in runs:
                if any(row.get("output_dropped") == SPILLED for row in run.results):
                    self._spilled[run.run_id] = run
                elif size := output_bytes(run.results):
                    self._hold(run, size)
            picked = self._pick()
        self._move_out(picked)

    def forget(self, run_id: str) -> None:
        """The registry no longer keeps the run."""
        with self._lock:
            self._spilled.pop(run_id, None)
            self._moving.discard(run_id)
            for name, runs in self._held.items():
                entry = runs.pop(run_id, None)
                if entry is not None:
                    self._bytes[name] -= entry[1]
                    break

    def fill(self, run: Run, doc: dict[str, Any]) -> dict[str, Any]:
        """``doc`` (the run's snapshot) with its output read back from its file, or why not."""
        results = doc.get("results") or []
        if not any(row.get("output_dropped") == SPILLED for row in results):
            return doc
        where = f"{FOLDER}/{run.run_id}.json"
        home = self._home_of(run.profile)
        stored: list[dict[str, Any]] = []
        why = f"{where} cannot be read: profile {run.profile!r} is no longer served"
        if home is not None:
            try:
                stored, why = self.files.read(home, run.run_id), ""
            except OSError as exc:
                why = f"{where} cannot be read: {exc.strerror or exc}"
        rows = []
        for index, row in enumerate(results):
            if row.get("output_dropped") != SPILLED:
                rows.append(row)
                continue
            out = stored[index] if index < len(stored) else {}
            texts = [out.get(s) for s in _STREAMS]
            if why or not all(isinstance(t, str) for t in texts):
                rows.append({**row, "output_dropped": why or f"{where} is not this run's output"})
            else:
                rows.append({**row, "stdout": texts[0], "stderr": texts[1], "output_dropped": None})
        return {**doc, "results": rows}

    # -- moving out ---------------------------------------------------------------------
    def _hold(self, run: Run, size: int) -> None:
        self._held.setdefault(run.profile, OrderedDict())[run.run_id] = (run, size)
        self._bytes[run.profile] = self._bytes.get(run.profile, 0) + size

    def _pick(self) -> list[Run]:
        """Under the lock: the runs whose output goes, uncounted from now on."""
        picked: list[Run] = []
        total = sum(self._bytes.values())
        while total > self.bound:
            holders = [name for name, n in self._bytes.items() if n > 0]
            fair = self.bound // len(holders)
            name = max(holders, key=lambda n: self._bytes[n] - fair)
            run_id, (run, size) = self._held[name].popitem(last=False)
            self._bytes[name] -= size
            total -= size
            self._moving.add(run_id)
            picked.append(run)
        return picked

    def _move_out(self, runs: list[Run]) -> None:
        for run in runs:
            try:
                self._spill(run)
            except Exception:  # never into the registry: the output goes, the run stays
                log.exception("run %s: moving its output out failed", run.run_id)
                self._strip(run, "dropped: moving it out of memory failed (see the log)")

    def _spill(self, run: Run) -> None:
        with run.lock:
            outputs = [{s: row.get(s) for s in _STREAMS} for row in run.results]
        home = self._home_of(run.profile)
        if home is None:
            self._strip(run, f"dropped: profile {run.profile!r} is no longer served")
            return
        where = f"{FOLDER}/{run.run_id}.json"
        try:
            rotated = self.files.write(home, run.run_id, run.profile, outputs)
        except OSError as exc:
            why = f"dropped: {where} could not be written: {exc.strerror or exc}"
            log.warning("run %s: output %s", run.run_id, why)
            self._strip(run, why)
            return
        with self._lock:
            known = run.run_id in self._moving  # not forgotten meanwhile
            if known:
                self._moving.discard(run.run_id)
                self._spilled[run.run_id] = run
            gone = [self._spilled.pop(rid) for rid in rotated if rid in self._spilled]
        self._strip(run, SPILLED, journal=known)
        why = (
            f"rotated away: {FOLDER}/ keeps the newest output of each profile, "
            f"{self.files.max_files} runs and {self.files.max_bytes} bytes at most"
        )
        for old in gone:
            self._strip(old, why, only=SPILLED)

    def _strip(self, run: Run, why: str, *, only: str | None = None, journal: bool = True) -> None:
        """Results with output lose it and say ``why`` (``only``: those that said ``only``)."""
        with run.lock:
            run.results = [
                {**row, "stdout": None, "stderr": None, "output_dropped": why}
                if (row.get("output_dropped") == only if only else output_bytes([row]))
                else row
                for row in run.results
            ]
        if journal and self._on_moved is not None:
            try:
                self._on_moved(run)
            except Exception:
                log.exception("run %s: journaling its moved output failed", run.run_id)


def journaled(journal: RunJournal | None, redact: Callable[[str], str]) -> Callable[[Run], None]:
    """``on_moved`` for a registry with ``journal``: the run's line, in its place (not newest)."""

    def note(run: Run) -> None:
        if journal is not None:
            doc = redacted(run.snapshot(), redact)
            journal.append({"ts": time.time(), "run": doc, "output_moved": True})

    return note
