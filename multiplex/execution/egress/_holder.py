"""The process that holds one profile's network namespace (docs/execution.md#egress).

Run by ``ProfileNetwork.start`` as ``python -I -S <this file> <supervisor pid>``
with its control socket (``SOCK_SEQPACKET``) as stdin; stdlib only, so it
starts in one short interpreter launch whether the package lives in a venv or
not. It makes a new user namespace (the caller's uid and gid mapped to
themselves, so commands entered into it keep the uid they have today) and a new
network namespace holding only ``lo``, brings ``lo`` up, gives up filesystem
access (Landlock, where the kernel has it), says ``ready`` and then answers
requests: each is a family and a port; the answer is a TCP socket bound to
loopback inside the namespace and listening, passed with ``SCM_RIGHTS``.

It ends when the control socket closes or the supervisor process ends
(a pidfd, not ``PR_SET_PDEATHSIG``: that fires when the *thread* that spawned
us ends, which in a threaded supervisor is not the supervisor ending).
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import os
import select
import socket
import struct
import sys

__all__ = ["REQUEST", "main"]

# One request: address family (4 or 6), port. One answer: b"ok" with one fd,
# or b"error: <one line>" with none.
REQUEST = struct.Struct("!BH")

_CLONE_NEWUSER = 0x10000000
_CLONE_NEWNET = 0x40000000
_PR_SET_NO_NEW_PRIVS = 38
_SIOCGIFFLAGS = 0x8913
_SIOCSIFFLAGS = 0x8914
_IFF_UP = 0x1
_IFREQ = struct.Struct("16sH22x")
_SYS_LANDLOCK_CREATE_RULESET = 444
_SYS_LANDLOCK_RESTRICT_SELF = 446
_LANDLOCK_CREATE_RULESET_VERSION = 1
_BACKLOG = 128

_libc = ctypes.CDLL(None, use_errno=True)  # the C library already loaded: no file is opened


def _check(result: int, what: str) -> int:
    if result < 0:
        code = ctypes.get_errno()
        raise OSError(code, f"{what}: {os.strerror(code)}")
    return result


def _write(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def _enter_namespaces() -> None:
    uid, gid = os.getuid(), os.getgid()
    _check(_libc.unshare(_CLONE_NEWUSER | _CLONE_NEWNET), "unshare(user, net)")
    # An unprivileged caller may map only itself, and a gid only once
    # setgroups is denied; the identity map keeps the caller's uid for
    # everything entered into this namespace.
    _write("/proc/self/setgroups", "deny")
    _write("/proc/self/uid_map", f"{uid} {uid} 1")
    _write("/proc/self/gid_map", f"{gid} {gid} 1")


def _loopback_up() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        request = _IFREQ.pack(b"lo", 0)
        (_, flags) = _IFREQ.unpack(fcntl.ioctl(probe, _SIOCGIFFLAGS, request))
        fcntl.ioctl(probe, _SIOCSIFFLAGS, _IFREQ.pack(b"lo", flags | _IFF_UP))


def _no_filesystem() -> None:
    """Deny this process every filesystem access from now on (best effort: no Landlock, no loss)."""
    syscall = _libc.syscall
    syscall.restype = ctypes.c_long
    abi = syscall(
        _SYS_LANDLOCK_CREATE_RULESET, None, ctypes.c_size_t(0), _LANDLOCK_CREATE_RULESET_VERSION
    )
    if abi < 1:
        return
    # Every filesystem right this ABI knows (execute .. make_sym, refer,
    # truncate, ioctl_dev), handled and never granted; from ABI 6 also no
    # signals or abstract unix sockets beyond this process.
    fs_bits = 13 + (abi >= 2) + (abi >= 3) + (abi >= 5)
    fields = [(1 << fs_bits) - 1]
    if abi >= 4:
        fields.append(0)
    if abi >= 6:
        fields.append(0x1 | 0x2)
    attr = struct.pack(f"={len(fields)}Q", *fields)
    buffer = ctypes.create_string_buffer(attr, len(attr))
    fd = syscall(_SYS_LANDLOCK_CREATE_RULESET, buffer, ctypes.c_size_t(len(attr)), 0)
    if fd < 0:
        return
    try:
        _check(_libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(no_new_privs)")
        _check(syscall(_SYS_LANDLOCK_RESTRICT_SELF, fd, 0), "landlock_restrict_self")
    finally:
        os.close(fd)


def _listener(family: int, port: int) -> socket.socket:
    if family == 4:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        host = "127.0.0.1"
    elif family == 6:
        sock = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
        host = "::1"
    else:
        raise OSError(errno.EAFNOSUPPORT, f"unknown family {family}")
    try:
        # SO_REUSEADDR only: with SO_REUSEPORT a command in the namespace
        # could bind the same port and take a share of the connections.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(_BACKLOG)
    except BaseException:
        sock.close()
        raise
    return sock


def _serve(control: socket.socket, supervisor: int) -> None:
    poller = select.poll()
    poller.register(control, select.POLLIN)
    poller.register(supervisor, select.POLLIN)
    while True:
        for fd, _ in poller.poll():
            if fd == supervisor:
                return
            message = control.recv(64)
            if not message:
                return
            try:
                family, port = REQUEST.unpack(message)
                sock = _listener(family, port)
            except (OSError, struct.error) as exc:
                control.send(f"error: {exc}".encode()[:200])
                continue
            with sock:
                socket.send_fds(control, [b"ok"], [sock.fileno()])


def main(argv: list[str]) -> int:
    control = socket.socket(fileno=0)
    try:
        expected = int(argv[1])
        supervisor = os.pidfd_open(expected)
        if os.getppid() != expected:  # it ended before we could watch it
            return 1
        _enter_namespaces()
        _loopback_up()
        _no_filesystem()
    except (OSError, ValueError, IndexError) as exc:
        control.send(f"error: {exc}".encode()[:200])
        return 1
    control.send(b"ready")
    try:
        _serve(control, supervisor)
    except OSError:  # the supervisor went away mid-answer
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
