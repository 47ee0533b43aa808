"""A command's egress in its plan (docs/execution.md#egress): opened before it starts, told after.

Shared by the backends whose commands run in the profile's network namespace
(bubblewrap, podman): ``open_egress`` gives the command its listener, proxy
variables and the way into the namespace, or the one-line reason there is
none (the command then does not run: never on the host's network instead);
``egress_finish`` puts each refusal on the command's stderr and in its result.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from multiplex.execution._plan import RunContext
from multiplex.execution._result import Execution
from multiplex.execution.egress import EgressSession, default_hub
from multiplex.scopes import ProfileScope

__all__ = ["egress_finish", "open_egress"]


def open_egress(scope: ProfileScope, context: RunContext) -> EgressSession | str:
    """The command's way out under ``network: on``, or why there is none."""
    egress = scope.view.terminal.egress
    try:
        return default_hub().open(
            scope.name, scope.home, egress.allow, egress.deny, tag=context.run_id
        )
    except OSError as exc:
        return f"terminal.network: on, but {exc}"


def egress_finish(session: EgressSession) -> Callable[[Execution], Execution]:
    """The plan's ``finish``: the refusals the command met, one line each after its stderr."""

    def finish(result: Execution) -> Execution:
        if not session.refusals:
            return result
        lines = session.refused_lines()
        stderr = result.stderr
        if stderr and not stderr.endswith("\n"):
            stderr += "\n"
        return dataclasses.replace(
            result,
            stderr=stderr + "\n".join(lines) + "\n",
            egress_refused=tuple(r.message for r in list(session.refusals)),
        )

    return finish
