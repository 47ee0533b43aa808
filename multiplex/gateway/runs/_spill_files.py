"""Finished runs' output kept in the profile's ``logs/runs/`` folder (docs/operations.md#finished-output).

One file per run, ``<home>/logs/runs/<run_id>.json``: ``{"run_id", "profile",
"results": [{"stdout", "stderr"}, …]}``, one entry per entry of the run's
``results``, every string redacted again like the run journal. A file is
written aside and renamed over (``0600``, fsync'd, the folder fsync'd), every
path component opened without following a link; read back the same way, a
link or a second hard link refused. The folder is hidden from the profile's
sandbox (docs/security.md#finished-output). Each profile's folder keeps at
most ``max_files`` files and ``max_bytes`` bytes: past either, the oldest
files are removed (the newest is always kept).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import threading
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from multiplex.gateway.http._json import dumps
from multiplex.gateway.shared._redacted import redacted
from multiplex.profiles import LinkRefused, open_dir, replace_file

__all__ = ["FOLDER", "SpillFiles", "SpillUnreadable"]

FOLDER = "logs/runs"
_SUFFIX = ".json"


class SpillUnreadable(OSError):
    """A run's file is gone, damaged, or not a plain file of its own."""


class SpillFiles:
    """The ``logs/runs/`` folders of every profile home, each bounded."""

    def __init__(self, *, max_files: int, max_bytes: int, redact: Callable[[str], str]) -> None:
        self.max_files = max_files
        self.max_bytes = max_bytes
        self._redact = redact
        self._lock = threading.Lock()
        # Each home's files, oldest first: read from the folder on first use.
        self._known: dict[Path, OrderedDict[str, int]] = {}

    def prepare(self, home: Path) -> None:
        """Make the home's ``logs/runs/`` (0700) so the sandbox hides it from the first command on."""
        os.close(open_dir(home, FOLDER, create=True))

    def write(
        self, home: Path, run_id: str, profile: str, outputs: list[dict[str, Any]]
    ) -> list[str]:
        """Store one run's outputs; the run ids whose files rotation removed for it.

        Raises ``OSError`` (nothing left behind) when the file cannot be written.
        """
        body = {"run_id": run_id, "profile": profile, "results": outputs}
        data = dumps(redacted(body, self._redact))
        name = run_id + _SUFFIX
        folder = open_dir(home, FOLDER, create=True)
        try:
            replace_file(folder, name, data)
            with self._lock:
                known = self._files(home, folder)
                known.pop(name, None)
                known[name] = len(data)
                return self._rotate(known, folder)
        finally:
            os.close(folder)

    def read(self, home: Path, run_id: str) -> list[dict[str, Any]]:
        """The outputs stored for ``run_id``; :class:`SpillUnreadable` says why not."""
        where = f"{FOLDER}/{run_id}{_SUFFIX}"
        try:
            folder = open_dir(home, FOLDER)
        except FileNotFoundError:
            raise SpillUnreadable(errno.ENOENT, f"{where} is gone") from None
        try:
            try:
                fd = os.open(
                    run_id + _SUFFIX,
                    os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
                    dir_fd=folder,
                )
            except FileNotFoundError:
                raise SpillUnreadable(errno.ENOENT, f"{where} is gone") from None
            except OSError as exc:
                if exc.errno == errno.ELOOP:
                    raise LinkRefused(where, "is a link; refused") from None
                raise
            try:
                st = os.fstat(fd)
                if not stat.S_ISREG(st.st_mode) or st.st_nlink != 1:
                    raise LinkRefused(where, "is not a plain file of its own; refused")
                chunks = []
                while chunk := os.read(fd, 1 << 20):
                    chunks.append(chunk)
            finally:
                os.close(fd)
        finally:
            os.close(folder)
        try:
            body = orjson.loads(b"".join(chunks))
        except orjson.JSONDecodeError:
            raise SpillUnreadable(errno.EINVAL, f"{where} is damaged (not JSON)") from None
        results = body.get("results") if isinstance(body, dict) else None
        if not isinstance(results, list) or body.get("run_id") != run_id:
            raise SpillUnreadable(errno.EINVAL, f"{where} is not this run's output")
        return [r if isinstance(r, dict) else {} for r in results]

    def _files(self, home: Path, folder: int) -> OrderedDict[str, int]:
        known = self._known.get(home)
        if known is None:  # what an earlier process left, oldest first
            found: list[tuple[float, str, int]] = []
            for name in os.listdir(folder):
                if not name.endswith(_SUFFIX) or name.startswith("."):
                    continue
                with contextlib.suppress(OSError):
                    st = os.stat(name, dir_fd=folder, follow_symlinks=False)
                    found.append((st.st_mtime, name, st.st_size))
            known = OrderedDict((name, size) for _, name, size in sorted(found))
            self._known[home] = known
        return known

    def _rotate(self, known: OrderedDict[str, int], folder: int) -> list[str]:
        removed: list[str] = []
        total = sum(known.values())
        while len(known) > 1 and (len(known) > self.max_files or total > self.max_bytes):
            name, size = known.popitem(last=False)
            total -= size
            with contextlib.suppress(OSError):  # gone already, or cannot be: not ours to keep
                os.unlink(name, dir_fd=folder)
            removed.append(name[: -len(_SUFFIX)])
        return removed
