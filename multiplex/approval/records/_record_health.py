"""Whether a home's decisions are being recorded (docs/operations.md#a-full-disk).

A home whose last record could not be written is *degraded*: every command it
asks to run is refused (a decision that cannot be recorded is not carried out)
until a record succeeds again. This process remembers its own failures; a
marker file in the home's state folder (hidden from every sandbox) carries the
state to other processes (``multiplex profiles list``). On a full disk an empty
file can often still be made (an inode, no data block), so the marker's *name*
carries the error (``records-failing.ENOSPC``) and its content, when there was
room for it, the whole cause. The marker counts only while it is newer than
``logs/decisions.jsonl``: any later successful append, by any process, changes
that file and so clears it.
"""

from __future__ import annotations

import contextlib
import errno
import os
import threading
from pathlib import Path

__all__ = ["MARKER", "RecordHealth"]

STATE = ".multiplex-state"
MARKER = "records-failing"
_LOG = "logs/decisions.jsonl"
_PREFIX = "cannot record the decision"


class RecordHealth:
    """Which homes' last record failed, and why; thread-safe, never raises."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._failing: dict[Path, str] = {}

    def failed(self, home: Path, cause: str, code: int | None) -> None:
        """The record of ``home`` just failed with ``cause`` (one line) and ``errno`` ``code``."""
        with self._lock:
            self._failing[home] = cause
        name = f"{MARKER}.{errno.errorcode.get(code or 0, 'unknown')}"
        with contextlib.suppress(OSError):
            (home / STATE).mkdir(mode=0o700, exist_ok=True)
            _remove_markers(home, keep=name)
            flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC
            fd = os.open(home / STATE / name, flags, 0o600)
            try:
                with contextlib.suppress(OSError):
                    os.write(fd, cause.encode("utf-8", "replace")[:500])
            finally:
                os.close(fd)

    def succeeded(self, home: Path) -> None:
        """A record of ``home`` was written: it is no longer degraded (cheap when it was not)."""
        if home not in self._failing:
            return
        with self._lock:
            self._failing.pop(home, None)
        _remove_markers(home)

    def failing(self, home: Path) -> str | None:
        """Why the last record of ``home`` failed, or None if it did not (or was since written)."""
        with self._lock:
            cause = self._failing.get(home)
        if cause is not None:
            return cause
        try:
            with os.scandir(home / STATE) as entries:
                markers = [e for e in entries if e.name.startswith(MARKER + ".")]
            if not markers:
                return None
            marker = markers[0]
            since = marker.stat(follow_symlinks=False).st_mtime_ns
        except OSError:
            return None
        with contextlib.suppress(OSError):
            if os.stat(home / _LOG).st_mtime_ns > since:
                return None  # written since, by some process
        return _read_cause(Path(marker.path)) or _cause_of(marker.name)


def _remove_markers(home: Path, keep: str = "") -> None:
    with contextlib.suppress(OSError), os.scandir(home / STATE) as entries:
        for entry in entries:
            if entry.name.startswith(MARKER + ".") and entry.name != keep:
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)


def _read_cause(path: Path) -> str:
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        try:
            text = os.read(fd, 500).decode("utf-8", "replace").strip()
        finally:
            os.close(fd)
        if text.startswith(_PREFIX):
            return text.splitlines()[0]
    return ""


def _cause_of(name: str) -> str:
    code = getattr(errno, name.removeprefix(MARKER + "."), None)
    if isinstance(code, int):
        return f"{_PREFIX}: {os.strerror(code)}"
    return f"{_PREFIX} (see the log)"
