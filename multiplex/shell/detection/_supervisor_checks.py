"""The supervisor's own controls, reached from a command (docs/security.md#the-supervisors-own-controls).

A command that acts as the operator rather than as the agent: it runs the
supervisor's CLI (``multiplex approvals answer …``, ``python -m multiplex``:
it finds the admin token where ``multiplex up`` wrote it), or changes the
supervisor's configuration (``multiplex.yaml``), its state folder
(``.multiplex/``: the running gateways and their admin tokens, the journal),
this profile's records (the ``logs/`` folder of its home: the decision log,
the cell log, kept output) or what the supervisor reads this profile from (its
home's ``config.yaml``: its rules; its ``.env``: its gateway token; its
``credentials/``: what every run mounts), whatever ``approvals.protected_files``
says; also the virtual environment it runs from (the program an agent's hook runs); also
from inline code (``open("../config.yaml", "a")``). Under the sandbox these are hidden or read-only;
without it only this check stands between an agent and its own approvals.
Reading the state folder is a ``secret-read`` (``_secret_paths``). A pure
leaf: stdlib and the shell leaves it imports.
"""

from __future__ import annotations

import posixpath
import re
import sys
from collections.abc import Iterator

from multiplex.shell.detection._catalogue import SUPERVISOR_CONTROL, Finding
from multiplex.shell.detection.paths._targets import Place, candidates, placed
from multiplex.shell.detection.paths._writes import evidence, script_writes, write_targets
from multiplex.shell.parsing._parsed import ParsedLine, SimpleCommand

__all__ = ["each_supervisor_control"]

_CLI = "multiplex"
_CONFIG = "multiplex.yaml"
_STATE = ".multiplex"
# The virtual environment this supervisor runs from, if it runs from one: its programs are
# what an agent's own hook runs (``.venv/bin/multiplex``). Removed, moved, made
# unexecutable or replaced, the hook exits 126/127 or says nothing, and Claude Code then
# lets every later call through (docs/agents.md#exit-codes). A string of the interpreter's,
# no file read. Outside a virtual environment the install is the system's (sensitive-write).
_INSTALL = posixpath.normpath(sys.prefix) if sys.prefix != sys.base_prefix else None


def each_supervisor_control(parsed: ParsedLine, place: Place) -> Iterator[Finding]:
    """Each command that runs the supervisor's CLI or writes what the supervisor keeps."""
    for cmd, here in placed(parsed, place):
        if _runs_cli(cmd) or _calls_the_gateway(cmd):
            yield Finding(SUPERVISOR_CONTROL, evidence(cmd), cmd.text)
            continue
        for target in write_targets(cmd):
            if _kept(target, here):
                yield Finding(SUPERVISOR_CONTROL, evidence(cmd), cmd.text)
                break
    for payload in parsed.script_payloads:  # open("../config.yaml", "a") in inline code
        if any(_kept(literal, place) for literal in script_writes(payload)):
            yield Finding(SUPERVISOR_CONTROL, payload)


def _runs_cli(cmd: SimpleCommand) -> bool:
    """``multiplex …`` (any path to it; a runner's ``uv run`` is unwrapped by the parser),
    ``python -m multiplex[.…]``, ``uvx multiplex``, ``pipx run multiplex``."""
    prog, args = cmd.program, cmd.argv[1:]
    if prog == _CLI:
        return True
    if prog.startswith("python"):
        for i, arg in enumerate(args):
            if arg == "-m" or (arg.startswith("-m") and len(arg) > 2):
                module = arg[2:] or (args[i + 1] if i + 1 < len(args) else "")
                return module.split(".")[0] == _CLI
            if not arg.startswith("-"):
                return False  # a script: what it runs is another check's
        return False
    if prog == "pipx" and args[:1] == ("run",):
        args = args[1:]
    elif prog != "uvx":
        return False
    words = [a for a in args if not a.startswith("-")]
    return bool(words) and words[0].split("@")[0].split("==")[0] == _CLI


# The gateway's operator endpoints (docs/gateway.md): an answer to a prompt, a session's
# grants and yolo, a reload. Asked over HTTP they act as the operator, as the CLI does.
_OPERATOR_CALL = re.compile(
    r"/v1/(?:runs/[^/\s?#]+/approval|admin/reload|sessions/[^/\s?#]+/[^/\s?#]+)(?:[/?#]|$)"
)
_HTTP_CLIENTS = frozenset({"curl", "wget", "http", "https", "xh", "xhs", "curlie"})


def _calls_the_gateway(cmd: SimpleCommand) -> bool:
    """``curl -X POST …/v1/runs/RUN/approval -d '{"choice":"always"}'``: the agent
    answering its own prompt (or granting its session) through the gateway's API."""
    return cmd.program in _HTTP_CLIENTS and any(
        "/v1/" in a and _OPERATOR_CALL.search(a) is not None for a in cmd.argv[1:]
    )


def _kept(target: str, place: Place) -> bool:
    """Whether a written path is the supervisor's config, its state folder, this profile's
    records, or the two files the supervisor reads this profile from (its home's
    ``config.yaml`` and ``.env``, whatever ``approvals.protected_files`` says)."""
    values, _ = candidates(target, place)
    home = place.normal_homes[-1] if place.normal_homes else None
    inputs = (posixpath.join(home, "config.yaml"), posixpath.join(home, ".env")) if home else ()
    # Its records (logs/) and its credential files, which every run mounts as they are.
    folders = tuple(posixpath.join(home, f) for f in ("logs", "credentials")) if home else ()
    for value in values:
        norm = posixpath.normpath(value) if value else value
        parts = norm.split("/")
        if parts[-1] == _CONFIG or _STATE in parts or norm in inputs:
            return True
        if any(norm == f or norm.startswith(f + "/") for f in folders):
            return True
        if _INSTALL is not None and (norm == _INSTALL or norm.startswith(_INSTALL + "/")):
            return True
    return False
