"""What keeps an allow rule from being smuggled (docs/allowlist.md#what-an-allow-rule-never-covers).

``smuggled`` says why a simple command may not be approved by an allow rule even
when a rule's words match it: a path-qualified program outside the standard
system directories that is not the file PATH finds, an environment-assignment
prefix (unless the rule names it), an option that writes files or runs programs,
a /dev/tcp or /dev/udp redirection, a program computed at run time. The PATH
lookup is the only filesystem access; it is done here, outside the pure
``multiplex.shell``.
"""

from __future__ import annotations

import os
import posixpath
import shutil

from multiplex.shell import SimpleCommand, fed_text, risky_option

__all__ = ["OUTSIDE", "STANDARD_DIRS", "smuggled"]

STANDARD_DIRS = frozenset({"/bin", "/usr/bin", "/usr/local/bin", "/sbin", "/usr/sbin"})
# Why a path-qualified program is not covered by a rule naming its bare name; a rule
# naming the path itself still covers it (static checks' _allow_match).
OUTSIDE = "program outside the standard system directories"


def _same_as_path(program: str, search_path: str, cwd: str | None) -> bool:
    found = shutil.which(posixpath.basename(program), path=search_path or None)
    if found is None:
        return False
    candidate = program if program.startswith("/") else os.path.join(cwd or os.getcwd(), program)
    try:
        return os.path.samefile(found, candidate)
    except OSError:
        return False


def smuggled(command: SimpleCommand, search_path: str, cwd: str | None = None) -> str | None:
    """Why no allow rule may approve ``command`` (None: rules may match it)."""
    program = command.argv[0] if command.argv else ""
    if "$" in program or "`" in program:
        return "program computed at run time"
    if "/" in program:
        folder = posixpath.normpath(posixpath.dirname(program)) if program.startswith("/") else ""
        if folder not in STANDARD_DIRS and not _same_as_path(program, search_path, cwd):
            return OUTSIDE
    if any(r.target.startswith(("/dev/tcp/", "/dev/udp/")) for r in command.redirects):
        return "network redirection"
    option = risky_option(command.argv, fed_text(command.redirects, None))
    if option is not None:
        return f"option {option} writes files or runs programs"
    return None
