"""Network tools that run a program (docs/security.md#code-carriers).

``wget --use-askpass=PROG`` (or ``-e use_askpass=PROG``) runs PROG for a password.
``socat`` runs one for an ``EXEC:`` or ``SYSTEM:`` address (types are read in any
case; the command ends at the first ``,`` that starts the address's options);
``ncat``/``nc`` run one with ``-e``/``--exec`` and a shell command with
``-c``/``--sh-exec`` (``--lua-exec`` runs a script the line does not show). The
command is checked like a line of its own; the form is never allowlisted. A pure
leaf: stdlib, ``shell.carriers._runners`` and ``shell.parsing._getopt``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from multiplex.shell.carriers._runners import NOTHING, Carried, carried_of, command_line
from multiplex.shell.parsing._getopt import read_options, table

__all__ = ["curl_code", "nc_code", "socat_code", "wget_code"]

_SOCAT_RUNS = re.compile(r"^(?:EXEC|SYSTEM):(.*)$", re.IGNORECASE | re.DOTALL)
_NC_PROGRAM = ("-e", "--exec", "-c", "--sh-exec")


def socat_code(args: Sequence[str], fed: str | None) -> Carried:
    commands: list[str] = []
    for arg in args:
        m = _SOCAT_RUNS.match(arg)
        if m is not None:
            commands.append(m.group(1).split(",", 1)[0])
    return carried_of(commands, "socat runs a program" if commands else None)


def nc_code(args: Sequence[str], fed: str | None) -> Carried:
    commands: list[str] = []
    for i, arg in enumerate(args):
        name, eq, value = arg.partition("=")
        if name in _NC_PROGRAM and (eq or i + 1 < len(args)):
            commands.append(value if eq else args[i + 1])
        elif arg[:2] in ("-e", "-c") and len(arg) > 2 and not arg.startswith("--"):
            commands.append(arg[2:])  # -eCMD
    unknown = "ncat --lua-exec" if any(a.startswith("--lua-exec") for a in args) else None
    return carried_of(commands, "nc runs a program" if commands else None, unknown)


_WGET = table("use-askpass= execute= config=", "e=")


def wget_code(args: Sequence[str], fed: str | None) -> Carried:
    """``wget --use-askpass=CMD`` (or ``-e use_askpass=CMD``) runs CMD for a password;
    ``--config FILE`` reads its settings (where it writes, what it sends) from FILE."""
    parsed = read_options(args, _WGET)
    programs = parsed.values("--use-askpass")
    for command in parsed.values("-e", "--execute"):
        name, _, value = command.partition("=")
        if name.replace("_", "").replace("-", "").strip().lower() == "useaskpass":
            programs.append(value.strip())
    unknown = "wget runs a program" if programs else None
    runs = command_line(programs) or (
        "wget reads its settings from a file" if parsed.has("--config") else None
    )
    return carried_of(programs, runs, unknown or ("wget --config file" if runs else None))


# curl's options that take no value, which may lead a bundle ending in K (-sSK FILE).
_CURL_FLAGS = frozenset("sSvfLkiIqgGNnRjJO#0123456:")


def curl_code(args: Sequence[str], fed: str | None) -> Carried:
    """``curl -K FILE`` (``--config``, any prefix down to ``--conf``, or a bundle ending in
    K): options from a file the line does not show, as ``curl $(cat args)`` takes them:
    ``-o ~/.bashrc``, ``--upload-file ~/.ssh/id_rsa`` may be among them."""
    for arg in args:
        if arg == "--":
            break
        name = arg[2:].partition("=")[0] if arg.startswith("--") else ""
        bundle = arg[1:].partition("K")[0] if arg[:1] == "-" and not name else None
        if (len(name) >= 4 and "config".startswith(name)) or (
            bundle is not None and "K" in arg[1:] and set(bundle) <= _CURL_FLAGS
        ):
            return Carried((), "curl reads its options from a file", "curl --config file")
    return NOTHING
