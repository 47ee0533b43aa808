"""A decision parked on a human: the open request and how the decision ends (docs/gateway.md#limits).

``Gate.begin`` returns a :class:`Parked` instead of blocking when a human must
answer. The caller either blocks on :meth:`Parked.wait` (the CLI, the Python
API) or asks to be called back with :meth:`Parked.when_settled` and calls
:meth:`Parked.finish` from a worker afterwards (the gateway's runs, which so
hold no thread while they wait). Both end in the same decision, recheck and
record: the outcome is as truthful either way.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from multiplex.approval._decision import Decision
from multiplex.approval.waiting._deadlines import DEADLINES
from multiplex.approval.waiting._pending import PendingApproval, Resolution

__all__ = ["Parked"]


class Parked:
    """An asked request; its decision is made exactly once, by :meth:`wait` or :meth:`finish`."""

    def __init__(
        self,
        request: PendingApproval,
        conclude: Callable[[Resolution], Decision],
        *,
        interrupted: bool = False,
    ) -> None:
        self.request = request
        self._interrupted = interrupted
        self._conclude = conclude
        self._lock = threading.Lock()
        self._decision: Decision | None = None

    def when_settled(self, callback: Callable[[], None]) -> None:
        """Call ``callback()`` once the request is answered, cancelled or times out.

        The timeout is kept by one shared timer thread, not by a waiting thread.
        ``callback`` runs in the resolving thread: it should hand off to a worker
        that then calls :meth:`finish`.
        """
        DEADLINES.call_at(self.request.deadline, self.request)
        self.request.when_settled(callback)

    def wait(self) -> Decision:
        """Block until the request is settled, then decide (the blocking path).

        A KeyboardInterrupt while waiting (Ctrl-C at a terminal prompt) ends the
        request ``cancelled`` with cause ``interrupted``, records that decision,
        then goes on to the caller (docs/approvals.md#what-a-prompt-shows).
        """
        request = self.request
        try:
            settled = request.wait()
            if request.leader is not None and settled.timed_out:
                request.leader.wait()  # the shared prompt timed out: settle it for everyone
        except KeyboardInterrupt:
            request.cancel("interrupted")
            self._interrupted = True
        resolution = request.resolution
        assert resolution is not None
        decision = self._finish(resolution)
        if self._interrupted:
            raise KeyboardInterrupt
        return decision

    def finish(self) -> Decision:
        """The decision of a settled request (call after ``when_settled`` fired)."""
        resolution = self.request.resolution
        if resolution is None:
            raise RuntimeError("the approval request is still open")
        return self._finish(resolution)

    def _finish(self, resolution: Resolution) -> Decision:
        with self._lock:
            if self._decision is None:
                self._decision = self._conclude(resolution)
            return self._decision
