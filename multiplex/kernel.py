"""Shell commands from a kernel cell: ``from multiplex.kernel import run`` (docs/kernels.md#shell-commands-from-a-cell).

This module runs INSIDE a session kernel's process, so it uses the standard
library only. ``run("git status")`` sends the command to the supervisor over the
kernel's private channel with the kernel's key and the token of the cell that
asks; the supervisor gates it under THAT cell's authority (its profile,
session, context and way of asking a human) and refuses it when that cell has
settled, when no cell is running, or when the cell's budget
(``code_execution.max_tool_calls``) is spent.

A thread carries the token of the cell that started it: a thread left running
after its cell settled is refused, even while a later cell runs.
"""

from __future__ import annotations

import json
import os
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
_THREAD_ATTR = "_multiplex_cell"
_MAX_REPLY = 8 * 1024 * 1024


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
    _tag_threads()


def _parent_token() -> str | None:
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    kernel = getattr(shell, "kernel", None)
    if kernel is None:
        return None
    parent = kernel.get_parent("shell") or {}
    token = (parent.get("metadata") or {}).get(CELL_METADATA_KEY)
    return token if isinstance(token, str) else None


def _current_token() -> str | None:
    thread = threading.current_thread()
    if thread is threading.main_thread():
        return _parent_token()
    token = getattr(thread, _THREAD_ATTR, None)
    return token if isinstance(token, str) else None


def _tag_threads() -> None:
    original = threading.Thread.start
    if getattr(original, "_multiplex", False):
        return

    def start(self: threading.Thread) -> None:
        setattr(self, _THREAD_ATTR, _current_token())
        original(self)

    start._multiplex = True  # type: ignore[attr-defined]
    threading.Thread.start = start  # type: ignore[method-assign]


def _ask(request: dict[str, Any]) -> dict[str, Any]:
    assert _Channel.path is not None
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.connect(_Channel.path)
        conn.sendall(json.dumps(request).encode() + b"\n")
        conn.shutdown(socket.SHUT_WR)
        chunks: list[bytes] = []
        size = 0
        while chunk := conn.recv(65536):
            chunks.append(chunk)
            size += len(chunk)
            if size > _MAX_REPLY:
                raise RequestRefused("the supervisor's reply is too large")
    reply: dict[str, Any] = json.loads(b"".join(chunks) or b"{}")
    return reply


def run(command: str, *, timeout: float | None = None) -> Completed:
    """Gate ``command`` under the running cell's authority and run it when approved.

    Returns the decision and the redacted output; waits while a human is asked.
    Raises ``RequestRefused`` when the request is not taken to the gate at all.
    """
    if not isinstance(command, str) or not command.strip():
        raise ValueError("command must be a non-empty string")
    if _Channel.path is None or _Channel.key is None:
        raise RequestRefused("not inside a multiplex session kernel")
    reply = _ask(
        {
            "key": _Channel.key,
            "cell": _current_token(),
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
