"""make: the shell commands its options, makefiles fed to it and variables carry.

``make --eval``, a makefile on stdin or from a substitution, a recipe on a rule's own
line, ``CC='cmd'`` and the other variables make runs as programs, ``$(shell CMD)`` in
any variable given on its command line, ``MAKEFLAGS``/``MFLAGS`` (options make reads
first), ``-C``/``-f``/``-I`` beyond the working folder (docs/security.md#code-carriers).
A pure leaf: stdlib, ``shell.carriers._runners`` and the parsing leaves.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence

from multiplex.shell.carriers._runners import SHELL_WORDS, STDIN_FILES, Carried, carried_of
from multiplex.shell.parsing._argv import leaves_cwd
from multiplex.shell.parsing._getopt import read_options, table
from multiplex.shell.parsing._printed import stdin_text_after

__all__ = ["make_code"]

_MAKE = table(
    "eval= file= makefile= directory= include-dir= jobs=? load-average=? old-file= assume-old= "
    "what-if= new-file= assume-new= output-sync=? debug=? always-make environment-overrides "
    "ignore-errors keep-going just-print dry-run recon question silent quiet touch trace "
    "print-directory no-print-directory warn-undefined-variables shuffle=?",
    "E= f= C= I= j=? l=? o= W= O=? d e i k n q s t w B L R r S",
)
_RECIPE_SHELL = re.compile(r"\$[({]shell\s+([^)}]*)[)}]")
# "target: prerequisites ; recipe": a recipe on the rule's own line (not ":=" or "::=").
_INLINE_RECIPE = re.compile(r"^[^\t#=:;\n]*::?(?!=)[^;#\n]*;(.*)$", re.MULTILINE)
# One expansion the shell makes before make sees the value: $(…) without another inside,
# `…`, $NAME, ${NAME}.
_EXPANSION = re.compile(r"\$\([^()]*\)|`[^`]*`|\$\{\w+\}|\$\w+")
# Make variables whose value make runs as (or as part of) a program.
_MAKE_PROGRAMS = frozenset(
    {"CC", "CXX", "CPP", "LD", "AR", "AS", "NM", "RANLIB", "STRIP", "OBJCOPY", "OBJDUMP", "FC",
     "F77", "M4", "YACC", "LEX", "RM", "INSTALL", "MAKE", "SHELL", ".SHELLFLAGS", "MAKEFLAGS",
     "MAKEFILES", "HOSTCC", "HOSTCXX", "PYTHON", "PERL", "RUBY", "NODE", "GO", "CARGO",
     "DOCKER", "KUBECTL", "PAGER", "EDITOR"}
)  # fmt: skip
_PROGRAM_PARTS = ("CMD", "COMMAND", "PROG", "TOOL", "RUNNER", "EXEC", "WRAPPER", "LAUNCHER",
                  "HOOK", "SCRIPT", "BIN")  # fmt: skip


def _runs_a_program(name: str) -> bool:
    upper = name.upper()
    return upper in _MAKE_PROGRAMS or any(part in upper for part in _PROGRAM_PARTS)


_ASSIGN = re.compile(r"^([A-Za-z_.][A-Za-z0-9_.]*)\s*[:+?!]?=(.*)$", re.DOTALL)


def _makefile_code(text: str) -> list[str]:
    """Recipe lines (a tab first, or after ``target: ;``) and ``$(shell …)`` calls of makefile text."""
    found = [m.group(1) for m in _RECIPE_SHELL.finditer(text)]
    found += [ln[1:].lstrip("@-+") for ln in text.splitlines() if ln.startswith("\t")]
    found += [m.group(1).strip().lstrip("@-+") for m in _INLINE_RECIPE.finditer(text)]
    return [f for f in found if f.strip()]


def make_code(args: Sequence[str], fed: str | None) -> Carried:
    parsed = read_options(args, _MAKE)
    payloads: list[str] = []
    runs: str | None = None
    for text in parsed.values("-E", "--eval"):
        payloads += _makefile_code(text)
        runs = "make --eval"
    makefiles = parsed.values("-f", "--file", "--makefile")
    if any(f in STDIN_FILES for f in makefiles) and fed is not None:
        payloads += _makefile_code(fed)
        runs = runs or "a makefile the line feeds"
    for makefile in makefiles:  # make -f <(echo 'all:; CMD'): what the substitution prints
        if makefile.startswith("<(") and makefile.endswith(")"):
            printed = _printed_by(makefile[2:-1])
            if printed:
                payloads += _makefile_code(printed)
                runs = runs or "a makefile from a substitution"
    for op in parsed.operands:
        m = _ASSIGN.match(op)
        if m is None:
            continue
        value = m.group(2)
        if m.group(1) == ".SHELLFLAGS":  # .SHELLFLAGS='-c CMD': CMD, then the recipe
            words = value.split()
            while words and words[0].startswith("-"):
                words.pop(0)
            value = " ".join(words)
        # CC='rm -rf /' is a command make runs; CFLAGS='-O2 -g' only flags. A value the
        # shell computes before make runs (VERSION=$(git describe), OUT=$PWD/out) is data
        # unless make runs it as a program (CC=$(which gcc)): the substitution itself is
        # a command of the line, judged as such.
        shown = value if _runs_a_program(m.group(1)) else _EXPANSION.sub("", value)
        command = bool(SHELL_WORDS.search(shown)) and not value.lstrip().startswith("-")
        if command or m.group(1) == ".SHELLFLAGS":
            payloads.append(value)
        shells = [f.group(1) for f in _RECIPE_SHELL.finditer(value)]  # x='$(shell CMD)': run
        payloads += shells  # wherever the makefile expands x (no shell's program is "shell")
        if m.group(1) in ("MAKEFLAGS", "MFLAGS"):  # MAKEFLAGS='--eval=…': options read first
            payloads += make_code(value.split(), fed).payloads
        if m.group(1) in ("SHELL", ".SHELLFLAGS", "MAKEFLAGS", "MAKEFILES") or shells:
            runs = runs or f"make {m.group(1)}= override"
    unknown: str | None = None
    if any(f in STDIN_FILES or f.startswith(("<(", "/dev/fd/")) for f in makefiles):
        unknown = "a makefile from standard input or a substitution"
    for folder in parsed.values("-C", "--directory"):
        if leaves_cwd(folder):
            unknown = f"make -C {folder}"
    # make -f /tmp/x.mk, -I /tmp (its include's search path): recipes from beyond the project
    for path in (*makefiles, *parsed.values("-I", "--include-dir")):
        if leaves_cwd(path) and path not in STDIN_FILES and not path.startswith("/dev/fd/"):
            unknown = unknown or f"make reads {path} from beyond the working folder"
    return carried_of(payloads, runs, unknown)


def _printed_by(line: str) -> str | None:
    """What ``line`` (one ``echo``/``printf``) prints, when the line shows it."""
    try:
        argv = tuple(shlex.split(line))
    except ValueError:
        return None
    return stdin_text_after(argv, None)
