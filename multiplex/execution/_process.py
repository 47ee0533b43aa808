"""Starting, capping, timing out and stopping the process that runs a command.

Every backend ends in one local process (the sub-reaper, ``bwrap``, the
container CLI, the ssh client); this module runs it in its own process group,
drains stdout and stderr keeping the first ``OUTPUT_CAP`` bytes of each (in
the thread that waits for it: ``_output``), and
stops it on timeout, cancel and shutdown: a backend's own stop action first
(kill the container, end the remote process group), then SIGTERM to the group,
SIGKILL after a grace.
"""

from __future__ import annotations

import collections
import contextlib
import math
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO

from multiplex.execution._output import OUTPUT_CAP, Captured, OnOutput, pump
from multiplex.execution._result import Execution
from multiplex.execution._subreaper import Reaped, spawn_reaped

__all__ = ["OUTPUT_CAP", "OnOutput", "ProcessTracker", "Running", "run_process"]

_KILL_GRACE = 2.0
_DRAIN_AFTER_EXIT = 5.0  # seconds to read what is left once the process is gone

_Proc = subprocess.Popen[bytes] | Reaped


def _exit_fd(proc: _Proc) -> int | None:
    """An fd readable once ``proc`` exits (a pidfd, the sub-reaper's connection), or None.

    Waited on by poll with the pipes, not ``Popen.wait(timeout)``, which polls
    with sleeps of up to 50 ms and so adds tens of milliseconds to every short
    command.
    """
    if isinstance(proc, Reaped):
        return proc.exit_fd()
    try:
        return os.pidfd_open(proc.pid)
    except OSError:  # an old kernel, or the process is already reaped
        return None


def _feed(stream: IO[bytes], data: bytes) -> None:
    with contextlib.suppress(OSError), stream:
        stream.write(data)


class Running:
    """One started command process: its group, its run and how to stop it (idempotent)."""

    def __init__(
        self,
        proc: _Proc,
        run_id: str | None,
        on_stop: Callable[[], None] | None = None,
    ) -> None:
        self.proc = proc
        self.run_id = run_id
        self.cancelled = False
        self._on_stop = on_stop
        self._lock = threading.Lock()
        self._stopped = False

    def stop(self, *, cancelled: bool = False) -> None:
        """End the command: the backend's stop action, SIGTERM the group, SIGKILL after a grace."""
        if cancelled:
            self.cancelled = True
        with self._lock:
            if self._stopped:
                return
            self._stopped = True
            if self._on_stop is not None:
                with contextlib.suppress(Exception):  # best effort; the group kill follows
                    self._on_stop()
            self._signal(signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(_KILL_GRACE)
            self._signal(signal.SIGKILL)  # grandchildren that ignored TERM

    def settle(self) -> None:
        """After the process exited: end what is left of its group (or wait for a stop underway)."""
        with self._lock:
            self._signal(signal.SIGKILL)

    def _signal(self, sig: int) -> None:
        if isinstance(self.proc, Reaped):  # only while its sub-reaper serves this command
            self.proc.signal_group(sig)
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, sig)


class ProcessTracker:
    """The commands a supervisor is running now, so a cancel or a shutdown can end them."""

    def __init__(self) -> None:
        self._running: set[Running] = set()
        self._cancelled: collections.deque[str] = collections.deque(maxlen=4096)
        self._lock = threading.Lock()

    def add(self, running: Running) -> None:
        with self._lock:
            self._running.add(running)
            late = running.run_id is not None and running.run_id in self._cancelled
        if late:  # the run was cancelled while this command was starting
            running.stop(cancelled=True)

    def discard(self, running: Running) -> None:
        with self._lock:
            self._running.discard(running)

    def __len__(self) -> int:
        return len(self._running)

    def _stop_all(self, targets: list[Running], cancelled: bool, wait: bool = True) -> int:
        threads = [
            threading.Thread(target=r.stop, kwargs={"cancelled": cancelled}, daemon=True)
            for r in targets
        ]
        for thread in threads:
            thread.start()
        for thread in threads if wait else ():
            thread.join()
        return len(targets)

    def cancel(self, run_id: str, *, wait: bool = True) -> int:
        """Stop every command of run ``run_id`` (now and any that starts later); return how many."""
        with self._lock:
            self._cancelled.append(run_id)
            targets = [r for r in self._running if r.run_id == run_id]
        return self._stop_all(targets, True, wait)

    def kill_all(self) -> int:
        """Stop every running command (backend stop action, then its group); return how many."""
        with self._lock:
            targets = list(self._running)
        return self._stop_all(targets, False)


def run_process(
    argv: Sequence[str],
    *,
    env: Mapping[str, str],
    cwd: Path | None,
    timeout: float,
    tracker: ProcessTracker | None,
    run_id: str | None,
    backend: str,
    sandbox: str,
    on_stop: Callable[[], None] | None = None,
    pass_fds: tuple[int, ...] = (),
    on_start: Callable[[], None] | None = None,
    stdin: bytes | None = None,
    on_output: OnOutput | None = None,
    reaped: bool = False,
) -> Execution:
    """Run ``argv`` in its own process group with a timeout; capped, unredacted output.

    ``on_output`` sees the output as it arrives (unredacted: redact before showing it).
    ``reaped``: under its own sub-reaper (``_subreaper``; no ``stdin``, no ``pass_fds``).
    """
    started = time.monotonic()
    proc: _Proc
    try:
        if reaped:
            proc = spawn_reaped(argv, env=env, cwd=cwd)
        else:
            proc = subprocess.Popen(
                list(argv),
                cwd=cwd,
                env=dict(env),
                stdin=subprocess.DEVNULL if stdin is None else subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,  # its own process group: a stop reaches all of it
                pass_fds=pass_fds,
            )
    except OSError as exc:
        reason = f"cannot start {argv[0]}: {exc.strerror or exc}"
        if cwd is not None and not cwd.is_dir():  # gone since the plan: the folder, not the program
            reason = f"working directory does not exist: {cwd}"
        return Execution(None, "", reason, error=reason, backend=backend, sandbox=sandbox)
    assert proc.stdout is not None and proc.stderr is not None
    if on_start is not None:
        on_start()
    if stdin is not None:
        assert proc.stdin is not None
        threading.Thread(target=_feed, args=(proc.stdin, stdin), daemon=True).start()
    streams = (
        Captured(proc.stdout, "stdout", on_output),
        Captured(proc.stderr, "stderr", on_output),
    )
    running = Running(proc, run_id, on_stop)
    if tracker is not None:
        tracker.add(running)
    exit_fd = _exit_fd(proc)
    timed_out = False

    def wait_exit(deadline: float) -> bool:
        return pump(
            streams,
            exit_fd=exit_fd,
            exited=lambda: proc.poll() is not None,
            deadline=deadline,
            until_exit=True,
        )

    try:
        if not wait_exit(started + timeout):
            timed_out = True
            # Stopped beside the drain: a command writing on its way out never blocks.
            stopper = threading.Thread(target=running.stop, daemon=True)
            stopper.start()
            wait_exit(math.inf)
            stopper.join()
        running.settle()
        proc.wait()
        pump(
            streams,
            exit_fd=None,
            exited=lambda: True,
            deadline=time.monotonic() + _DRAIN_AFTER_EXIT,
            until_exit=False,
        )
    finally:
        if tracker is not None:
            tracker.discard(running)
        for stream in streams:
            stream.close()  # a pipe a leftover outside the group still holds
        if isinstance(proc, Reaped):
            proc.close()
        elif exit_fd is not None:
            os.close(exit_fd)
    stdout, stderr = streams[0].text(), streams[1].text()
    cancelled = running.cancelled and not timed_out
    if timed_out:
        stderr += f"\n[multiplex: killed after terminal.timeout {timeout:g}s]"
    elif cancelled:
        stderr += "\n[multiplex: cancelled]"
    return Execution(
        None if timed_out or cancelled else proc.returncode,
        stdout,
        stderr,
        timed_out=timed_out,
        truncated=streams[0].truncated or streams[1].truncated,
        duration_ms=int((time.monotonic() - started) * 1000),
        backend=backend,
        sandbox=sandbox,
        cancelled=cancelled,
    )
