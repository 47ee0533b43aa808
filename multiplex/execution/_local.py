"""Run an approved command inside its scope (docs/execution.md).

A subprocess in its own process group, with the scope's cwd and command env
only, ``terminal.timeout`` killing the whole group, output capped per stream,
and the profile's credential files materialised for the run alone.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from multiplex._errors import ProfileConfigError
from multiplex.approval._decision import Decision
from multiplex.profiles import read_credential, write_new
from multiplex.scopes import ProfileScope

__all__ = ["OUTPUT_CAP", "Execution", "ProcessTracker", "RunResult", "execute"]

OUTPUT_CAP = 1024 * 1024  # bytes per stream (docs/execution.md)
_SHELL = shutil.which("bash") or "/bin/sh"
_KILL_GRACE = 2.0


@dataclass(frozen=True, slots=True)
class Execution:
    """What running one command produced (before redaction)."""

    exit_code: int | None
    stdout: str
    stderr: str
    timed_out: bool = False
    truncated: bool = False
    duration_ms: int = 0
    error: str | None = None


@dataclass(frozen=True, slots=True)
class RunResult:
    """One command's decision and, when it ran, its exit code and redacted output."""

    command: str
    decision: Decision
    exit_code: int | None = None
    stdout: str = ""
    stderr: str = ""
    timed_out: bool = False
    truncated: bool = False
    duration_ms: int = 0
    mounts: tuple[dict[str, str], ...] = field(default=())

    @property
    def ok(self) -> bool:
        return self.decision.approved and self.exit_code == 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "command": self.command,
            "decision": {
                "outcome": self.decision.outcome.value,
                "cause": self.decision.cause,
                "decided_by": self.decision.decided_by.value,
                "rule": self.decision.rule,
                "message": self.decision.message,
            },
            "exit_code": self.exit_code,
            "stdout": self.stdout,
            "stderr": self.stderr,
            "timed_out": self.timed_out,
            "truncated": self.truncated,
            "duration_ms": self.duration_ms,
            "mounts": list(self.mounts),
        }


class _Capped:
    """Drains a pipe to the end, keeping the first ``OUTPUT_CAP`` bytes."""

    def __init__(self, stream: IO[bytes]) -> None:
        self.data = bytearray()
        self.truncated = False
        self._thread = threading.Thread(target=self._drain, args=(stream,), daemon=True)
        self._thread.start()

    def _drain(self, stream: IO[bytes]) -> None:
        with stream:
            while chunk := stream.read(65536):
                room = OUTPUT_CAP - len(self.data)
                if room > 0:
                    self.data += chunk[:room]
                if len(chunk) > room:
                    self.truncated = True  # keep reading so the child never blocks

    def text(self, timeout: float) -> str:
        self._thread.join(timeout)
        return self.data.decode("utf-8", "replace")


class ProcessTracker:
    """The commands a supervisor is running now, so a shutdown can end them."""

    def __init__(self) -> None:
        self._procs: set[subprocess.Popen[bytes]] = set()
        self._lock = threading.Lock()

    def add(self, proc: subprocess.Popen[bytes]) -> None:
        with self._lock:
            self._procs.add(proc)

    def discard(self, proc: subprocess.Popen[bytes]) -> None:
        with self._lock:
            self._procs.discard(proc)

    def __len__(self) -> int:
        return len(self._procs)

    def kill_all(self) -> int:
        """Kill every running command's process group; return how many."""
        with self._lock:
            procs = list(self._procs)
        for proc in procs:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
        return len(procs)


def _materialise(scope: ProfileScope) -> tuple[Path | None, list[str]]:
    # docs/execution.md: a private per-run directory (0700), files 0400, removed afterwards.
    # docs/security.md#credentials-checked-when-used: each file is re-checked and read now;
    # one that fails is not mounted, whatever the last load said.
    if not scope.credential_mounts:
        return None, []
    directory = Path(tempfile.mkdtemp(prefix=f"multiplex-cred-{scope.name}-"))
    refused: list[str] = []
    dir_fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        for mount in scope.credential_mounts:
            try:
                write_new(dir_fd, mount.target, read_credential(scope.home, mount.relative))
            except (ProfileConfigError, OSError) as exc:
                why = exc.reason if isinstance(exc, ProfileConfigError) else str(exc)
                # The path last: "token.txt: <why>" would read as a secret assignment.
                refused.append(f"[multiplex: not mounted ({why}): {mount.relative}]")
    finally:
        os.close(dir_fd)
    return directory, refused


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(_KILL_GRACE)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)  # grandchildren that ignored TERM


def execute(
    scope: ProfileScope,
    command: str,
    *,
    timeout: float | None = None,
    tracker: ProcessTracker | None = None,
) -> Execution:
    """Run ``command`` for the local backend in ``scope``; never touches os.environ or cwd."""
    limit = scope.view.timeout if timeout is None else timeout
    started = time.monotonic()
    env = dict(scope.env)
    cwd = scope.cwd
    if cwd is not None and not cwd.is_dir():
        return Execution(None, "", f"working directory does not exist: {cwd}", error="cwd missing")
    creds, refused = _materialise(scope)
    try:
        if creds is not None:
            env["CREDENTIALS_DIRECTORY"] = str(creds)
        proc = subprocess.Popen(
            [_SHELL, "-c", command],
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,  # its own process group: a timeout kills all of it
        )
        assert proc.stdout is not None and proc.stderr is not None
        if tracker is not None:
            tracker.add(proc)
        out, err = _Capped(proc.stdout), _Capped(proc.stderr)
        timed_out = False
        try:
            try:
                proc.wait(limit)
            except subprocess.TimeoutExpired:
                timed_out = True
            # Also reap the group when the shell exited but left children behind.
            _kill_group(proc)
            if proc.returncode is None:
                proc.wait()
        finally:
            if tracker is not None:
                tracker.discard(proc)
        stdout, stderr = out.text(5.0), err.text(5.0)
        if refused:
            stderr = "\n".join(refused) + "\n" + stderr
        if timed_out:
            stderr += f"\n[multiplex: killed after terminal.timeout {limit:g}s]"
        return Execution(
            None if timed_out else proc.returncode,
            stdout,
            stderr,
            timed_out=timed_out,
            truncated=out.truncated or err.truncated,
            duration_ms=int((time.monotonic() - started) * 1000),
        )
    finally:
        if creds is not None:
            shutil.rmtree(creds, ignore_errors=True)
