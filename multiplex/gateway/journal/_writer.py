"""The run journal's writer: whole lines, fsync'd, one writer thread (docs/operations.md#what-survives-a-crash).

Every state change of a run (queued, running, waiting for an approval,
finished, handed over) appends the run document as the API shows it, redacted
again, to ``.multiplex/journal/<node>.jsonl`` beside ``multiplex.yaml``. One
thread writes: it takes every line queued meanwhile, appends them in one write
(whole lines or nothing, ``append_bytes``) and one ``fsync``, then releases
whoever waits. A worker thread waits for its line to be on disk (or, with
:meth:`RunJournal.barrier`, for every line before); the event loop never does:
it queues and, where it must, awaits :meth:`RunJournal.synced`.
The file stays bounded: past a number of lines the writer compacts it to each
run's last line, every unfinished run and the last ``keep`` finished ones.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import logging
import os
import queue
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from multiplex.gateway.http._json import dumps
from multiplex.gateway.journal._replay import Entry, last_states, read_entries, retained
from multiplex.gateway.shared._redacted import redacted
from multiplex.profiles import append_bytes, open_dir, replace_file
from multiplex.profiles._nofollow import remove_left_temps

if TYPE_CHECKING:
    from multiplex.approval.waiting._pending import PendingApproval
    from multiplex.gateway.runs._run import Run

__all__ = ["JournalBusy", "RunJournal"]

log = logging.getLogger("multiplex.gateway")
_Item = bytes | Callable[[], None] | None  # a line, a callback after the lines before it, the end


class JournalBusy(OSError):
    """Another gateway of this process or machine holds the journal."""


def _on_event_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def _settle(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


class RunJournal:
    """One node's journal at ``root/relative``; held (``flock``) until :meth:`close`."""

    def __init__(
        self, root: Path, relative: str, *, keep: int, redact: Callable[[str], str]
    ) -> None:
        self.root = root
        self.relative = relative
        self.path = root / relative
        self._keep = keep
        self._redact = redact
        self._bound = 4 * keep + 256  # lines appended before the writer compacts
        self._appended = 0
        self._failing = False
        self._closed = False
        self._queued = 0  # lines handed to the writer, and those it is done with:
        self._durable = 0  # written and fsynced, or failed (a WARNING said so)
        self._state = threading.Condition()  # the counters, _closed and the queue's end
        self._file = threading.Lock()  # the file: appends and compactions
        self._queue: queue.SimpleQueue[_Item] = queue.SimpleQueue()
        folder = open_dir(root, Path(relative).parent, create=True)
        try:
            os.fchmod(folder, 0o700)
            lock = os.open(
                Path(relative).name + ".lock",
                os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC,
                0o600,
                dir_fd=folder,
            )
        finally:
            os.close(folder)
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(lock)
            raise JournalBusy(f"{self.path} is held by another gateway") from None
        self._lock_fd = lock
        # Held by this gateway alone now: a compaction's temp file left by a gateway killed
        # mid-write (kill -9) is nobody's (docs/operations.md#what-survives-a-crash).
        folder = open_dir(root, Path(relative).parent, create=True)
        try:
            remove_left_temps(folder, Path(relative).name)
        finally:
            os.close(folder)
        self._thread = threading.Thread(target=self._work, name="multiplex-journal", daemon=True)
        self._thread.start()

    # -- reading and compacting (at start, before any append) ----------------------------
    def states(self) -> OrderedDict[str, Entry]:
        """Each run's last line in the file (damaged lines reported and skipped)."""
        with self._file:
            return last_states(read_entries(self.path))

    def rewrite(self, entries: Iterable[Entry]) -> None:
        """Replace the file by ``entries`` (written, fsync'd, renamed over it, the folder fsync'd)."""
        with self._file:
            self._rewrite(list(entries))

    def _rewrite(self, entries: list[Entry]) -> None:
        data = b"".join(dumps(e) + b"\n" for e in entries)
        parent, name = Path(self.relative).parent, Path(self.relative).name
        folder = open_dir(self.root, parent, create=True)
        try:
            replace_file(folder, name, data)
        finally:
            os.close(folder)
        self._appended = 0

    # -- appending -----------------------------------------------------------------------
    def note(
        self, run: Run, request: PendingApproval | None = None, *, moved: bool = False
    ) -> None:
        """Journal ``run`` as it stands (see :meth:`append`); ``request`` is its parked prompt."""
        entry: Entry = {"ts": time.time(), "run": redacted(run.snapshot(), self._redact)}
        # What was submitted (redacted): a restart lists it, run or not (GET /v1/runs).
        entry["commands"] = [self._redact(c) for c in run.commands]
        if request is not None:
            entry["prompt"] = {"turn_id": request.turn_id, "approval_id": request.id}
        if moved:
            entry["moved"] = True
        self.append(entry)

    def append(self, entry: Entry) -> None:
        """Queue one line; off the event loop, return once it is on disk (fsync)."""
        line = dumps(entry) + b"\n"
        with self._state:
            if not self._closed:
                self._queued += 1
                self._queue.put(line)
                line = b""
        if line:  # after close (a late end of a run): written by the caller
            self._write([line])
        elif not _on_event_loop():
            self.barrier()

    def barrier(self) -> None:
        """Return once every line queued before this call is on disk (a worker thread's wait)."""
        with self._state:
            target = self._queued
            while self._durable < target:
                self._state.wait()

    async def synced(self) -> None:
        """Return (on the event loop) once every line queued before this call is on disk."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()

        def wake() -> None:
            with contextlib.suppress(RuntimeError):  # the loop is gone
                loop.call_soon_threadsafe(_settle, future)

        with self._state:
            if self._closed:
                return
            self._queue.put(wake)
        await future

    def close(self) -> None:
        """Write what is queued, stop the writer, let the journal go. Idempotent."""
        with self._state:
            if self._closed:
                return
            self._closed = True
            self._queue.put(None)
        self._thread.join()
        with self._file:
            os.close(self._lock_fd)

    # -- the writer thread ----------------------------------------------------------------
    def _work(self) -> None:
        while True:
            batch: list[_Item] = [self._queue.get()]
            with contextlib.suppress(queue.Empty):
                while True:
                    batch.append(self._queue.get_nowait())
            lines = [item for item in batch if isinstance(item, bytes)]
            try:
                if lines:
                    self._write(lines)
            except Exception:  # whoever waits is released all the same
                log.exception("journal %s: write failed", self.path)
            with self._state:
                self._durable += len(lines)
                self._state.notify_all()
            for item in batch:
                if callable(item):
                    item()
            if None in batch:
                return

    def _write(self, lines: list[bytes]) -> None:
        with self._file:
            try:
                append_bytes(self.root, self.relative, b"".join(lines), sync=True)
            except OSError as exc:
                if not self._failing:  # once per failing stretch, not once per line
                    log.warning("cannot append %s: %s; runs are not journaled", self.path, exc)
                self._failing = True
                return
            if self._failing:
                log.warning("%s is written again", self.path)
                self._failing = False
            self._appended += len(lines)
            if self._appended > self._bound:
                self._compact()

    def _compact(self) -> None:
        try:
            self._rewrite(retained(last_states(read_entries(self.path)), self._keep))
        except OSError as exc:
            log.warning("cannot compact %s: %s", self.path, exc)
            self._appended = 0  # tried again after as many lines

    def __repr__(self) -> str:
        return f"RunJournal({str(self.path)!r})"
