"""The small protocol every backend follows: plan → run → result (docs/execution.md#backends).

A backend's ``plan(scope, command, context)`` turns an approved command into a
``Plan``: the one local process to start (``argv``, ``env``, ``cwd``), what
stops it besides its process group (``on_stop``: kill the container, end the
remote process group) and what to remove afterwards (``cleanup``), or an
``error`` when it cannot run. ``_backends.execute`` runs the plan and returns
the ``Execution``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from multiplex.execution._process import ProcessTracker
    from multiplex.execution._result import Execution
    from multiplex.scopes import ProfileScope

__all__ = ["Plan", "Planner", "RunContext"]


@dataclass(frozen=True, slots=True)
class RunContext:
    """What the supervisor knows about a run beyond its scope."""

    timeout: float
    tracker: ProcessTracker | None = None
    run_id: str | None = None
    hidden: Sequence[Path] = ()  # every home, profiles folder and supervisor config


@dataclass(frozen=True, slots=True)
class Plan:
    """How one approved command will run, or why it cannot (``error``, one line)."""

    backend: str
    sandbox: str
    argv: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: Path | None = None
    error: str | None = None
    on_stop: Callable[[], None] | None = None
    cleanup: Callable[[], None] | None = None
    pass_fds: tuple[int, ...] = ()
    on_start: Callable[[], None] | None = None  # right after the process started
    stdin: bytes | None = None  # fed to the process, then closed (the ssh script)
    finish: Callable[[Execution], Execution] | None = None  # e.g. a client error -> one line
    notes: tuple[str, ...] = ()  # lines put before the command's stderr (e.g. a file not mounted)
    reaped: bool = False  # started under its own sub-reaper (``_subreaper``): sandbox none


class Planner(Protocol):
    """A backend: turns an approved command of ``scope`` into a ``Plan``."""

    def __call__(self, scope: ProfileScope, command: str, context: RunContext) -> Plan: ...
