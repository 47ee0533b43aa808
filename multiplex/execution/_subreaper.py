"""The supervisor's side of the sub-reaper helper (docs/execution.md#unsandboxed-sandbox-none).

``spawn_reaped`` starts one unsandboxed command under a sub-reaper of the
helper of ``_reaper`` (started once per process, restarted if it died; its
sub-reapers serve one command at a time and are kept), and returns a handle
shaped like the part of ``subprocess.Popen`` that ``_process`` uses: the pid of the command's sub-reaper (a process group
leader: signalling its group reaches the command), its output pipes, ``wait``
and ``returncode``. The status is the command's, reported by its sub-reaper
once the whole tree has ended; a sub-reaper killed before it could report
gives ``-SIGKILL``'s like ``Popen`` would (its own death signal). Its group is
signalled only while it serves this command (``signal_group``): once the
status is in, or the connection closed, it may be serving another.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import select
import signal
import socket
import struct
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path

from multiplex.execution._output import Pipe

__all__ = ["Reaped", "spawn_reaped"]

_SCRIPT = str(Path(__file__).with_name("_reaper.py"))
INLINE_REQUEST = 32768  # as _reaper.INLINE_REQUEST (that script imports nothing of the package)


class _Helper:
    """The one helper process of this supervisor process and its control socket."""

    def __init__(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-I", "-S", _SCRIPT, "--serve", str(theirs.fileno())],
                stdin=subprocess.DEVNULL,
                pass_fds=(theirs.fileno(),),
                start_new_session=True,  # a terminal's ^C is the supervisor's to handle
            )
        finally:
            theirs.close()
        self.control = ours

    def alive(self) -> bool:
        return self.proc.poll() is None


_lock = threading.Lock()
_helper: _Helper | None = None


def _send(fds: list[int], message: bytes) -> socket.socket:
    """A new connection to a sub-reaper of the helper, given ``fds`` as its stdio."""
    global _helper
    mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        with _lock:
            for attempt in (0, 1):
                if _helper is None or not _helper.alive():
                    _helper = _Helper()
                try:
                    socket.send_fds(_helper.control, [message], [theirs.fileno(), *fds])
                    break
                except OSError:
                    _helper = None  # gone between the check and the send: start anew once
                    if attempt:
                        raise
    finally:
        theirs.close()
    return mine


class Reaped:
    """One command running under its sub-reaper: the ``Popen`` surface ``_process`` needs."""

    def __init__(self, conn: socket.socket) -> None:
        self.pid = 0
        self.stdout: Pipe | None = None
        self.stderr: Pipe | None = None
        self.stdin: Pipe | None = None
        self.returncode: int | None = None
        self._conn = conn
        self._buffer = b""
        self._lock = threading.Lock()
        self._closed = False

    def started(self, pid: int, stdout: Pipe, stderr: Pipe) -> Reaped:
        """The command runs: its sub-reaper's pid (its group) and the command's output pipes."""
        self.pid, self.stdout, self.stderr = pid, stdout, stderr
        return self

    def _line(self) -> bytes:
        """The sub-reaper's next line (``P<pid>``, ``S<status>``, ``E <why>``); b"" if it is gone."""
        while b"\n" not in self._buffer:
            chunk = self._conn.recv(64)
            if not chunk:
                return b""
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line

    def wait(self, timeout: float | None = None) -> int:
        """The command's status, waiting up to ``timeout`` (``TimeoutExpired`` after).

        Safe from several threads at once (a stop's grace beside the run's own wait).
        """
        if self.returncode is None and b"\n" not in self._buffer:
            poller = select.poll()
            poller.register(self._conn, select.POLLIN)
            wait_ms = -1 if timeout is None else max(0, math.ceil(timeout * 1000))
            if not poller.poll(wait_ms):
                raise subprocess.TimeoutExpired("sub-reaper", timeout or 0)
        with self._lock:
            if self.returncode is None:
                line = b"" if self._closed else self._line()
                self.returncode = int(line[1:]) if line.startswith(b"S") else -signal.SIGKILL
            return self.returncode

    def poll(self) -> int | None:
        """The status if the command has ended (and its tree with it), else None."""
        try:
            return self.wait(0)
        except subprocess.TimeoutExpired:
            return None

    def signal_group(self, sig: int) -> None:
        """Signal the sub-reaper's process group (the command's) while it serves this command.

        Not once its status is in (the sub-reaper ended the whole tree before it
        said so) nor after ``close``: the sub-reaper then serves other commands.
        A sub-reaper that died without a status leaves its group to this signal.
        """
        if not self._closed:
            self.poll()  # a status already sent: nothing of the command is left to signal
        with self._lock:
            if self._closed or (self.returncode is not None and self.returncode >= 0):
                return
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.pid, sig)

    def exit_fd(self) -> int | None:
        """Readable once the status is there (or the sub-reaper is gone); valid until ``close``.

        None when the status came in already (with the pid): ``poll`` says so at once.
        """
        return None if b"\n" in self._buffer else self._conn.fileno()

    def close(self) -> None:
        """After the command: the connection to its sub-reaper. Once, by the run's thread."""
        with self._lock:
            self._closed = True
            self._conn.close()


_null_fd: int | None = None


def _null() -> int:
    """``/dev/null`` (every command's stdin), opened once per process."""
    global _null_fd
    if _null_fd is None:
        _null_fd = os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)
    return _null_fd


def spawn_reaped(argv: Sequence[str], *, env: Mapping[str, str], cwd: Path | None) -> Reaped:
    """Start ``argv`` under a fresh sub-reaper (stdin ``/dev/null``); ``OSError`` if it cannot."""
    body = json.dumps(
        {"argv": list(argv), "env": dict(env), "cwd": None if cwd is None else str(cwd)}
    ).encode()
    inline = len(body) <= INLINE_REQUEST  # one message; a longer one follows on the connection
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    try:
        with _lock:
            null = _null()
        conn = _send([null, out_w, err_w], b"r" + body if inline else b"s")
    except BaseException:
        for fd in (out_r, err_r):
            os.close(fd)
        raise
    finally:
        for fd in (out_w, err_w):
            os.close(fd)
    reaped = Reaped(conn)
    try:
        if not inline:
            conn.sendall(struct.pack("!I", len(body)) + body)
        line = reaped._line()
    except OSError:
        line = b""
    if not line.startswith(b"P"):
        reaped.close()
        os.close(out_r)
        os.close(err_r)
        why = line[2:].decode("utf-8", "replace").strip() or "the sub-reaper did not start"
        raise OSError(why)
    return reaped.started(int(line[1:]), Pipe(out_r), Pipe(err_r))
