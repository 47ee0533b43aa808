"""The kernel's tool channel: shell requests from ``multiplex.kernel.run`` (docs/kernels.md#authority).

One Unix socket per kernel, in the kernel's private runtime directory. A
request must carry the kernel's key (known only to that kernel process) and the
token of a cell that is running NOW in that kernel, come from the kernel's own
process (its peer credentials, taken when the kernel introduced itself before
its first cell) and from its main thread, the cell's own (seen from outside,
:mod:`._sender`); it is then gated and run under that cell's
:class:`CellAuthority` — the scope of the turn that sent the cell, never the
one that started the kernel. A settled cell's token is dead.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import logging
import os
import secrets
import socket
import struct
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from multiplex.execution._process import ProcessTracker, Running
from multiplex.execution._result import RunResult
from multiplex.execution.kernels._sender import NOT_THE_CELLS_THREAD, cell_thread_refusal
from multiplex.kernel import request_digest
from multiplex.scopes import ProfileScope, bind, restore

__all__ = ["CellAuthority", "Dispatch", "ToolChannel"]

log = logging.getLogger("multiplex.kernels")
_MAX_REQUEST = 1024 * 1024
_MAX_WAITING = 8  # requests of one kernel waiting to be seen from its cell's thread
# (scope, command, run_id, tracker, timeout) -> the gated result
Dispatch = Callable[[ProfileScope, str, str | None, ProcessTracker, float | None], RunResult]


class _CellTracker(ProcessTracker):
    """The commands one cell started; a command starting after the cell settled dies at once."""

    def __init__(self) -> None:
        super().__init__()
        self.closed = False

    def add(self, running: Running) -> None:
        super().add(running)
        if self.closed:
            running.stop()


class CellAuthority:
    """The authority of one running cell: its scope, run, token and tool-call budget."""

    def __init__(self, scope: ProfileScope, run_id: str | None, max_calls: int) -> None:
        self.scope = scope
        self.run_id = run_id
        self.max_calls = max_calls
        self.token = secrets.token_urlsafe(24)
        self.calls = 0
        self.tracker = _CellTracker()
        self.ended = threading.Event()  # set when the cell settles
        self._answered: set[int] = set()  # digests of the requests taken to the gate
        self._lock = threading.Lock()

    @property
    def settled(self) -> bool:
        return self.ended.is_set()

    def admit(self, digest: int) -> str | None:
        """Count one request against the budget; the refusal reason, or None."""
        with self._lock:
            if self.ended.is_set():
                return "the cell that sent this request has settled"
            if digest in self._answered:
                return "this request was answered already"  # a copy of the cell's own
            if self.calls >= self.max_calls:
                return f"code_execution.max_tool_calls ({self.max_calls}) reached for this cell"
            self._answered.add(digest)
            self.calls += 1
            return None

    def settle(self) -> None:
        """The cell ended: its token is dead and the commands it started are killed."""
        with self._lock:
            self.ended.set()
            self.tracker.closed = True
        self.tracker.kill_all()


class ToolChannel:
    """Serves one kernel's shell requests under the authority of its running cell."""

    def __init__(self, path: Path, dispatch: Dispatch) -> None:
        self.path = path
        self.key = secrets.token_urlsafe(32)
        self._dispatch = dispatch
        # The kernel's process, from the peer credentials of its hello (sent
        # before any cell runs); every later request must come from it.
        self.kernel_pid: int | None = None
        self._waiting = 0
        self._cell: CellAuthority | None = None
        self._lock = threading.Lock()
        self._server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._server.bind(str(path))
        os.chmod(path, 0o600)
        self._server.listen(16)
        self._closed = False
        self._thread = threading.Thread(
            target=self._serve, name=f"multiplex-kernel-channel-{path.parent.name}", daemon=True
        )
        self._thread.start()

    # -- the running cell ---------------------------------------------------------
    def open_cell(self, authority: CellAuthority) -> None:
        with self._lock:
            self._cell = authority

    def close_cell(self, authority: CellAuthority) -> None:
        with self._lock:
            if self._cell is authority:
                self._cell = None
        authority.settle()

    def _authority(self, request: dict[str, Any], pid: int) -> CellAuthority | str:
        key, token = request.get("key"), request.get("cell")
        if not isinstance(key, str) or not hmac.compare_digest(key, self.key):
            return "not authenticated as this kernel"
        if pid != self.kernel_pid:
            return "this request did not come from the kernel's own process"
        with self._lock:
            cell = self._cell
        if cell is None:
            return "no cell of this kernel is running"
        if not isinstance(token, str) or not hmac.compare_digest(token, cell.token):
            return "the cell that sent this request has settled"
        return cell

    def _hello(self, request: dict[str, Any], pid: int) -> dict[str, Any]:
        key = request.get("key")
        if not isinstance(key, str) or not hmac.compare_digest(key, self.key):
            return {"ok": False, "refused": "not authenticated as this kernel"}
        with self._lock:
            if self.kernel_pid is not None or pid <= 0:
                return {"ok": False, "refused": "the kernel has introduced itself already"}
            self.kernel_pid = pid
        return {"ok": True}

    def _from_cell_thread(self, cell: CellAuthority, pid: int, digest: int) -> str | None:
        with self._lock:
            if self._waiting >= _MAX_WAITING:
                return "too many requests of this kernel wait for its cell's thread"
            self._waiting += 1
        try:
            refused = cell_thread_refusal(pid, digest, cell.ended)
        finally:
            with self._lock:
                self._waiting -= 1
        if refused == NOT_THE_CELLS_THREAD:
            log.warning("kernel %s: refused a request from another thread", self.path.parent.name)
        return refused

    # -- serving --------------------------------------------------------------------
    def _serve(self) -> None:
        while not self._closed:
            try:
                conn, _ = self._server.accept()
            except OSError:
                return  # closed
            threading.Thread(
                target=self._handle, args=(conn,), name="multiplex-kernel-request", daemon=True
            ).start()

    def _handle(self, conn: socket.socket) -> None:
        with conn:
            try:
                line, request = _read_request(conn)
                pid = _peer_pid(conn)
                if request.get("hello") is True:
                    reply = self._hello(request, pid)
                else:
                    reply = self._answer(request, pid, request_digest(line))
            except Exception as exc:  # a broken request never reaches the gate
                log.warning("kernel tool request failed: %s", type(exc).__name__)
                reply = {"ok": False, "refused": f"bad request ({type(exc).__name__})"}
            with contextlib.suppress(OSError):
                conn.sendall(json.dumps(reply).encode())

    def _answer(self, request: dict[str, Any], pid: int, digest: int) -> dict[str, Any]:
        found = self._authority(request, pid)
        if isinstance(found, str):
            return {"ok": False, "refused": found}
        command = request.get("command")
        if not isinstance(command, str) or not command.strip():
            return {"ok": False, "refused": "command must be a non-empty string"}
        timeout = request.get("timeout")
        limit = float(timeout) if isinstance(timeout, int | float) and timeout > 0 else None
        refused = self._from_cell_thread(found, pid, digest) or found.admit(digest)
        if refused is not None:
            return {"ok": False, "refused": refused}
        previous = bind(found.scope)
        try:
            result = self._dispatch(found.scope, command, found.run_id, found.tracker, limit)
        finally:
            restore(previous)
        d = result.decision
        return {
            "ok": True,
            "result": {
                "outcome": d.outcome.value,
                "cause": d.cause,
                "exit_code": result.exit_code,
                "stdout": result.stdout,
                "stderr": result.stderr,
                "timed_out": result.timed_out,
            },
        }

    def close(self) -> None:
        """Stop serving; the running cell (if any) is settled."""
        self._closed = True
        with self._lock:
            cell, self._cell = self._cell, None
        if cell is not None:
            cell.settle()
        with contextlib.suppress(OSError):
            self._server.shutdown(socket.SHUT_RDWR)
        self._server.close()
        with contextlib.suppress(OSError):
            self.path.unlink()


def _peer_pid(conn: socket.socket) -> int:
    """The pid (in the supervisor's namespace) of the process that connected."""
    creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    pid: int = struct.unpack("3i", creds)[0]
    return pid


def _read_request(conn: socket.socket) -> tuple[bytes, dict[str, Any]]:
    """The request's line (its digest is taken over these bytes) and its object."""
    data = bytearray()
    while b"\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            break
        data += chunk
        if len(data) > _MAX_REQUEST:
            raise ValueError("request too large")
    line = bytes(data).split(b"\n", 1)[0]
    request = json.loads(line)
    if not isinstance(request, dict):
        raise ValueError("request must be an object")
    return line, request
