"""Shell commands from a kernel cell: ``from multiplex.kernel import run`` (docs/kernels.md#shell-commands-from-a-cell).

This module runs INSIDE a session kernel's process, so it uses the standard
library only. ``run("git status")`` sends the command to the supervisor over the
kernel's private channel with the kernel's key and the token of the cell that
asks; the supervisor gates it under THAT cell's authority (its profile,
session, context and way of asking a human) and refuses it when that cell has
settled, when no cell is running, or when the cell's budget
(``code_execution.max_tool_calls``) is spent.

Only the cell's own thread (the kernel's main thread, where ipykernel runs
every cell) is answered. The supervisor does not take the kernel's word for
it: the thread waits for the reply in ``recvfrom`` with a digest of its
request in an argument the kernel ignores (``addrlen``, with no address
asked for), and the supervisor reads the kernel's main thread's blocked
syscall from ``/proc`` — which no other thread can set. A thread of any cell
that asks is refused, whatever token it copied.
"""

from __future__ import annotations

import ctypes
import errno
import hashlib
import json
import os
import secrets
import socket
import sys
import threading
import warnings
from dataclasses import dataclass
from typing import Any

__all__ = ["Completed", "RequestRefused", "run"]

CELL_METADATA_KEY = "multiplex.cell"
# In a cell's execute_reply metadata (docs/kernels.md#speed): how many IOPub
# messages were queued for the cell before the reply, and its result's text.
IOPUB_COUNT_KEY = "multiplex.iopub"
RESULT_KEY = "multiplex.result"
_MAX_REPLY = 8 * 1024 * 1024
_CHUNK = 65536


class RequestRefused(PermissionError):
    """The supervisor would not take the request to the gate (the reason says why)."""


@dataclass(frozen=True, slots=True)
class Completed:
    """What the gate decided for a command and, when it ran, its redacted output."""

    command: str
    outcome: str
    cause: str
    exit_code: int | None
    stdout: str
    stderr: str
    timed_out: bool = False

    @property
    def ok(self) -> bool:
        """Approved, run, and exited 0."""
        return self.outcome == "approved" and self.exit_code == 0


class _Channel:
    # Set once by _attach at kernel start; never in the environment, so a
    # subprocess of the kernel does not inherit the key.
    path: str | None = None
    key: str | None = None


def _attach(runtime: str) -> None:
    """Kernel start-up (the supervisor runs it): read and delete the channel file, restore the env."""
    path = os.path.join(runtime, "channel.json")
    with open(path, encoding="utf-8") as handle:
        data = json.load(handle)
    os.unlink(path)
    _Channel.path, _Channel.key = data["socket"], data["key"]
    # The engine adds its own variables (TERM, PAGER, MPLBACKEND, ...) at start;
    # the cell's environment is exactly the profile's command environment.
    os.environ.clear()
    os.environ.update(data["env"])
    # sys.exit() ends the kernel (the supervisor shuts it down); IPython's hint is noise.
    warnings.filterwarnings("ignore", message="To exit: use")
    # Before any cell runs: the supervisor learns which process is the kernel.
    reply = _ask({"key": _Channel.key, "hello": True})
    if not reply.get("ok"):
        raise RuntimeError(f"the tool channel refused the kernel: {reply.get('refused')}")


def _parent_token() -> str | None:
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    kernel = getattr(shell, "kernel", None)
    if kernel is None:
        return None
    parent = kernel.get_parent("shell") or {}
    token = (parent.get("metadata") or {}).get(CELL_METADATA_KEY)
    return token if isinstance(token, str) else None


def request_digest(line: bytes) -> int:
    """What the asking thread shows the supervisor while it waits: 63 bits of the request's SHA-256."""
    return int.from_bytes(hashlib.sha256(line).digest()[:8], "big") | 1 << 63


class _Libc:
    recvfrom: Any = None


def _recvfrom() -> Any:
    if _Libc.recvfrom is None:
        libc = ctypes.CDLL(None, use_errno=True)
        call = libc.recvfrom
        call.argtypes = [
            ctypes.c_int,
            ctypes.c_void_p,
            ctypes.c_size_t,
            ctypes.c_int,
            ctypes.c_void_p,
            ctypes.c_void_p,
        ]
        call.restype = ctypes.c_ssize_t
        _Libc.recvfrom = call
    return _Libc.recvfrom


def _ask(request: dict[str, Any]) -> dict[str, Any]:
    """Send ``request``; wait for the reply on this thread, in view of the supervisor."""
    assert _Channel.path is not None
    # The nonce makes every request, and so its digest, unique.
    line = json.dumps({**request, "nonce": secrets.token_hex(16)}).encode()
    digest = request_digest(line)
    recvfrom = _recvfrom()
    buffer = ctypes.create_string_buffer(_CHUNK)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.setblocking(True)  # even under socket.setdefaulttimeout()
        conn.connect(_Channel.path)
        conn.sendall(line + b"\n")
        chunks: list[bytes] = []
        size = 0
        while True:
            # No address asked for (NULL), so Linux ignores addrlen: it carries the
            # digest, which the supervisor reads in this thread's /proc entry.
            got = recvfrom(conn.fileno(), buffer, _CHUNK, 0, None, digest)
            if got < 0:
                if ctypes.get_errno() == errno.EINTR:
                    continue  # a signal: its Python handler runs here
                raise OSError(ctypes.get_errno(), "the tool channel failed")
            if got == 0:
                break
            chunks.append(ctypes.string_at(buffer, got))
            size += got
            if size > _MAX_REPLY:
                raise RequestRefused("the supervisor's reply is too large")
    reply: dict[str, Any] = json.loads(b"".join(chunks) or b"{}")
    return reply


def run(command: str, *, timeout: float | None = None) -> Completed:
    """Gate ``command`` under the running cell's authority and run it when approved.

    Returns the decision and the redacted output; waits while a human is asked.
    Raises ``RequestRefused`` when the request is not taken to the gate at all,
    and at once when called from any thread but the cell's own.
    """
    if not isinstance(command, str) or not command.strip():
        raise ValueError("command must be a non-empty string")
    if _Channel.path is None or _Channel.key is None:
        raise RequestRefused("not inside a multiplex session kernel")
    if threading.current_thread() is not threading.main_thread():
        # The supervisor refuses it too (it checks the thread itself); this says why at once.
        raise RequestRefused(
            "run() is answered on the cell's own thread only, not from a thread it started"
        )
    reply = _ask(
        {
            "key": _Channel.key,
            "cell": _parent_token(),
            "command": command,
            "timeout": timeout,
        }
    )
    if not reply.get("ok"):
        raise RequestRefused(str(reply.get("refused") or "refused by the supervisor"))
    r = reply["result"]
    return Completed(
        command=command,
        outcome=r["outcome"],
        cause=r["cause"],
        exit_code=r["exit_code"],
        stdout=r["stdout"],
        stderr=r["stderr"],
        timed_out=bool(r.get("timed_out")),
    )
