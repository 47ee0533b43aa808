"""Inline code given to an interpreter on its command line (docs/security.md#code-carriers).

Beyond python, node, perl and awk (``shell.parsing.runs._unwrap``): the options other
language hosts take their code from (``guile -c``, ``racket -e``, ``erl -eval``,
``elixir -e``, ``groovy -e``, ``sbcl --eval``, ``clisp -x``, ``ghc -e``, ``scala -e``,
``swipl -g``, ``tsx -e``, ``ts-node -e``, ``octave --eval``, ``raku -e``, ``julia -e``),
and node's ``data:`` URLs given to ``--import``/``--loader``. The code is scanned as
a script payload; the words after code that runs its own arguments
(``os.system(sys.argv[1])``) are the shell line they make. A pure leaf: stdlib only.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import re
import urllib.parse
from collections.abc import Sequence

__all__ = ["INLINE_HOSTS", "argv_lines", "data_url_code", "inline_code"]

# host -> the options whose value is code (long ones also as --opt=CODE)
INLINE_HOSTS: dict[str, tuple[str, ...]] = {
    "guile": ("-c",), "racket": ("-e", "--eval"), "erl": ("-eval",), "elixir": ("-e", "--eval"),
    "iex": ("-e", "--eval"), "groovy": ("-e",), "sbcl": ("--eval",), "clisp": ("-x",),
    "ghc": ("-e",), "runghc": ("-e",), "scala": ("-e",), "swipl": ("-g", "-t"),
    "tsx": ("-e", "--eval", "-p", "--print"), "ts-node": ("-e", "--eval", "-p", "--print"),
    "octave": ("--eval",), "raku": ("-e",), "perl6": ("-e",), "julia": ("-e", "--eval", "-E"),
    "kotlin": ("-e", "-expression"), "kotlinc": ("-e", "-expression"), "jshell": (),
    "ghci": ("-e",), "ocaml": (),
}  # fmt: skip


def inline_code(prog: str, args: Sequence[str]) -> list[str]:
    """The code ``prog`` is given by its options (``prog`` one of :data:`INLINE_HOSTS`)."""
    names = INLINE_HOSTS[prog]
    found: list[str] = []
    for i, arg in enumerate(args):
        name, eq, value = arg.partition("=")
        if arg in names and i + 1 < len(args):
            found.append(args[i + 1])
        elif eq and name in names and name.startswith("--"):
            found.append(value)
    return found


# node loads these as modules before its script; a data: URL is the module's text inline.
_MODULE_OPTIONS = ("--import", "--loader", "--experimental-loader", "-r", "--require")


def data_url_code(args: Sequence[str]) -> list[str]:
    """The code of each ``data:`` URL node is told to load (``--import 'data:text/javascript,…'``):
    inline code like ``-e``'s."""
    found: list[str] = []
    for i, arg in enumerate(args):
        name, eq, value = arg.partition("=")
        if name not in _MODULE_OPTIONS:
            continue
        if not eq:
            value = args[i + 1] if i + 1 < len(args) else ""
        if not value.lower().startswith("data:"):
            continue
        header, _, body = value.partition(",")
        code = urllib.parse.unquote(body)
        if header.lower().endswith(";base64"):
            with contextlib.suppress(binascii.Error, ValueError):  # else judged as written
                code = base64.b64decode(code, validate=False).decode("utf-8", "replace")
        found.append(code or value)
    return found


# Inline code that hands its own arguments to a shell or an exec: os.system(sys.argv[1]),
# perl's system @ARGV, execSync(process.argv[1]), awk's system(ARGV[1]), php's $argv.
_RUNS_ARGV = re.compile(
    r"(?:system|exec\w{0,8}|spawn\w{0,8}|popen|Popen|check_output|check_call|run|call|passthru"
    r"|shell_exec|proc_open)\s{0,8}\(?\s{0,8}(?:[\"' ]{1,3}\.join\()?[@$]?"
    r"(?:sys\.argv|ARGV|process\.argv|argv)\b"
)


def argv_lines(args: Sequence[str], codes: list[str]) -> tuple[str, ...]:
    """The words after inline code that runs its own arguments, as the shell line they
    make (``python3 -c 'os.system(sys.argv[1])' 'rm -rf /'``)."""
    if not codes or not any(_RUNS_ARGV.search(code) for code in codes):
        return ()
    at = max((i for i, a in enumerate(args) if any(a.endswith(c) for c in codes if c)), default=-1)
    rest = [a for a in args[at + 1 :] if a != "--"] if at >= 0 else []
    return (" ".join(rest),) if rest else ()
