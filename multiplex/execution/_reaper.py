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
``contextlib`` (docs/operations.md#capacity). SIGCHLD, SIGTERM and SIGINT stay
blocked and are taken with ``sigwaitinfo``: no asynchronous handler, so a stop
that arrives at any moment (between fork and wait included) still ends the tree.
"""

import _signal  # type: ignore[import-not-found]  # the C module behind signal, no stubs
import ctypes
import os
import sys
import time

__all__ = ["descendants", "end_tree", "main"]

_PR_SET_CHILD_SUBREAPER = 36
_GRACE = 1.0


def descendants(root: int) -> list[int]:
    """Every live process below ``root`` (by parent pid, from /proc)."""
    children: dict[int, list[int]] = {}
    zombies: set[int] = set()
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
        if len(fields) > 1:
            children.setdefault(int(fields[1]), []).append(int(entry))
            if fields[0] == b"Z":
                zombies.add(int(entry))
    # A zombie not yet reaped still parents its children (a setsid'd grandchild of a
    # shell that just died): walk through it, list only the living.
    found: list[int] = []
    todo = [root]
    while todo:
        for child in children.get(todo.pop(), ()):
            if child not in zombies:
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
    told: set[int] = set()
    deadline = time.monotonic() + grace
    while True:
        # Each pass also tells what was re-parented to us since the last one.
        left = [pid for pid in descendants(me) if pid not in told]
        _signal_all(left, _signal.SIGTERM)
        told.update(left)
        if not _reap_any() or time.monotonic() >= deadline or not descendants(me):
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
    # Signals are taken synchronously (sigwaitinfo), never by an asynchronous
    # handler: a SIGTERM arriving at any moment, even between fork and wait,
    # still ends in end_tree() below; none can unwind past it.
    wanted = {_signal.SIGCHLD, _signal.SIGTERM, _signal.SIGINT}
    _signal.pthread_sigmask(_signal.SIG_BLOCK, wanted)
    child = os.fork()
    if child == 0:
        _signal.pthread_sigmask(_signal.SIG_UNBLOCK, wanted)
        try:
            os.execvp(argv[0], argv)
        except OSError as exc:
            os.write(2, f"multiplex: cannot run {argv[0]}: {exc.strerror}\n".encode())
        os._exit(127)
    code = _wait_for(child, wanted)
    end_tree()
    return code


def _wait_for(child: int, wanted: set[int]) -> int:
    """The command's exit status, or 128 + SIGTERM when told to stop first."""
    while True:
        info = _signal.sigwaitinfo(wanted)
        if info.si_signo != _signal.SIGCHLD:
            return 128 + int(_signal.SIGTERM)
        while True:  # SIGCHLD: reap whatever exited; one signal may stand for several
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return 0
            if pid == 0:
                break
            if pid == child:
                return _status_code(status)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
