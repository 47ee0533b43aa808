"""The ``local`` backend (docs/execution.md#the-local-backend).

The command runs through ``bash -c`` with the scope's cwd and command env
only, in the bubblewrap sandbox (``terminal.sandbox``, see ``_sandbox``) or,
unsandboxed, under the sub-reaper (``_reaper``) so that nothing it starts
outlives it. The profile's credential files are materialised for the run alone.
"""

from __future__ import annotations

import functools
import os
import shutil
import sys
import tempfile
from pathlib import Path

from multiplex._errors import ProfileConfigError
from multiplex.execution._plan import Plan, RunContext
from multiplex.execution._sandbox import (
    SANDBOX_CREDENTIALS,
    SandboxInfo,
    bwrap_status,
    choose_sandbox,
    sandbox_argv,
)
from multiplex.profiles import read_credential, write_new
from multiplex.scopes import ProfileScope

__all__ = ["plan_local"]

_SHELL = shutil.which("bash") or "/bin/sh"
_REAPER = str(Path(__file__).with_name("_reaper.py"))


def _materialise(scope: ProfileScope) -> tuple[Path | None, list[str]]:
    # docs/execution.md: a private per-run directory (0700), files 0400, removed afterwards.
    # docs/security.md#credentials-checked-when-used: each file is re-checked and read now;
    # one that fails is not mounted, whatever the last load said.
    if not scope.credential_mounts:
        return None, []
    directory = Path(tempfile.mkdtemp(prefix=f"multiplex-cred-{scope.name}-"))
    refused: list[str] = []
    dir_fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        for mount in scope.credential_mounts:
            try:
                # relative inside the directory, whatever the backend's mount target
                rel = os.path.normpath(mount.relative)
                write_new(dir_fd, rel, read_credential(scope.home, mount.relative))
            except (ProfileConfigError, OSError) as exc:
                why = exc.reason if isinstance(exc, ProfileConfigError) else str(exc)
                # The path last: "token.txt: <why>" would read as a secret assignment.
                refused.append(f"[multiplex: not mounted ({why}): {mount.relative}]")
    finally:
        os.close(dir_fd)
    return directory, refused


def plan_local(scope: ProfileScope, command: str, context: RunContext) -> Plan:
    """The local backend's plan: bwrap (or the sub-reaper) around ``bash -c command``."""
    choice = choose_sandbox(scope.view.terminal.sandbox)
    if choice.error is not None:
        return Plan("local", "none", error=choice.error)
    cwd = scope.cwd
    if cwd is not None and not cwd.is_dir():
        return Plan("local", choice.sandbox, error=f"working directory does not exist: {cwd}")
    env = dict(scope.env)
    creds, refused = _materialise(scope)
    cleanup = None if creds is None else functools.partial(shutil.rmtree, creds, True)
    if choice.sandbox == "bwrap":
        if creds is not None:
            env["CREDENTIALS_DIRECTORY"] = SANDBOX_CREDENTIALS
        info = SandboxInfo()
        prefix = sandbox_argv(
            scope,
            hidden=context.hidden,
            credentials=creds,
            bwrap=bwrap_status()[1],
            info_fd=info.fd,
        )
        argv = (*prefix, _SHELL, "-c", command)

        def done() -> None:
            info.started()  # also when the process never started: no fd leaks
            if cleanup is not None:
                cleanup()

        return Plan(
            "local",
            "bwrap",
            argv,
            env,
            cwd,
            on_stop=info.kill,
            cleanup=done,
            pass_fds=(info.fd,),
            on_start=info.started,
            notes=tuple(refused),
        )
    if creds is not None:
        env["CREDENTIALS_DIRECTORY"] = str(creds)
    argv = (sys.executable, "-I", "-S", _REAPER, _SHELL, "-c", command)
    return Plan("local", choice.sandbox, argv, env, cwd, cleanup=cleanup, notes=tuple(refused))
