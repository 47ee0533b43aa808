"""/etc as a sandbox shows it: a copy of its public entries, used only while in step
(docs/execution.md#etc-in-the-sandbox).

bubblewrap 0.8 reads the whole of ``/proc/self/mountinfo`` back after every
bind, so a blank bound over each of /etc's secrets (about twenty on a Debian
host) cost about 1 ms of a 5 ms sandbox (docs/operations.md#capacity). A
process that runs sandboxed commands keeps instead one copy of /etc's public
entries (files readable by all, links, folders searchable by all; never the
fixed list of secrets of ``_root_view``) in a folder of its own on a tmpfs, and
each sandbox binds it read-only at ``/etc``: one mount.

The copy is used only while it is in step with /etc. Every folder of /etc that
is copied is watched (inotify, the watch made before the folder is read), and
the watch's descriptor is polled in the caller's thread each time a sandbox's
arguments are made: a change made before that moment is always seen. A thread
that lives only while it works brings the copy back in step, in place (a file
written aside and renamed over its copy), so a sandbox running meanwhile sees
/etc's changes as a bind of /etc would show them. Until it is in step (being
made, being brought in step, past its bounds, or after an error such as a
full tmpfs) a sandbox binds the live /etc with a blank over each secret
(``_root_view.etc_blanked``).

Raw inotify through ctypes, not watchdog: watchdog reports from its own thread,
so a change just made could still be on its way when a sandbox is made; a
descriptor polled by the thread that makes the sandbox cannot be.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import functools
import logging
import os
import select
import shutil
import stat
import tempfile
import threading
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

from multiplex.execution.sandbox._root_view import ETC_WALK_LIMIT, etc_blanked, etc_secret, public

__all__ = [
    "EtcMirror",
    "etc_binds",
    "etc_mirror",
    "hide_copy",
    "sweep_left_behind",
    "tmpfs_root",
]

log = logging.getLogger(__name__)

_IN_MODIFY, _IN_ATTRIB, _IN_CLOSE_WRITE = 0x002, 0x004, 0x008
_IN_MOVED_FROM, _IN_MOVED_TO, _IN_CREATE, _IN_DELETE = 0x040, 0x080, 0x100, 0x200
_IN_DELETE_SELF, _IN_MOVE_SELF = 0x400, 0x800
_IN_ONLYDIR, _IN_DONT_FOLLOW = 0x01000000, 0x02000000
_IN_NONBLOCK, _IN_CLOEXEC = os.O_NONBLOCK, os.O_CLOEXEC
# Every change to an entry of a watched folder, or to the folder itself; never a read.
_MASK = (
    _IN_MODIFY | _IN_ATTRIB | _IN_CLOSE_WRITE | _IN_MOVED_FROM | _IN_MOVED_TO | _IN_CREATE
    | _IN_DELETE | _IN_DELETE_SELF | _IN_MOVE_SELF | _IN_ONLYDIR | _IN_DONT_FOLLOW
)  # fmt: skip

# The private folder's own watch: only the copy removed or moved away.
_GONE = (
    _IN_DELETE | _IN_MOVED_FROM | _IN_DELETE_SELF | _IN_MOVE_SELF | _IN_ONLYDIR | _IN_DONT_FOLLOW
)

_MAX_BYTES = 64 * 1024 * 1024  # a bigger /etc is not copied: it keeps the blanks
_SETTLE = 0.05  # seconds without a change before a copy is brought in step
_SETTLE_MAX = 1.0  # ... at most (a folder written without pause still gets a copy)
_RETRY = 10.0  # seconds after an error before the copy is tried again

_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


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


class _TooBig(Exception):
    pass


class _Stopped(Exception):
    pass


class _Watch:
    """One inotify instance (non-blocking, close-on-exec) and its folders."""

    def __init__(self) -> None:
        self._libc = ctypes.CDLL(None, use_errno=True)
        fd = self._libc.inotify_init1(_IN_NONBLOCK | _IN_CLOEXEC)
        if fd < 0:
            code = ctypes.get_errno()
            raise OSError(code, f"inotify: {os.strerror(code)}")
        self.fd = fd
        self._poller = select.poll()
        self._poller.register(fd, select.POLLIN)
        self._lock = threading.Lock()  # a poll object takes one caller at a time

    def add(self, folder: str, mask: int = _MASK) -> None:
        if self._libc.inotify_add_watch(self.fd, os.fsencode(folder), mask) < 0:
            code = ctypes.get_errno()
            raise OSError(code, f"inotify watch of {folder}: {os.strerror(code)}")

    def pending(self, timeout_ms: int = 0) -> bool:
        """Whether a change was reported and not drained yet."""
        with self._lock:
            return bool(self._poller.poll(timeout_ms))

    def drain(self) -> None:
        with contextlib.suppress(BlockingIOError):
            while os.read(self.fd, 65536):
                pass

    def close(self) -> None:
        os.close(self.fd)


class EtcMirror:
    """A copy of the public entries of ``source`` under ``root``, used only while in step."""

    def __init__(self, source: str = "/etc", root: str | None = None) -> None:
        self.source = source
        self._root = root
        self._lock = threading.Lock()
        self._watch: _Watch | None = None
        self._folder: str | None = None  # the private 0700 folder holding the copy
        self._copy: str | None = None  # the copy itself: the bind's source
        self._in_step = False
        self._worker: threading.Thread | None = None
        self._retry_at = 0.0  # after an error: not tried again before this (monotonic)
        self._given_up = False  # past the bounds: never copied
        self._owner = os.getpid()
        self._asked = 0  # sandboxes made while the copy was not in step
        self._stopping = threading.Event()
        self._warned = False

    @property
    def copy(self) -> str | None:
        """The folder a sandbox binds at /etc (made or not yet in step)."""
        return self._copy

    def bind(self) -> tuple[str, ...] | None:
        """``--ro-bind COPY /etc`` while the copy is in step; else None, and it is brought in step."""
        watch = self._watch
        if self._in_step and watch is not None and not watch.pending():
            return ("--ro-bind", self._copy, "/etc")  # type: ignore[return-value]
        self._asked += 1
        if self._asked > 1:  # a process that runs one sandbox (multiplex exec) copies nothing
            self._start()
        return None

    def wait_in_step(self, timeout: float) -> bool:
        """Whether the copy is in step within ``timeout`` seconds (for tests and benches)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.bind() is not None:
                return True
            time.sleep(0.01)
        return False

    def _start(self) -> None:
        with self._lock:
            if self._given_up or os.getpid() != self._owner:
                return
            if self._worker is not None or time.monotonic() < self._retry_at:
                return
            self._in_step = False
            worker = threading.Thread(target=self._work, name="etc-mirror", daemon=True)
            self._worker = worker
        worker.start()

    def _work(self) -> None:
        try:
            while True:
                self._prepare()
                watch = self._watch
                assert watch is not None and self._copy is not None
                watch.drain()
                settle_until = time.monotonic() + _SETTLE_MAX
                while watch.pending(int(_SETTLE * 1000)) and time.monotonic() < settle_until:
                    watch.drain()
                aside = os.open(os.path.join(self._folder, "aside"), _DIR)  # type: ignore[arg-type]
                try:
                    _empty(aside)  # what a pass that failed left there
                    _Sync(watch, aside, self._stopping).folder(self.source, self._copy)
                finally:
                    os.close(aside)
                with self._lock:
                    if not watch.pending():
                        self._in_step, self._worker, self._warned = True, None, False
                        return
                # Changed while it was copied: again.
        except _Stopped:
            return
        except _TooBig as exc:
            log.warning("/etc is not copied for sandboxes (%s): they bind it with blanks", exc)
            with self._lock:
                self._given_up, self._worker = True, None
        except OSError as exc:
            if self._stopping.is_set():
                return  # the process is ending: its copy is being removed
            # Once until it is in step again, not at every try.
            (log.debug if self._warned else log.warning)(
                "the copy of /etc for sandboxes could not be brought in step (%s): they bind "
                "/etc with blanks over its secrets; tried again every %gs",
                exc,
                _RETRY,
            )
            self._warned = True
            with self._lock:
                self._retry_at, self._worker = time.monotonic() + _RETRY, None

    def _prepare(self) -> None:
        if self._watch is None:
            self._watch = _Watch()
        if self._folder is None or not os.path.isdir(self._copy or ""):
            if self._folder is not None:
                _remove(self._folder, self._owner)
            # Private (0700): the copy, and beside it where files are written before
            # they are renamed into it. Its own watch reports the copy removed.
            sweep_left_behind(self._root)
            prefix = f"multiplex-etc-{os.getpid()}-"
            self._folder = tempfile.mkdtemp(prefix=prefix, dir=self._root)
            atexit.register(self._at_exit, self._folder)
            self._copy = os.path.join(self._folder, "etc")
            os.mkdir(self._copy, 0o700)
            os.mkdir(os.path.join(self._folder, "aside"), 0o700)
            self._watch.add(self._folder, _GONE)

    def close(self) -> None:
        """Stop using the copy and remove it (the process's own copy goes at exit)."""
        self._stop()
        if self._watch is not None:
            self._watch.close()
            self._watch = None
        if self._folder is not None:
            _remove(self._folder, self._owner)

    def _stop(self) -> None:
        self._stopping.set()
        with self._lock:
            self._given_up, self._in_step = True, False
            worker = self._worker
        if worker is not None and worker is not threading.current_thread():
            worker.join(5)

    def _at_exit(self, folder: str) -> None:
        if os.getpid() == self._owner:  # never a forked child's doing
            self._stop()
            _remove(folder, self._owner)


def _remove(folder: str, owner: int) -> None:
    if os.getpid() == owner:  # never a forked child's doing
        shutil.rmtree(folder, ignore_errors=True)


class _Sync:
    """One pass bringing a copy in step with its source, folder by folder."""

    def __init__(self, watch: _Watch, aside: int, stopping: threading.Event) -> None:
        self._watch = watch
        self._stopping = stopping
        self._aside = aside  # a folder of ours beside the copy: files are made there
        self._made = 0
        self._entries = 0
        self._bytes = 0

    def folder(self, source: str, copy: str, relative: str = "") -> None:
        """Make ``copy`` (a folder of ours) hold what is public of ``source``."""
        if self._stopping.is_set():
            raise _Stopped
        self._watch.add(source)  # before it is read: a change from now on is reported
        src = os.open(source, _DIR)
        try:
            wanted = self._wanted(src, relative)
            dst = os.open(copy, _DIR)
            try:
                self._apply(src, dst, wanted, source, copy, relative)
            finally:
                os.close(dst)
            info, mine = os.fstat(src), os.lstat(copy)
            if stat.S_IMODE(mine.st_mode) != stat.S_IMODE(info.st_mode):
                os.chmod(copy, stat.S_IMODE(info.st_mode))
            if mine.st_mtime_ns != info.st_mtime_ns:  # as ls -l shows the folder
                os.utime(copy, ns=(info.st_atime_ns, info.st_mtime_ns))
        finally:
            os.close(src)

    def _wanted(self, src: int, relative: str) -> dict[str, tuple[str, os.stat_result]]:
        wanted: dict[str, tuple[str, os.stat_result]] = {}
        with os.scandir(src) as entries:
            for entry in entries:
                self._entries += 1
                if self._entries > ETC_WALK_LIMIT:
                    raise _TooBig(f"more than {ETC_WALK_LIMIT} entries")
                rel = f"{relative}/{entry.name}" if relative else entry.name
                if etc_secret(rel):
                    continue
                info = entry.stat(follow_symlinks=False)
                if stat.S_ISLNK(info.st_mode):
                    wanted[entry.name] = ("l", info)
                elif stat.S_ISDIR(info.st_mode) and public(info.st_mode):
                    wanted[entry.name] = ("d", info)
                elif stat.S_ISREG(info.st_mode) and public(info.st_mode):
                    wanted[entry.name] = ("f", info)
                # Anything else (a secret, a device, a pipe) is not shown.
        return wanted

    def _apply(
        self,
        src: int,
        dst: int,
        wanted: dict[str, tuple[str, os.stat_result]],
        source: str,
        copy: str,
        relative: str,
    ) -> None:
        with os.scandir(dst) as entries:
            have = {e.name: e.stat(follow_symlinks=False).st_mode for e in entries}
        for name, mode in have.items():
            kind = wanted.get(name, ("", None))[0]
            if kind != _kind(mode):
                _unlink(dst, name, mode)
                have[name] = 0
        for name, (kind, _info) in wanted.items():
            if kind == "d":
                if not have.get(name):
                    os.mkdir(name, 0o700, dir_fd=dst)
                rel = f"{relative}/{name}" if relative else name
                self.folder(os.path.join(source, name), os.path.join(copy, name), rel)
            elif kind == "l":
                self._link(src, dst, name, bool(have.get(name)))
            else:
                self._file(src, dst, name)

    def _link(self, src: int, dst: int, name: str, present: bool) -> None:
        try:
            target = os.readlink(name, dir_fd=src)
        except OSError:
            return  # gone since it was listed: the watch has seen it
        if present:
            with contextlib.suppress(OSError):
                if os.readlink(name, dir_fd=dst) == target:
                    return
        aside = self._aside_name()
        os.symlink(target, aside, dir_fd=self._aside)
        os.rename(aside, name, src_dir_fd=self._aside, dst_dir_fd=dst)

    def _aside_name(self) -> str:
        self._made += 1
        return str(self._made)

    def _file(self, src: int, dst: int, name: str) -> None:
        try:
            fd = os.open(name, _FILE, dir_fd=src)
        except OSError:
            return  # gone, or made a link or a secret since it was listed: seen by the watch
        try:
            info = os.fstat(fd)
            # The opened file itself: one made a secret since it was listed is never read.
            if not stat.S_ISREG(info.st_mode) or not public(info.st_mode):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(name, dir_fd=dst)
                return
            self._bytes += info.st_size
            if self._bytes > _MAX_BYTES:
                raise _TooBig(f"more than {_MAX_BYTES} bytes")
            data = _read(fd, info.st_size)
        finally:
            os.close(fd)
        mode = stat.S_IMODE(info.st_mode)
        if _same(dst, name, data, mode):
            return
        aside = self._aside_name()
        out = os.open(aside, _NEW, 0o600, dir_fd=self._aside)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(out, view) :]
            os.fchmod(out, mode)
            os.utime(out, ns=(info.st_atime_ns, info.st_mtime_ns))
        except OSError:
            os.unlink(aside, dir_fd=self._aside)  # a full tmpfs: its room back at once
            raise
        finally:
            os.close(out)
        os.rename(aside, name, src_dir_fd=self._aside, dst_dir_fd=dst)


def _kind(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "l"
    if stat.S_ISDIR(mode):
        return "d"
    return "f" if stat.S_ISREG(mode) else "?"


def _unlink(dst: int, name: str, mode: int) -> None:
    if stat.S_ISDIR(mode):
        fd = os.open(name, _DIR, dir_fd=dst)
        try:
            with os.scandir(fd) as entries:
                inside = [(e.name, e.stat(follow_symlinks=False).st_mode) for e in entries]
            for child, child_mode in inside:
                _unlink(fd, child, child_mode)
        finally:
            os.close(fd)
        os.rmdir(name, dir_fd=dst)
    else:
        os.unlink(name, dir_fd=dst)


def _empty(folder: int) -> None:
    with os.scandir(folder) as entries:
        names = [(e.name, e.stat(follow_symlinks=False).st_mode) for e in entries]
    for name, mode in names:
        _unlink(folder, name, mode)


def _read(fd: int, size: int) -> bytes:
    chunks = []
    while chunk := os.read(fd, max(size + 1, 65536)):
        chunks.append(chunk)
        size = 0
    return b"".join(chunks)


def _same(dst: int, name: str, data: bytes, mode: int) -> bool:
    """Whether the copy's ``name`` already holds ``data`` with ``mode``."""
    try:
        fd = os.open(name, _FILE, dir_fd=dst)
    except OSError:
        return False
    try:
        info = os.fstat(fd)
        if stat.S_IMODE(info.st_mode) != mode or info.st_size != len(data):
            return False
        return _read(fd, info.st_size) == data
    finally:
        os.close(fd)


_MIRROR: EtcMirror | None = None
_MIRROR_LOCK = threading.Lock()


def etc_mirror() -> EtcMirror:
    """This process's copy of /etc (made, not yet in step, at the first call)."""
    global _MIRROR
    if _MIRROR is None:
        with _MIRROR_LOCK:
            if _MIRROR is None:
                _MIRROR = EtcMirror("/etc", tmpfs_root())
    return _MIRROR


def _forget_in_child() -> None:
    global _MIRROR
    _MIRROR = None  # a forked child makes its own, if it ever runs a sandbox


os.register_at_fork(after_in_child=_forget_in_child)


def etc_binds() -> tuple[str, ...]:
    """bwrap arguments showing /etc: its copy while in step, else the live one with blanks."""
    if not os.path.isdir("/etc"):
        return ()
    bind = etc_mirror().bind()
    return bind if bind is not None else etc_blanked()


def hide_copy(binds: Sequence[str], shown: Iterable[Path]) -> list[str]:
    """A tmpfs over the private folder of the copy ``binds`` show, if a folder in
    ``shown`` (bound from the host: writable or read-only) holds it; else nothing.

    An operator may show ``/dev/shm`` or the runtime folder: the copy must not be
    reached, let alone written, but at ``/etc``, read-only.
    """
    if len(binds) != 3 or binds[2] != "/etc" or binds[0] != "--ro-bind":
        return []
    folder = Path(binds[1]).parent
    if any(folder == p or folder.is_relative_to(p) for p in shown):
        return ["--tmpfs", str(folder)]
    return []
