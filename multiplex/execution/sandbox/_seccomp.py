"""The syscall floor of the bubblewrap sandbox (docs/execution.md#the-syscall-floor).

A seccomp filter that bwrap installs (``--seccomp FD``) before it runs the
command: every syscall is allowed except a short list of kernel surfaces that
no agent command needs and that have a history of escapes or of reaching
outside the sandbox (debugging other processes, the kernel keyring, eBPF,
loading kernels and modules, typing into the terminal, new user namespaces,
mounts). Each is refused with ``EPERM``, or ``ENOSYS`` where userspace falls
back to an older call. Syscalls of any other ABI than the native one (i386
``int 0x80``, x32) kill the process: the rules are written for one table of
syscall numbers, and a second table must not be a way around them.

The filter is built with libseccomp (through ``pyseccomp``) once per process.
Without a usable libseccomp, ``seccomp_available`` says why, and the sandbox
refuses to start commands rather than run them without the floor.
"""

from __future__ import annotations

import errno
import functools
import importlib
import os
from dataclasses import dataclass
from typing import Any

__all__ = ["seccomp_available", "seccomp_fd", "seccomp_program"]

# <linux/sched.h>, <asm-generic/ioctls.h>: fixed across the arches Linux runs on
# (the ioctl numbers differ on alpha/mips/ppc/sparc, where no such host is expected).
_CLONE_NEWUSER = 0x10000000
_TIOCSTI = 0x5412
_TIOCLINUX = 0x541C
_LOW32 = 0xFFFFFFFF
# <linux/personality.h>: PER_LINUX, PER_LINUX32, and the query that changes nothing.
_PER_LINUX = 0x0000
_PER_LINUX32 = 0x0008
_PER_QUERY = 0xFFFFFFFF

# (op, arg index, mask or value, value): libseccomp's scmp_arg_cmp, one per rule.
_Cmp = tuple[str, int, int, int]


@dataclass(frozen=True)
class _Refusal:
    syscall: str
    errno: int
    why: str
    when: tuple[_Cmp, ...] = ()  # any one of them refuses; none: always refused


def _masked(arg: int, mask: int, value: int) -> _Cmp:
    return ("MASKED_EQ", arg, mask, value)


def _personality_cases() -> tuple[_Cmp, ...]:
    """Every personality() argument but PER_LINUX, PER_LINUX32 and the query.

    libseccomp takes one comparison per argument in a rule, so the refused set is
    written as a union of bit patterns, none of which holds 0, 8 or 0xffffffff:
    bit 31 clear and any bit but bit 3 set; bit 31 set and any other bit clear;
    anything above 32 bits (the kernel would truncate it).
    """
    top = 1 << 31
    cases = [_masked(0, (1 << b) | top, 1 << b) for b in range(31) if b != 3]
    cases += [_masked(0, (1 << b) | top, top) for b in range(31)]
    cases.append(("GT", 0, _LOW32, 0))
    return tuple(cases)


_REFUSED: tuple[_Refusal, ...] = (
    # Reading or steering another process: the sandbox's own processes are one
    # trust domain, but ptrace has been a way around seccomp itself (kernels < 4.8).
    _Refusal("ptrace", errno.EPERM, "debug or control another process"),
    _Refusal("process_vm_readv", errno.EPERM, "read another process's memory"),
    _Refusal("process_vm_writev", errno.EPERM, "write another process's memory"),
    _Refusal("pidfd_getfd", errno.EPERM, "take a file descriptor from another process"),
    # The keyring is not namespaced: keys of the host user would be reachable.
    _Refusal("keyctl", errno.EPERM, "use the kernel keyring (not namespaced)"),
    _Refusal("add_key", errno.EPERM, "add to the kernel keyring"),
    _Refusal("request_key", errno.EPERM, "request from the kernel keyring"),
    # Large kernel attack surfaces with a long list of privilege escalations.
    _Refusal("bpf", errno.EPERM, "load eBPF programs"),
    _Refusal("perf_event_open", errno.EPERM, "profile the kernel and other processes"),
    _Refusal("userfaultfd", errno.EPERM, "stall the kernel on a page fault (race exploits)"),
    _Refusal("io_uring_setup", errno.ENOSYS, "io_uring (callers fall back to plain I/O)"),
    _Refusal("io_uring_enter", errno.ENOSYS, "io_uring"),
    _Refusal("io_uring_register", errno.ENOSYS, "io_uring"),
    # Replacing the running kernel or loading code into it.
    _Refusal("kexec_load", errno.EPERM, "load a new kernel"),
    _Refusal("kexec_file_load", errno.EPERM, "load a new kernel"),
    _Refusal("init_module", errno.EPERM, "load a kernel module"),
    _Refusal("finit_module", errno.EPERM, "load a kernel module"),
    _Refusal("delete_module", errno.EPERM, "unload a kernel module"),
    # Typing into the terminal a command shares with the operator: the request is
    # an int, so only its low 32 bits count (CVE-2019-10063).
    _Refusal(
        "ioctl",
        errno.EPERM,
        "push input into a terminal (TIOCSTI, TIOCLINUX)",
        (_masked(1, _LOW32, _TIOCSTI), _masked(1, _LOW32, _TIOCLINUX)),
    ),
    # A user namespace of its own would give the command every capability again
    # inside it, and with them the kernel's whole namespaced-root surface.
    _Refusal(
        "unshare",
        errno.EPERM,
        "make a new user namespace",
        (_masked(0, _CLONE_NEWUSER, _CLONE_NEWUSER),),
    ),
    _Refusal(
        "clone",
        errno.EPERM,
        "make a new user namespace",
        (_masked(0, _CLONE_NEWUSER, _CLONE_NEWUSER),),
    ),
    # clone3's flags are in memory, out of seccomp's reach: glibc falls back to clone.
    _Refusal("clone3", errno.ENOSYS, "clone with flags seccomp cannot read"),
    _Refusal("setns", errno.EPERM, "join another namespace"),
    # The capabilities these need are dropped already; refused here as well so the
    # floor holds even if a capability leaks in.
    _Refusal("mount", errno.EPERM, "mount a filesystem"),
    _Refusal("umount2", errno.EPERM, "unmount a filesystem"),
    _Refusal("umount", errno.EPERM, "unmount a filesystem"),
    _Refusal("pivot_root", errno.EPERM, "change the root filesystem"),
    _Refusal("chroot", errno.EPERM, "change the root directory"),
    # The new mount API: ENOSYS sends libmount back to mount(2), refused above.
    _Refusal("fsopen", errno.ENOSYS, "mount API"),
    _Refusal("fsconfig", errno.ENOSYS, "mount API"),
    _Refusal("fsmount", errno.ENOSYS, "mount API"),
    _Refusal("fspick", errno.ENOSYS, "mount API"),
    _Refusal("move_mount", errno.ENOSYS, "mount API"),
    _Refusal("open_tree", errno.ENOSYS, "mount API"),
    _Refusal("mount_setattr", errno.ENOSYS, "mount API"),
    _Refusal("open_by_handle_at", errno.EPERM, "open a file by handle, past the mount view"),
    # Whole-machine switches; capability checks already refuse them in a user namespace.
    _Refusal("acct", errno.EPERM, "switch process accounting"),
    _Refusal("swapon", errno.EPERM, "add swap"),
    _Refusal("swapoff", errno.EPERM, "remove swap"),
    _Refusal("reboot", errno.EPERM, "reboot the machine"),
    _Refusal("settimeofday", errno.EPERM, "set the clock"),
    _Refusal("clock_settime", errno.EPERM, "set the clock"),
    _Refusal("syslog", errno.EPERM, "read the kernel log"),
    _Refusal("quotactl", errno.EPERM, "change disk quotas"),
    # Obsolete calls kept only by the kernel, with exploit history (uselib, modify_ldt).
    _Refusal("uselib", errno.EPERM, "obsolete"),
    _Refusal("modify_ldt", errno.EPERM, "16-bit segments (obsolete; information leaks)"),
    # Only the default Linux personalities: the flags (READ_IMPLIES_EXEC,
    # ADDR_NO_RANDOMIZE, MMAP_PAGE_ZERO, ...) undo memory hardening.
    _Refusal(
        "personality",
        errno.EPERM,
        "personality other than PER_LINUX/PER_LINUX32",
        _personality_cases(),
    ),
)


def _load_libseccomp() -> Any:
    # Imported here, not at the top: the module loads libseccomp.so when imported
    # and raises when it cannot, which is an answer for seccomp_available to give.
    return importlib.import_module("pyseccomp")


def _build(sc: Any, errno_for_tests: int | None = None) -> bytes:
    """The BPF program; ``errno_for_tests`` replaces every refusal's errno.

    The tests use that to tell the filter's answer from the kernel's own where
    both would be EPERM (a capability check that fails first).
    """
    native = sc.system_arch()
    flt = sc.SyscallFilter(sc.ALLOW)
    # Any other ABI (i386 int 0x80 on x86_64, x32) would index another syscall table.
    flt.set_attr(sc.Attr.ACT_BADARCH, sc.KILL_PROCESS)
    try:
        # A binary tree of syscall numbers, not a linear scan (libseccomp >= 2.5).
        flt.set_attr(sc.Attr.CTL_OPTIMIZE, 2)
    except OSError as exc:
        if exc.errno != errno.EINVAL:  # EINVAL: an older libseccomp; the scan works too
            raise
    for rule in _REFUSED:
        number = sc.resolve_syscall(sc.Arch.NATIVE, rule.syscall)
        if number < 0:
            continue  # not a syscall on this arch: nothing to refuse
        action = sc.ERRNO(rule.errno if errno_for_tests is None else errno_for_tests)
        if not rule.when:
            flt.add_rule(action, number)
        for op, arg, datum_a, datum_b in rule.when:
            if rule.syscall == "clone" and native in (sc.Arch.S390, sc.Arch.S390X):
                arg = 1  # s390's clone takes the stack first and the flags second
            flt.add_rule(action, number, sc.Arg(arg, getattr(sc, op), datum_a, datum_b))
    fd = os.memfd_create("multiplex-seccomp", os.MFD_CLOEXEC)
    try:
        with os.fdopen(os.dup(fd), "wb") as out:
            flt.export_bpf(out)
        size = os.lseek(fd, 0, os.SEEK_END)
        return os.pread(fd, size, 0)
    finally:
        os.close(fd)


@functools.cache
def _program_or_reason() -> bytes | str:
    if not os.path.exists("/proc/self/status"):
        return "seccomp filter unavailable: /proc is not mounted"
    with open("/proc/self/status", encoding="ascii", errors="replace") as status:
        if not any(line.startswith("Seccomp:") for line in status):
            return "seccomp filter unavailable: the kernel has no seccomp support"
    try:
        sc = _load_libseccomp()
    except (ImportError, OSError, RuntimeError) as exc:
        return f"seccomp filter unavailable: libseccomp cannot be loaded ({exc})"
    try:
        program = _build(sc)
    except (OSError, ValueError, AttributeError) as exc:
        return f"seccomp filter unavailable: libseccomp cannot build it ({exc})"
    if not program or len(program) % 8:
        return f"seccomp filter unavailable: libseccomp exported {len(program)} bytes"
    return program


def seccomp_available() -> tuple[bool, str]:
    """Whether the syscall floor can be built here; else ``(False, one-line reason)``.

    Probed once per process. The sandbox must not start a command when this is
    false (fail closed).
    """
    found = _program_or_reason()
    if isinstance(found, str):
        return False, found
    return True, f"seccomp filter of {len(found) // 8} BPF instructions"


def seccomp_program() -> bytes:
    """The filter as the BPF program (``struct sock_filter[]``) that ``bwrap --seccomp`` reads.

    Built once per process. Raises ``RuntimeError`` with the reason when
    ``seccomp_available()`` is false.
    """
    found = _program_or_reason()
    if isinstance(found, str):
        raise RuntimeError(found)
    return found


def seccomp_fd() -> int:
    """A new fd, positioned at the start of the program, for ONE ``bwrap --seccomp`` start.

    bwrap reads it to its end, so each start needs its own. The caller passes it
    in ``pass_fds`` and closes it once the start is done. Not inheritable
    (``pass_fds`` makes it so in the child only).
    """
    program = seccomp_program()
    fd = os.memfd_create("multiplex-seccomp", os.MFD_CLOEXEC)
    try:
        os.write(fd, program)  # a memfd takes the whole write at once
        os.lseek(fd, 0, os.SEEK_SET)
    except BaseException:
        os.close(fd)
        raise
    return fd
