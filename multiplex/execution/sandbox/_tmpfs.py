"""Private folders of this process on a tmpfs, and those a killed process left there.

``tmpfs_root`` is where they go (never the disk); ``sweep_left_behind`` removes this
user's that a process ended without removing (``kill -9``): each is named with its
process's pid (docs/execution.md#etc-in-the-sandbox).
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import stat

__all__ = ["sweep_left_behind", "tmpfs_root"]


@functools.cache
def tmpfs_root() -> str | None:
    """Where a process's private folders go: a tmpfs when there is one (never the disk).

    ``$XDG_RUNTIME_DIR`` when it is this user's own (0700), else ``/dev/shm``
    (sticky, and each folder is 0700), else the temp dir.
    """
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    candidates = ([runtime] if runtime else []) + ["/dev/shm"]
    for folder in candidates:
        try:
            info = os.stat(folder)
        except OSError:
            continue
        mode = stat.S_IMODE(info.st_mode)
        own = info.st_uid == os.getuid() and mode & 0o077 == 0
        sticky = bool(info.st_mode & stat.S_ISVTX)
        if stat.S_ISDIR(info.st_mode) and (own or sticky) and os.access(folder, os.W_OK | os.X_OK):
            return folder
    return None


_LEFT_BEHIND = ("multiplex-etc-", "multiplex-cred-")


@functools.cache
def sweep_left_behind(root: str | None) -> int:
    """Remove the private folders a process that ended without removing them (``kill -9``)
    left in ``root``: this user's, named with a pid that no process has; once per process.

    Each is named ``PREFIX…-PID-RANDOM``. A folder of a live process, another user's, or
    any other entry is left alone; a link is removed, never followed. How many went.
    """
    if root is None:
        return 0
    gone = 0
    try:
        entries = list(os.scandir(root))
    except OSError:
        return 0
    for entry in entries:
        if not entry.name.startswith(_LEFT_BEHIND):
            continue
        parts = entry.name.rsplit("-", 2)
        try:
            info = entry.stat(follow_symlinks=False)
            pid = int(parts[1])
        except (OSError, ValueError, IndexError):
            continue
        if info.st_uid != os.getuid() or pid == os.getpid() or _alive(pid):
            continue
        if stat.S_ISLNK(info.st_mode):
            with contextlib.suppress(OSError):
                os.unlink(entry.path)
        elif stat.S_ISDIR(info.st_mode):
            shutil.rmtree(entry.path, ignore_errors=True)
        gone += 1
    return gone


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # another user's: alive
    return True
