"""Optional strict isolation: turns may not change process-wide state (docs/multiplexing.md#the-model)."""

from __future__ import annotations

import sys
import threading
from typing import Any

from multiplex._errors import IsolationViolation
from multiplex.scopes._scope import _SCOPE

__all__ = ["install_strict_hook"]

# os.environ writes go through os.putenv / os.unsetenv; chdir has its own event.
_GUARDED = {
    "os.putenv": "os.environ",
    "os.unsetenv": "os.environ",
    "os.chdir": "the process cwd",
    "os.fchdir": "the process cwd",
}
_installed = threading.Lock()
_state = {"installed": False}


def _hook(event: str, args: tuple[Any, ...]) -> None:
    target = _GUARDED.get(event)
    if target is None:
        return
    scope = _SCOPE.get()
    if scope is not None and scope.strict:
        raise IsolationViolation(
            f"turn of profile {scope.name!r} tried to change {target} ({event}); "
            "a turn's environment and cwd live in its scope"
        )


def install_strict_hook() -> None:
    """Install the audit hook once per process (audit hooks cannot be removed).

    It only acts inside turns whose scope has ``strict=True``; elsewhere it
    returns at once.
    """
    with _installed:
        if not _state["installed"]:
            sys.addaudithook(_hook)
            _state["installed"] = True
