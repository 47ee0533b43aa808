"""The sub-reaper that an unsandboxed command runs under (docs/execution.md#no-process-outlives-its-run).

One small helper per supervisor process, started once (``python -I -S
_reaper.py --serve FD``, standard library only), serves every unsandboxed
command: the supervisor hands it, over a unix socket, a fresh connection and
the command's stdio with ``SCM_RIGHTS``, then the request (argv, env, cwd) on
that connection. It is taken by one of the helper's idle sub-reapers (forked
ahead and kept from one command to the next, so no interpreter start and no
fork waits for it), each a process group leader and a child sub-reaper
(``prctl(PR_SET_CHILD_SUBREAPER)``) once and for all, so every descendant
that is orphaned, including one that called ``setsid`` or double-forked, is
re-parented to it instead of to init. It starts the command, reports its pid,
and when the command exits, or when it gets SIGTERM (timeout, cancel,
shutdown), it signals its whole descendant tree, waits a short grace, kills
what is left, reaps until it has no child and reports the command's status
(128 + signal for a signal, as a shell reports it); once the supervisor has
closed that connection it is idle again. The helper keeps ``_SPARES`` idle
and lets the ones past ``_MAX_IDLE`` go.

SIGCHLD, SIGTERM and SIGINT stay blocked in a sub-reaper and are taken with
``sigwaitinfo``: no asynchronous handler, so a stop that arrives at any moment
(between fork and wait included) still ends the tree. ``_signal`` rather than
``signal``: the helper starts lean (its enums cost more to import than the
rest of the script).
"""

import _signal  # type: ignore[import-not-found]  # the C module behind signal, no stubs
import ctypes
import json
import os
import select
import socket
import struct
import sys
import time

__all__ = ["INLINE_REQUEST", "descendants", "end_tree", "serve"]

_PR_SET_CHILD_SUBREAPER = 36
_GRACE = 1.0
_SPARES = 2  # sub-reapers kept idle ahead of the requests
_MAX_IDLE = 8  # more idle than this after a burst: the extra ones exit
INLINE_REQUEST = 32768  # bytes of JSON sent with the fds; a longer request follows them
_LIBC = ctypes.CDLL(None, use_errno=True)  # once in the helper, not per command


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
    # No child at all (none left after reaping): no descendant either, since every
    # orphan below is re-parented to us. Most commands end here, without a /proc scan.
    if not _reap_any():
        return
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


def _read_request(conn: socket.socket) -> dict[str, object]:
    head = b""
    while len(head) < 4:
        chunk = conn.recv(4 - len(head))
        if not chunk:
            raise EOFError
        head += chunk
    (size,) = struct.unpack("!I", head)
    body = bytearray()
    while len(body) < size:
        chunk = conn.recv(min(size - len(body), 1 << 20))
        if not chunk:
            raise EOFError
        body += chunk
    request: dict[str, object] = json.loads(body)
    return request


def _found(name: str, path: str) -> str:
    """``name`` looked up in the command's own PATH, as ``subprocess`` does with an env."""
    if "/" in name:
        return name
    for folder in path.split(os.pathsep):
        candidate = os.path.join(folder or ".", name)
        if os.access(candidate, os.X_OK) and not os.path.isdir(candidate):
            return candidate
    raise FileNotFoundError(2, "No such file or directory", name)


def _start_command(request: dict[str, object], stdio: list[int], wanted: set[int]) -> int:
    """The command's process, with its stdio, cwd and signals as a fresh one has them.

    ``posix_spawn`` (a vfork underneath), not ``fork``: a forked Python copies
    its page tables and faults on every object it touches before the exec, which
    costs several times the command itself. The cwd is this process's own.
    """
    argv = [str(a) for a in request["argv"]]  # type: ignore[attr-defined]
    env = {str(k): str(v) for k, v in request["env"].items()}  # type: ignore[attr-defined]
    if request.get("cwd") is not None:
        os.chdir(str(request["cwd"]))
    # Python ignores SIGPIPE and SIGXFSZ, the helper SIGCHLD: none of it reaches the command.
    # Everything else the helper holds is close-on-exec (Python's default).
    actions = [(os.POSIX_SPAWN_DUP2, fd, target) for target, fd in enumerate(stdio)]
    return os.posix_spawn(
        _found(argv[0], env.get("PATH", os.defpath)),
        argv,
        env,
        file_actions=actions,
        setsigmask=(),
        setsigdef=(*wanted, _signal.SIGPIPE, _signal.SIGXFSZ),
    )


def _spare(control: socket.socket, notify: int, quit_r: int) -> int:
    """A sub-reaper made ready before it is asked for: takes commands one at a time.

    Its process group, ``PR_SET_CHILD_SUBREAPER`` and blocked signals are set
    once, so a command costs its start and a wait only: no fork. Between two
    commands it has no child left (``end_tree`` reaps them all), its cwd is the
    helper's again and no signal of the last run is pending. It exits when the
    helper has more idle ones than it keeps (a byte on ``quit_r``) or the
    supervisor is gone.
    """
    os.setsid()  # its own process group: the supervisor's stop reaches it and the command
    subreaper = _LIBC.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    # Signals are taken synchronously (sigwaitinfo), never by an asynchronous
    # handler: a SIGTERM arriving at any moment, even between its start and the
    # wait, still ends in end_tree() below; none can unwind past it.
    wanted = {_signal.SIGCHLD, _signal.SIGTERM, _signal.SIGINT}
    _signal.pthread_sigmask(_signal.SIG_BLOCK, wanted)
    _signal.signal(_signal.SIGCHLD, _signal.SIG_DFL)  # the helper ignores it (auto-reap)
    home = os.open(".", os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    pid_line = f"P{os.getpid()}\n"  # its group, for the supervisor's stops
    # Exclusive: a request wakes one idle sub-reaper, not every one of them.
    poller = select.epoll()
    poller.register(control, select.EPOLLIN | select.EPOLLEXCLUSIVE)
    poller.register(quit_r, select.EPOLLIN | select.EPOLLEXCLUSIVE)
    while True:
        events = dict(poller.poll())
        if quit_r in events:
            try:
                os.read(quit_r, 1)
                return 0  # one idle sub-reaper too many: this one goes
            except BlockingIOError:
                pass  # another idle one took it
        if control.fileno() not in events:
            continue
        try:
            message, fds = _receive(control)
        except BlockingIOError:
            continue  # another idle one took the request
        if not fds:
            return 0  # the supervisor is gone
        if len(fds) != 4:  # not a request: still idle
            for fd in fds:
                os.close(fd)
            continue
        if not subreaper:
            os.write(notify, b"t")
            for fd in fds[1:]:
                os.close(fd)
            with socket.socket(fileno=fds[0]) as conn:
                conn.sendall(b"E cannot become a child sub-reaper\n")
            return 126
        # Its kind given: asked of the fd, it would cost three system calls.
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM, 0, fds[0])
        _one(conn, fds[1:], message, (wanted, notify, pid_line))
        os.fchdir(home)
        os.write(notify, b"i")  # idle again


def _one(
    conn: socket.socket, stdio: list[int], message: bytes, state: tuple[set[int], int, str]
) -> None:
    """One command: start it, report its pid, wait, end its tree, report its status.

    The request is in ``message`` (``r`` + JSON) or follows on ``conn`` (``s``,
    a long one). Then wait until the supervisor has closed the connection: it
    signals the group only while that is open, so every signal of this run is
    pending by then, and taken before the next command starts.
    """
    wanted, notify, pid_line = state
    # A stop meant for a run before (or sent to an idle sub-reaper) never reaches this one.
    while _signal.sigtimedwait(wanted, 0) is not None:
        pass
    with conn:
        try:
            request = json.loads(message[1:]) if message[:1] == b"r" else _read_request(conn)
            child = _start_command(request, stdio, wanted)
        except OSError as exc:  # the caller says "cannot start <argv[0]>: <why>"
            _say(conn, f"E {exc.strerror or exc}\n")
            child = None
        except (EOFError, ValueError):
            child = None
        finally:
            for fd in stdio:
                os.close(fd)
        if child is not None:
            _say(conn, pid_line)
        os.write(notify, b"t")  # busy (after the start: the helper forks while the command runs)
        if child is not None:
            code = _wait_for(child, wanted)
            end_tree()
            _say(conn, f"S{code}\n")
        try:
            conn.shutdown(socket.SHUT_WR)  # its end stays readable: the status is in
            while conn.recv(64):
                pass
        except OSError:
            pass


def _say(conn: socket.socket, line: str) -> None:
    """A line to the supervisor; one that is gone changes nothing here (the tree still ends)."""
    try:  # noqa: SIM105 (contextlib is not imported: the helper starts lean)
        conn.sendall(line.encode())
    except OSError:
        pass


def _receive(control: socket.socket) -> tuple[bytes, list[int]]:
    """One request's message and fds, close-on-exec: only their copies onto 0-2 reach the command.

    ``recvmsg`` itself: ``socket.recv_fds`` drops its ``flags`` (Python 3.11).
    """
    flags = socket.MSG_DONTWAIT | socket.MSG_CMSG_CLOEXEC
    message, ancdata, _flags, _addr = control.recvmsg(
        INLINE_REQUEST + 1, socket.CMSG_LEN(4 * 4), flags
    )
    fds: list[int] = []
    for level, kind, data in ancdata:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            usable = len(data) - len(data) % 4
            fds += struct.unpack(f"{usable // 4}i", data[:usable])
    return message, fds


def serve(control: socket.socket) -> None:
    """The helper's loop: ``_SPARES`` sub-reapers always idle, until the supervisor goes."""
    # Children that exit are reaped by the kernel; their status goes over their connection.
    _signal.signal(_signal.SIGCHLD, _signal.SIG_IGN)
    notify_r, notify_w = os.pipe()
    quit_r, quit_w = os.pipe()
    os.set_blocking(quit_r, False)

    def fork_spare() -> None:
        if os.fork() == 0:
            code = 1
            try:
                os.close(notify_r)
                os.close(quit_w)
                code = _spare(control, notify_w, quit_r)
            except BaseException:  # never back into the helper's loop from a child
                code = 1
            finally:
                os._exit(code)

    idle = 0
    poller = select.poll()
    poller.register(control, 0)  # only its hang-up: the sub-reapers read the requests
    poller.register(notify_r, select.POLLIN)
    while True:
        while idle < _SPARES:
            fork_spare()
            idle += 1
        while idle > _MAX_IDLE:
            os.write(quit_w, b"q")
            idle -= 1
        for fd, _event in poller.poll():
            if fd == control.fileno():
                return  # the supervisor closed its end (or exited)
            for byte in os.read(notify_r, 256):
                idle += 1 if byte == ord("i") else -1


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
    if sys.argv[1:2] != ["--serve"] or len(sys.argv) != 3:
        sys.exit("usage: _reaper.py --serve FD")
    channel = int(sys.argv[2])
    os.set_inheritable(channel, False)  # a command must never reach the helper
    serve(socket.socket(fileno=channel))
