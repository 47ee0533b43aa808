"""Running an approved command inside its scope (docs/execution.md).

One module per backend behind one small protocol (``_backends``): ``_local``
(bubblewrap sandbox or the sub-reaper), ``_container`` (docker/podman),
``_ssh`` (the OpenSSH client). ``_process`` starts, caps, times out and stops
the one local process every backend ends in; ``_sandbox`` builds the bwrap argv
prefix for a scope (``sandbox_argv``), which kernels reuse, from the paths
``_sandbox_binds`` finds.
"""

from multiplex.execution._backends import NOT_EXECUTED, execute, planner_for
from multiplex.execution._live import LiveOutput
from multiplex.execution._plan import Plan, Planner, RunContext
from multiplex.execution._process import OUTPUT_CAP, ProcessTracker, Running
from multiplex.execution._result import Execution, RunResult
from multiplex.execution.sandbox._sandbox import (
    SANDBOX_CREDENTIALS,
    SandboxChoice,
    bwrap_status,
    choose_sandbox,
    sandbox_argv,
    sandbox_of,
)
from multiplex.execution.sandbox._sandbox_binds import WORKSPACE
from multiplex.execution.sandbox._seccomp import seccomp_available, seccomp_fd

__all__ = [
    "NOT_EXECUTED",
    "OUTPUT_CAP",
    "SANDBOX_CREDENTIALS",
    "WORKSPACE",
    "Execution",
    "LiveOutput",
    "Plan",
    "Planner",
    "ProcessTracker",
    "RunContext",
    "RunResult",
    "Running",
    "SandboxChoice",
    "bwrap_status",
    "choose_sandbox",
    "execute",
    "planner_for",
    "sandbox_argv",
    "sandbox_of",
    "seccomp_available",
    "seccomp_fd",
]
