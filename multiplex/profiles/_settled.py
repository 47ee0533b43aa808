"""A config file read only while no writer has it open (docs/configuration.md#validation).

A save that writes in place (``echo … > config.yaml``, ``cat > multiplex.yaml``, an
editor without a rename) passes through prefixes that are valid YAML and weaker
than either version: the deny rules not written yet, ``mode: strict`` still to
come. Events cannot say when such a save is done in every case: polling sees no
close, and a folder's files found when its watch is added tell nothing of their
writers. The kernel can: a read lease (``fcntl(F_SETLEASE, F_RDLCK)``) is refused
with EAGAIN exactly while some process has the file open for writing. So a
reload takes one on the descriptor it reads through; refused, the file is being
written and the reload waits (the watcher tries again). Held while reading, it
also makes a writer that opens the file meanwhile wait until the read is done,
so the bytes read are one version.

A lease broken by such a writer is signalled to its holder, by default with
SIGIO, whose default action ends the process: each descriptor asks for SIGURG
instead, which is ignored unless handled (nothing here handles it).

Where the kernel cannot tell (neither the file's owner nor CAP_LEASE, a
filesystem without leases such as NFS, ``fs.leases-enable`` 0), the file is read
as before and the inotify watcher's close events are the only guard. No library
offers this check; it is three ``fcntl`` calls.
"""

from __future__ import annotations

import errno
import fcntl
import os
import signal
import stat
from pathlib import Path

__all__ = ["BeingWritten", "being_written", "read_settled"]

_OPEN = os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK  # a FIFO never blocks the reload
_SIGNAL = int(signal.SIGURG)
_fcntl, _SETSIG, _SETLEASE, _RDLCK = fcntl.fcntl, fcntl.F_SETSIG, fcntl.F_SETLEASE, fcntl.F_RDLCK


class BeingWritten(OSError):
    """The file is open for writing by some process: read it once its writer is done."""

    def __init__(self, path: str | Path) -> None:
        super().__init__(errno.EAGAIN, "being written (read once its writer closes it)", str(path))


def _leased(fd: int) -> bool | None:
    """Take a read lease on ``fd``: True taken (no writer), False refused (a writer has
    the file open), None when the kernel cannot tell."""
    try:
        _fcntl(fd, _SETSIG, _SIGNAL)
        _fcntl(fd, _SETLEASE, _RDLCK)
    except OSError as exc:
        if exc.errno == errno.EAGAIN:
            return False
        return None  # EACCES (not the owner), EINVAL (no leases here), ENOLCK …
    return True


def read_settled(path: str | Path) -> tuple[bytes, float]:
    """A regular file's bytes and mtime through one descriptor, read while no process
    has it open for writing; raises :class:`BeingWritten` while one has."""
    fd = os.open(path, _OPEN)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(errno.EINVAL, "not a regular file", str(path))
        try:  # _leased, inline: thousands of homes are read at start
            _fcntl(fd, _SETSIG, _SIGNAL)
            _fcntl(fd, _SETLEASE, _RDLCK)
        except OSError as exc:
            if exc.errno == errno.EAGAIN:
                raise BeingWritten(path) from None
        want = max(info.st_size + 1, 65536)
        data = os.read(fd, want)
        if len(data) < want:  # a regular file's short read is its end
            return data, info.st_mtime
        chunks = [data]
        while chunk := os.read(fd, want):
            chunks.append(chunk)
        return b"".join(chunks), info.st_mtime
    finally:
        os.close(fd)  # releases the lease


def being_written(path: str | Path) -> bool | None:
    """Whether some process has ``path`` open for writing now; None when the kernel
    cannot tell (or the file is gone or not a regular file)."""
    try:
        fd = os.open(path, _OPEN)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        leased = _leased(fd)
        return None if leased is None else not leased
    finally:
        os.close(fd)
