"""The ``local`` backend (docs/execution.md#the-local-backend).

The command runs through ``bash -c`` with the scope's cwd and command env
only, in the bubblewrap sandbox (``terminal.sandbox``, see ``_sandbox``) or,
unsandboxed, under its own sub-reaper (``_subreaper``) so that nothing it starts
outlives it. The profile's credential files are re-read for each run: in the
sandbox they are handed to bwrap in memfds (no copy on the host's disk),
unsandboxed they are a private directory removed afterwards.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
from pathlib import Path

from multiplex._errors import ProfileConfigError
from multiplex.execution._cred_folder import FOLDER_KEY, CredentialFolder
from multiplex.execution._egress_plan import egress_finish, open_egress
from multiplex.execution._plan import Plan, RunContext
from multiplex.execution.egress import EgressSession
from multiplex.execution.sandbox._sandbox import (
    SANDBOX_CREDENTIALS,
    SandboxInfo,
    bwrap_status,
    choose_sandbox,
    sandbox_argv,
    workspace_of,
)
from multiplex.execution.sandbox._seccomp import seccomp_fd
from multiplex.execution.sandbox._tmpfs import sweep_left_behind, tmpfs_root
from multiplex.profiles import Profile, read_credential, write_new
from multiplex.scopes import ProfileScope

__all__ = ["plan_local"]

_SHELL = shutil.which("bash") or "/bin/sh"


def _remove(directory: str, written: list[str]) -> None:
    """A run's credential folder: its files, then its folders deepest first, then itself.

    Through a descriptor of the folder, never a link; anything else in it (the
    command may have added files) makes it ``shutil.rmtree``'s, as before.
    """
    try:
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
        try:
            folders: set[str] = set()
            for rel in written:
                os.unlink(rel, dir_fd=fd)
                parts = rel.split("/")[:-1]
                folders.update("/".join(parts[: n + 1]) for n in range(len(parts)))
            for folder in sorted(folders, key=lambda f: f.count("/"), reverse=True):
                os.rmdir(folder, dir_fd=fd)
        finally:
            os.close(fd)
        os.rmdir(directory)
    except OSError:
        shutil.rmtree(directory, ignore_errors=True)


def _new_folder(profile: Profile) -> CredentialFolder:
    return CredentialFolder(profile.name, tmpfs_root())


def _materialise(scope: ProfileScope) -> tuple[Path | None, list[str]]:
    """The run's private credential folder (or None) and the lines saying what was refused."""
    directory, refused, _written = _credential_folder(scope)
    return None if directory is None else Path(directory), refused


def _credential_folder(scope: ProfileScope) -> tuple[str | None, list[str], list[str]]:
    # docs/execution.md: a private per-run directory (0700), files 0400, removed afterwards.
    # docs/security.md#credentials-checked-when-used: each file is re-checked and read now;
    # one that fails is not mounted, whatever the last load said.
    if not scope.credential_mounts:
        return None, [], []
    root = tmpfs_root()
    sweep_left_behind(root)
    prefix = f"multiplex-cred-{scope.name}-{os.getpid()}-"  # its pid: see sweep_left_behind
    directory = tempfile.mkdtemp(prefix=prefix, dir=root)
    refused: list[str] = []
    written: list[str] = []
    dir_fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        for mount in scope.credential_mounts:
            try:
                # relative inside the directory, whatever the backend's mount target
                rel = os.path.normpath(mount.relative)
                write_new(dir_fd, rel, read_credential(scope.home, mount.relative))
                written.append(rel)
            except (ProfileConfigError, OSError) as exc:
                why = exc.reason if isinstance(exc, ProfileConfigError) else str(exc)
                # The path last: "token.txt: <why>" would read as a secret assignment.
                refused.append(f"[multiplex: not mounted ({why}): {mount.relative}]")
    finally:
        os.close(dir_fd)
    return directory, refused, written


def _credential_data(scope: ProfileScope) -> tuple[tuple[tuple[str, int], ...], list[str]]:
    """Each credential file, re-checked and read now, in a memfd: (relative path, fd).

    For the sandbox: bwrap copies them into its own ``/run`` (``--ro-bind-data``),
    so nothing is written to the host's disk for a run. The caller closes the fds.
    """
    files: list[tuple[str, int]] = []
    refused: list[str] = []
    for mount in scope.credential_mounts:
        try:
            rel = os.path.normpath(mount.relative)
            if os.path.isabs(rel) or rel.split("/")[0] == "..":
                raise ProfileConfigError("must be a path inside the directory")
            data = read_credential(scope.home, mount.relative)
        except ProfileConfigError as exc:
            # The path last: "token.txt: <why>" would read as a secret assignment.
            refused.append(f"[multiplex: not mounted ({exc.reason}): {mount.relative}]")
            continue
        fd = os.memfd_create("multiplex-credential", os.MFD_CLOEXEC)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.lseek(fd, 0, os.SEEK_SET)
        except BaseException:
            os.close(fd)
            for _rel, other in files:
                os.close(other)
            raise
        files.append((rel, fd))
    return tuple(files), refused


def plan_local(scope: ProfileScope, command: str, context: RunContext) -> Plan:
    """The local backend's plan: bwrap (or the sub-reaper) around ``bash -c command``."""
    choice = choose_sandbox(scope.view.terminal.sandbox)
    if choice.error is not None:
        return Plan("local", "none", error=choice.error)
    cwd = scope.cwd
    workspace = workspace_of(scope)  # made at the profile's first command: its default cwd
    if cwd is not None and not cwd.is_dir():
        return Plan("local", choice.sandbox, error=f"working directory does not exist: {cwd}")
    if choice.sandbox == "bwrap":
        return _plan_bwrap(scope, command, context, workspace)
    env = dict(scope.env)
    folder = scope.profile.resource(FOLDER_KEY, _new_folder)
    creds, refused, cleanup = folder.take(scope)
    if creds is not None:
        env["CREDENTIALS_DIRECTORY"] = creds
    argv = (_SHELL, "-c", command)
    return Plan(
        "local", choice.sandbox, argv, env, cwd, cleanup=cleanup, notes=tuple(refused), reaped=True
    )


def _plan_bwrap(
    scope: ProfileScope, command: str, context: RunContext, workspace: Path | None
) -> Plan:
    egress: EgressSession | None = None
    if scope.view.terminal.network == "on":
        opened = open_egress(scope, context)
        if isinstance(opened, str):
            return Plan("local", "bwrap", error=opened)
        egress = opened
    env = dict(scope.env)
    try:
        creds, refused = _credential_data(scope)
    except OSError as exc:
        if egress is not None:
            egress.close()
        return Plan("local", "bwrap", error=f"cannot hand the credentials over: {exc}")
    if creds:
        env["CREDENTIALS_DIRECTORY"] = SANDBOX_CREDENTIALS
    if workspace is not None:  # never the supervisor's HOME
        env["HOME"] = str(workspace)
    if egress is not None:
        env.update(egress.env)
    info = SandboxInfo()
    floor = seccomp_fd()
    prefix = sandbox_argv(
        scope,
        hidden=context.hidden,
        seccomp=floor,
        bwrap=bwrap_status()[1],
        info_fd=info.fd,
        enter=() if egress is None else egress.enter,
        credential_files=creds,
    )
    argv = (*prefix, _SHELL, "-c", command)
    read_once = [floor, *(fd for _rel, fd in creds)]  # bwrap has read them once started
    once = threading.Lock()

    def started() -> None:
        info.started()
        # Closed once: a second close could hit an fd another thread opened since.
        if once.acquire(blocking=False):
            for fd in read_once:
                os.close(fd)

    def done() -> None:
        started()  # also when the process never started: no fd leaks
        info.close()
        if egress is not None:
            egress.close()

    return Plan(
        "local",
        "bwrap",
        argv,
        env,
        scope.cwd,
        on_stop=info.kill,
        cleanup=done,
        pass_fds=(info.fd, *read_once),
        on_start=started,
        finish=None if egress is None else egress_finish(egress),
        notes=tuple(refused),
    )
