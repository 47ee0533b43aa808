"""One network namespace per profile, held by a small process (docs/execution.md#egress).

A command of a profile with ``terminal.network: on`` runs inside its
profile's namespace: ``enter_argv()`` is put before the ``bwrap`` argv (which
then leaves out ``--unshare-net``). The namespace holds only ``lo``; its one
way out is what the supervisor serves on ``listener()`` sockets, which the
holder makes inside the namespace and passes back, because the supervisor
itself cannot enter it (``setns`` into a network namespace needs
``CAP_SYS_ADMIN`` over it, and a threaded process cannot join a new user
namespace).

Why paths under ``/proc/<pid>`` are safe to hand out: the holder is this
process's child and is reaped only in ``close()``. Until then its pid cannot
name any other process, and once it has ended (a zombie) its ``ns`` links are
gone, so ``nsenter`` fails instead of entering something else; ``enter_argv``
itself refuses once the holder has ended or someone else reaped it. What is
left: an argv taken before ``close()`` and started after it names a freed pid,
so take it just before the spawn and never keep it. (Passing namespace fds
instead would keep a dead holder's namespace enterable, and nsenter 2.38
cannot take a pidfd.)
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import threading
from pathlib import Path
from types import TracebackType

from multiplex.execution.egress._holder import REQUEST

__all__ = ["ProfileNetwork"]

_HOLDER = Path(__file__).with_name("_holder.py")
_START_SECONDS = 10.0
_REQUEST_SECONDS = 5.0
_NO_ENVIRONMENT: dict[str, str] = {}  # it needs none, and none of the supervisor's secrets
_FAMILIES = {"127.0.0.1": 4, "::1": 6}


class ProfileNetwork:
    """One profile's network namespace: loopback only; its way out is what the supervisor serves on listeners made inside it.

    Thread-safe. Ends with ``close()`` (idempotent), when this object is
    collected, or when this process ends; a command entered afterwards fails.
    """

    def __init__(
        self, name: str, process: subprocess.Popen[bytes], control: socket.socket, nsenter: str
    ) -> None:
        self._name = name
        self._process = process
        self._control = control
        self._nsenter = nsenter
        self._lock = threading.Lock()
        self._closed = False

    @classmethod
    def start(cls, name: str) -> ProfileNetwork:
        """Spawn the holder of ``name``'s namespace; OSError with a one-line reason if it cannot be made here."""
        nsenter = shutil.which("nsenter")
        if nsenter is None:
            raise OSError(
                f"profile {name}: no network namespace: nsenter (util-linux) is not installed"
            )
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            process = subprocess.Popen(
                [sys.executable, "-I", "-S", str(_HOLDER), str(os.getpid())],
                stdin=theirs.fileno(),
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                close_fds=True,
                start_new_session=True,  # a Ctrl-C at the operator's terminal is not for it
                env=_NO_ENVIRONMENT,
            )
        except OSError as exc:
            ours.close()
            raise OSError(
                f"profile {name}: no network namespace: cannot start the holder: {exc}"
            ) from exc
        finally:
            theirs.close()
        network = cls(name, process, ours, nsenter)
        ours.settimeout(_START_SECONDS)
        try:
            reply = ours.recv(256)
        except OSError as exc:
            reply = f"error: no answer ({exc})".encode()
        if reply != b"ready":
            network.close()
            reason = (
                reply.decode(errors="replace").removeprefix("error: ")
                or f"exit status {process.returncode}"
            )
            raise OSError(f"profile {name}: no network namespace: {reason}")
        ours.settimeout(_REQUEST_SECONDS)
        return network

    @property
    def name(self) -> str:
        """The profile this namespace belongs to."""
        return self._name

    @property
    def pid(self) -> int:
        """The holder's pid (for logs; ``enter_argv`` is the way in)."""
        return self._process.pid

    @property
    def alive(self) -> bool:
        """True while the holder runs and ``close()`` has not been called."""
        with self._lock:
            return self._alive()

    def _alive(self) -> bool:
        if self._closed:
            return False
        try:
            # WNOWAIT: look without reaping, so the pid stays ours (module docstring).
            return (
                os.waitid(os.P_PID, self._process.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is None
            )
        except ChildProcessError:  # reaped behind our back: the pid may be anyone's now
            return False

    def enter_argv(self) -> list[str]:
        """The ``nsenter ... --`` prefix that runs a program in this namespace (and its user namespace).

        ``--preserve-credentials``: the program keeps its uid and groups (the
        namespace maps the supervisor's uid to itself). OSError once the holder
        has ended.
        """
        with self._lock:
            if not self._alive():
                raise OSError(f"profile {self._name}: its network namespace has ended")
            ns = f"/proc/{self._process.pid}/ns"
            return [
                self._nsenter,
                f"--user={ns}/user",
                f"--net={ns}/net",
                "--preserve-credentials",
                "--",
            ]

    def listener(self, port: int = 0, host: str = "127.0.0.1") -> socket.socket:
        """A TCP socket bound to ``host:port`` inside the namespace and listening (``host``: 127.0.0.1 or ::1).

        OSError if the port is taken there, or if the holder does not answer
        (then this network is closed: its answers could no longer be matched).
        """
        family = _FAMILIES.get(host)
        if family is None or not 0 <= port <= 0xFFFF:
            raise ValueError(
                f"a listener is on 127.0.0.1 or ::1 and a port 0..65535, not {host!r}:{port}"
            )
        with self._lock:
            if not self._alive():
                raise OSError(f"profile {self._name}: its network namespace has ended")
            try:
                self._control.send(REQUEST.pack(family, port))
                # CLOEXEC: the listener must not leak into commands the supervisor starts.
                message, ancillary, flags, _ = self._control.recvmsg(
                    256, socket.CMSG_SPACE(4), socket.MSG_CMSG_CLOEXEC
                )
            except OSError as exc:
                self._close()
                raise OSError(
                    f"profile {self._name}: its network namespace holder failed: {exc}"
                ) from exc
            fds = [
                int.from_bytes(data[:4], sys.byteorder)
                for level, kind, data in ancillary
                if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS and len(data) >= 4
            ]
        if message != b"ok" or len(fds) != 1 or flags & socket.MSG_CTRUNC:
            for fd in fds:
                os.close(fd)
            reason = message.decode(errors="replace").removeprefix("error: ") or "no answer"
            raise OSError(
                f"profile {self._name}: no listener on {host}:{port} in its namespace: {reason}"
            )
        return socket.socket(fileno=fds[0])

    def close(self) -> None:
        """End the holder (and with it the namespace, once no command is left in it). Idempotent."""
        with self._lock:
            self._close()

    def _close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._control.close()  # the holder ends on EOF
        try:
            self._process.wait(timeout=2.0)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()

    def __enter__(self) -> ProfileNetwork:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<ProfileNetwork {self._name} pid={self._process.pid} {'alive' if self.alive else 'ended'}>"
