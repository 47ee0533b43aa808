"""Which thread of a kernel sent a tool request, seen from outside (docs/kernels.md#authority).

Everything in the kernel's memory is readable by every thread in it, so no
token can tell the cell's own thread from a thread an earlier cell left
running. What a thread cannot do is make ANOTHER thread block in a syscall of
its choosing. ``multiplex.kernel`` waits for every reply in ``recvfrom(fd,
buf, len, 0, NULL, digest)``: with no address asked for, Linux ignores the
last argument, so it carries a digest of the request. The supervisor reads the
kernel's main thread's syscall and arguments from
``/proc/<pid>/task/<pid>/syscall`` (the registers at syscall entry, written by
the kernel, not by the process) and answers a request only once the main
thread — where ipykernel runs every cell — is seen waiting for exactly that
request's reply.
"""

from __future__ import annotations

import platform
import threading

__all__ = ["NOT_THE_CELLS_THREAD", "cell_thread_refusal"]

NOT_THE_CELLS_THREAD = "this request did not come from the running cell's own thread"
# recvfrom in the native syscall table (the kernel's libc calls it for recvfrom()).
_RECVFROM = {"x86_64": 45, "aarch64": 207}.get(platform.machine())
_FIRST_LOOK, _LONGEST_LOOK = 0.0002, 0.05  # seconds between looks at the thread


def _waiting_for(pid: int) -> int | None:
    """The digest the main thread of ``pid`` waits on in ``recvfrom``, or None (not waiting so)."""
    with open(f"/proc/{pid}/task/{pid}/syscall", encoding="ascii") as handle:
        fields = handle.read().split()
    # "running", "-1 sp pc" (not in a syscall), or "nr arg1 .. arg6 sp pc".
    if len(fields) < 7 or fields[0] != str(_RECVFROM):
        return None
    address, digest = int(fields[5], 16), int(fields[6], 16)
    return digest if address == 0 and digest != 0 else None


def cell_thread_refusal(pid: int, digest: int, settled: threading.Event) -> str | None:
    """None once ``pid``'s main thread is seen waiting for the reply to ``digest``; else why not.

    Waits while the thread is on its way there (running, or blocked in anything
    else: the GIL, a page fault). Refuses once the thread waits for the reply
    to another request (a request is answered on one thread, one at a time),
    when the cell settles first, or when ``/proc`` cannot be read (never a guess).
    """
    if _RECVFROM is None:
        return f"cannot tell which thread sent the request on {platform.machine()}"
    pause = _FIRST_LOOK
    while not settled.is_set():
        try:
            seen = _waiting_for(pid)
        except (OSError, ValueError):
            return "cannot tell which thread of the kernel sent this request"
        if seen == digest:
            return None
        if seen is not None:
            return NOT_THE_CELLS_THREAD
        settled.wait(pause)
        pause = min(pause * 2, _LONGEST_LOOK)
    return NOT_THE_CELLS_THREAD
