"""Utilities whose input or options run a shell command (docs/security.md#code-carriers).

``gnuplot``'s ``!CMD`` lines, its ``system("CMD")`` and backquoted commands (in ``-e``
code and in what it is fed); ``dc``'s ``!CMD`` (the rest of the line runs); the program
``tcpdump -z`` runs on each file it rotates; ``nmap --script`` given a script file (Lua
code it runs); ``rake -e``'s Ruby code (scanned as inline code). A pure leaf.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from multiplex.shell.carriers._runners import Carried, carried_of
from multiplex.shell.parsing._argv import option_values

__all__ = ["UTILITY_READERS"]

_GNUPLOT_RUNS = re.compile(r"\bsystem\s*\(\s*(?:\"([^\"]*)\"|'([^']*)')|`([^`]*)`")
_DC_BANG = re.compile(r"!(?![=<>])([^\n]*)")


def _code(args: Sequence[str], fed: str | None, names: Sequence[str]) -> str:
    """The code of ``names`` options, and the fed text when no file operand is named."""
    code = option_values(args, names)
    named = [a for i, a in enumerate(args) if a[:1] != "-" and (i == 0 or args[i - 1] not in names)]
    if fed is not None and not named:
        code.append(fed)
    return "\n".join(code)


def gnuplot_code(args: Sequence[str], fed: str | None) -> Carried:
    """``gnuplot -e '!CMD'``, ``system("CMD")``, `` `CMD` `` (also in a fed script)."""
    code = _code(args, fed, ("-e", "--eval"))
    lines = [s.strip()[1:] for s in re.split(r"[;\n]", code) if s.strip().startswith("!")]
    lines += [next(g for g in m.groups() if g is not None) for m in _GNUPLOT_RUNS.finditer(code)]
    return carried_of(lines, "gnuplot runs a shell command" if lines else None)


def dc_code(args: Sequence[str], fed: str | None) -> Carried:
    """``dc -e '!CMD'``: dc runs the rest of the line after ``!`` (not ``!=``, ``!<``, ``!>``)."""
    code = _code(args, fed, ("-e", "--expression"))
    lines = [m.group(1) for m in _DC_BANG.finditer(code)]
    return carried_of(lines, "dc runs a shell command" if lines else None)


def tcpdump_code(args: Sequence[str], fed: str | None) -> Carried:
    """``tcpdump -z CMD``: CMD runs on each file the capture is rotated to."""
    lines = option_values(args, ("-z",)) + [
        a[2:] for a in args if a.startswith("-z") and len(a) > 2
    ]
    return carried_of(lines, "tcpdump runs a program after each rotation" if lines else None)


def nmap_code(args: Sequence[str], fed: str | None) -> Carried:
    """``nmap --script FILE``: a script file (not a category or a shipped name) is Lua it runs."""
    scripts = [s for v in option_values(args, ("--script", "-script")) for s in v.split(",")]
    files = [s for s in scripts if "/" in s or s.endswith((".nse", ".lua"))]
    return carried_of((), "nmap runs a script file" if files else None)


def rake_code(args: Sequence[str], fed: str | None) -> Carried:
    """``rake -e CODE``: Ruby (its ``sh "CMD"`` runs CMD), scanned as inline code."""
    names = ("-e", "--execute", "-p", "--execute-print", "-E", "--execute-continue")
    return carried_of((), scripts=tuple(option_values(args, names)))


def mix_code(args: Sequence[str], fed: str | None) -> Carried:
    """``mix run -e CODE``: Elixir (its ``System.cmd`` runs a program), scanned as inline code."""
    return carried_of((), scripts=tuple(option_values(args, ("-e", "--eval"))))


def sbt_code(args: Sequence[str], fed: str | None) -> Carried:
    """``sbt 'eval CODE'`` (also ``; eval CODE`` among commands): Scala, scanned as inline
    code (``sys.process`` runs a program)."""
    found = [step.strip()[5:] for a in args for step in a.split(";") if step.strip()[:5] == "eval "]
    return carried_of((), scripts=tuple(found))


def bazel_code(args: Sequence[str], fed: str | None) -> Carried:
    """``bazel test|run --run_under=CMD``: CMD runs with each target's binary as its arguments."""
    commands = option_values(args, ("--run_under",))
    return carried_of(commands, "bazel runs --run_under's command" if commands else None)


UTILITY_READERS: dict[str, Callable[[Sequence[str], str | None], Carried]] = {
    "gnuplot": gnuplot_code, "dc": dc_code, "tcpdump": tcpdump_code, "nmap": nmap_code,
    "rake": rake_code, "mix": mix_code, "sbt": sbt_code, "bazel": bazel_code,
    "bazelisk": bazel_code,
}  # fmt: skip
