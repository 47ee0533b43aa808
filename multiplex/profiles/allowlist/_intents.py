"""Allowlist intents: posted by a waiting grant, admitted only on proof (docs/allowlist.md#several-processes-one-file).

The files :func:`multiplex.profiles.allowlist._locked_write.group_commit` shares writes
through, and what makes one trusted. Nothing a sandbox could write may grant a
rule: intents live in :data:`STATE_DIR` next to the file (a folder sandboxes
never see), a poster proves it is alive by holding an exclusive ``flock`` on
its intent for as long as it waits (pids in names count for nothing), and an
intent is admitted only if it is a regular file of this user's with mode 0600,
at most :data:`MAX_INTENT_BYTES`, a JSON list of texts each of which
``admits``, whose lock is held by a process in this process's PID namespace (a
bwrap sandbox has its own). Anything else is logged once and removed.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import secrets
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "MAX_INTENT_BYTES",
    "STATE_DIR",
    "Intent",
    "collect_intents",
    "delete_intent",
    "open_state_dir",
    "post_intent",
    "warn_once",
]

log = logging.getLogger("multiplex.profiles")

STATE_DIR = ".multiplex-state"  # hidden from every sandbox (docs/security.md#allowlist-intents)
MAX_INTENT_BYTES = 64 * 1024
_INTENT_TAG = ".intent-"  # <file>.intent-<time>-<random>.json in STATE_DIR: grants waiting
_POSTING_TAG = ".posting-"  # <file>.posting-<random>: an intent being written, not yet locked
_OPEN = os.O_NOFOLLOW | os.O_CLOEXEC
_warned: set[str] = set()  # foreign intents already named in a WARNING


@dataclass(frozen=True, slots=True)
class Intent:
    """A posted intent: its name in the state folder, an open descriptor, its texts."""

    name: str  # in the state folder
    fd: int  # open; identifies the inode the name must still be when it is deleted
    texts: list[str]


def open_state_dir(target: Path) -> int:
    """A descriptor of ``<target's folder>/STATE_DIR``, made 0700 if missing, never a link."""
    parent = os.open(target.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        with contextlib.suppress(FileExistsError):
            os.mkdir(STATE_DIR, 0o700, dir_fd=parent)
        fd = os.open(STATE_DIR, os.O_RDONLY | os.O_DIRECTORY | _OPEN, dir_fd=parent)
    finally:
        os.close(parent)
    st = os.fstat(fd)
    if st.st_uid != os.geteuid() or st.st_mode & 0o077:
        os.close(fd)
        raise OSError(f"{target.parent / STATE_DIR}: not a folder of this user's with mode 0700")
    return fd


def post_intent(state: int, file: str, data: bytes) -> Intent:
    """Write ``data`` under a posting name, lock it, then rename it to an intent name.

    Locked before it bears an intent name, so no collector ever sees it unlocked
    while its poster waits. A collector may delete a posting file in the instant
    between its creation and its lock (it looks abandoned): post again.
    """
    for _ in range(5):
        posting = f"{file}{_POSTING_TAG}{secrets.token_hex(8)}"
        fd = os.open(posting, os.O_RDWR | os.O_CREAT | os.O_EXCL | _OPEN, 0o600, dir_fd=state)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            os.fchmod(fd, 0o600)  # exactly, whatever the umask
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            name = f"{file}{_INTENT_TAG}{time.time_ns():020d}-{secrets.token_hex(8)}.json"
            os.rename(posting, name, src_dir_fd=state, dst_dir_fd=state)
        except FileNotFoundError:
            os.close(fd)
            continue
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(posting, dir_fd=state)
            os.close(fd)
            raise
        return Intent(name, fd, [])
    raise OSError("could not post an intent: its file kept disappearing")


def delete_intent(state: int, intent: Intent) -> None:
    """Remove ``intent``'s name if it still names the file we opened."""
    with contextlib.suppress(OSError):
        now = os.stat(intent.name, dir_fd=state, follow_symlinks=False)
        was = os.fstat(intent.fd)
        if (now.st_dev, now.st_ino) == (was.st_dev, was.st_ino):
            os.unlink(intent.name, dir_fd=state)


def collect_intents(target: Path, state: int, admits: Callable[[str], bool]) -> list[Intent]:
    """Live, well-formed intents in posting order (lock held); the rest dropped or refused."""
    holders = _flock_holders()
    own_ns = _pid_namespace("self")
    posted: list[Intent] = []
    for name in sorted(os.listdir(state)):
        if not name.startswith(target.name + "."):
            continue
        tag = name[len(target.name) :]
        if tag.startswith(_POSTING_TAG):
            _drop_if_unlocked(state, name)
        elif tag.startswith(_INTENT_TAG) and tag.endswith(".json"):
            where = str(target.parent / STATE_DIR / name)
            intent = _admit(state, name, where, admits, holders, own_ns)
            if intent is not None:
                posted.append(intent)
    return posted


def _admit(
    state: int,
    name: str,
    where: str,
    admits: Callable[[str], bool],
    holders: dict[tuple[int, int], int] | None,
    own_ns: str | None,
) -> Intent | None:
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK | _OPEN, dir_fd=state)
    except FileNotFoundError:
        return None  # withdrawn meanwhile
    except OSError as exc:
        _refuse(state, name, where, f"cannot be opened without following a link ({exc.strerror})")
        return None
    try:
        st = os.fstat(fd)
        why = _unfit(st)
        if why is None and not _locked_elsewhere(fd):
            # Nobody waits on it: a poster that died (its grant() never returned),
            # or a file planted by someone who never was a poster. Never a grant.
            with contextlib.suppress(OSError):
                os.unlink(name, dir_fd=state)
            os.close(fd)
            return None
        if why is None and holders is not None:
            holder = _holder(holders, st)
            ns = _pid_namespace(str(holder)) if holder is not None else None
            if ns is None or ns != own_ns:
                # Left in place: if its poster is real, it writes its own grant later.
                if ns is not None:  # a bwrap sandbox has its own PID namespace
                    warn_once(where, "held by a process in another PID namespace; not admitted")
                os.close(fd)
                return None
        texts = _texts(fd, admits) if why is None else None
        if texts is None:
            _refuse(state, name, where, why or "not a JSON list of valid rules")
            os.close(fd)
            return None
        return Intent(name, fd, texts)
    except BaseException:
        with contextlib.suppress(OSError):
            os.close(fd)
        raise


def _unfit(st: os.stat_result) -> str | None:
    if not stat.S_ISREG(st.st_mode):
        return "not a regular file"
    if st.st_uid != os.geteuid():
        return f"owned by uid {st.st_uid}, not {os.geteuid()}"
    if stat.S_IMODE(st.st_mode) != 0o600:
        return f"mode {stat.S_IMODE(st.st_mode):04o}, not 0600"
    if st.st_nlink != 1:
        return "has another hard link"
    if st.st_size > MAX_INTENT_BYTES:
        return f"larger than {MAX_INTENT_BYTES} bytes"
    return None


def _locked_elsewhere(fd: int) -> bool:
    """Whether another open file (a waiting poster's) holds the flock; ours is released at once."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    fcntl.flock(fd, fcntl.LOCK_UN)
    return False


def _texts(fd: int, admits: Callable[[str], bool]) -> list[str] | None:
    data = os.read(fd, MAX_INTENT_BYTES + 1)
    try:
        texts = json.loads(data) if len(data) <= MAX_INTENT_BYTES else None
    except ValueError:
        return None
    if not isinstance(texts, list) or not all(isinstance(t, str) and admits(t) for t in texts):
        return None
    return texts


def _drop_if_unlocked(state: int, name: str) -> None:
    """Remove a posting file nobody holds (its poster died before renaming it)."""
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK | _OPEN, dir_fd=state)
    except OSError:
        with contextlib.suppress(OSError):  # a link: removing the name touches nothing else
            os.unlink(name, dir_fd=state)
        return
    try:
        if not _locked_elsewhere(fd):
            with contextlib.suppress(OSError):
                os.unlink(name, dir_fd=state)
    finally:
        os.close(fd)


def _refuse(state: int, name: str, where: str, why: str) -> None:
    warn_once(where, f"{why}; not a grant, removed")
    with contextlib.suppress(OSError):  # unlink never follows a link
        os.unlink(name, dir_fd=state)


def warn_once(where: str, message: str) -> None:
    if where not in _warned:
        if len(_warned) > 1024:
            _warned.clear()
        _warned.add(where)
        log.warning("%s: allowlist intent: %s", where, message)


def _holder(holders: dict[tuple[int, int], int], st: os.stat_result) -> int | None:
    """The pid holding the flock on ``st``'s file; by inode alone where the device differs
    (an overlay reports its own device to fstat, the real one in /proc/locks)."""
    exact = holders.get((st.st_dev, st.st_ino))
    if exact is not None:
        return exact
    same_inode = [pid for (_, inode), pid in holders.items() if inode == st.st_ino]
    return same_inode[0] if len(same_inode) == 1 else None


def _flock_holders() -> dict[tuple[int, int], int] | None:
    """(device, inode) -> pid of each flock holder, from /proc/locks; None if unreadable."""
    try:
        with open("/proc/locks", encoding="ascii", errors="replace") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return None
    holders: dict[tuple[int, int], int] = {}
    for line in lines:
        fields = line.split()
        # "1: FLOCK  ADVISORY  WRITE 8747 fe:00:2146975 0 EOF"; waiters read "1: -> FLOCK ..."
        if len(fields) < 6 or fields[1] != "FLOCK":
            continue
        try:
            major, minor, inode = fields[5].split(":")
            device = os.makedev(int(major, 16), int(minor, 16))
            holders[(device, int(inode))] = int(fields[4])
        except ValueError:
            continue
    return holders


def _pid_namespace(pid: str) -> str | None:
    try:
        return os.readlink(f"/proc/{pid}/ns/pid")
    except OSError:
        return None
