"""Cross-process, durable replacement of one config file (docs/allowlist.md).

The machinery under :mod:`multiplex.profiles.allowlist._roundtrip`, which knows nothing of
YAML: a lock on the sidecar ``<file>.lock`` that every writing process shares;
group commit, where grants are posted as intent files and whichever process
takes the lock next writes them all at once; and the write itself, a temp file
in the same directory, fsynced, ``os.replace``-d over the file, then the
directory fsynced. Temp files left by a writer that died are removed under the
lock.

What makes an intent trusted is :mod:`multiplex.profiles.allowlist._intents`.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import stat
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from filelock import FileLock, Timeout

from multiplex.profiles.allowlist._intents import (
    MAX_INTENT_BYTES,
    STATE_DIR,
    Intent,
    collect_intents,
    delete_intent,
    open_state_dir,
    post_intent,
    warn_once,
)

__all__ = ["ChangedMeanwhile", "group_commit", "replace_durably", "sidecar_lock", "signature"]

_TEMP_INFIX = ".allowlist-"  # + pid-random.tmp: a temp file of a write in flight


def sidecar_lock(target: Path, timeout: float) -> FileLock:
    """The lock every process writing ``target`` takes; not yet acquired.

    Raises ``OSError`` when the sidecar exists and is not a regular file of this
    user's (a link is never followed; filelock opens it with ``O_NOFOLLOW``).
    """
    path = target.with_name(target.name + ".lock")
    with contextlib.suppress(FileNotFoundError):
        st = os.lstat(path)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid():
            raise OSError(f"{path}: the lock file is not a regular file of this user's")
    return FileLock(
        str(path),
        timeout=timeout,
        thread_local=False,
        preserve_lock_file=True,  # docs/allowlist.md: the sidecar stays; waiters share one inode
        poll_interval=0.001,
    )


def group_commit(
    target: Path,
    texts: Sequence[str],
    *,
    lock_timeout: float,
    write: Callable[[list[list[str]]], list[str]],
    read: Callable[[], list[str]],
    admits: Callable[[str], bool],
) -> list[str]:
    """Have ``texts`` written by this process or by one that takes the lock first.

    ``texts`` are posted as an intent file in :data:`STATE_DIR`. Under the lock,
    ``write`` receives every live intent's texts in posting order (only intents
    that pass the checks of :mod:`multiplex.profiles.allowlist._intents`, every text of
    which ``admits``) and returns the result; those intents are deleted after
    it returns (it must have made them durable). A process whose intent disappears while it waits returns
    ``read()`` without writing. When no intent can be posted (no usable state
    folder, texts over :data:`MAX_INTENT_BYTES`) this process writes its own
    texts alone. Errors from ``write`` and a lock not taken within
    ``lock_timeout`` propagate; this process's intent is withdrawn on any exit.
    """
    data = json.dumps(list(texts)).encode()
    try:
        state = open_state_dir(target) if len(data) <= MAX_INTENT_BYTES else None
    except OSError as exc:
        warn_once(str(target.parent / STATE_DIR), f"{exc}; grants are written one by one")
        state = None
    if state is None:
        with sidecar_lock(target, lock_timeout):
            return write([list(texts)])
    try:
        own = post_intent(state, target.name, data)
        try:
            return _commit(target, state, own, lock_timeout, write, read, admits)
        finally:
            delete_intent(state, own)
            os.close(own.fd)
    finally:
        os.close(state)


def _commit(
    target: Path,
    state: int,
    own: Intent,
    lock_timeout: float,
    write: Callable[[list[list[str]]], list[str]],
    read: Callable[[], list[str]],
    admits: Callable[[str], bool],
) -> list[str]:
    # Our intent's link count drops to 0 when the writer that took it deletes it.
    def withdrawn() -> bool:
        return os.fstat(own.fd).st_nlink == 0

    lock = sidecar_lock(target, lock_timeout)
    try:
        lock.acquire(cancel_check=withdrawn)
    except Timeout:
        if not withdrawn():
            raise
        return read()  # another process wrote our texts
    try:
        if withdrawn():
            return read()
        posted = collect_intents(target, state, admits)
        try:
            written = write([intent.texts for intent in posted])
            for done in posted:
                delete_intent(state, done)
        finally:
            for intent in posted:
                os.close(intent.fd)
        return written
    finally:
        lock.release()


Signature = tuple[int, int, int]


class ChangedMeanwhile(OSError):
    """The file changed since it was read (an operator's save, which takes no lock)."""


def signature(target: Path) -> Signature | None:
    """What tells one version of ``target`` from the next (None: no file)."""
    try:
        st = os.lstat(target)
    except FileNotFoundError:
        return None
    # (Not its ctime: renaming a file changes it, and the exchange below renames it.)
    return (st.st_ino, st.st_size, st.st_mtime_ns)


_RENAME_EXCHANGE = 2
_AT_FDCWD = -100
_libc = ctypes.CDLL(None, use_errno=True)
_renameat2 = getattr(_libc, "renameat2", None)


def _swap_in(temp: str, target: Path, expected: Signature | None) -> None:
    """``temp`` renamed over ``target`` only if ``target`` is still the version read.

    Where the kernel exchanges two names at once (``renameat2(RENAME_EXCHANGE)``), the file
    swapped out is the one that was there at that instant: a save made since is swapped
    back at once and this write is made again on it. Elsewhere (no such call, or a file
    system without it) the check comes just before the rename.
    """
    if expected is not None and _renameat2 is not None:
        done = _renameat2(
            _AT_FDCWD, os.fsencode(temp), _AT_FDCWD, os.fsencode(target), _RENAME_EXCHANGE
        )
        if done == 0:
            if signature(Path(temp)) == expected:
                os.unlink(temp)
                return
            os.replace(temp, target)  # a save landed meanwhile: it goes back in place
            raise ChangedMeanwhile(str(target))
    if signature(target) != expected:
        raise ChangedMeanwhile(str(target))
    os.replace(temp, target)


def replace_durably(
    target: Path, data: bytes, *, checked: bool = False, expected: Signature | None = None
) -> None:
    """Make ``data`` the content of ``target``, all or nothing, surviving a crash.

    Call with :func:`sidecar_lock` held. The file keeps its mode and, where this
    process may give it, its owner. ``target`` must be a regular file or absent
    (the caller resolved links): one that became a link meanwhile raises ``OSError``.
    ``checked``: ``expected`` is the :func:`signature` the caller read it at; a file changed
    since raises :class:`ChangedMeanwhile` instead of being replaced: the last step
    before the rename, so an edit saved while this one was made is read again, not lost.
    """
    prefix = f".{target.name}{_TEMP_INFIX}"
    _remove_stale_temps(target.parent, prefix)
    try:
        old = os.lstat(target)
    except FileNotFoundError:
        old = None
    if old is not None and not stat.S_ISREG(old.st_mode):
        raise OSError(f"{target}: not a regular file any more; not replaced")
    # mkstemp opens O_EXCL | O_NOFOLLOW: a planted name or link is never written through.
    fd, temp = tempfile.mkstemp(dir=target.parent, prefix=f"{prefix}{os.getpid()}-", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fchmod(handle.fileno(), (old.st_mode & 0o7777) if old else 0o644)
            if old is not None and (old.st_uid, old.st_gid) != (os.geteuid(), os.getegid()):
                with contextlib.suppress(OSError):  # only root may give a file away
                    os.fchown(handle.fileno(), old.st_uid, old.st_gid)
            os.fsync(handle.fileno())
        if checked:
            _swap_in(temp, target, expected)
        else:
            os.replace(temp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
    directory = os.open(target.parent, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)


def _remove_stale_temps(directory: Path, prefix: str) -> None:
    # Called with the lock held: no writer is mid-write, so any temp file left is
    # from a writer that died (kill -9) between creating and renaming it. unlink
    # removes a planted link itself, never what it points to; a folder stays.
    with os.scandir(directory) as entries:
        for entry in entries:
            if entry.name.startswith(prefix) and entry.name.endswith(".tmp"):
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)
