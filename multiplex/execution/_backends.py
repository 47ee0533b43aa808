"""Which backend runs a command, and running its plan (docs/execution.md#backends)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path

from multiplex.execution._container import plan_container
from multiplex.execution._local import plan_local
from multiplex.execution._plan import Plan, Planner, RunContext
from multiplex.execution._process import OnOutput, ProcessTracker, run_process
from multiplex.execution._result import Execution
from multiplex.execution._ssh import plan_ssh
from multiplex.scopes import ProfileScope

__all__ = ["NOT_EXECUTED", "execute", "planner_for"]

# Accepted by the config and gated, but this process has no way to run them.
NOT_EXECUTED = frozenset({"singularity", "modal", "daytona"})


def _not_executed(scope: ProfileScope, command: str, context: RunContext) -> Plan:
    return Plan(
        scope.backend,
        "none",
        error=(
            f"backend {scope.backend!r}: command approved but not executed; "
            "multiplex does not run this backend (docs/execution.md#backends)"
        ),
    )


def planner_for(backend: str) -> Planner:
    """The planner of ``backend`` (``local``, ``docker``, ``ssh``; the rest are not executed)."""
    if backend == "local":
        return plan_local
    if backend == "docker":
        return plan_container
    if backend == "ssh":
        return plan_ssh
    return _not_executed


def execute(
    scope: ProfileScope,
    command: str,
    *,
    timeout: float | None = None,
    tracker: ProcessTracker | None = None,
    run_id: str | None = None,
    hidden: Sequence[Path] = (),
    on_output: OnOutput | None = None,
) -> Execution:
    """Plan ``command`` for ``scope``'s backend, run it, return what it produced (unredacted).

    ``on_output`` sees the output as it arrives, unredacted (see ``run_process``).

    Never touches ``os.environ`` or the process cwd. ``hidden``: paths the
    local sandbox hides (every home, profiles folder and the supervisor config).
    """
    limit = scope.view.timeout if timeout is None else timeout
    context = RunContext(limit, tracker, run_id, tuple(hidden))
    plan = planner_for(scope.backend)(scope, command, context)
    try:
        if plan.error is not None:
            return Execution(
                None, "", plan.error, error=plan.error, backend=plan.backend, sandbox=plan.sandbox
            )
        done = run_process(
            plan.argv,
            env=plan.env,
            cwd=plan.cwd,
            timeout=limit,
            tracker=tracker,
            run_id=run_id,
            backend=plan.backend,
            sandbox=plan.sandbox,
            on_stop=plan.on_stop,
            pass_fds=plan.pass_fds,
            on_start=plan.on_start,
            stdin=plan.stdin,
            on_output=on_output,
            reaped=plan.reaped,
        )
        if plan.finish is not None:
            done = plan.finish(done)
        if plan.notes:
            done = dataclasses.replace(done, stderr="\n".join(plan.notes) + "\n" + done.stderr)
        return done
    finally:
        if plan.cleanup is not None:
            plan.cleanup()
