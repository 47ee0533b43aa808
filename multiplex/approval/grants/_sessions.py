"""Session grants and session yolo, per (profile, session) (docs/approvals.md#sessions)."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from multiplex.shell import RuleSet

__all__ = ["SessionState", "SessionTable"]


@dataclass(frozen=True, slots=True)
class SessionState:
    """One session's grants (rules approved for the session) and its yolo switch."""

    grants: RuleSet = field(default_factory=RuleSet)
    yolo: bool = False


_NO_GRANTS = SessionState()  # immutable: one shared value for every session without any


class SessionTable:
    """The sessions of ONE profile (a per-profile resource). Values are immutable."""

    def __init__(self, profile: str) -> None:
        self.profile = profile
        self._lock = threading.Lock()
        self._sessions: dict[str, SessionState] = {}

    def get(self, session: str) -> SessionState:
        return self._sessions.get(session) or _NO_GRANTS

    def grant(self, session: str, rules: list[str]) -> None:
        """Approve these rules for the rest of the session."""
        with self._lock:
            state = self.get(session)
            merged = RuleSet([*state.grants.texts(), *rules])
            self._sessions[session] = SessionState(merged, state.yolo)

    def set_yolo(self, session: str, on: bool) -> None:
        """The session's ``/yolo`` switch: approve everything but hardline and deny."""
        with self._lock:
            state = self.get(session)
            self._sessions[session] = SessionState(state.grants, on)

    def revoke(self, session: str, rule: str) -> bool:
        """Take one grant back (``multiplex approvals revoke``); True if the session held it."""
        with self._lock:
            state = self.get(session)
            if rule not in state.grants.texts():
                return False
            kept = [text for text in state.grants.texts() if text != rule]
            if kept or state.yolo:
                self._sessions[session] = SessionState(RuleSet(kept), state.yolo)
            else:
                self._sessions.pop(session, None)
            return True

    def reset(self, session: str) -> bool:
        """Drop the session's grants and yolo; True if it had any."""
        with self._lock:
            return self._sessions.pop(session, None) is not None

    def sessions(self) -> dict[str, SessionState]:
        return dict(self._sessions)
