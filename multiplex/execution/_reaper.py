"""The sub-reaper that an unsandboxed command runs under (docs/execution.md#no-process-outlives-its-run).

Run as a script (``python -I -S _reaper.py CMD...``), standard library only:
it marks itself a child sub-reaper (``prctl(PR_SET_CHILD_SUBREAPER)``), so
every descendant that is orphaned — including one that called ``setsid`` or
double-forked — is re-parented to it instead of to init. When the command
exits, or when the reaper gets SIGTERM (timeout, cancel, shutdown), it signals
its whole descendant tree, waits a short grace, kills what is left, and reaps
until it has no child. Its exit status is the command's (128 + signal for a
signal, as a shell reports it).

It runs once per unsandboxed command, so it starts lean: ``_signal`` rather than
``signal`` (whose enums cost more to import than the rest of the script), no
``contextlib`` (docs/operations.md#capacity).
"""

import _signal  # type: ignore[import-not-found]  # the C module behind signal, no stubs
import ctypes
import os
import sys
import time

__all__ = ["descendants", "end_tree", "main"]

_PR_SET_CHILD_SUBREAPER = 36
_GRACE = 1.0


class _Stop(Exception):
    """SIGTERM or SIGINT arrived: end the tree now."""


def descendants(root: int) -> list[int]:
    """Every live process below ``root`` (by parent pid, from /proc)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            continue
        # Fields after the last ')' (the command name may contain anything).
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) > 1 and fields[0] != b"Z":
            children.setdefault(int(fields[1]), []).append(int(entry))
    found: list[int] = []
    todo = [root]
    while todo:
        for child in children.get(todo.pop(), ()):
            found.append(child)
            todo.append(child)
    return found


def _signal_all(pids: list[int], sig: int) -> None:
    for pid in pids:
        try:
            os.kill(pid, sig)
        except (ProcessLookupError, PermissionError):
            continue


def _reap_any() -> bool:
    """Reap exited children without blocking; False when there is no child left."""
    try:
        while True:
            pid, _status = os.waitpid(-1, os.WNOHANG)
            if pid == 0:
                return True
    except ChildProcessError:
        return False


def end_tree(grace: float = _GRACE) -> None:
    """SIGTERM every descendant, SIGKILL what is left after ``grace``, reap them all."""
    me = os.getpid()
    _signal_all(descendants(me), _signal.SIGTERM)
    deadline = time.monotonic() + grace
    while _reap_any() and time.monotonic() < deadline:
        if not descendants(me):
            break
        time.sleep(0.01)
    # Repeat: a child killed now may leave its own children to us (we are their sub-reaper).
    while True:
        left = descendants(me)
        _signal_all(left, _signal.SIGKILL)
        if not _reap_any() and not left:
            return
        time.sleep(0.005)


def _status_code(status: int) -> int:
    if os.WIFSIGNALED(status):
        return 128 + os.WTERMSIG(status)
    return os.waitstatus_to_exitcode(status)


def main(argv: list[str]) -> int:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        os.write(2, b"multiplex: cannot become a child sub-reaper\n")
        return 126

    def on_term(_sig: int, _frame: object) -> None:
        raise _Stop  # interrupts waitpid (PEP 475 retries it otherwise)

    _signal.signal(_signal.SIGTERM, on_term)
    _signal.signal(_signal.SIGINT, on_term)
    child = os.fork()
    if child == 0:
        _signal.signal(_signal.SIGTERM, _signal.SIG_DFL)
        _signal.signal(_signal.SIGINT, _signal.SIG_DFL)
        try:
            os.execvp(argv[0], argv)
        except OSError as exc:
            os.write(2, f"multiplex: cannot run {argv[0]}: {exc.strerror}\n".encode())
        os._exit(127)
    code = 0
    try:
        while True:
            try:
                pid, status = os.waitpid(-1, 0)
            except ChildProcessError:
                break
            if pid == child:
                code = _status_code(status)
                break
    except _Stop:
        code = 128 + _signal.SIGTERM
    _signal.signal(_signal.SIGTERM, _signal.SIG_IGN)
    _signal.signal(_signal.SIGINT, _signal.SIG_IGN)
    end_tree()
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
