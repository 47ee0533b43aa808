"""Programs that run the program they read on standard input (docs/security.md, ``download-exec``
and ``pipe-to-shell``).

The shells and the interpreters the gate knew (``sh``, ``python3``, ``perl``, ``node`` …)
are read by ``shell.parsing.runs._unwrap``. These are the others: a REPL or an
interpreter given no program of its own (``racket``, ``guile``, ``jshell``, ``Rscript -``,
the ``py`` launcher), a tool told to read its script from stdin (``sed -f -``, ``awk -f
/dev/stdin``, ``make -f -``, ``gdb -x /dev/stdin``, ``cmake -P /dev/stdin``), GNU
``parallel`` with no command (each line it reads is one), and the SQL clients whose
input may hold a shell escape (sqlite3's ``.shell``, psql's and mysql's ``\\!``). What
such a pipe carries is code the line does not show, so no allow rule vouches for it.
A pure leaf: stdlib and the option reader only.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Protocol

from multiplex.shell.parsing._getopt import OptionTable, read_options, table
from multiplex.shell.parsing._printed import stdin_text_after

__all__ = ["STDIN_CODE_PROGRAMS", "printed", "stdin_code"]


class SimpleCommandLike(Protocol):
    """What :func:`printed` reads of a command (``shell.parsing.SimpleCommand``)."""

    @property
    def program(self) -> str: ...

    @property
    def argv(self) -> tuple[str, ...]: ...

    @property
    def upstream(self) -> tuple[str, ...]: ...


# How a program is told its standard input as a file.
_STDIN = frozenset({"-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"})

# REPLs and interpreters that read their program from stdin when given none: no word but
# options and stdin's name. Each with the options that hand it code of its own instead
# (``racket -e CODE``; also glued, ``--eval=CODE``).
_REPLS: dict[str, tuple[str, ...]] = {
    "py": ("-c", "-m"),  # the Python launcher: py [-3.12] [-c CODE | script]
    "r": ("-e", "-f", "--file"),
    "racket": ("-e", "--eval", "-f", "--load", "-t", "--require", "-r", "-u", "-l", "--lib"),
    "guile": ("-c", "-s", "-l", "-e"),
    "clisp": ("-x", "-i"),
    "sbcl": ("--eval", "--load", "--non-interactive"),
    "ccl": ("-e", "--eval", "-l", "--load"),
    "ecl": ("-eval", "-load", "-shell"),
    "ocaml": (),
    "jshell": (),
    "qjs": ("-e", "--eval"),
    "tsx": ("-e", "--eval", "-p", "--print"),
    "ts-node": ("-e", "--eval", "-p", "--print"),
    "groovysh": (),
    "kotlin": ("-e", "-expression"),
    "iex": ("-e", "-S"),
    "erl": ("-eval", "-s", "-run", "-noshell", "-detached"),
    "ghci": ("-e",),
    "scala": ("-e",),
    "amm": ("-c", "--code"),
    "clojure": ("-e", "--eval", "-M", "-X", "-T", "-m", "--main", "-i", "--init"),
    "clj": ("-e", "--eval", "-M", "-X", "-T", "-m", "--main", "-i", "--init"),
    "bb": ("-e", "--eval", "-f", "--file", "-m", "--main", "-x", "--exec"),
    "octave": ("--eval",),
    "swipl": ("-g", "-t"),
    "gforth": ("-e", "--evaluate"),
    "dc": ("-e", "--expression", "-f", "--file"),
    "expect": ("-c", "-f"),
    "lldb": ("-o", "--one-line", "-s", "--source", "-b", "--batch", "-p", "--attach-pid"),
    "gdb": ("-ex", "--ex", "-x", "--x", "-batch", "--batch", "-p", "--pid", "-command"),
}
# These run a script file; they read stdin only when told "-" (or stdin's name).
_NAMED_STDIN = frozenset({"rscript", "elixir", "groovy"})

# A tool told by an option to read its script from a file: given stdin's name, it runs the
# pipe's text (sed's ``e``, awk's ``system()``, make's recipes, cmake's
# ``execute_process``, gdb's and lldb's ``shell``, kotlinc's script).
_SED = table("expression= file= line-length= in-place=?", "e= f= l= i=?")
_AWK = table("file= assign= field-separator= include= exec= load=", "f= v= F= i= E= l=")
_MAKE = table(
    "file= makefile= directory= include-dir= jobs=? load-average=? old-file= new-file= "
    "what-if= assume-old= assume-new= output-sync=? eval=",
    "f= C= I= j=? l=? o= W= O=?",
)
_CMAKE = table("", "P= D= U= C= G= S= B= T= A=")
_GDB = table(
    "x= command= ex= eval-command= ix= init-command= iex= init-eval-command= cd= "
    "directory= d= p= pid= c= core= s= se= e= symbols= exec=",
    single=True,
)
_LLDB = table("source= source-before-file= one-line= file= arch=", "s= S= o= f= a=")
_KOTLINC = table("script= cp= classpath= d= jvm-target= include-runtime", single=True)
_SCRIPT_OPTIONS: dict[str, tuple[OptionTable, tuple[str, ...]]] = {
    "sed": (_SED, ("-f", "--file")),
    "gsed": (_SED, ("-f", "--file")),
    "awk": (_AWK, ("-f", "--file", "-E", "--exec", "-i", "--include")),
    "gawk": (_AWK, ("-f", "--file", "-E", "--exec", "-i", "--include")),
    "mawk": (_AWK, ("-f", "--file")),
    "nawk": (_AWK, ("-f", "--file")),
    "make": (_MAKE, ("-f", "--file", "--makefile")),
    "gmake": (_MAKE, ("-f", "--file", "--makefile")),
    "cmake": (_CMAKE, ("-P", "-C")),
    "gdb": (_GDB, ("--x", "--command", "--ix", "--init-command")),
    "lldb": (_LLDB, ("-s", "--source", "-S", "--source-before-file")),
    "kotlinc": (_KOTLINC, ("--script",)),
}

# Database clients: their input is SQL, which may hold a shell escape. A local dump read
# into one is everyday work; what a download hands one is not. Each with the options
# that give it SQL of its own (then stdin is not read).
_SQL_CLIENTS: dict[str, tuple[str, ...]] = {
    "sqlite3": (),
    "sqlite": (),
    "duckdb": ("-c", "-s"),
    "psql": ("-c", "--command", "-l", "--list"),
    "mysql": ("-e", "--execute"),
    "mariadb": ("-e", "--execute"),
}

STDIN_CODE_PROGRAMS = frozenset(
    {*_REPLS, *_NAMED_STDIN, *_SCRIPT_OPTIONS, *_SQL_CLIENTS, "parallel", "crystal"}
)


def _given(args: Sequence[str], names: Sequence[str]) -> bool:
    """Some option of ``names`` is given (``-e CODE``, ``-eCODE``, ``--eval=CODE``)."""
    for arg in args:
        if arg == "--":
            return False
        for name in names:
            if arg == name or (
                arg.startswith(name)
                and (name.startswith("--") or len(name) == 2 or arg[len(name)] == "=")
            ):
                return True
    return False


def _operands(args: Sequence[str]) -> list[str]:
    return [a for a in args if not a.startswith("-") or a in _STDIN]


def stdin_code(prog: str, args: Sequence[str]) -> str | None:
    """What ``prog ARGS`` runs of its standard input: ``"code"`` (a program, whoever pipes
    it), ``"sql"`` (SQL that may escape to a shell: judged where a download feeds it), or
    None. ``prog`` is the lower-cased program name."""
    if prog in _SQL_CLIENTS:
        if _given(args, _SQL_CLIENTS[prog]):
            return None
        if prog == "psql" and _given(args, ("-f", "--file")):
            # psql -f FILE runs FILE; -f - reads stdin.
            values = [b for a, b in itertools.pairwise(args) if a in ("-f", "--file")]
            return "sql" if any(v in _STDIN for v in values) else None
        # sqlite3 DB [SQL]: SQL given after the database is run instead of stdin.
        if prog in ("sqlite3", "sqlite", "duckdb") and len(_operands(args)) > 1:
            return None
        return "sql"
    if prog in _SCRIPT_OPTIONS:
        spec, script = _SCRIPT_OPTIONS[prog]
        if any(v in _STDIN for v in read_options(args, spec).values(*script)):
            return "code"
    if prog == "ocaml" and "-stdin" in args:
        return "code"
    if prog == "parallel":
        # With no command, each line it reads is a command run by a shell.
        return "code" if not any(not a.startswith("-") for a in args) else None
    if prog == "crystal":
        return "code" if list(args) == ["eval"] else None
    if prog == "sbcl" and "--script" in args:
        after = args[list(args).index("--script") + 1 :]
        return "code" if not after or after[0] in _STDIN else None
    if prog in _NAMED_STDIN:
        operands = _operands(args)
        return "code" if operands and operands[0] in _STDIN else None
    if prog in _REPLS:
        if _given(args, _REPLS[prog]):
            return None
        operands = _operands(args)
        return "code" if not operands or operands[0] in _STDIN else None
    return None


_PRINTERS = frozenset({"echo", "printf"})


def printed(before: SimpleCommandLike, cmd: SimpleCommandLike) -> str | None:
    """What ``before`` (``echo`` or ``printf``, the stage right before ``cmd`` in its
    pipeline) hands ``cmd`` on stdin, as the parser reads what a stage prints; None for
    any other stage."""
    if before.program not in _PRINTERS or cmd.upstream[-1:] != (before.program,):
        return None
    return stdin_text_after(before.argv, None)
