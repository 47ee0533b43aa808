"""An unsandboxed profile's credential folder, kept from one run to the next
(docs/execution.md#unsandboxed-sandbox-none).

A folder made and removed for every run (``mkdtemp``, a file written, then
unlinked and the folder removed) cost 0.15–0.2 ms of a 2 ms command: the
difference between ``sandbox: none`` meeting its floor and missing it
(docs/operations.md#capacity). So each profile keeps one folder (0700, on a
tmpfs) while it is served. Every run still re-reads and re-checks each credential
file of the home, as before (docs/security.md#credentials-checked-when-used), and
compares it with the folder's copy, read without following a link; only when a
copy differs, is missing or is not the regular 0400 file this process wrote, or
the folder itself is not the one it made, is a new folder made and written whole.
A run keeps the folder it was given until it ends: a folder replaced meanwhile is
removed when its last run ends. Every folder goes when the profile's object does,
or when the process exits. A file the command added there stays until then.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import stat
import tempfile
import threading
import weakref
from collections.abc import Callable

from multiplex._errors import ProfileConfigError
from multiplex.execution.sandbox._tmpfs import sweep_left_behind
from multiplex.profiles import read_credential, write_new
from multiplex.scopes import ProfileScope, register_surface, resource_of

__all__ = ["FOLDER_KEY", "CredentialFolder"]

# The profile resource holding its unsandboxed runs' credential folder.
FOLDER_KEY = "execution.credential-folder"

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


class _Folder:
    """One made folder, the runs that use it and whether a newer one replaced it."""

    __slots__ = ("path", "replaced", "users", "written")

    def __init__(self, path: str, written: frozenset[str]) -> None:
        self.path = path
        self.written = written  # the relative paths written there (never their bytes)
        self.users = 0
        self.replaced = False


def _remove(path: str) -> None:
    """A folder made here, or the link a command put in its place (never followed)."""
    if os.path.islink(path):
        with contextlib.suppress(OSError):
            os.unlink(path)
    else:
        shutil.rmtree(path, ignore_errors=True)


def _remove_all(paths: set[str]) -> None:
    for path in list(paths):
        _remove(path)
        paths.discard(path)


def _copy_of(folder_fd: int, relative: str, size: int) -> bytes | None:
    """The folder's copy of ``relative`` if it is still a regular 0400 file of ours with
    one link, reached without following a link; else None."""
    *folders, name = relative.split("/")
    at = folder_fd
    try:
        for part in folders:  # most copies lie in the folder itself: none
            nxt = os.open(part, _DIR_FLAGS, dir_fd=at)
            if at != folder_fd:
                os.close(at)
            at = nxt
        fd = os.open(name, _FILE_FLAGS, dir_fd=at)
    except OSError:
        return None
    finally:
        if at != folder_fd:
            os.close(at)
    try:
        info = os.fstat(fd)
        if (
            not stat.S_ISREG(info.st_mode)
            or stat.S_IMODE(info.st_mode) != 0o400
            or info.st_nlink != 1
            or info.st_uid != os.geteuid()
        ):
            return None
        return os.read(fd, size + 1)
    except OSError:
        return None
    finally:
        os.close(fd)


class CredentialFolder:
    """One profile's credential folder for its unsandboxed runs (a profile resource)."""

    def __init__(self, name: str, root: str | None) -> None:
        self._name = name
        self._root = root
        self._lock = threading.Lock()
        self._current: _Folder | None = None
        self._made: set[str] = set()  # every folder not removed yet
        weakref.finalize(self, _remove_all, self._made)

    def held(self) -> list[str]:
        """The relative paths the current folder holds (what the audit compares; never a
        path or a byte of a credential)."""
        folder = self._current
        return [] if folder is None else sorted(folder.written)

    def take(self, scope: ProfileScope) -> tuple[str | None, list[str], Callable[[], None]]:
        """This run's folder (None without credentials), what was refused, and the
        call that gives the folder back when the run ends."""
        wanted: dict[str, bytes] = {}
        refused: list[str] = []
        for mount in scope.credential_mounts:
            try:
                wanted[os.path.normpath(mount.relative)] = read_credential(
                    scope.home, mount.relative
                )
            except (ProfileConfigError, OSError) as exc:
                why = exc.reason if isinstance(exc, ProfileConfigError) else str(exc)
                # The path last: "token.txt: <why>" would read as a secret assignment.
                refused.append(f"[multiplex: not mounted ({why}): {mount.relative}]")
        if not scope.credential_mounts:
            return None, refused, _nothing
        with self._lock:
            folder = self._current
            if folder is None or not self._holds(folder, wanted):
                folder = self._make(wanted, refused)
            folder.users += 1
        return folder.path, refused, lambda: self._give_back(folder)

    def _holds(self, folder: _Folder, wanted: dict[str, bytes]) -> bool:
        """Whether ``folder`` is still ours and holds exactly ``wanted`` (caller holds the lock)."""
        if folder.written != wanted.keys():
            return False  # a file refused now, or a mount added or dropped
        try:
            fd = os.open(folder.path, _DIR_FLAGS)
        except OSError:
            return False  # removed (or a link put in its place) by a command
        try:
            info = os.fstat(fd)
            if info.st_uid != os.geteuid() or stat.S_IMODE(info.st_mode) != 0o700:
                return False
            return all(_copy_of(fd, rel, len(data)) == data for rel, data in wanted.items())
        finally:
            os.close(fd)

    def _make(self, files: dict[str, bytes], refused: list[str]) -> _Folder:
        """A new folder holding ``files`` (one that cannot be written is refused and
        missed, so the next run makes a folder again); the one it replaces goes once
        unused."""
        sweep_left_behind(self._root)
        prefix = f"multiplex-cred-{self._name}-{os.getpid()}-"
        path = tempfile.mkdtemp(prefix=prefix, dir=self._root)
        self._made.add(path)
        written: set[str] = set()
        fd = os.open(path, _DIR_FLAGS)
        try:
            for rel, data in files.items():
                try:
                    if os.path.isabs(rel) or rel.split("/")[0] == "..":
                        raise OSError(errno.EINVAL, "must be a path inside the folder")
                    write_new(fd, rel, data)
                except OSError as exc:
                    refused.append(f"[multiplex: not mounted ({exc.strerror or exc}): {rel}]")
                    continue
                written.add(rel)
        finally:
            os.close(fd)
        old, self._current = self._current, _Folder(path, frozenset(written))
        if old is not None:
            old.replaced = True
            self._drop_if_unused(old)
        return self._current

    def _give_back(self, folder: _Folder) -> None:
        with self._lock:
            folder.users -= 1
            self._drop_if_unused(folder)

    def _drop_if_unused(self, folder: _Folder) -> None:
        if folder.replaced and folder.users == 0:
            _remove(folder.path)
            self._made.discard(folder.path)


def _nothing() -> None:
    return None


def _render(folder: CredentialFolder | None) -> list[str]:
    return [] if folder is None else folder.held()


# docs/audit.md: every per-profile resource is a surface of the isolation audit.
register_surface(
    "credential_folder",
    resource_of(FOLDER_KEY),
    render=_render,
    description="the credential files an unsandboxed run's folder holds",
    owns=(FOLDER_KEY,),
)
