"""The bubblewrap sandbox of local commands (docs/execution.md#the-sandbox).

``sandbox_argv`` builds the ``bwrap`` argv prefix for a scope; anything that
starts a process for a profile (a command, a kernel) appends its own argv to
it. Inside: the root filesystem read-only, fresh ``/tmp``, ``/run`` and
``/dev``; the cwd, the home's ``cache/`` and ``terminal.writable_paths``
writable; the folders holding profile homes, every other home and the
supervisor's config hidden; the own home read-only with its ``.env`` and
credential sources hidden; credentials read-only at ``/run/credentials``; a new
user, PID, IPC and UTS namespace with no capabilities, ``--die-with-parent``
(nothing outlives the sandbox's PID 1) and, with ``terminal.network: off``, a
new network namespace holding only loopback.
"""

from __future__ import annotations

import contextlib
import functools
import json
import math
import os
import select
import shutil
import signal
import stat
import subprocess
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from multiplex.execution._root_view import runtime_paths, system_binds
from multiplex.execution._seccomp import seccomp_available, seccomp_fd

if TYPE_CHECKING:
    from multiplex.scopes import ProfileScope

__all__ = [
    "SANDBOX_CREDENTIALS",
    "WORKSPACE",
    "SandboxChoice",
    "SandboxInfo",
    "bwrap_status",
    "choose_sandbox",
    "sandbox_argv",
    "sandbox_of",
    "workspace_of",
]

SANDBOX_CREDENTIALS = "/run/credentials"
WORKSPACE = "workspace"  # of the home: the default cwd, the sandbox's HOME
# Root cannot be trusted with a read-only bind alone: without a user namespace
# and dropped capabilities the command could remount / read-write.
_BASE = (
    "--unshare-user",
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-uts",
    "--unshare-cgroup-try",
    "--die-with-parent",
    "--new-session",
    "--cap-drop",
    "ALL",
    "--dev",
    "/dev",
    "--proc",
    "/proc",
    "--tmpfs",
    "/tmp",
    "--tmpfs",
    "/run",
    "--tmpfs",
    "/var/tmp",
)


class SandboxInfo:
    """The host pid of a sandbox's PID 1, read from bwrap's ``--info-fd``.

    Killing that process ends the whole PID namespace at once. Signalling only
    the outer ``bwrap`` is not enough: one that is killed while it is still
    setting up leaves its sandbox running. Read only when a stop needs it (the
    pipe holds the few bytes bwrap writes): no thread per command.
    """

    def __init__(self) -> None:
        self._read, self.fd = os.pipe()
        self._close_lock = threading.Lock()
        self._write_closed = False
        self._lock = threading.Lock()  # the read end: one reader, never after close()
        self._read_closed = False
        self._pid: int | None = None

    def started(self) -> None:
        """Close this process's copy of the write end (bwrap holds its own). Idempotent.

        Called after the start and again at cleanup: a second ``os.close`` of
        the same number would close whatever file another thread opened under
        that number meanwhile (a decision log, another command's pipe).
        """
        with self._close_lock:
            if self._write_closed:
                return
            self._write_closed = True
        with contextlib.suppress(OSError):
            os.close(self.fd)

    def close(self) -> None:
        """After the command: close the read end (and the write end). Idempotent."""
        self.started()
        with self._lock:
            if not self._read_closed:
                self._read_closed = True
                os.close(self._read)

    def _read_pid(self, wait: float) -> int | None:
        data = b""
        deadline = time.monotonic() + wait
        poller = select.poll()
        poller.register(self._read, select.POLLIN)
        while True:
            with contextlib.suppress(ValueError, TypeError, KeyError):
                return int(json.loads(data)["child-pid"])
            left = deadline - time.monotonic()
            if left <= 0 or not poller.poll(math.ceil(left * 1000)):
                return None
            chunk = os.read(self._read, 4096)
            if not chunk:  # bwrap closed it without a pid: it never started the sandbox
                return None
            data += chunk

    def kill(self, wait: float = 5.0) -> None:
        """SIGKILL the sandbox's PID 1 (waiting for bwrap to report it, if still setting up)."""
        with self._lock:
            if self._pid is None and not self._read_closed:
                self._pid = self._read_pid(wait)
            pid = self._pid
        if pid is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)


@dataclass(frozen=True, slots=True)
class SandboxChoice:
    """What ``terminal.sandbox`` resolves to here: ``bwrap`` or ``none``, with why."""

    sandbox: str
    warning: str | None = None
    error: str | None = None


@functools.cache
def bwrap_status() -> tuple[bool, str]:
    """Whether bubblewrap is installed and can create its namespaces (probed once)."""
    binary = shutil.which("bwrap")
    if binary is None:
        return False, "bubblewrap (bwrap) is not installed"
    floor, why = seccomp_available()
    if not floor:  # docs/execution.md#the-syscall-floor: no sandbox without it
        return False, why
    floor_fd = seccomp_fd()
    probe = [binary, *_BASE, *system_binds(), "--seccomp", str(floor_fd), "--unshare-net", "true"]
    try:
        done = subprocess.run(
            probe, capture_output=True, timeout=10, check=False, pass_fds=(floor_fd,)
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return False, f"bwrap cannot start: {exc}"
    finally:
        os.close(floor_fd)
    if done.returncode != 0:
        first = (done.stderr.decode("utf-8", "replace").strip().splitlines() or ["?"])[0]
        return False, f"bwrap cannot create user namespaces here: {first}"
    return True, binary


def choose_sandbox(setting: str) -> SandboxChoice:
    """Resolve ``auto | bwrap | none`` on this machine; ``bwrap`` unusable is an error (fail closed)."""
    if setting == "none":
        return SandboxChoice("none")
    works, detail = bwrap_status()
    if works:
        return SandboxChoice("bwrap")
    if setting == "bwrap":
        return SandboxChoice("none", error=f"terminal.sandbox is bwrap, but {detail}")
    return SandboxChoice("none", warning=f"commands run unsandboxed: {detail}")


def _under(path: Path, roots: Iterable[Path]) -> bool:
    return any(path == root or path.is_relative_to(root) for root in roots)


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))


@dataclass(frozen=True, slots=True)
class _Writable:
    """The folders a command may write, each bound at its real path, and where it starts."""

    binds: tuple[Path, ...]
    chdir: Path | None


def _own_folder(path: Path) -> Path | None:
    """``path`` (a folder of the home), made if missing; None unless it is a real folder.

    Made by whichever of the profile's first commands comes first (two at once
    both see it missing). A symlinked one could point anywhere on the host: it is
    never used; only a real folder is (lstat: a link is never followed).
    """
    with contextlib.suppress(OSError):  # exists already, or a read-only home: not ours to make
        path.mkdir(mode=0o700)
    with contextlib.suppress(OSError):
        if stat.S_ISDIR(os.lstat(path).st_mode):
            return path
    return None


def read_paths(configured: Iterable[str]) -> list[Path]:
    """``terminal.read_paths`` that can be shown: absolute, existing, no link on the way.

    The load refuses any other (docs/configuration.md); one that became a link
    since is not bound (a bind made from the host would follow it).
    """
    shown: list[Path] = []
    for item in configured:
        path = Path(os.path.abspath(item))
        if path.is_absolute() and path.exists() and _real(path) == path:
            shown.append(path)
    return shown


def workspace_of(scope: ProfileScope) -> Path | None:
    """The profile's own ``workspace/``: its default cwd and, sandboxed, its ``HOME``."""
    return _own_folder(scope.home / WORKSPACE)


def _writable(scope: ProfileScope) -> _Writable:
    # docs/execution.md#the-sandbox: a path inside another writable one is not
    # bound again. The command can already write there, so it can make any name
    # there a symlink, and a bind made from the host follows it: anywhere on the
    # host. Reached through the outer bind instead, a link resolves inside the
    # sandbox's own view (read-only or hidden), and so does the working directory.
    home = _real(scope.home)
    homes = [home, Path(os.path.abspath(scope.home))]
    wanted: list[Path] = []  # absolute as configured: symlinks not followed
    cwd = scope.cwd if scope.cwd is not None and scope.cwd.is_dir() else None
    if cwd is not None and _real(cwd) == home:
        cwd = None
    if cwd is not None:
        wanted.append(Path(os.path.abspath(cwd)))
    for own in (scope.home / "cache", scope.home / WORKSPACE):
        if _own_folder(own) is not None:
            wanted.append(Path(os.path.abspath(own)))
    for item in scope.view.terminal.writable_paths:
        expanded = Path(os.path.expanduser(item))
        path = expanded if expanded.is_absolute() else scope.home / expanded
        if path.is_dir() or path.is_file():
            wanted.append(Path(os.path.abspath(path)))
    # The home folder itself is never writable: its config.yaml, the allowlist's
    # lock and intents live there (docs/security.md#the-sandbox-view).
    wanted = [path for path in wanted if _real(path) != home]
    real = {path: _real(path) for path in wanted}

    def outer(path: Path) -> tuple[Path, Path] | None:
        """The writable path ``path`` lies in, bound in the layer its location is in
        (the home is bound read-only over everything outside it), and its real path."""
        in_home = _under(path, homes)
        for other in wanted:
            if other == path or _under(real[other], [home]) != in_home:
                continue
            for root in (other, real[other]):
                if path != root and path.is_relative_to(root):
                    return root, real[other]
        return None

    binds: list[Path] = []
    for path in dict.fromkeys(wanted):
        if outer(path) is None and real[path] not in binds:
            binds.append(real[path])
    chdir = None
    if cwd is not None:
        start = Path(os.path.abspath(cwd))
        found = outer(start)
        chdir = real[start] if found is None else found[1] / start.relative_to(found[0])
    return _Writable(tuple(binds), chdir)


def sandbox_argv(
    scope: ProfileScope,
    *,
    hidden: Sequence[Path] = (),
    credentials: Path | None = None,
    seccomp: int,
    network: bool | None = None,
    bwrap: str = "bwrap",
    info_fd: int | None = None,
    enter: Sequence[str] = (),
    credential_files: Sequence[tuple[str, int]] = (),
) -> list[str]:
    """The ``bwrap ... --`` prefix that confines a process of ``scope``'s profile.

    ``hidden``: paths no command of this profile may see (the profiles folders,
    the other homes, the supervisor's config); the folder holding this home is
    always hidden. ``credentials``: a directory bound read-only at
    ``/run/credentials``. ``seccomp``: an fd holding the syscall floor
    (``seccomp_fd()``), read by bwrap at start: pass it to the process
    (``pass_fds``) and close it after the start. ``network``: whether the
    command shares the network it is started in (default: ``terminal.network``
    is ``host``, or ``on`` with ``enter`` given; otherwise loopback only);
    ``enter``: the argv that starts it in the profile's own network namespace
    (``on``), put before ``bwrap``. The cwd is set to the
    scope's cwd. ``info_fd``: bwrap writes the host pid of the sandbox's PID 1
    there (see ``SandboxInfo``). ``credential_files``: (path inside
    ``/run/credentials``, fd holding its bytes) instead of a ``credentials``
    directory: bwrap copies each into the sandbox's own ``/run`` (files 0400,
    folders 0700), so no copy is made on the host's disk; pass the fds like the
    seccomp one. Append the command's argv.
    """
    home = _real(scope.home)
    hide = {_real(Path(p)) for p in hidden} | {home.parent}
    hide.discard(home)
    writable = _writable(scope)
    inside_home = [p for p in writable.binds if _under(p, [home])]
    outside_home = [p for p in writable.binds if not _under(p, [home])]
    argv = [*enter, bwrap, *_BASE, *system_binds(), "--seccomp", str(seccomp)]
    for path in runtime_paths():
        argv += ["--ro-bind", str(path), str(path)]
    for path in read_paths(scope.view.terminal.read_paths):
        argv += ["--ro-bind", str(path), str(path)]
    if info_fd is not None:
        argv += ["--info-fd", str(info_fd)]
    mode = scope.view.terminal.network
    # Fail closed: "on" without the way into the profile's namespace is loopback only.
    shares = mode == "host" or (mode == "on" and bool(enter))
    if not (network if network is not None else shares):
        argv.append("--unshare-net")
    # Later mounts win: writable binds first, then the hides (so a broad cwd
    # cannot re-expose a hidden home), then the own home and its writable parts.
    for path in outside_home:
        argv += ["--bind", str(path), str(path)]
    for path in sorted(hide, key=lambda p: len(p.parts)):
        if any(other != path and path.is_relative_to(other) for other in hide):
            continue  # inside a hidden folder already: not even its name shows
        if path.is_dir():
            argv += ["--tmpfs", str(path)]
        elif path.exists():
            argv += ["--ro-bind", "/dev/null", str(path)]
    argv += ["--ro-bind", str(home), str(home)]
    for path in inside_home:
        argv += ["--bind", str(path), str(path)]
    argv += _own_home_hides(scope, home)
    if credentials is not None:
        argv += ["--ro-bind", str(credentials), SANDBOX_CREDENTIALS]
    argv += _credential_data(credential_files)
    if writable.chdir is not None:
        argv += ["--chdir", str(writable.chdir)]
    argv.append("--")
    return argv


def _credential_data(files: Sequence[tuple[str, int]]) -> list[str]:
    if not files:
        return []
    folders = {SANDBOX_CREDENTIALS}
    for relative, _fd in files:
        parts = relative.split("/")[:-1]
        folders.update("/".join([SANDBOX_CREDENTIALS, *parts[: n + 1]]) for n in range(len(parts)))
    argv: list[str] = []
    for folder in sorted(folders, key=lambda f: (f.count("/"), f)):
        argv += ["--perms", "0700", "--dir", folder]
    for relative, fd in files:
        argv += ["--perms", "0400", "--ro-bind-data", str(fd), f"{SANDBOX_CREDENTIALS}/{relative}"]
    return argv


def _own_home_hides(scope: ProfileScope, home: Path) -> list[str]:
    # The home's secrets reach a command only as its env and /run/credentials;
    # its config, logs and allowlist are never writable from inside.
    argv: list[str] = []
    for name in (".env",):
        if (home / name).is_file():
            argv += ["--ro-bind", "/dev/null", str(home / name)]
    for mount in scope.credential_mounts:
        source = _real(mount.source)
        if source.is_file() and _under(source, [home]):
            argv += ["--ro-bind", "/dev/null", str(source)]
    for name in ("credentials", ".multiplex-state"):  # the allowlist's pending intents
        if (home / name).is_dir() and not (home / name).is_symlink():
            argv += ["--tmpfs", str(home / name)]
    for name in ("config.yaml", "logs"):
        if (home / name).exists() and not (home / name).is_symlink():
            argv += ["--ro-bind", str(home / name), str(home / name)]
    # docs/security.md#finished-output: finished runs' output, every session's, stays unread.
    runs = home / "logs" / "runs"
    if runs.is_dir() and not runs.is_symlink() and not (home / "logs").is_symlink():
        argv += ["--tmpfs", str(runs)]
    return argv


def sandbox_of(backend: str, setting: str) -> tuple[str | None, str | None]:
    """What a profile's commands run in here, and the warning to show operators (or None).

    ``local`` gives ``bwrap`` or ``none``; other backends give None (their
    isolation is the container or the remote host).
    """
    if backend != "local":
        return None, None
    choice = choose_sandbox(setting)
    return choice.sandbox, choice.error or choice.warning
