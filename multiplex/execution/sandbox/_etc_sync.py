"""Bringing a copy of /etc in step with it: the inotify watch and one copying pass
(docs/execution.md#etc-in-the-sandbox; ``_etc_mirror`` uses them).

``_Watch`` is one inotify instance whose descriptor is polled by the caller (raw, through
ctypes: watchdog reports from a thread of its own). ``_Sync`` copies what is public of
each folder of the source, watching it before it is read, in place: a file written aside
and renamed over its copy, a file's bytes compared before it is written again.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import select
import stat
import threading

from multiplex.execution.sandbox._root_view import ETC_WALK_LIMIT, etc_secret, public

__all__ = ["DIR", "GONE", "Stopped", "Sync", "TooBig", "Watch", "empty"]

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
GONE = _IN_DELETE | _IN_MOVED_FROM | _IN_DELETE_SELF | _IN_MOVE_SELF | _IN_ONLYDIR | _IN_DONT_FOLLOW

_MAX_BYTES = 64 * 1024 * 1024  # a bigger /etc is not copied: it keeps the blanks

DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


class TooBig(Exception):
    pass


class Stopped(Exception):
    pass


class Watch:
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


class Sync:
    """One pass bringing a copy in step with its source, folder by folder."""

    def __init__(self, watch: Watch, aside: int, stopping: threading.Event) -> None:
        self._watch = watch
        self._stopping = stopping
        self._aside = aside  # a folder of ours beside the copy: files are made there
        self._made = 0
        self._entries = 0
        self._bytes = 0

    def folder(self, source: str, copy: str, relative: str = "") -> None:
        """Make ``copy`` (a folder of ours) hold what is public of ``source``."""
        if self._stopping.is_set():
            raise Stopped
        self._watch.add(source)  # before it is read: a change from now on is reported
        src = os.open(source, DIR)
        try:
            wanted = self._wanted(src, relative)
            dst = os.open(copy, DIR)
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
                    raise TooBig(f"more than {ETC_WALK_LIMIT} entries")
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
                raise TooBig(f"more than {_MAX_BYTES} bytes")
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
        fd = os.open(name, DIR, dir_fd=dst)
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


def empty(folder: int) -> None:
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
