"""The files a grant is bound to, and whether they still hold what they held (docs/allowlist.md#bindings).

A bound grant holds only while each named file has the content it had when it
was granted: its sha256 is kept beside the rule. The gate checks on every
decision that a bound rule would approve, so the digest of a file is cached by
what ``lstat`` says of it (device, inode, size, mtime in ns, ctime in ns): an
unchanged file costs one ``lstat``. The file is opened with ``O_NOFOLLOW`` (the
last component) under a folder opened link by link (``profiles/_nofollow.py``):
a bound file replaced by a link is "not a regular file", never followed.
"""

from __future__ import annotations

import functools
import hashlib
import os
import stat
import threading
from collections import OrderedDict
from collections.abc import Mapping
from pathlib import Path

from multiplex.profiles._nofollow import LinkRefused, open_dir

__all__ = ["MAX_BOUND_BYTES", "binding_digest", "binding_problem", "digest_of", "resolve_bound"]

MAX_BOUND_BYTES = 64 * 1024 * 1024  # a bigger file is not bound (hashing it would stall the gate)

_Key = tuple[int, int, int, int, int]
_cache: OrderedDict[str, tuple[_Key, str]] = OrderedDict()
_cache_lock = threading.Lock()
_CACHE_SIZE = 4096


def resolve_bound(path: str, base: Path) -> Path:
    """``path`` as the gate reads it: absolute as written, else under ``base`` (the profile's cwd)."""
    return Path(_resolved(path, base))


@functools.lru_cache(maxsize=4096)
def _resolved(path: str, base: Path) -> str:
    return os.path.normpath(path if path.startswith("/") else f"{base}/{path}")


def _key(st: os.stat_result) -> _Key:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def digest_of(path: Path | str, base: Path | None = None) -> str:
    """``sha256:<hex>`` of the regular file at ``path``; ``OSError`` saying why it cannot be read.

    A link, a folder, a FIFO or a file over :data:`MAX_BOUND_BYTES` is refused.
    """
    name = str(path)
    st = os.lstat(name)
    if not stat.S_ISREG(st.st_mode):
        link = " (a link)" if stat.S_ISLNK(st.st_mode) else ""
        raise LinkRefused(path, "is not a regular file" + link)
    key = _key(st)
    with _cache_lock:
        hit = _cache.get(name)
        if hit is not None and hit[0] == key:
            _cache.move_to_end(name)
            return hit[1]
    digest = _hash(Path(name), base)
    with _cache_lock:
        _cache[name] = (key, digest)
        _cache.move_to_end(name)
        while len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    return digest


def _hash(path: Path, base: Path | None) -> str:
    # The profile's cwd (or an absolute path's folder) is opened as given; the folders
    # below the cwd that lead to a relative binding are walked without following links.
    if base is not None and path.parent.is_relative_to(base):
        parent = open_dir(base, path.parent.relative_to(base))
    else:
        parent = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        fd = os.open(
            path.name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=parent
        )
    finally:
        os.close(parent)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise LinkRefused(path, "is not a regular file")
        if st.st_size > MAX_BOUND_BYTES:
            raise LinkRefused(path, f"is larger than {MAX_BOUND_BYTES} bytes")
        sha = hashlib.sha256()
        while chunk := os.read(fd, 1 << 20):
            sha.update(chunk)
        return "sha256:" + sha.hexdigest()
    finally:
        os.close(fd)


def binding_problem(
    bind: Mapping[str, str] | tuple[tuple[str, str], ...], base: Path
) -> str | None:
    """Why a grant bound to ``bind`` does not hold now (the cause the prompt shows), or None."""
    pairs = bind.items() if isinstance(bind, Mapping) else bind
    for name, digest in pairs:
        try:
            relative = not name.startswith("/")
            now = digest_of(_resolved(name, base), base if relative else None)
        except FileNotFoundError:
            return f"{name} is missing since it was allowed"
        except OSError as exc:
            why = exc.why if isinstance(exc, LinkRefused) else (exc.strerror or str(exc))
            return f"{name} changed since it was allowed ({why})"
        if now != digest:
            return f"{name} changed since it was allowed"
    return None


def binding_digest(name: str, base: Path) -> str | None:
    """The digest to bind ``name`` (under ``base`` unless absolute) to, or None when it
    cannot be read as a regular file."""
    try:
        return digest_of(resolve_bound(name, base), None if os.path.isabs(name) else base)
    except OSError:
        return None
