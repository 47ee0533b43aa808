"""The approval gate: every shell command of a turn passes here before it runs.

``_static_checks`` holds the ordered checks that never ask anyone (parse,
hardline, deny, yolo, container skip, allowlist, detection); ``_gate`` adds the
smart approver (``_smart``), the unattended policy, asking a human (``_pending``,
``_prompt``, ``_answers``), session state (``_sessions``) and the records
(``_records``); ``_decision`` holds the values it returns. Command analysis
itself lives in :mod:`multiplex.shell`. See docs/approvals.md.
"""

from multiplex.approval import _surfaces  # noqa: F401  (registers the gate's surfaces)
from multiplex.approval._gate import Gate
from multiplex.approval.grants._always import AnswerNotSaved
from multiplex.approval.grants._suggest import Suggestion, suggest
from multiplex.approval.records._fatigue import Fatigue, fatigue_of
from multiplex.approval.records._history import (
    DamagedRecord,
    DecisionFilter,
    decisions_file,
    follow_decisions,
    read_decisions,
)
from multiplex.approval.waiting._pending import Answer, Choice, PendingApproval
from multiplex.approval.waiting._prompt import (
    CallbackPrompter,
    Prompter,
    PromptUndeliverable,
    TerminalPrompter,
)

__all__ = [
    "Answer",
    "AnswerNotSaved",
    "CallbackPrompter",
    "Choice",
    "DamagedRecord",
    "DecisionFilter",
    "Fatigue",
    "Gate",
    "PendingApproval",
    "PromptUndeliverable",
    "Prompter",
    "Suggestion",
    "TerminalPrompter",
    "decisions_file",
    "fatigue_of",
    "follow_decisions",
    "read_decisions",
    "suggest",
]
