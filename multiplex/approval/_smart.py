"""The smart approver hook for ``approvals.mode: smart`` (docs/approvals.md#order-of-checks step 8).

No model is bundled: an embedding runtime registers a callable. Its errors and
timeouts escalate to a human and are logged at WARNING with the elapsed time.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import TYPE_CHECKING, Literal, Protocol

if TYPE_CHECKING:
    from multiplex.scopes import ProfileScope

__all__ = ["SmartApprover", "SmartResult", "consult"]

log = logging.getLogger("multiplex.approval.smart")
SmartResult = Literal["approve", "deny", "escalate"]


class SmartApprover(Protocol):
    """Judges one command: ``"approve"`` (this command only), ``"deny"`` or ``"escalate"``."""

    def __call__(self, command: str, scope: ProfileScope) -> str: ...


def consult(
    approver: SmartApprover, command: str, scope: ProfileScope, timeout: float
) -> tuple[SmartResult, str]:
    """Ask the approver with a hard timeout; return its verdict and a detail line."""
    box: dict[str, object] = {}
    started = time.monotonic()

    def call() -> None:
        try:
            box["value"] = approver(command, scope)
        except Exception as exc:  # escalate, never fail open or closed silently
            box["error"] = exc

    worker = threading.Thread(target=call, daemon=True, name="multiplex-smart")
    worker.start()
    worker.join(timeout)
    elapsed = time.monotonic() - started
    if worker.is_alive():
        log.warning(
            "smart approver timed out after %.3fs (limit %.3fs): escalating", elapsed, timeout
        )
        return "escalate", f"smart approver timed out after {elapsed:.3f}s"
    if "error" in box:
        name = type(box["error"]).__name__
        log.warning("smart approver raised %s after %.3fs: escalating", name, elapsed)
        return "escalate", f"smart approver raised {name}"
    value = str(box.get("value", "")).strip().lower()
    if value in ("approve", "deny", "escalate"):
        return value, f"smart approver said {value}"  # type: ignore[return-value]
    log.warning("smart approver returned %r after %.3fs: escalating", value, elapsed)
    return "escalate", f"smart approver gave no verdict ({value!r})"
