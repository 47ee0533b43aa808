"""The ``docker`` backend: one ``--rm`` container per command (docs/execution.md#containers).

Through ``terminal.container_cli`` (docker or podman), in ``terminal.image``,
with ``terminal.cwd`` inside, the profile's command env (passed by name, so no
value appears in a process list), credentials read-only at
``/run/credentials/<rel>``, ``host_mounts`` as bind mounts, the network per
``terminal.network``, ``terminal.memory`` and ``terminal.cpus``. A timeout,
cancel or shutdown kills and removes the container, not only the CLI process.
"""

from __future__ import annotations

import contextlib
import functools
import os
import secrets
import shutil
import subprocess

from multiplex.execution._egress_plan import egress_finish, open_egress
from multiplex.execution._engine import Engine, engine_for
from multiplex.execution._images import ensure_image
from multiplex.execution._local import _materialise
from multiplex.execution._plan import Plan, RunContext
from multiplex.execution.egress import EgressSession
from multiplex.execution.sandbox._sandbox import SANDBOX_CREDENTIALS
from multiplex.scopes import ProfileScope

__all__ = ["RUN_LABEL", "host_mount_args", "plan_container"]

RUN_LABEL = "io.multiplex.profile"
_HOST_ENV = ("PATH",)  # the CLI itself needs these; they are not the container's
_NOT_PASSED = frozenset({"PATH", "HOME"})  # host-specific: the image has its own


def host_mount_args(mounts: tuple[str, ...]) -> list[str]:
    """``HOST[:CONTAINER[:ro|rw]]`` entries as ``-v`` flags (a bare HOST mounts at the same path)."""
    args: list[str] = []
    for spec in mounts:
        parts = spec.split(":")
        host = os.path.expanduser(parts[0])
        inside = parts[1] if len(parts) > 1 and parts[1] else host
        mode = parts[2] if len(parts) > 2 else "rw"
        args += ["-v", f"{host}:{inside}:{mode}"]
    return args


def _stop(engine: Engine, name: str) -> None:
    # The CLI dying does not end the container: kill it, then remove it at once (-t 0).
    for argv in ([engine.binary, "kill", name], [engine.binary, "rm", "-f", "-t", "0", name]):
        with contextlib.suppress(OSError, subprocess.TimeoutExpired):
            subprocess.run(argv, capture_output=True, timeout=30, check=False)


def plan_container(scope: ProfileScope, command: str, context: RunContext) -> Plan:
    """The container backend's plan: ``<cli> run --rm ... IMAGE sh -c command``."""
    terminal = scope.view.terminal
    if not terminal.image:
        return Plan("docker", "none", error="terminal.image is required for backend docker")
    engine = engine_for(terminal.container_cli)
    if isinstance(engine, str):
        return Plan("docker", "none", error=engine)
    missing = ensure_image(engine, terminal.image)
    if missing is not None:
        return Plan("docker", engine.cli, error=missing)
    name = f"multiplex-{scope.name}-{secrets.token_hex(6)}"
    argv = [engine.binary, "run", "--rm", "--pull", "never", "--name", name]
    argv += ["--label", f"{RUN_LABEL}={scope.name}", *engine.run_flags]
    argv += ["--security-opt", "no-new-privileges"]
    egress: EgressSession | None = None
    if terminal.network == "off":
        argv += ["--network", "none"]
    elif terminal.network == "on":
        # docs/execution.md#egress: the profile's own namespace, out only through the proxy.
        if engine.cli != "podman":
            return Plan(
                "docker",
                engine.cli,
                error="terminal.network: on needs podman (docker cannot join the profile's"
                " network namespace); set network: off, or host for the engine's own network",
            )
        opened = open_egress(scope, context)
        if isinstance(opened, str):
            return Plan("docker", engine.cli, error=opened)
        egress = opened
        argv += ["--network", f"ns:{egress.netns_path}"]
    if terminal.memory:
        argv += ["--memory", terminal.memory]
    if terminal.cpus:
        argv += ["--cpus", f"{terminal.cpus:g}"]
    if terminal.cwd and terminal.cwd.startswith("/"):
        argv += ["-w", terminal.cwd]
    env = {k: v for k, v in os.environ.items() if k in _HOST_ENV}
    command_env = dict(scope.env)
    if egress is not None:
        command_env.update(egress.env)
    for key, value in command_env.items():
        if key not in _NOT_PASSED:
            env[key] = value
            argv += ["-e", key]  # the value comes from the CLI's environment, not its argv
    creds, refused = _materialise(scope)
    if creds is not None:
        argv += ["-v", f"{creds}:{SANDBOX_CREDENTIALS}:ro"]
        env["CREDENTIALS_DIRECTORY"] = SANDBOX_CREDENTIALS
        argv += ["-e", "CREDENTIALS_DIRECTORY"]
    argv += host_mount_args(scope.view.host_mounts)
    argv += [terminal.image, "sh", "-c", command]

    def cleanup() -> None:
        if egress is not None:
            egress.close()
        if creds is not None:
            shutil.rmtree(creds, True)

    return Plan(
        "docker",
        engine.cli,
        tuple(argv),
        env,
        None,
        on_stop=functools.partial(_stop, engine, name),
        cleanup=cleanup,
        finish=None if egress is None else egress_finish(egress),
        notes=tuple(refused),
    )
