"""A cell's output as the kernel's messages bring it (docs/kernels.md#output): capped, in order."""

from __future__ import annotations

import hmac
from dataclasses import dataclass, field
from typing import Any

import zmq
from jupyter_client.session import DELIM, Session

from multiplex.execution._process import OUTPUT_CAP
from multiplex.execution.kernels._cells import RawCell

__all__ = ["Collector", "finish", "on_iopub", "read_answers"]


@dataclass(slots=True)
class Collector:
    """stdout and stderr of one cell, each capped at OUTPUT_CAP characters."""

    out: list[str] = field(default_factory=list)
    err: list[str] = field(default_factory=list)
    sizes: list[int] = field(default_factory=lambda: [0, 0])
    truncated: bool = False

    def add(self, name: str, text: str) -> None:
        index = 1 if name == "stderr" else 0
        room = OUTPUT_CAP - self.sizes[index]
        if room <= 0:
            self.truncated = True
            return
        if len(text) > room:
            text, self.truncated = text[:room], True
        self.sizes[index] += len(text)
        (self.err if index else self.out).append(text)


def on_iopub(kind: str, content: dict[str, Any], raw: RawCell, out: Collector) -> bool:
    """Take one IOPub message of the cell into ``raw``/``out``; True at its ``idle`` status."""
    if kind == "status":
        return bool(content.get("execution_state") == "idle")
    if kind == "stream":
        out.add(content.get("name", "stdout"), content.get("text", ""))
    elif kind == "execute_result":
        raw.result = content.get("data", {}).get("text/plain")
    elif kind in ("display_data", "update_display_data"):
        text = content.get("data", {}).get("text/plain")
        if text:
            out.add("stdout", text + "\n")
    elif kind == "error":
        raw.error = content
    return False


def finish(raw: RawCell, out: Collector, status: str, note: str | None) -> RawCell:
    """``raw`` settled: its status, its collected output and an optional note."""
    raw.status = status
    raw.stdout = "".join(out.out)
    raw.stderr = "".join(out.err)
    raw.truncated = out.truncated
    raw.note = note
    return raw


def read_answers(
    sock: zmq.Socket[bytes], session: Session, msg_id: str
) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    """Every waiting message on ``sock`` answering ``msg_id``: (type, content, metadata).

    jupyter-client's ``Session.recv`` would also parse every date of every
    header (a third of a warm cell's client time); the signature is still
    checked, and only this cell's messages are unpacked past their parent (the
    metadata only of its reply, which carries the result and the output count).
    """
    found: list[tuple[str, dict[str, Any], dict[str, Any]]] = []
    while True:
        try:
            frames = sock.recv_multipart(zmq.NOBLOCK)
        except zmq.Again:
            return found
        try:
            at = frames.index(DELIM)
            signature, header, parent, metadata, content = frames[at + 1 : at + 6]
        except ValueError:
            continue  # not a message of the protocol
        if session.auth is not None and not hmac.compare_digest(
            signature, session.sign([header, parent, metadata, content])
        ):
            continue
        if session.unpack(parent).get("msg_id") != msg_id:
            continue  # another request's (the start-up check, a cell killed before)
        kind = session.unpack(header).get("msg_type", "")
        meta = session.unpack(metadata) if kind == "execute_reply" else {}
        found.append((kind, session.unpack(content), meta))
