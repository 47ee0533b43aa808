"""Another running process reached into (docs/security.md#named-patterns, ``process-attach``).

Without the sandbox's PID namespace the supervisor is a process like any other:
a debugger, tracer or profiler attached to it, a core dump of it or a read of
``/proc/PID/mem`` hands over every profile's secrets and the admin token. Each
hostile line was approved in the manual home before, and under ``gdb *``,
``strace *`` and the like in the strict one; starting a program under those tools
stays approved.
"""

from __future__ import annotations

import pytest

from multiplex import Supervisor
from tests.shell._carriers import APPROVED, assert_named, homes_fixture

sup = homes_fixture(
    "process_attach",
    ["gdb *", "cgdb *", "lldb *", "gcore *", "strace *", "ltrace *", "perf *", "py-spy *",
     "pyrasite *", "bpftrace *", "cat *", "dd *", "ls *", "rbspy *", "jstack *", "jcmd *",
     "./a.out", "python3 *"],
)  # fmt: skip

ATTACHED = [
    "gdb -p 1234",
    "gdb --pid=1234",
    "gdb -p1234 -batch -ex 'generate-core-file /tmp/core'",
    "gdb -batch -ex 'attach 1234' -ex 'dump memory /tmp/m 0x0 0x1000'",
    "gdb /usr/bin/python3 1234",
    "gdb -q -ex 'at 1234'",
    "lldb -p 1234",
    "lldb --attach-pid 1234",
    "lldb --attach-name python3",
    "lldb -o 'process attach --pid 1234'",
    "gcore 1234",
    "gcore -o /tmp/core $(pgrep python3)",
    "strace -p 1234 -e read",
    "strace -f --attach=1234",
    "ltrace -p 1234",
    "perf record -p 1234",
    "py-spy dump --pid 1234",
    "py-spy dump --locals --pid $(pgrep -f multiplex)",
    "py-spy top -p 1234",
    "rbspy record --pid 1234",
    "pyrasite 1234 payload.py",
    "bpftrace -e 'uprobe:/usr/bin/python3:* { printf(\"x\") }'",
    "jstack 1234",
    "jcmd 1234 VM.system_properties",
    "cat /proc/1234/mem",
    "cat /proc/1234/task/1240/mem",
    "dd if=/proc/1234/mem bs=1 skip=4096 count=100",
    "cat /proc/1234/fd/3",
    "ls -l /proc/1234/fd",
    "cat /proc/$PPID/root/etc/hostname",
    "ls /proc/1/cwd/",
    "python3 x.py < /proc/1234/mem",
]

STARTED = [
    "gdb ./a.out",
    "gdb --args ./a.out -v",
    "gdb -batch -ex run ./a.out",
    "lldb ./a.out",
    "strace -o trace.txt ls",
    "strace -f -e trace=file ./a.out",
    "ltrace ./a.out",
    "perf stat ./a.out",
    "py-spy record -o profile.svg -- python3 app.py",
    "jcmd",
    "cat /proc/self/status",
    "ls -l /proc/self/fd",
    "ls -l /proc/$$/fd",
    "cat /proc/cpuinfo",
    "cat /proc/1234/status",
    "cat /proc/$PPID/cmdline",
]


@pytest.mark.parametrize("line", ATTACHED)
def test_attaching_to_a_running_process_asks(sup: Supervisor, line: str) -> None:
    assert_named(sup, line, "process-attach", ("manual", "strict"))


@pytest.mark.parametrize("line", STARTED)
def test_starting_a_program_under_those_tools_stays_approved(sup: Supervisor, line: str) -> None:
    verdict = sup.test("manual", line, context="api")
    assert verdict.outcome.value == APPROVED, verdict.cause
    assert "process-attach" not in [d.pattern for d in sup.test("strict", line).dangers]
