"""Another running process reached into (docs/security.md#named-patterns, ``process-attach``).

A debugger, tracer or profiler attached to a running process, a core dump of one,
or a read of its memory, open files or root through ``/proc/PID/``: what that
process holds is read, and without the sandbox's PID namespace the supervisor is
such a process (every profile's secrets, the admin token). Starting a program
under a debugger or tracer (``gdb ./a.out``, ``strace ls``, ``py-spy record --
python3 app.py``) is not attaching. A pure leaf: stdlib and the shell leaves it
imports.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from multiplex.shell.detection._catalogue import PROCESS_ATTACH, Finding
from multiplex.shell.detection.paths._writes import all_commands, evidence
from multiplex.shell.parsing._argv import operands, option_given, option_values
from multiplex.shell.parsing._parsed import ParsedLine, SimpleCommand

__all__ = ["each_process_attach"]

# Options naming the process to attach to, per program.
_PID_OPTIONS = {
    "gdb": ("-p", "--pid"), "cgdb": ("-p", "--pid"), "lldb": ("-p", "--attach-pid", "-n",
    "--attach-name"), "strace": ("-p", "--attach"), "ltrace": ("-p",), "perf": ("-p", "--pid"),
    "py-spy": ("-p", "--pid"), "rbspy": ("-p", "--pid"), "rbtrace": ("-p", "--pid"),
    "austin": ("-p", "--pid"), "memray": ("-p",), "async-profiler": ("-p",),
    "jcmd": (), "jstack": (), "jmap": (), "jattach": (), "eu-stack": ("-p", "--pid"),
}  # fmt: skip
# Programs whose every use reaches into a running process (jstack PID, gcore PID …).
_ALWAYS = frozenset(
    {"gcore", "pyrasite", "pyrasite-shell", "bpftrace", "jstack", "jmap", "jcmd", "jattach",
     "gdbserver", "gstack", "pstack"}
)  # fmt: skip
# A debugger's own command that attaches (gdb -ex 'attach N', lldb -o 'process attach …').
_ATTACH_COMMAND = re.compile(r"^\s*(?:process\s+)?at(?:t(?:a(?:c(?:h)?)?)?)?\s+\S")
_COMMAND_OPTIONS = ("-ex", "--ex", "-eval-command", "--eval-command", "-o", "--one-line")
# Another process's memory, open files, root or working folder (not the shell's own:
# self, $$, $BASHPID).
_PROC = re.compile(
    r"(?:^|[=:])/proc/+(?!(?:self|thread-self|\$\$|\$BASHPID|\$\{BASHPID\})/)[^/\s]+/+"
    r"(?:task/+[^/\s]+/+)?(?:mem|fd|root|cwd|map_files)\b"
)


def each_process_attach(parsed: ParsedLine) -> Iterator[Finding]:
    """Each command that attaches to, dumps or reads another running process."""
    for cmd in all_commands(parsed):
        if _attaches(cmd) or _reads_proc(cmd):
            yield Finding(PROCESS_ATTACH, evidence(cmd), cmd.text)


def _attaches(cmd: SimpleCommand) -> bool:
    prog, args = cmd.program, cmd.argv[1:]
    if prog in _ALWAYS:
        return prog != "jcmd" or bool(operands(args))  # bare jcmd lists the JVMs
    if prog not in _PID_OPTIONS:
        return False
    if any(option_given(arg, option) for arg in args for option in _PID_OPTIONS[prog]):
        return True
    if prog in ("gdb", "cgdb", "lldb"):
        commands = option_values(args, _COMMAND_OPTIONS)
        if any(_ATTACH_COMMAND.match(c) for c in commands):
            return True
        # gdb PROGRAM PID: the second operand is a process to attach to.
        ops = _debugger_operands(args)
        return prog != "lldb" and len(ops) > 1 and ops[1].isdigit()
    return False


def _debugger_operands(args: Sequence[str]) -> list[str]:
    if "--args" in args:
        return []
    values = set(_COMMAND_OPTIONS) | {"-x", "--command", "-cd", "--cd", "-d", "--directory",
                                      "-s", "--symbols", "-e", "--exec", "-c", "--core"}  # fmt: skip
    out: list[str] = []
    skip = False
    for arg in args:
        if skip:
            skip = False
        elif arg in values:
            skip = True
        elif not arg.startswith("-"):
            out.append(arg)
    return out


def _reads_proc(cmd: SimpleCommand) -> bool:
    for word in cmd.argv:
        if "/proc" in word and _PROC.search(word):
            return True
    return any("/proc" in r.target and _PROC.search(r.target) for r in cmd.redirects)
