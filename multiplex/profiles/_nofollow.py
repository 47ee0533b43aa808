"""Files the supervisor writes or reads for a profile, never through a link (docs/security.md#files-the-supervisor-writes).

A command running for a profile can create symlinks and hard links inside its
home. Every file the supervisor appends to (``logs/decisions.jsonl``), creates
(the per-run credential directory) or reads as a secret is therefore opened
relative to directory descriptors, each component with ``O_NOFOLLOW``: a link
planted at ``logs`` or ``logs/decisions.jsonl`` is refused, never followed. A
file with a second hard link is refused too (its other name may be
``~/.bashrc``), and so is anything that is not a regular file (a FIFO would
block the writer).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import threading
from pathlib import Path

__all__ = [
    "LinkRefused",
    "append_bytes",
    "open_dir",
    "read_inside",
    "remove_left_temps",
    "replace_file",
    "write_new",
]

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_READ_FLAGS = os.O_RDONLY | os.O_NOCTTY | os.O_NONBLOCK | os.O_CLOEXEC


class LinkRefused(OSError):
    """A path component is a link, a second hard link, or not a regular file."""

    def __init__(self, path: str | Path, why: str) -> None:
        super().__init__(errno.ELOOP, why, str(path))
        self.why = why

    def __str__(self) -> str:
        return f"{self.filename}: {self.why}"


def _parts(relative: str | Path) -> list[str]:
    text = os.fspath(relative)
    parts = [p for p in text.split("/") if p not in ("", ".")]
    if text.startswith("/") or ".." in parts:
        raise LinkRefused(relative, "must be a path inside the directory")
    return parts


def open_dir(root: Path, relative: str | Path = "", *, create: bool = False) -> int:
    """A descriptor of ``root/relative``, walking each component without following links.

    ``root`` itself is opened as given (it is the resolved home). With ``create``
    missing directories are made with mode 0700. The caller closes the result.
    """
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for part in _parts(relative):
            try:
                nxt = _step(fd, part, create)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    why = f"{part!r} is a link or not a folder"
                    raise LinkRefused(root / relative, why) from None
                raise
            os.close(fd)
            fd = nxt
    except BaseException:
        os.close(fd)
        raise
    return fd


def _step(fd: int, part: str, create: bool) -> int:
    try:
        return os.open(part, _DIR_FLAGS, dir_fd=fd)
    except FileNotFoundError:
        if not create:
            raise
    with contextlib.suppress(FileExistsError):
        # Made meanwhile by a concurrent writer, or a link: the open decides.
        os.mkdir(part, 0o700, dir_fd=fd)
    return os.open(part, _DIR_FLAGS, dir_fd=fd)


def _check_regular(fd: int, path: str | Path, *, single_link: bool = True) -> os.stat_result:
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        raise LinkRefused(path, "is not a regular file")
    if single_link and st.st_nlink != 1:
        raise LinkRefused(path, "has another hard link; refused")
    return st


def _open_leaf(
    root: Path, relative: str | Path, flags: int, mode: int, *, create_dirs: bool
) -> int:
    parts = _parts(relative)
    if not parts:
        raise LinkRefused(root, "names no file")
    parent = open_dir(root, Path(*parts[:-1]) if len(parts) > 1 else "", create=create_dirs)
    try:
        return os.open(
            parts[-1], flags | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, mode, dir_fd=parent
        )
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise LinkRefused(root / relative, "is a link; refused") from None
        raise
    finally:
        os.close(parent)


def append_bytes(root: Path, relative: str | Path, data: bytes, *, sync: bool = False) -> None:
    """Append ``data`` to ``root/relative`` whole or not at all, creating it (0600) and its folders.

    One ``O_APPEND`` write, its length checked (docs/operations.md#a-full-disk):
    a short write (a full disk) is cut back off with ``ftruncate`` and raised
    as ``OSError`` (``ENOSPC`` when the filesystem has no room left), so the
    file keeps only whole lines. A file that ends inside a line (a crash of an
    older writer) gets a newline first, so that fragment stays a line of its
    own and this one is whole. With ``sync`` the data is on disk (``fsync``)
    before this returns. Raises :class:`LinkRefused` instead of following a link.
    """
    path = root / relative
    # Read-write: the last byte is read back to see whether the file ends inside a line.
    fd = _open_leaf(root, relative, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600, create_dirs=True)
    try:
        size = _check_regular(fd, path).st_size
        if size and data and os.pread(fd, 1, size - 1) != b"\n":
            data = b"\n" + data
        written = os.write(fd, data)  # O_APPEND: one write of one line never interleaves
        if written != len(data):
            _cut_back(fd, written, len(data), path)
        if sync:
            os.fsync(fd)
    finally:
        os.close(fd)


def _cut_back(fd: int, written: int, wanted: int, path: Path) -> None:
    """Remove the ``written`` bytes a short write left at the end, then raise why."""
    full = os.fstatvfs(fd).f_bavail == 0  # asked first: the cut frees room again
    end = os.lseek(fd, 0, os.SEEK_CUR)  # after an O_APPEND write: the end of our bytes
    os.ftruncate(fd, max(0, end - written))
    code = errno.ENOSPC if full else errno.EIO
    why = os.strerror(code) if full else f"short write ({written} of {wanted} bytes)"
    raise OSError(code, why, str(path))


def write_new(directory_fd: int, relative: str | Path, data: bytes, mode: int = 0o400) -> None:
    """Create ``relative`` under an open directory (folders 0700), failing if anything is there."""
    parts = _parts(relative)
    fd = os.dup(directory_fd)
    try:
        for part in parts[:-1]:
            nxt = _step(fd, part, True)
            os.close(fd)
            fd = nxt
        out = os.open(
            parts[-1],
            os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
            mode,
            dir_fd=fd,
        )
        try:
            _write_all(out, data)
        finally:
            os.close(out)
    finally:
        os.close(fd)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def remove_left_temps(folder: int, name: str) -> int:
    """Remove the temporary files :func:`replace_file` left for ``name`` in an open folder
    (a writer killed between writing one and renaming it); how many. Call only where no
    other writer of ``name`` can be at work (its lock held)."""
    removed = 0
    prefix = f".{name}."
    for entry in os.listdir(folder):
        if entry.startswith(prefix) and entry.endswith(".tmp"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(entry, dir_fd=folder)  # the name itself: a link is never followed
                removed += 1
    return removed


def replace_file(folder: int, name: str, data: bytes, mode: int = 0o600) -> None:
    """Make ``name`` in an open folder hold ``data``, whole or not at all.

    Written aside (a temporary name of this process and thread, never followed
    as a link), fsync'd, renamed over ``name`` and the folder fsync'd: a crash
    leaves the old file or the new one, never a part. On any error the
    temporary file is removed and the error raised.
    """
    temp = f".{name}.{os.getpid()}.{threading.get_ident()}.tmp"
    try:
        fd = os.open(
            temp,
            os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC,
            mode,
            dir_fd=folder,
        )
        try:
            _write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.rename(temp, name, src_dir_fd=folder, dst_dir_fd=folder)
        os.fsync(folder)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp, dir_fd=folder)
        raise


def read_inside(root: Path, relative: str | Path, *, max_bytes: int) -> bytes:
    """The bytes of ``root/relative`` if the file it really is lies inside ``root``.

    Links inside ``root`` that stay inside it are followed (an operator may
    link ``credentials/current`` to a rotated file); the check is made on the
    opened descriptor, so a link swapped in between check and use cannot win.
    Refused: a file outside ``root``, a non-regular file, a file with another
    hard link, a file over ``max_bytes``.
    """
    # The root as the kernel resolves it, and the file opened from that very folder.
    root_fd = os.open(root, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        base = os.readlink(f"/proc/self/fd/{root_fd}")
        fd = os.open(relative, _READ_FLAGS, dir_fd=root_fd)
    finally:
        os.close(root_fd)
    try:
        real = os.readlink(f"/proc/self/fd/{fd}")
        if real != base and not real.startswith(base.rstrip("/") + "/"):
            raise LinkRefused(relative, "resolves outside the profile home")
        st = _check_regular(fd, relative)
        if st.st_size > max_bytes:
            raise LinkRefused(relative, f"is larger than {max_bytes} bytes")
        chunks: list[bytes] = []
        total = 0
        while chunk := os.read(fd, 65536):
            total += len(chunk)
            if total > max_bytes:
                raise LinkRefused(relative, f"is larger than {max_bytes} bytes")
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)
