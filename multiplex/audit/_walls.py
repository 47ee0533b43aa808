"""The walls, proved from inside each profile's real sandbox (docs/audit.md#the-walls).

One real command per profile, past the gate, checks what the operating system
alone must keep from it:

- canaries written for this audit in the supervisor's HOME, in the state
  folder beside ``multiplex.yaml`` (``.multiplex/``) and in a folder beside the
  project are unreadable;
- a canary port the audit opens on the host's loopback is unreachable, directly
  and through the proxy variables (under ``network: on`` the egress proxy must
  refuse it, and say so);
- with a non-empty ``egress.allow``, an unlisted host is refused by name;
- the sandbox it reports is the one it runs in: its own PID namespace, the
  syscall floor and ``no_new_privs`` ("sandbox reported on but off" is the top
  bug of a peer gateway).

A wall found down is a leak (exit 1) with a named finding; a profile whose
commands do not run in bubblewrap gets a note, never a pass.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shlex
import shutil
import socket
from collections.abc import Iterator
from pathlib import Path

from multiplex.audit._findings import Leak
from multiplex.audit._leaks import LeakCheck
from multiplex.execution import WORKSPACE, execute, sandbox_of
from multiplex.supervision import Supervisor

__all__ = ["check_walls"]

_UNLISTED = "multiplex-audit-unlisted.invalid"


@contextlib.contextmanager
def _canary_files(sup: Supervisor, token: str) -> Iterator[dict[str, Path]]:
    """Canary files where no command may read; removed afterwards (with any folder made for them)."""
    base = sup.config.base_dir
    places = {
        "the supervisor's HOME": Path.home(),
        "the state folder": base / ".multiplex",
        "a sibling folder": base.parent / f".multiplex-audit-sibling-{token}",
    }
    made: list[Path] = []
    files: dict[str, Path] = {}
    try:
        for label, folder in places.items():
            with contextlib.suppress(OSError):
                if not folder.exists():
                    folder.mkdir(mode=0o700)
                    made.append(folder)
                path = folder / f".multiplex-audit-canary-{token}"
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
                with os.fdopen(fd, "w") as handle:
                    handle.write(f"WALL-CANARY-{token}\n")
                files[label] = path
        yield files
    finally:
        for path in files.values():
            with contextlib.suppress(OSError):
                path.unlink()
        for folder in made:
            shutil.rmtree(folder, ignore_errors=True)


def _reached(listener: socket.socket, token: bytes) -> bool:
    """Whether a connection waiting on ``listener`` carried ``token`` (all are drained)."""
    reached = False
    while True:
        try:
            conn, _ = listener.accept()
        except OSError:  # BlockingIOError: none left
            return reached
        with conn:
            conn.settimeout(0.5)
            with contextlib.suppress(OSError):
                reached = reached or token in conn.recv(4096)


def _leak(name: str, surface: str, detail: str) -> Leak:
    return Leak("sandbox", name, surface, detail)


def check_walls(sup: Supervisor, name: str) -> LeakCheck:
    """The wall checks for profile ``name`` (module docstring)."""
    found = LeakCheck()
    view = sup.view(name)
    sandbox, warning = sandbox_of(view.backend, view.terminal.sandbox)
    if sandbox != "bwrap":
        why = warning or f"backend {view.backend}, sandbox {sandbox}"
        found.notes.append(f"{name}: wall checks skipped ({why})")
        return found
    own = sup.profiles[name].home / WORKSPACE  # made by the first command
    if view.cwd is not None and view.cwd != own and not view.cwd.is_dir():
        found.notes.append(f"{name}: wall checks skipped (its cwd does not exist)")
        return found
    token = secrets.token_hex(8)
    network = view.terminal.network
    with (
        _canary_files(sup, token) as canaries,
        socket.create_server(("127.0.0.1", 0), backlog=16) as port_canary,
    ):
        port_canary.setblocking(False)
        port = port_canary.getsockname()[1]
        # Nothing written to /dev/null: a view that lost its /dev must not hide a canary.
        lines = [f"cat {shlex.quote(str(p))}" for p in canaries.values()]
        # Each attempt carries the token, and the host's port is reached only if the token
        # arrives there: a connection from elsewhere on this host (a readiness poll on a
        # reused port) is not this sandbox, and inside the profile's own namespace the same
        # port number may belong to a listener of its own (its egress proxy's entry).
        lines += [
            f"(exec 3<>/dev/tcp/127.0.0.1/{port} && echo WALL-PORT-{token} >&3)",
            f"curl -s -m 3 http://127.0.0.1:{port}/WALL-PORT-{token}",
            "echo PIDNS=$(readlink /proc/self/ns/pid)",
            "grep -E '^(NoNewPrivs|Seccomp):' /proc/self/status",
        ]
        if view.terminal.egress.allow:
            lines.append(f"curl -s -m 3 http://{_UNLISTED}/")
        with sup.turn(name, session="audit-walls", context="cron") as scope:
            done = execute(scope, "\n".join(lines) + "\ntrue", hidden=sup.hidden_paths)
        reached = _reached(port_canary, f"WALL-PORT-{token}".encode())
    if done.error is not None:
        found.leaks.append(_leak(name, "walls", f"the wall check did not run: {done.error}"))
        return found
    out = done.stdout
    for label, path in canaries.items():
        # Which canary was read: its path is on stderr unless the read succeeded.
        if f"WALL-CANARY-{token}" in out and str(path) not in done.stderr:
            found.leaks.append(_leak(name, "sandbox view", f"a canary in {label} is readable"))
    if reached:
        found.leaks.append(
            _leak(
                name, "egress", f"a port on the host's loopback is reachable (network: {network})"
            )
        )
    elif network == "on" and not any(f"127.0.0.1:{port}" in r for r in done.egress_refused):
        found.leaks.append(_leak(name, "egress", "the egress proxy did not refuse a loopback port"))
    unlisted_refused = any(_UNLISTED in r for r in done.egress_refused)
    if network == "on" and view.terminal.egress.allow and not unlisted_refused:
        found.leaks.append(_leak(name, "egress", "an unlisted host was not refused"))
    pidns = next((ln[6:] for ln in out.splitlines() if ln.startswith("PIDNS=")), "")
    if not pidns or pidns == os.readlink("/proc/self/ns/pid"):
        found.leaks.append(
            _leak(name, "sandbox", "sandbox reported on but off (host PID namespace)")
        )
    if "NoNewPrivs:\t1" not in out or "Seccomp:\t2" not in out:
        found.leaks.append(_leak(name, "sandbox", "no syscall floor (seccomp or no_new_privs off)"))
    return found
