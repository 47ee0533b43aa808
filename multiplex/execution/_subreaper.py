"""The supervisor's side of the sub-reaper helper (docs/execution.md#unsandboxed-sandbox-none).

``spawn_reaped`` starts one unsandboxed command under its own sub-reaper,
forked by the helper of ``_reaper`` (started once per process, restarted if it
died), and returns a handle shaped like the part of ``subprocess.Popen`` that
``_process`` uses: the pid of the command's sub-reaper (a process group
leader: signalling its group reaches the command), its output pipes, ``wait``
and ``returncode``. The status is the command's, reported by its sub-reaper
once the whole tree has ended; a sub-reaper killed before it could report
gives ``-SIGKILL``'s like ``Popen`` would (its own death signal).
"""

from __future__ import annotations

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
from typing import IO

__all__ = ["Reaped", "spawn_reaped"]

_SCRIPT = str(Path(__file__).with_name("_reaper.py"))


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


def _send(fds: list[int]) -> socket.socket:
    """A new connection to a sub-reaper of the helper, given ``fds`` as its stdio."""
    global _helper
    mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        with _lock:
            for attempt in (0, 1):
                if _helper is None or not _helper.alive():
                    _helper = _Helper()
                try:
                    socket.send_fds(_helper.control, [b"r"], [theirs.fileno(), *fds])
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

    def __init__(self, conn: socket.socket, pid: int, stdout: IO[bytes], stderr: IO[bytes]) -> None:
        self.pid = pid
        self.stdout: IO[bytes] | None = stdout
        self.stderr: IO[bytes] | None = stderr
        self.stdin: IO[bytes] | None = None
        self.returncode: int | None = None
        self._conn = conn
        self._lock = threading.Lock()

    def wait(self, timeout: float | None = None) -> int:
        """The command's status, waiting up to ``timeout`` (``TimeoutExpired`` after).

        Safe from several threads at once (a stop's grace beside the run's own wait).
        """
        if self.returncode is None:
            poller = select.poll()
            poller.register(self._conn, select.POLLIN)
            wait_ms = -1 if timeout is None else max(0, math.ceil(timeout * 1000))
            if not poller.poll(wait_ms):
                raise subprocess.TimeoutExpired("sub-reaper", timeout or 0)
        with self._lock:
            if self.returncode is None:
                line = _read_line(self._conn)
                self.returncode = int(line[1:]) if line.startswith(b"S") else -signal.SIGKILL
            return self.returncode

    def poll(self) -> int | None:
        """The status if the command has ended (and its tree with it), else None."""
        try:
            return self.wait(0)
        except subprocess.TimeoutExpired:
            return None

    def exit_fd(self) -> int:
        """Readable once the status is there (or the sub-reaper is gone); valid until ``close``."""
        return self._conn.fileno()

    def close(self) -> None:
        """After the command: the connection to its sub-reaper. Once, by the run's thread."""
        self._conn.close()


def _read_line(conn: socket.socket) -> bytes:
    data = b""
    while not data.endswith(b"\n"):
        chunk = conn.recv(1)
        if not chunk:
            break
        data += chunk
    return data


def spawn_reaped(argv: Sequence[str], *, env: Mapping[str, str], cwd: Path | None) -> Reaped:
    """Start ``argv`` under a fresh sub-reaper (stdin ``/dev/null``); ``OSError`` if it cannot."""
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    null = os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)
    try:
        conn = _send([null, out_w, err_w])
    except BaseException:
        for fd in (out_r, err_r):
            os.close(fd)
        raise
    finally:
        for fd in (null, out_w, err_w):
            os.close(fd)
    try:
        body = json.dumps(
            {"argv": list(argv), "env": dict(env), "cwd": None if cwd is None else str(cwd)}
        ).encode()
        conn.sendall(struct.pack("!I", len(body)) + body)
        line = _read_line(conn)
    except OSError:
        line = b""
    if not line.startswith(b"P"):
        conn.close()
        os.close(out_r)
        os.close(err_r)
        why = line[2:].decode("utf-8", "replace").strip() or "the sub-reaper did not start"
        raise OSError(why)
    return Reaped(conn, int(line[1:]), open(out_r, "rb"), open(err_r, "rb"))
