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
new network namespace holding only loopback. Which paths are shown, hidden
and writable is ``_sandbox_binds``'s; this module puts them in their order,
checks that bwrap works here (``choose_sandbox``) and stops a sandbox
(``SandboxInfo``).
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
import subprocess
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from multiplex.execution.sandbox._etc_mirror import etc_binds, hide_copy
from multiplex.execution.sandbox._root_view import runtime_binds, runtime_paths, system_binds
from multiplex.execution.sandbox._sandbox_binds import (
    workspace_of,  # re-exported: the local backend and kernels import it from here
)
from multiplex.execution.sandbox._seccomp import seccomp_available, seccomp_fd
from multiplex.execution.sandbox._view_cache import view_binds

if TYPE_CHECKING:
    from multiplex.scopes import ProfileScope

__all__ = [
    "SANDBOX_CREDENTIALS",
    "SandboxChoice",
    "SandboxInfo",
    "bwrap_status",
    "choose_sandbox",
    "sandbox_argv",
    "sandbox_of",
    "workspace_of",
]

SANDBOX_CREDENTIALS = "/run/credentials"
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
    # Folders of the sandbox's own root, itself a fresh tmpfs: as empty and as
    # private as a tmpfs each, without three more mounts (each costs bwrap a
    # mount and the kernel a superblock, per command).
    "--dir",
    "/tmp",
    "--dir",
    "/run",
    "--dir",
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
    view = view_binds(scope, hidden)
    writable = view.writable
    etc = etc_binds()
    argv = [*enter, bwrap, *_BASE, *runtime_binds(), *etc, "--seccomp", str(seccomp)]
    for path in (*runtime_paths(), *view.read):
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
    for path in writable.outside_home:
        argv += ["--bind", str(path), str(path)]
    argv += view.hides
    argv += ["--ro-bind", str(view.home), str(view.home)]
    for path in writable.inside_home:
        argv += ["--bind", str(path), str(path)]
    argv += view.home_hides
    argv += hide_copy(etc, (*view.read, *writable.outside_home, *writable.inside_home))
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


def sandbox_of(backend: str, setting: str) -> tuple[str | None, str | None]:
    """What a profile's commands run in here, and the warning to show operators (or None).

    ``local`` gives ``bwrap`` or ``none``; other backends give None (their
    isolation is the container or the remote host).
    """
    if backend != "local":
        return None, None
    choice = choose_sandbox(setting)
    return choice.sandbox, choice.error or choice.warning
