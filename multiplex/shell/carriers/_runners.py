"""Editors, debuggers, ssh and expect: the shell commands their options or input carry.

The readers behind ``shell.carriers._tool_code.carried`` for the programs that run a
command given as an ex command (``vim +!cmd``, ``ed`` ``!cmd``), a debugger
command (``gdb -ex 'shell cmd'``), an ssh option (``-o ProxyCommand=cmd``) or a
Tcl ``spawn`` (``expect -c``); make's are in ``_make.py``. Each line is read by hand, once, left to right
(docs/security.md#linear-time). A pure leaf: stdlib and ``shell.parsing._getopt``.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass

from multiplex.shell.parsing._getopt import read_options, table

__all__ = [
    "NOTHING",
    "SHELL_WORDS",
    "STDIN_FILES",
    "Carried",
    "carried_of",
    "command_line",
    "ed_code",
    "expect_code",
    "first_word",
    "gdb_code",
    "m4_code",
    "ssh_code",
    "vim_code",
    "words",
]

STDIN_FILES = frozenset({"/dev/stdin", "/dev/fd/0", "/proc/self/fd/0", "-"})


@dataclass(frozen=True, slots=True)
class Carried:
    """What one invocation carries beyond its own work."""

    payloads: tuple[str, ...] = ()
    runs: str | None = None
    unknown: str | None = None
    writes: tuple[str, ...] = ()
    scripts: tuple[str, ...] = ()  # interpreter code (vim :py, gdb python): scanned as text


NOTHING = Carried()


def carried_of(
    payloads: Sequence[str],
    runs: str | None = None,
    unknown: str | None = None,
    writes: tuple[str, ...] = (),
    scripts: tuple[str, ...] = (),
) -> Carried:
    """A :class:`Carried` of the non-blank ``payloads`` (an empty command runs nothing)."""
    if not payloads and runs is None and unknown is None and not writes and not scripts:
        return NOTHING  # what most invocations carry: the same value, not made anew
    return Carried(tuple(p for p in payloads if p.strip()), runs, unknown, writes, scripts)


def words(text: str) -> frozenset[str]:
    """The words of ``text`` as a set (tables written as one string)."""
    return frozenset(text.split())


# ---- ex/ed/gdb commands ------------------------------------------------------------
# ":!cmd", ":silent !cmd", ":r !cmd", ":w !cmd", "e !cmd" (ed); gdb "shell cmd", "!cmd".
# Read by hand, not by a regex: each ex line is looked at once, left to right.
_SILENT = ("silent!", "silent", "sil!", "sil")
_BANG_VERBS = ("read", "write", "edit", "r", "w", "e")
_EX_CODE = words(
    "call exe execute py python py3 python3 pyx pythonx pyf pyfile lua luafile perl perldo "
    "rub ruby rubyfile ter terminal so source"
)
_GDB_SHELL = ("shell", "pipe", "|")
_GDB_CODE = words("python py pi python-interactive guile gu source so compile")


def _ex_line(line: str) -> str:
    text = line.lstrip(": \t")
    for word in _SILENT:
        if text.startswith(word):
            return text[len(word) :].lstrip()
    return text


def _bang(text: str) -> str | None:
    """The shell command of ``!cmd``, ``r !cmd``, ``1,2w !cmd`` (an ex line), or None."""
    text = text.lstrip("0123456789,.$%'<> \t")
    for verb in _BANG_VERBS:
        if text.startswith(verb) and text[len(verb) :].lstrip().startswith("!"):
            text = text[len(verb) :].lstrip()
            break
    return text[1:] if text.startswith("!") else None


def first_word(text: str) -> str:
    """The command word of an ex or gdb line, without a trailing ``!`` or ``(``."""
    words = text.split(None, 1)
    return words[0].rstrip("!(") if words else ""


def _ex(lines: Sequence[str], code: frozenset[str]) -> tuple[list[str], bool, list[str]]:
    payloads: list[str] = []
    scripts: list[str] = []
    runs = False
    for line in lines:
        text = _ex_line(line)
        bang = _bang(text)
        if bang is not None:
            runs = True
            payloads.extend([bang] if bang.strip() else [])
        elif first_word(text) in code or "system(" in text or "systemlist(" in text:
            runs = True
            scripts.append(text)  # call system("…"), py3 os.system("…"): literals checked
    return payloads, runs, scripts


_VIM = table(
    "cmd= clean noplugin remote-expr= servername= startuptime=", "c= S=? u= U= T= i= w= W= s e E"
)


def vim_code(args: Sequence[str], fed: str | None) -> Carried:
    commands = [a[1:] for a in args if a.startswith("+")]
    parsed = read_options([a for a in args if not a.startswith("+")], _VIM)
    commands += parsed.values("-c", "--cmd")
    if fed is not None and parsed.has("-e", "-E"):
        commands += fed.splitlines()
    payloads, runs, scripts = _ex(commands, _EX_CODE)
    unknown = "vim -S script" if parsed.has("-S", "-u") else None
    why = "vim runs a shell command" if runs else None
    writes = tuple(_ex_writes(commands))
    return Carried(tuple(payloads), why, unknown, writes, tuple(scripts))


# An ex command that writes the buffer to a file: :w FILE, :w! FILE, :wq FILE, :saveas FILE,
# :x FILE, :update FILE; ed's w FILE, W FILE, wq FILE (after an address).
_EX_WRITE = re.compile(
    r"^[ \t:]*+[\d,.$%'a-z+-]{0,32}?(?:w(?:r(?:i(?:te?)?)?)?|wq|W|x(?:it)?|sav(?:eas)?|up(?:date)?)"
    r"!?[ \t]++(?:>>[ \t]*+)?([^\s|]++)"
)


def _ex_writes(lines: Sequence[str]) -> list[str]:
    """The files ex (or ed) commands write: ``w ~/.bashrc``, ``1,$w! /etc/x``."""
    found: list[str] = []
    for line in lines:
        for command in line.split("|"):  # ex's bar separates commands
            m = _EX_WRITE.match(command)
            if m is not None and not m.group(1).startswith("!"):  # (:w !cmd pipes, not a file)
                found.append(m.group(1))
    return found


def ed_code(args: Sequence[str], fed: str | None) -> Carried:
    if fed is None:
        return Carried(unknown="ed reads its commands from standard input")
    payloads, runs, _ = _ex(fed.splitlines(), frozenset())
    why = "ed runs a shell command" if runs else None
    return Carried(tuple(payloads), why, writes=tuple(_ex_writes(fed.splitlines())))


_GDB = table(
    "ex= eval-command= iex= init-eval-command= x= command= ix= init-command= batch p= pid= "
    "q quiet silent nx n nh args core= c= directory= d= cd= se= s= symbols= e= exec= tty= "
    "data-directory= D=",
    "x= ex= p= c= d= s= e= D=",
    single=True,
)


def gdb_code(args: Sequence[str], fed: str | None) -> Carried:
    parsed = read_options(args, _GDB)
    lines = parsed.values("--ex", "--eval-command", "--iex", "--init-eval-command", "-ex")
    payloads: list[str] = []
    scripts: list[str] = []
    runs = False
    for line in lines:
        text = line.strip()
        verb = next((v for v in _GDB_SHELL if text.startswith(v)), "!" if text[:1] == "!" else "")
        if verb:
            runs = True
            rest = text[len(verb) :].strip()
            payloads.extend([rest] if rest else [])
        elif first_word(text) in _GDB_CODE:
            runs = True
            scripts.append(text)
    unknown = (
        "gdb -x script" if parsed.has("--x", "--command", "--ix", "--init-command", "-x") else None
    )
    why = "gdb runs a shell command" if runs else None
    return Carried(tuple(payloads), why, unknown, scripts=tuple(scripts))


_SSH_RUNS = ("proxycommand", "localcommand", "knownhostscommand", "match")
_SSH = table("", "B= b= c= D= E= e= F= I= i= J= L= l= m= O= o= p= Q= R= S= W= w=")


def ssh_code(args: Sequence[str], fed: str | None) -> Carried:
    parsed = read_options(args, _SSH, permute=False)
    payloads: list[str] = []
    for value in parsed.values("-o"):
        name, _, rest = value.replace("=", " ", 1).strip().partition(" ")
        if name.lower() in _SSH_RUNS:
            payloads.append(rest.strip())
    runs = "ssh -o runs a local command" if payloads else None
    unknown = "ssh -F config" if parsed.has("-F") else None
    return Carried(tuple(p for p in payloads if p), runs, unknown)


SHELL_WORDS = re.compile(r"[\s;&|`$()<>]")


_EXPECT = table("", "c= f= b= d D= i n N v")
_EXPECT_RUNS = re.compile(r"(?:^|[;\[{]\s*)(?:spawn|exec|system)\s+([^;\]\n]*)")
_TCL_BRACES = re.compile(r"\{([^{}]*)\}")


def expect_code(args: Sequence[str], fed: str | None) -> Carried:
    parsed = read_options(args, _EXPECT, permute=False)
    code = "\n".join(parsed.values("-c"))
    if not parsed.has("-c", "-f") and not parsed.operands and fed is not None:
        code += "\n" + fed
    payloads: list[str] = []
    for line in code.splitlines():
        for m in _EXPECT_RUNS.finditer(line):
            # Tcl quotes with braces: "spawn sh -c {rm -rf /}" is sh -c 'rm -rf /'.
            tcl = _TCL_BRACES.sub(lambda b: shlex.quote(b.group(1)), m.group(1)).rstrip("} ")
            words = tcl.split(" ")
            while words and words[0].startswith("-"):  # spawn -noecho CMD
                words.pop(0)
            payloads.append(" ".join(words))
    runs = "expect spawns a program" if payloads or 'open "|' in code else None
    unknown = "expect script file" if parsed.has("-f") or parsed.operands else None
    return Carried(tuple(p for p in payloads if p), runs, unknown)


def command_line(programs: Sequence[str]) -> str | None:
    """Why a program option runs code: it holds a command line, not one program's name,
    or names a shell or interpreter that reads what it is fed as code (``sort
    --compress-program=sh``, ``tar -I bash``: the data the gate never sees is run)."""
    lines = [p for p in programs if SHELL_WORDS.search(p.strip()) and not _plain_tool(p)]
    if lines:
        return f"runs the command {lines[0]!r}"
    fed = [p for p in programs if _reads_code_fed(p)]
    return f"feeds its data to {fed[0]!r} as code" if fed else None


# Shells and interpreters that run their standard input when given no script.
_CODE_READERS = re.compile(
    r"(?:ba|z|da|k|mk|a|fi|c|tc)?sh|busybox|(?:python|pypy|perl|ruby|php|lua|luajit)[\d.]*"
    r"|node|nodejs|bun|deno|tclsh|wish|osascript|pwsh|r|rscript"
)


def _reads_code_fed(line: str) -> bool:
    words = line.split()
    if not words or not _CODE_READERS.fullmatch(words[0].rsplit("/", 1)[-1].lower()):
        return False
    return all(w.startswith("-") for w in words[1:])  # no script named: "sh", "bash -s", "perl -"


# A pager or compressor with options only ("less -R", "zstd -T0") runs nothing else.
_PLAIN_TOOLS = words("less more most cat bat pg gzip pigz bzip2 pbzip2 xz pixz zstd lz4 lzip")
_METACHARS = re.compile(r"[;&|`$()<>\n]")


def _plain_tool(line: str) -> bool:
    parts = line.split()
    return (
        bool(parts) and parts[0].rpartition("/")[2] in _PLAIN_TOOLS and not _METACHARS.search(line)
    )


_M4_RUNS = re.compile(r"\b(?:e?syscmd)\(")
_M4 = table(
    "define= undefine= include= synclines prefix-builtins gnu traditional quiet silent "
    "fatal-warnings debug=? debugfile=? trace= nesting-limit= freeze-state= reload-state=",
    "D= U= I= s P G Q E d=? o= t= L= F= R=",
)


def m4_code(args: Sequence[str], fed: str | None) -> Carried:
    """``syscmd(CMD)`` and ``esyscmd(CMD)`` in m4 input fed on stdin or defined with ``-D``;
    macros read from a file are not seen (``unknown``)."""
    parsed = read_options(args, _M4)
    texts = [*parsed.values("-D", "--define"), *([fed] if fed is not None else [])]
    payloads: list[str] = []
    for text in texts:
        for m in _M4_RUNS.finditer(text):
            depth, end = 1, m.end()
            while end < len(text) and depth:
                depth += {"(": 1, ")": -1}.get(text[end], 0)
                end += 1
            payloads.append(text[m.end() : end - 1 if depth == 0 else end])
    files = [o for o in parsed.operands if o != "-"]
    unknown = "m4 reads macros from a file" if files or parsed.has("-R", "--reload-state") else None
    return carried_of(payloads, "m4 runs a shell command" if payloads else None, unknown)
