"""Other version control tools' and compilers' settings that name a command
(docs/security.md#code-carriers), as git's ``-c core.pager=CMD`` does.

Mercurial's ``--config SECTION.KEY=VALUE``: a hook (``hooks.pre-status=CMD``), the editor,
ssh, pager and merge programs, an alias to the shell (``alias.x=!CMD``) and an extension
loaded from a path (Python it runs). Subversion's ``--config-option
FILE:SECTION:OPTION=VALUE``: its helpers (``editor-cmd``, ``diff-cmd``, ``diff3-cmd``,
``merge-tool-cmd``) and tunnels (``tunnels:ssh=CMD``). A C compiler's ``-wrapper
PROG,ARG…`` runs each of its own steps under that command; ``-fplugin=PATH`` loads a
library into it; rustc's ``-C linker=PROG`` runs PROG. Each command is judged as a line.
A pure leaf.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from multiplex.shell.carriers._runners import NOTHING, Carried, carried_of

__all__ = ["VCS_READERS"]

# hg's settings whose value is a shell command (any hook; these keys of other sections).
_HG_COMMANDS = frozenset({"ui.editor", "ui.ssh", "ui.merge", "pager.pager", "ui.pager"})
_HG_PROGRAM_SECTIONS = ("merge-tools.", "extdiff.")
_SVN_COMMANDS = frozenset({"editor-cmd", "diff-cmd", "diff3-cmd", "merge-tool-cmd"})


def _values(args: Sequence[str], name: str) -> list[str]:
    """Each value of ``--name V`` and ``--name=V``."""
    found: list[str] = []
    for i, arg in enumerate(args):
        if arg == name and i + 1 < len(args):
            found.append(args[i + 1])
        elif arg.startswith(name + "="):
            found.append(arg[len(name) + 1 :])
    return found


def _hg(args: Sequence[str], fed: str | None) -> Carried:
    payloads: list[str] = []
    loads: str | None = None
    for setting in _values(args, "--config"):
        key, _, value = setting.partition("=")
        key = key.strip().lower()
        if key.startswith("hooks.") or key in _HG_COMMANDS:
            payloads.append(value.removeprefix("python:") if value.startswith("python:") else value)
        elif key.startswith("alias.") and value.lstrip().startswith("!"):
            payloads.append(value.lstrip()[1:])
        elif key.startswith(_HG_PROGRAM_SECTIONS):
            payloads.append(value)
        elif key.startswith("extensions.") and value.strip() and value.strip() != "!":
            loads = "hg loads an extension"  # Python from a path, run in hg
    if not payloads and loads is None:
        return NOTHING
    return carried_of(payloads, "hg runs a command its settings name", loads)


def _svn(args: Sequence[str], fed: str | None) -> Carried:
    payloads: list[str] = []
    for option in _values(args, "--config-option"):
        where, _, value = option.partition("=")
        parts = where.lower().split(":")
        if len(parts) == 3 and (parts[2] in _SVN_COMMANDS or parts[1] == "tunnels"):
            payloads.append(value)
    if not payloads:
        return NOTHING
    return carried_of(payloads, "svn runs a command its settings name")


def _cc(args: Sequence[str], fed: str | None) -> Carried:
    wrappers = [args[i + 1] for i, a in enumerate(args[:-1]) if a == "-wrapper"]
    plugins = [a for a in args if a.startswith("-fplugin=")]
    if not wrappers and not plugins:
        return NOTHING
    payloads = [" ".join(w.split(",")) for w in wrappers]
    runs = "the compiler runs its steps under a wrapper" if wrappers else None
    return carried_of(payloads, runs, "the compiler loads a plugin" if plugins else None)


def _rustc(args: Sequence[str], fed: str | None) -> Carried:
    linkers: list[str] = []
    for i, arg in enumerate(args):
        value = (
            args[i + 1]
            if arg == "-C" and i + 1 < len(args)
            else arg[2:]
            if arg.startswith("-C")
            else ""
        )
        if value.startswith("linker="):
            linkers.append(value.partition("=")[2])
    if not linkers:
        return NOTHING
    return carried_of(linkers, "rustc runs the linker it is given")


VCS_READERS: dict[str, Callable[[Sequence[str], str | None], Carried]] = {
    "hg": _hg, "chg": _hg, "svn": _svn, "gcc": _cc, "g++": _cc, "cc": _cc, "c++": _cc,
    "clang": _cc, "clang++": _cc, "rustc": _rustc,
}  # fmt: skip
