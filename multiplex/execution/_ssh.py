"""The ``ssh`` backend: the OpenSSH client, host keys checked strictly (docs/execution.md#ssh).

``ssh -F /dev/null`` (no user or system config), only ``terminal.identity_file``
(a file of the home, re-checked when used) as a key, ``terminal.known_hosts``
(a file of the home) as the only known hosts, ``StrictHostKeyChecking=yes``
and ``BatchMode=yes``: an unknown or changed host key fails, never accepted on
first use. The remote script arrives on stdin, not in any argv, so env values
and credentials never show in a remote process list: it makes a private
``$CREDENTIALS_DIRECTORY``, exports the env (each value quoted), changes to
``terminal.cwd`` and runs the command in a new session whose process group a
timeout or cancel ends through a second connection. A connection failure is
one line in the result.
"""

from __future__ import annotations

import base64
import contextlib
import functools
import os
import re
import secrets
import shlex
import shutil
import subprocess
import tempfile
from pathlib import Path

from multiplex._errors import ProfileConfigError
from multiplex.execution._plan import Plan, RunContext
from multiplex.execution._result import Execution
from multiplex.profiles import read_credential
from multiplex.scopes import ProfileScope

__all__ = ["plan_ssh", "ssh_failure"]

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_NOT_PASSED = frozenset({"PATH", "HOME", "TERM"})  # the remote host's own
# What the OpenSSH client itself says when it cannot connect or authenticate.
_CLIENT_ERRORS = (
    "ssh: ",
    "Host key verification failed",
    "Permission denied",
    "No ED25519 host key is known",
    "host key is known",
    "Connection closed by",
    "Connection timed out",
    "kex_exchange_identification",
    "Load key",
)


def ssh_failure(done: Execution, where: str) -> Execution:
    """Exit 255 with the client's own complaint: one line saying why, no remote exit code."""
    if done.exit_code != 255:
        return done
    lines = [line.strip() for line in done.stderr.splitlines() if line.strip()]
    said = [line for line in lines if any(m in line for m in _CLIENT_ERRORS)]
    if not said:
        return done
    reason = f"ssh {where}: {said[-1]}"
    return Execution(
        None, done.stdout, reason, error=reason, backend="ssh", sandbox="ssh",
        duration_ms=done.duration_ms,
    )  # fmt: skip


def _script(scope: ProfileScope, command: str, pidfile: str) -> str:
    lines = ["umask 077", "mx_d=$(mktemp -d) || exit 125", f"mx_p={shlex.quote(pidfile)}"]
    lines.append('trap \'rm -rf "$mx_d" "$mx_p"\' EXIT')
    for mount in scope.credential_mounts:
        rel = os.path.normpath(mount.relative)
        data = base64.b64encode(read_credential(scope.home, mount.relative)).decode()
        target = f'"$mx_d"/{shlex.quote(rel)}'
        lines.append(f"mkdir -p \"$(dirname {target})\" && base64 -d > {target} <<'MXEOF'")
        lines += [data, "MXEOF", f"chmod 0400 {target}"]
    if scope.credential_mounts:
        lines.append('export CREDENTIALS_DIRECTORY="$mx_d"')
    for key, value in scope.env.items():
        if key not in _NOT_PASSED and _NAME.match(key):
            lines.append(f"export {key}={shlex.quote(value)}")
    cwd = scope.view.terminal.cwd
    if cwd and cwd.strip() not in ("", ".", "auto", "cwd"):
        cwd = cwd.strip()
        target = f'"$HOME"/{shlex.quote(cwd[2:])}' if cwd.startswith("~/") else shlex.quote(cwd)
        if cwd == "~":
            target = '"$HOME"'
        lines.append(f"cd {target} || exit 125")
    # A new session: its process group is what a timeout or cancel ends.
    lines.append(f"setsid sh -c {shlex.quote(command)} </dev/null & mx_c=$!")
    lines.append('echo "$mx_c" > "$mx_p"')
    lines.append("trap 'kill -TERM -\"$mx_c\" 2>/dev/null' HUP TERM INT")
    lines.append('wait "$mx_c"; mx_rc=$?; exit "$mx_rc"')
    return "\n".join(lines) + "\n"


def _key_copy(scope: ProfileScope, directory: Path) -> tuple[Path | None, str | None]:
    rel = scope.view.terminal.identity_file
    if rel is None:
        return None, None
    if not (scope.home / rel).exists():
        return None, None  # no key offered: authentication fails closed
    try:
        data = read_credential(scope.home, rel)
    except (ProfileConfigError, OSError) as exc:
        why = exc.reason if isinstance(exc, ProfileConfigError) else str(exc)
        return None, f"terminal.identity_file: not used ({why})"
    path = directory / "identity"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
    return path, None


def _stop(base: list[str], pidfile: str) -> None:
    # A second connection ends the remote process group (closing the channel would not).
    pid = f"$(cat {shlex.quote(pidfile)} 2>/dev/null)"
    remote = f'p={pid}; [ -n "$p" ] && {{ kill -TERM -"$p"; sleep 1; kill -KILL -"$p"; }} 2>/dev/null; true'
    with contextlib.suppress(OSError, subprocess.TimeoutExpired):
        subprocess.run([*base, remote], capture_output=True, timeout=20, check=False)


def plan_ssh(scope: ProfileScope, command: str, context: RunContext) -> Plan:
    """The ssh backend's plan: ``ssh ... sh -s`` with the script on stdin."""
    terminal = scope.view.terminal
    binary = shutil.which("ssh")
    if binary is None:
        return Plan("ssh", "ssh", error="the OpenSSH client (ssh) is not installed")
    if not terminal.host:
        return Plan("ssh", "ssh", error="terminal.host is required for backend ssh")
    if not terminal.known_hosts:
        return Plan(
            "ssh", "ssh", error="terminal.known_hosts is required: host keys are checked strictly"
        )
    known = scope.home / terminal.known_hosts
    if known.is_symlink() or (
        known.exists() and not known.resolve().is_relative_to(scope.home.resolve())
    ):
        return Plan(
            "ssh", "ssh", error="terminal.known_hosts must be a file of the home, not a link"
        )
    private = Path(tempfile.mkdtemp(prefix=f"multiplex-ssh-{scope.name}-"))
    cleanup = functools.partial(shutil.rmtree, private, True)
    key, refused = _key_copy(scope, private)
    if refused is not None:
        cleanup()
        return Plan("ssh", "ssh", error=refused)
    known_copy = private / "known_hosts"
    known_copy.write_bytes(known.read_bytes() if known.is_file() else b"")
    user = f"{terminal.user}@" if terminal.user else ""
    base = [binary, "-F", "/dev/null", "-T", "-p", str(terminal.port)]
    base += ["-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=yes"]
    base += ["-o", f"UserKnownHostsFile={known_copy}", "-o", "GlobalKnownHostsFile=/dev/null"]
    base += ["-o", "IdentitiesOnly=yes", "-o", "IdentityAgent=none", "-o", "ConnectTimeout=10"]
    base += ["-o", "ServerAliveInterval=5", "-o", "ServerAliveCountMax=3", "-o", "LogLevel=ERROR"]
    base += ["-i", str(key)] if key is not None else ["-o", "IdentityFile=/dev/null"]
    base += ["--", f"{user}{terminal.host}"]
    pidfile = f"/tmp/multiplex-ssh-{secrets.token_hex(8)}.pid"
    try:
        script = _script(scope, command, pidfile)
    except (ProfileConfigError, OSError) as exc:
        cleanup()
        why = exc.reason if isinstance(exc, ProfileConfigError) else str(exc)
        return Plan("ssh", "ssh", error=f"a credential file was not sent ({why})")
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG")}
    where = f"{user}{terminal.host}:{terminal.port}"
    return Plan(
        "ssh",
        "ssh",
        (*base, "sh -s"),
        env,
        None,
        on_stop=functools.partial(_stop, base, pidfile),
        cleanup=cleanup,
        stdin=script.encode(),
        finish=functools.partial(ssh_failure, where=where),
    )
