"""The sandbox's syscall floor, probed with real syscalls inside real bwrap sandboxes.

Each refused syscall is tried three ways in the same sandbox: without the
filter (the kernel's own answer), under the filter the sandbox uses (EPERM or
ENOSYS), and under the same rules built with a marker errno that the kernel
never returns for these calls. The marker tells the filter's refusal from a
kernel check that happens to give EPERM too (no capability in the user
namespace), so every probe fails if its rule is missing.
"""

from __future__ import annotations

import errno
import importlib.util
import os
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from multiplex.execution import bwrap_status
from multiplex.execution.sandbox._seccomp import (
    _build,
    _load_libseccomp,
    seccomp_available,
    seccomp_fd,
    seccomp_program,
)

pytestmark = [
    pytest.mark.skipif(not bwrap_status()[0], reason=f"bwrap: {bwrap_status()[1]}"),
    pytest.mark.skipif(os.uname().machine != "x86_64", reason="probes use x86_64 syscall numbers"),
]

SANDBOX = (
    "bwrap",
    "--unshare-user",
    "--unshare-pid",
    "--die-with-parent",
    "--ro-bind",
    "/",
    "/",
    "--dev",
    "/dev",
    "--proc",
    "/proc",
)
MARKER = 133  # EHWPOISON: no probed syscall returns it by itself
SIGSYS_EXIT = 128 + 31  # bwrap's exit when its child was killed by SIGSYS

# Each probe prints "name errno" (0: the call succeeded). Arguments are chosen so
# that an unrefused call fails harmlessly (bad fd, missing path, bad pointer) or
# does nothing lasting; anything that changes the process runs in a child.
PROBE = textwrap.dedent(
    r"""
    import ctypes, fcntl, os, sys, termios
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    L = ctypes.c_long

    def sc(nr, *args):
        ctypes.set_errno(0)
        r = libc.syscall(L(nr), *[L(a) if isinstance(a, int) else a for a in args])
        return 0 if r >= 0 else ctypes.get_errno()

    def in_child(fn):
        pid = os.fork()
        if pid == 0:
            os._exit(fn())
        return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])

    buf = ctypes.create_string_buffer(b"abcdefgh", 8)

    class iovec(ctypes.Structure):
        _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]

    def vm(nr):
        a = iovec(ctypes.addressof(buf), 4)
        b = iovec(ctypes.addressof(buf) + 4, 4)
        return sc(nr, os.getpid(), ctypes.byref(a), 1, ctypes.byref(b), 1, 0)

    def clone_newuser():
        ctypes.set_errno(0)
        r = libc.syscall(L(56), L(0x10000000 | 17), L(0), L(0), L(0), L(0))
        if r == 0:
            os._exit(0)
        if r < 0:
            return ctypes.get_errno()
        os.waitpid(r, 0)
        return 0

    def on_own_tty(fn):
        # TIOCSTI is open to a process on its own controlling terminal.
        def run():
            os.setsid()
            master, slave = os.openpty()
            fcntl.ioctl(slave, termios.TIOCSCTTY, 0)
            return fn(slave)
        return in_child(run)

    def ioctl_errno(fd, request, arg):
        try:
            fcntl.ioctl(fd, request, arg)
            return 0
        except OSError as exc:
            return exc.errno

    byte = ctypes.c_char(b"x")
    P = {
        "ptrace": lambda: in_child(lambda: sc(101, 0, 0, 0, 0)),
        "process_vm_readv": lambda: vm(310),
        "process_vm_writev": lambda: vm(311),
        "pidfd_getfd": lambda: sc(438, os.pidfd_open(os.getpid()), 0, 0),
        "keyctl": lambda: sc(250, 0, -2, 1),
        "add_key": lambda: sc(248, b"user", b"probe", b"v", 1, -2),
        "request_key": lambda: sc(249, b"user", b"nosuch-probe", None, 0),
        "bpf": lambda: sc(321, 0, None, 0),
        "perf_event_open": lambda: sc(298, None, 0, -1, -1, 0),
        "userfaultfd": lambda: sc(323, 1),
        "io_uring_setup": lambda: sc(425, 1, None),
        "kexec_load": lambda: sc(246, 0, 0, None, 0xDEAD0000),
        "kexec_file_load": lambda: sc(320, -1, -1, 0, None, 0),
        "init_module": lambda: sc(175, None, 0, b""),
        "finit_module": lambda: sc(313, -1, b"", 0),
        "delete_module": lambda: sc(176, b"nosuch_probe_module", os.O_NONBLOCK),
        "tiocsti": lambda: on_own_tty(lambda fd: ioctl_errno(fd, termios.TIOCSTI, b"x")),
        "tiocsti_high_bits": lambda: on_own_tty(
            lambda fd: sc(16, fd, 0xDEAD00000000 | termios.TIOCSTI, ctypes.byref(byte))
        ),
        "tioclinux": lambda: on_own_tty(lambda fd: sc(16, fd, 0x541C, ctypes.byref(byte))),
        "unshare_newuser": lambda: in_child(lambda: sc(272, 0x10000000)),
        "clone_newuser": lambda: in_child(clone_newuser),
        "clone3": lambda: sc(435, None, 0),
        "setns": lambda: sc(308, -1, 0),
        "mount": lambda: sc(165, b"none", b"/nonexistent-probe", b"tmpfs", 0, None),
        "umount2": lambda: sc(166, b"/nonexistent-probe", 0),
        "pivot_root": lambda: sc(155, b"/nonexistent-probe", b"/nonexistent-probe"),
        "chroot": lambda: sc(161, b"/nonexistent-probe"),
        "fsopen": lambda: sc(430, b"nosuchfs-probe", 0),
        "open_tree": lambda: sc(428, -1, b"/nonexistent-probe", 0),
        "open_by_handle_at": lambda: sc(304, -1, None, 0),
        "acct": lambda: sc(163, b"/nonexistent-probe/x"),
        "swapon": lambda: sc(167, b"/nonexistent-probe", 0),
        "swapoff": lambda: sc(168, b"/nonexistent-probe"),
        "reboot": lambda: sc(169, 0, 0, 0, None),  # wrong magic: EINVAL even for root
        "settimeofday": lambda: sc(164, None, None),  # both NULL: changes nothing
        "clock_settime": lambda: sc(227, 0, None),
        "syslog": lambda: sc(103, 10, None, 0),
        "quotactl": lambda: sc(179, 0, b"/nonexistent-probe", 0, None),
        "uselib": lambda: sc(134, b"/nonexistent-probe"),
        "modify_ldt": lambda: sc(154, 0, buf, 0),
        "personality_read_implies_exec": lambda: in_child(lambda: sc(135, 0x0400000)),
        "personality_no_randomize": lambda: in_child(lambda: sc(135, 0x0040000)),
        "personality_bit31_and_flag": lambda: in_child(lambda: sc(135, 0x80400000)),
        "personality_above_32_bits": lambda: in_child(lambda: sc(135, 0x1_0000_0000)),
        # Allowed: the floor must not refuse these.
        "ok_personality_query": lambda: sc(135, 0xFFFFFFFF),
        "ok_personality_linux": lambda: in_child(lambda: sc(135, 0)),
        "ok_personality_linux32": lambda: in_child(lambda: sc(135, 8)),
        "ok_unshare_files": lambda: in_child(lambda: sc(272, 0x400)),
        "ok_fork": lambda: in_child(lambda: 0),
        "ok_ioctl_winsize": lambda: on_own_tty(
            lambda fd: ioctl_errno(fd, termios.TIOCGWINSZ, b"\0" * 8)
        ),
    }
    for name in sys.argv[1:] or P:
        print(name, P[name](), flush=True)
    """
)

EPERM, ENOSYS = errno.EPERM, errno.ENOSYS
REFUSED = {
    "ptrace": EPERM,
    "process_vm_readv": EPERM,
    "process_vm_writev": EPERM,
    "pidfd_getfd": EPERM,
    "keyctl": EPERM,
    "add_key": EPERM,
    "request_key": EPERM,
    "bpf": EPERM,
    "perf_event_open": EPERM,
    "userfaultfd": EPERM,
    "io_uring_setup": ENOSYS,
    "kexec_load": EPERM,
    "kexec_file_load": EPERM,
    "init_module": EPERM,
    "finit_module": EPERM,
    "delete_module": EPERM,
    "tiocsti": EPERM,
    "tiocsti_high_bits": EPERM,
    "tioclinux": EPERM,
    "unshare_newuser": EPERM,
    "clone_newuser": EPERM,
    "clone3": ENOSYS,
    "setns": EPERM,
    "mount": EPERM,
    "umount2": EPERM,
    "pivot_root": EPERM,
    "chroot": EPERM,
    "fsopen": ENOSYS,
    "open_tree": ENOSYS,
    "open_by_handle_at": EPERM,
    "acct": EPERM,
    "swapon": EPERM,
    "swapoff": EPERM,
    "reboot": EPERM,
    "settimeofday": EPERM,
    "clock_settime": EPERM,
    "syslog": EPERM,
    "quotactl": EPERM,
    "uselib": EPERM,
    "modify_ldt": EPERM,
    "personality_read_implies_exec": EPERM,
    "personality_no_randomize": EPERM,
    "personality_bit31_and_flag": EPERM,
    "personality_above_32_bits": EPERM,
}
ALLOWED = [
    "ok_personality_query",
    "ok_personality_linux",
    "ok_personality_linux32",
    "ok_unshare_files",
    "ok_fork",
    "ok_ioctl_winsize",
]
# Probes the kernel lets through here without the filter: the plain "is it
# refused" test, beside the marker one.
SUCCEED_UNFILTERED = {
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "pidfd_getfd",
    "keyctl",
    "add_key",
    "userfaultfd",
    "tiocsti",
    "tiocsti_high_bits",
    "unshare_newuser",
    "clone_newuser",
    "modify_ldt",
    "personality_read_implies_exec",
    "personality_no_randomize",
    "personality_bit31_and_flag",
}


def run_sandboxed(
    argv: Sequence[str], program: bytes | None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """Run argv in the test sandbox, under ``program`` (None: no filter)."""
    if program is None:
        return subprocess.run(
            [*SANDBOX, "--", *argv], capture_output=True, text=True, timeout=timeout, check=False
        )
    read, write = os.pipe()
    try:
        pid = os.fork()
        if pid == 0:  # feeds the program whatever its size vs the pipe buffer
            os.close(read)
            os.write(write, program)
            os._exit(0)
        os.close(write)
        done = subprocess.run(
            [*SANDBOX, "--seccomp", str(read), "--", *argv],
            pass_fds=(read,),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        os.waitpid(pid, 0)
        return done
    finally:
        os.close(read)


def probe_all(program: bytes | None) -> dict[str, int]:
    done = run_sandboxed([sys.executable, "-c", PROBE], program)
    assert done.returncode == 0, done.stderr
    return {name: int(value) for name, value in (line.split() for line in done.stdout.splitlines())}


@pytest.fixture(scope="module")
def results() -> dict[str, dict[str, int]]:
    return {
        "none": probe_all(None),
        "floor": probe_all(seccomp_program()),
        "marker": probe_all(_build(_load_libseccomp(), errno_for_tests=MARKER)),
    }


def test_available_here() -> None:
    works, detail = seccomp_available()
    assert works, detail
    assert seccomp_available() == (works, detail)
    assert len(seccomp_program()) % 8 == 0


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_with_its_errno(results: dict[str, dict[str, int]], name: str) -> None:
    assert results["floor"][name] == REFUSED[name], errno.errorcode.get(results["floor"][name])


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refusal_comes_from_the_filter(results: dict[str, dict[str, int]], name: str) -> None:
    assert results["marker"][name] == MARKER
    assert results["none"][name] != MARKER


@pytest.mark.parametrize("name", sorted(SUCCEED_UNFILTERED))
def test_succeeds_without_the_filter(results: dict[str, dict[str, int]], name: str) -> None:
    assert results["none"][name] == 0
    assert results["floor"][name] != 0


@pytest.mark.parametrize("name", ALLOWED)
def test_not_refused(results: dict[str, dict[str, int]], name: str) -> None:
    assert results["none"][name] == 0
    assert results["floor"][name] == 0


def test_status_shows_no_new_privs_and_filter() -> None:
    done = run_sandboxed(["cat", "/proc/self/status"], seccomp_program())
    fields = dict(line.split(":\t", 1) for line in done.stdout.splitlines() if ":\t" in line)
    assert fields["NoNewPrivs"].strip() == "1"
    assert fields["Seccomp"].strip() == "2"
    unfiltered = run_sandboxed(["cat", "/proc/self/status"], None).stdout
    assert "Seccomp:\t0" in unfiltered


JUPYTER_LIKE = textwrap.dedent(
    """
    import asyncio, multiprocessing, subprocess, threading
    async def main():
        await asyncio.sleep(0)
        proc = await asyncio.create_subprocess_exec("true")
        return await proc.wait()
    assert asyncio.run(main()) == 0
    out = []
    threads = [threading.Thread(target=out.append, args=(i,)) for i in range(4)]
    for t in threads: t.start()
    for t in threads: t.join()
    assert sorted(out) == [0, 1, 2, 3]
    with multiprocessing.Pool(2) as pool:
        assert pool.map(abs, [-1, -2, -3]) == [1, 2, 3]
    assert subprocess.run(["true"]).returncode == 0
    print("ok")
    """
)


def _ordinary() -> list[list[str]]:
    commands = [
        ["bash", "-c", "echo $((6*7)) | cat; (true) && true"],
        [sys.executable, "-c", "import subprocess; subprocess.run(['echo', 'ok'], check=True)"],
        [sys.executable, "-c", JUPYTER_LIKE],
        [sys.executable, "-m", "pip", "--version"],
    ]
    commands += [[tool, "--version"] for tool in ("git", "curl") if shutil.which(tool)]
    return commands


@pytest.mark.parametrize("argv", _ordinary(), ids=lambda argv: " ".join(argv)[:40])
def test_ordinary_commands_still_work(argv: list[str]) -> None:
    done = run_sandboxed(argv, seccomp_program())
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip()


ABI_PROBE = r"""
#include <stdio.h>
#include <string.h>
/* x86_64 code reaching the other syscall tables: int 0x80 (i386, where
   ptrace is 26 and getpid 20) and the x32 bit (0x40000000). */
int main(int argc, char **argv) {
    long r = -1;
    if (!strcmp(argv[1], "int80-ptrace"))
        __asm__ volatile("int $0x80" : "=a"(r) : "a"(26L), "b"(0L), "c"(0L), "d"(0L) : "memory");
    else if (!strcmp(argv[1], "int80-getpid"))
        __asm__ volatile("int $0x80" : "=a"(r) : "a"(20L) : "memory");
    else if (!strcmp(argv[1], "x32-getpid"))
        __asm__ volatile("syscall" : "=a"(r) : "a"(0x40000000L | 39L) : "rcx", "r11", "memory");
    printf("%ld\n", r);
    return 0;
}
"""


@pytest.fixture(scope="module")
def abi_probe(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    if shutil.which("gcc") is None:
        pytest.skip("gcc is not installed: no probe for the i386 and x32 syscall tables")
    folder = tmp_path_factory.mktemp("abi")
    (folder / "probe.c").write_text(ABI_PROBE)
    subprocess.run(
        ["gcc", "-O0", "-o", str(folder / "probe"), str(folder / "probe.c")],
        check=True,
        capture_output=True,
    )
    yield folder / "probe"


@pytest.mark.parametrize("mode", ["int80-ptrace", "int80-getpid"])
def test_i386_syscalls_cannot_bypass(abi_probe: Path, mode: str) -> None:
    unfiltered = run_sandboxed([str(abi_probe), mode], None)
    if unfiltered.returncode != 0:
        pytest.skip(f"this kernel runs no i386 syscalls (exit {unfiltered.returncode})")
    # The call went through the i386 table: a pid, or ptrace's own refusal (-EPERM).
    answer = int(unfiltered.stdout)
    assert answer > 0 if mode == "int80-getpid" else answer in (0, -errno.EPERM)
    filtered = run_sandboxed([str(abi_probe), mode], seccomp_program())
    assert filtered.returncode == SIGSYS_EXIT
    assert filtered.stdout == ""


def test_x32_syscalls_cannot_bypass(abi_probe: Path) -> None:
    unfiltered = run_sandboxed([str(abi_probe), "x32-getpid"], None)
    assert unfiltered.returncode == 0  # ENOSYS where x32 is off, a pid where it is on
    filtered = run_sandboxed([str(abi_probe), "x32-getpid"], seccomp_program())
    assert filtered.returncode == SIGSYS_EXIT
    assert filtered.stdout == ""


def test_each_fd_is_fresh_and_reads_the_whole_program() -> None:
    first, second = seccomp_fd(), seccomp_fd()
    try:
        assert first != second
        assert not os.get_inheritable(first)
        for fd in (first, second):
            assert os.read(fd, len(seccomp_program()) + 1) == seccomp_program()
            assert os.read(fd, 1) == b""
    finally:
        os.close(first)
        os.close(second)


def test_fd_feeds_bwrap() -> None:
    fd = seccomp_fd()
    try:
        done = subprocess.run(
            [*SANDBOX, "--seccomp", str(fd), "--", "cat", "/proc/self/status"],
            pass_fds=(fd,),
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    finally:
        os.close(fd)
    assert "Seccomp:\t2" in done.stdout, done.stderr


def test_unavailable_libseccomp_is_reported_not_skipped(tmp_path: Path) -> None:
    # The module alone, in an interpreter whose path has no pyseccomp: the real
    # import fails, as it does where the package or libseccomp.so is missing.
    source = Path(importlib.util.find_spec("multiplex.execution.sandbox._seccomp").origin or "")
    script = textwrap.dedent(
        f"""
        import importlib.util, sys
        sys.path = [p for p in sys.path if "site-packages" not in p]
        spec = importlib.util.spec_from_file_location("floor", {str(source)!r})
        floor = sys.modules["floor"] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(floor)
        print(*floor.seccomp_available(), sep="|")
        try:
            floor.seccomp_fd()
        except RuntimeError as exc:
            print("refused:", exc)
        """
    )
    done = subprocess.run(
        [sys.executable, "-S", "-c", script], capture_output=True, text=True, check=True
    )
    available, refused = done.stdout.splitlines()
    assert available.startswith("False|seccomp filter unavailable: libseccomp cannot be loaded (")
    assert refused.startswith("refused: seccomp filter unavailable")
