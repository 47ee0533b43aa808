"""A kernel's process tree, read from ``/proc`` (docs/kernels.md#lifecycle).

The tree is the kernel, its descendants by parent, and every process still in
its session or process group (a child whose parent exited is re-parented away
from the kernel but keeps its session). That is what a kill must end and what
"proven dead" checks (:func:`kill_and_prove`).
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path

from multiplex.execution.kernels._cells import KernelError

__all__ = ["alive", "kill_and_prove", "memory_bytes", "tree"]

_PROC = Path("/proc")


def _stat(pid: int) -> tuple[str, int, int, int] | None:
    """(state, ppid, pgid, sid) of a process, or None when it is gone."""
    try:
        text = (_PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    # The command name may hold spaces and parentheses: split after the last ")".
    fields = text[text.rfind(")") + 2 :].split()
    return fields[0], int(fields[1]), int(fields[2]), int(fields[3])


def alive(pid: int) -> bool:
    """True while the process exists and is not a zombie."""
    stat = _stat(pid)
    return stat is not None and stat[0] not in ("Z", "X")


def tree(root: int) -> list[int]:
    """``root`` and every live process descending from it or sharing its session or group."""
    parents: dict[int, int] = {}
    members: set[int] = set()
    for entry in os.scandir(_PROC):
        if not entry.name.isdigit():
            continue
        pid = int(entry.name)
        stat = _stat(pid)
        if stat is None or stat[0] in ("Z", "X"):
            continue
        parents[pid] = stat[1]
        if root in (stat[2], stat[3]):
            members.add(pid)
    found = {root} if root in parents else set()
    frontier = list(found | members)
    found |= members
    while frontier:
        current = frontier.pop()
        for pid, ppid in parents.items():
            if ppid == current and pid not in found:
                found.add(pid)
                frontier.append(pid)
    return sorted(found)


def memory_bytes(pids: list[int]) -> int:
    """The summed resident set size of ``pids``."""
    total = 0
    for pid in pids:
        try:
            for line in (_PROC / str(pid) / "status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) * 1024
                    break
        except (OSError, ValueError, IndexError):
            continue
    return total


def kill_and_prove(pids: list[int], wait: float = 10.0) -> None:
    """SIGKILL each of ``pids``, then wait until none is alive; raise if one survives."""
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + wait
    left = [p for p in pids if alive(p)]
    while left and time.monotonic() < deadline:
        time.sleep(0.01)
        left = [p for p in left if alive(p)]
    if left:
        raise KernelError(f"kernel processes survived SIGKILL: {left}")
