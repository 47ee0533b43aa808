"""Cross-process, durable replacement of one config file (docs/allowlist.md).

The machinery under :mod:`multiplex.profiles._roundtrip`, which knows nothing of
YAML: a lock on the sidecar ``<file>.lock`` that every writing process shares;
group commit, where grants are posted as intent files and whichever process
takes the lock next writes them all at once; and the write itself, a temp file
in the same directory, fsynced, ``os.replace``-d over the file, then the
directory fsynced. Temp files left by a writer that died are removed under the
lock.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from filelock import FileLock, Timeout

__all__ = ["group_commit", "replace_durably", "sidecar_lock"]

_TEMP_INFIX = ".allowlist-"  # + pid-random.tmp: a temp file of a write in flight
_INTENT_INFIX = ".allowlist-intent-"  # + time-pid-random.json: grants waiting (group_commit)


def sidecar_lock(target: Path, timeout: float) -> FileLock:
    """The lock every process writing ``target`` takes; not yet acquired."""
    return FileLock(
        str(target.with_name(target.name + ".lock")),
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
) -> list[str]:
    """Have ``texts`` written by this process or by one that takes the lock first.

    ``texts`` are posted as an intent file next to ``target``. Under the lock,
    ``write`` receives every live intent's texts in posting order and returns
    the result; those intents are deleted after it returns (it must have made
    them durable). A process whose intent disappears while it waits returns
    ``read()`` without writing. Errors from ``write`` and a lock not taken within
    ``lock_timeout`` propagate; this process's intent is withdrawn on any exit.
    """
    intent = _post_intent(target, texts)
    try:
        lock = sidecar_lock(target, lock_timeout)
        try:
            lock.acquire(cancel_check=lambda: not os.path.exists(intent))
        except Timeout:
            if os.path.exists(intent):
                raise
            return read()  # another process wrote our texts
        try:
            if not os.path.exists(intent):
                return read()
            posted = _collect_intents(target)
            written = write([posted_texts for _, posted_texts in posted])
            for done, _ in posted:
                with contextlib.suppress(OSError):
                    os.unlink(done)
            return written
        finally:
            lock.release()
    finally:
        with contextlib.suppress(OSError):
            os.unlink(intent)


def _post_intent(target: Path, texts: Sequence[str]) -> str:
    name = f".{target.name}{_INTENT_INFIX}{time.time_ns():020d}-{os.getpid()}-{secrets.token_hex(4)}.json"
    path = os.path.join(target.parent, name)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.write(fd, json.dumps(list(texts)).encode())
    finally:
        os.close(fd)
    return path


def _collect_intents(target: Path) -> list[tuple[str, list[str]]]:
    """Live intents in posting order (lock held); a dead poster's intent is dropped."""
    prefix = f".{target.name}{_INTENT_INFIX}"
    with os.scandir(target.parent) as entries:
        names = sorted(
            e.name for e in entries if e.name.startswith(prefix) and e.name.endswith(".json")
        )
    posted: list[tuple[str, list[str]]] = []
    for name in names:
        path = os.path.join(target.parent, name)
        try:
            os.kill(int(name[len(prefix) :].split("-")[1]), 0)
        except ProcessLookupError:  # its grant() never returned; it never happened
            with contextlib.suppress(OSError):
                os.unlink(path)
            continue
        except (PermissionError, ValueError, IndexError):
            pass
        try:
            with open(path, "rb") as handle:
                texts = json.loads(handle.read())
        except (OSError, ValueError):
            continue  # still being written; its poster will write it itself
        if isinstance(texts, list) and all(isinstance(t, str) for t in texts):
            posted.append((path, texts))
    return posted


def replace_durably(target: Path, data: bytes) -> None:
    """Make ``data`` the content of ``target``, all or nothing, surviving a crash.

    Call with :func:`sidecar_lock` held. The file keeps its mode and, where this
    process may give it, its owner.
    """
    prefix = f".{target.name}{_TEMP_INFIX}"
    _remove_stale_temps(target.parent, prefix)
    try:
        old = os.stat(target)
    except FileNotFoundError:
        old = None
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
    # from a writer that died (kill -9) between creating and renaming it.
    with os.scandir(directory) as entries:
        for entry in entries:
            if entry.name.startswith(prefix) and entry.name.endswith(".tmp"):
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)
