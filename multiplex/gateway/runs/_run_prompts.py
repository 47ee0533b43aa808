"""A run's prompts: the gate's events as they change runs and reach streams (docs/gateway.md#runs).

The gate calls :meth:`RunPrompts.on_gate_event` synchronously from the waiting
thread: ``approval.request`` marks the run ``waiting_for_approval`` (a run
cancelled meanwhile withdraws the prompt at once), ``approval.joined`` shows the
identical prompt it follows, and a resolution puts it back to ``running``; each
is logged and published once, by the prompt that leads.
"""

from __future__ import annotations

import threading
from typing import Any

from multiplex.approval.waiting._pending import PendingApproval
from multiplex.gateway.events._event import make_event
from multiplex.gateway.events._events import EventHub
from multiplex.gateway.http._logs import log_event
from multiplex.gateway.runs._lifecycle import SHUTDOWN
from multiplex.gateway.runs._run import Run, approval_row

__all__ = ["RUN_CANCELLED", "RunPrompts"]

RUN_CANCELLED = "run cancelled"


class RunPrompts:
    """The prompt half of a :class:`~multiplex.gateway.RunRegistry`."""

    _hub: EventHub
    _lock: threading.Lock
    closing: bool

    def get(self, run_id: str) -> Run | None:  # the registry's
        raise NotImplementedError

    def _note(  # the registry's
        self, run: Run, request: PendingApproval | None = None, *, moved: bool = False
    ) -> None:
        raise NotImplementedError

    # -- the gate's events (called synchronously from the waiting thread) ---------------
    def on_gate_event(self, event: str, request: PendingApproval) -> None:
        run = self.get(request.run_id) if request.run_id else None
        if run is not None and run.profile != request.profile:
            run = None  # a run_id that is not ours, reused by another caller
        if event == "approval.request":
            self._asked(run, request)
        elif event == "approval.joined":
            self._joined(run, request)
        else:
            self._settled(run, event, request)

    def _joined(self, run: Run | None, request: PendingApproval) -> None:
        # An identical prompt is already open in this session: this run waits on
        # it and shows the leader's approval (answering it answers both).
        if run is None or request.leader is None:
            return
        with run.lock:
            if run.cancel_requested or self.closing:
                withdraw = SHUTDOWN if self.closing else RUN_CANCELLED
            else:
                run.pending, run.status, withdraw = request.leader, "waiting_for_approval", None
        if withdraw is not None:
            request.cancel(withdraw)
        else:
            self._note(run, request)

    def _asked(self, run: Run | None, request: PendingApproval) -> None:
        withdraw: str | None = None
        if run is not None:
            with run.lock:
                if run.cancel_requested or self.closing:
                    # Cancelled between two commands: the next prompt is withdrawn at once.
                    withdraw = SHUTDOWN if self.closing else RUN_CANCELLED
                else:
                    run.pending = request
                    run.status = "waiting_for_approval"
            if withdraw is None:  # the prompt is on disk before its event goes out
                self._note(run, request)
        row = approval_row(request)
        log_event("approval.asked", **row)
        self._hub.publish(make_event("approval.request", row, request.profile, request.run_id))
        if withdraw is not None:
            request.cancel(withdraw)

    def _settled(self, run: Run | None, event: str, request: PendingApproval) -> None:
        if run is not None:
            with run.lock:
                if run.pending is request or (
                    request.leader is not None and run.pending is request.leader
                ):
                    run.pending = None
                    if not run.finished:
                        run.status = "running"
        if request.leader is not None:
            return  # a follower: its leader's events already told every client
        data: dict[str, Any] = {
            "approval_id": request.id,
            "run_id": request.run_id,
            "profile": request.profile,
            "session_id": request.session,
        }
        res = request.resolution
        if event == "approval.resolved" and res is not None and res.answer is not None:
            data["choice"] = res.answer.choice.value
            data["by"] = res.answer.by
            log_event("approval.answered", **data)
        else:
            timed_out = res is not None and res.timed_out
            data["outcome"] = "timeout" if timed_out else "cancelled"
            data["cause"] = (
                "approvals.timeout passed" if timed_out else (res.cancelled if res else None)
            )
            log_event("approval.cancelled", **data)
        self._hub.publish(make_event(event, data, request.profile, request.run_id))
