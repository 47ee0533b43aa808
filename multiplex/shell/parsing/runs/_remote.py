"""Tools that run a shell line on other hosts, and what that line is (docs/approvals.md#parsing).

``remote_lines`` reads the line out of ``vagrant ssh -c``, ``gcloud … ssh
--command``, ``az … --scripts``, ``aws ssm send-command``, ``salt T cmd.run``,
``pssh``/``pdsh``/``clush`` and ``concurrently``; ``SSH_OPTS`` are ssh's options
that take a value. A pure leaf: stdlib and ``shell.parsing._argv``.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence

from multiplex.shell.parsing._argv import after_options, operand_index, opts

__all__ = ["SSH_OPTS", "remote_lines"]

SSH_OPTS = opts("-B -b -c -D -E -e -F -I -i -J -L -l -m -O -o -p -Q -R -S -W -w")
_PSSH = opts("-h --hosts -H --host -l --user -p --par -o --outdir -e --errdir -t --timeout "
             "-O --option -x --extra-args -X --extra-arg")  # fmt: skip
_PDSH = opts("-w -x -g -X -l -t -u -f -R -M -N -o -E")
_CONCURRENTLY = opts(
    "-n --names -c --prefix-colors -p --prefix -l --prefix-length -t --timestamp-format "
    "-s --success --restart-tries --restart-after -m --max-processes --kill-signal "
    "--names-separator --default-input-target"
)
# A puppet resource's command (exec's, and onlyif/unless run too): its quoted value.
_PUPPET_COMMAND = re.compile(
    r"\b(?:command|onlyif|unless)[ \t]*+=>[ \t]*+([\"'])((?:(?!\1).){0,4096}+)\1"
)
_SALT_RUNS = frozenset({"cmd.run", "cmd.run_all", "cmd.run_stdout", "cmd.run_stderr",
                        "cmd.shell", "cmd.run_bg", "cmd.exec_code_all"})  # fmt: skip
_QUOTED = re.compile(r'"((?:[^"\\]|\\.)*)"')


def remote_lines(prog: str, args: Sequence[str]) -> list[str]:
    """The shell lines a tool runs on remote hosts (or, for ``concurrently``, here):
    ``vagrant ssh -c``, ``gcloud … ssh --command`` (or after ``--``), ``az … --scripts``,
    ``aws ssm send-command --parameters commands=…``, ``aws ecs execute-command
    --command``, ``salt T cmd.run``, ``pssh``/``pdsh``/``clush``'s, ``concurrently``'s."""
    if prog in ("pssh", "parallel-ssh", "pdsh", "clush", "concurrently"):
        table = {"pssh": _PSSH, "parallel-ssh": _PSSH, "concurrently": _CONCURRENTLY}
        rest = after_options(args, table.get(prog, _PDSH)) or ()
        return list(rest) if prog == "concurrently" else [" ".join(rest)] if rest else []
    if prog == "puppet":  # puppet apply -e 'exec { "x": command => "CMD" }'
        code = [args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-e", "--execute")]
        return [m.group(2) for c in code for m in _PUPPET_COMMAND.finditer(c)]
    if prog in ("salt", "salt-ssh", "salt-call"):
        return [args[i + 1] for i, a in enumerate(args[:-1]) if a in _SALT_RUNS]
    names = {"vagrant": ("-c", "--command"), "gcloud": ("--command",), "az": ("--scripts",
             "--script"), "aws": ("--parameters", "--command")}[prog]  # fmt: skip
    lines: list[str] = []
    for i, arg in enumerate(args):
        name, eq, glued = arg.partition("=")
        if arg in names:
            values = list(args[i + 1 : i + 2])
            if prog == "az":  # --scripts takes every word up to the next option
                values = list(itertools.takewhile(lambda w: not w.startswith("--"), args[i + 1 :]))
        elif eq and name in names and name.startswith("--"):
            values = [glued]
        else:
            continue
        lines += _aws_commands(values) if prog == "aws" and name == "--parameters" else values
    if prog == "gcloud" and "--" in args:  # gcloud compute ssh VM -- [ssh opts] CMD
        after = args[list(args).index("--") + 1 :]
        lines.append(" ".join(after[operand_index(after, SSH_OPTS) :]))
    return [line for line in lines if line.strip()]


def _aws_commands(values: Sequence[str]) -> list[str]:
    """The commands of ``--parameters commands=…`` (shorthand or JSON, one or a list)."""
    found: list[str] = []
    for value in values:
        at = value.find("commands")
        if at < 0:
            continue
        rest = value[at + len("commands") :].lstrip('"').lstrip(" =:").strip()
        if rest.startswith("["):
            found += [m.group(1) for m in _QUOTED.finditer(rest)] or [rest.strip("[]")]
        else:
            found.append(rest.strip("'\"}"))
    return found
