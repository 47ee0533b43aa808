"""Running an approved command inside its scope.

``_local``: a subprocess in its own process group with the scope's cwd, command
env and per-run credential directory, a timeout that kills the group, output
capped per stream. See docs/execution.md.
"""

from multiplex.execution._local import OUTPUT_CAP, Execution, ProcessTracker, RunResult, execute

__all__ = ["OUTPUT_CAP", "Execution", "ProcessTracker", "RunResult", "execute"]
