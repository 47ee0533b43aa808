"""Request and response bodies of the HTTP API (docs/gateway.md), as pydantic models.

The models are the OpenAPI schema too: Schemathesis fuzzes the gateway from it,
so every constraint written here is one the handlers may rely on.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

__all__ = [
    "AnswerIn",
    "ApprovalOut",
    "CancelOut",
    "CellErrorOut",
    "CellOut",
    "DamagedOut",
    "DangerOut",
    "DecisionOut",
    "DecisionRow",
    "DecisionsPage",
    "FatigueOut",
    "KernelOut",
    "KernelsEnded",
    "OkOut",
    "PatternOut",
    "PendingOut",
    "PolicyChangeOut",
    "PolicyDiffIn",
    "PolicyDiffOut",
    "ProfileOut",
    "ReloadOut",
    "ResetOut",
    "ResultOut",
    "RevokeIn",
    "RevokeOut",
    "RouteIn",
    "RunContext",
    "RunCreated",
    "RunIn",
    "RunOut",
    "RunStatus",
    "RunSummary",
    "SessionOut",
    "TestContext",
    "TestIn",
    "TraceOut",
    "VerdictOut",
    "WhoAmI",
    "WhyFields",
]

# docs/approvals.md#who-can-answer: a run is answered through the API or by policy; "interactive"
# would need a terminal prompter this process does not have (422).
RunContext = Literal["gateway", "api", "cron", "webhook", "single_query"]
TestContext = Literal["interactive", "gateway", "api", "cron", "webhook", "single_query"]
RunStatus = Literal["queued", "running", "waiting_for_approval", "completed", "failed", "cancelled"]
Choice = Literal["once", "session", "always", "deny"]
Name = Annotated[str, Field(min_length=1, max_length=200)]
# docs/gateway.md#runs: a command holds no control character but tab and newline.
# NUL cannot reach a program's argv at all (the run would fail after its
# approval), and the others (ESC, CR, backspace, C1's CSI) can make the line an
# approver reads differ from the line that runs. Refused before the gate: 422.
_CONTROL = r"\u0000-\u0008\u000b-\u001f\u007f-\u009f"  # a regex class: Python's and ECMA's
_CONTROL_CHAR = re.compile(f"[{_CONTROL}]")


def _no_control(command: str) -> str:
    found = _CONTROL_CHAR.search(command)
    if found is not None:
        raise ValueError(
            f"control character U+{ord(found.group()):04X} at position {found.start()};"
            " a command may hold tab and newline, no other control character"
        )
    return command


Command = Annotated[
    str,
    Field(
        min_length=1,
        max_length=65_536,
        json_schema_extra={"pattern": f"^[^{_CONTROL}]*$"},  # the schema says what is checked
    ),
    AfterValidator(_no_control),
]
Code = Annotated[str, Field(min_length=1, max_length=1_048_576)]
CellOutcome = Literal["ok", "error", "timeout", "cancelled", "exited", "died", "refused"]
RouteId = Annotated[str, Field(max_length=200)] | int | None


class _In(BaseModel):
    # Strict: a field the schema types string or integer takes no boolean (nor a
    # number for a string); only an integer still counts as a number.
    model_config = ConfigDict(extra="forbid", strict=True)


class RouteIn(_In):
    """Where a turn comes from; the supervisor's routes pick the profile (docs/configuration.md#supervisor-config-multiplexyaml)."""

    platform: Annotated[str, Field(max_length=200)] | None = None
    user_id: RouteId = None
    chat_id: RouteId = None
    thread_id: RouteId = None


class RunIn(_In):
    """``POST /v1/runs``: either ``profile`` or ``route`` (neither = the default profile).

    A run carries shell ``commands`` or Python ``code`` cells for the session's
    kernel (docs/kernels.md#over-http), never both.
    """

    profile: Name | None = None
    route: RouteIn | None = None
    session_id: Name = "default"
    context: RunContext = "api"
    commands: list[Command] | None = Field(default=None, min_length=1, max_length=100)
    code: list[Code] | None = Field(default=None, min_length=1, max_length=100)
    # docs/kernels.md#over-http: the first cell gets a fresh kernel (code runs only).
    reset: bool = False
    # docs/gateway.md#waiting-for-the-result: answer with the finished run, within this many seconds.
    wait: Annotated[float, Field(ge=0, le=300)] | None = None

    @model_validator(mode="after")
    def _one_target(self) -> RunIn:
        if self.profile is not None and self.route is not None:
            raise ValueError("give either profile or route, not both")
        if (self.commands is None) == (self.code is None):
            raise ValueError("give either commands or code, not both")
        if self.reset and self.code is None:
            raise ValueError("reset applies to code runs only")
        return self


class AnswerIn(_In):
    """``POST /v1/runs/{id}/approval``."""

    approval_id: Name
    choice: Choice
    reason: Annotated[str, Field(max_length=500)] | None = None
    # docs/approvals.md#suggestions: with "always", one of the approval's suggested rules.
    rule: Annotated[str, Field(min_length=1, max_length=4096)] | None = None


class TestIn(_In):
    """``POST /v1/approvals/test``: what the gate would do; writes nothing."""

    profile: Name
    command: Command
    context: TestContext = "api"
    # Decide as in this session (its grants and yolo); none: a session with neither.
    session_id: Name = "test"


class RunCreated(BaseModel):
    run_id: str
    status: RunStatus


class DecisionOut(BaseModel):
    outcome: Literal["approved", "denied", "cancelled", "timeout", "blocked"]
    cause: str
    decided_by: Literal["rule", "user", "policy", "smart", "nobody"]
    rule: str | None
    message: str


class ResultOut(BaseModel):
    """One command that reached the gate; ``exit_code`` is null when it did not run."""

    command: str
    decision: DecisionOut
    exit_code: int | None
    # docs/gateway.md#output-kept-and-dropped: null when output_dropped says why
    stdout: str | None
    stderr: str | None
    output_dropped: str | None = None
    backend: str | None = None  # docs/execution.md#the-result: what ran it
    sandbox: str | None = None
    # docs/execution.md#egress: what the egress proxy refused this command, redacted
    egress_refused: list[str] = []
    # docs/gateway.md#runs: approved, but it could not start (then the run failed): why, redacted
    error: str | None = None


class CellErrorOut(BaseModel):
    ename: str
    evalue: str
    traceback: str


class CellOut(BaseModel):
    """One code cell of a run (docs/kernels.md#results-and-records); every text is redacted."""

    index: int
    outcome: CellOutcome
    stdout: str | None  # docs/gateway.md#output-kept-and-dropped
    stderr: str | None
    output_dropped: str | None = None
    result: str | None
    error: CellErrorOut | None
    duration_ms: int
    truncated: bool
    fresh_kernel: bool
    notice: str | None
    kernel_id: str | None


class KernelOut(BaseModel):
    """A live session kernel (``GET /v1/kernels``)."""

    kernel_id: str
    profile: str
    session: str
    chain: list[str]
    pid: int | None
    started: float | None
    last_used: float
    memory_bytes: int
    busy: bool
    sandbox: str | None = None


class KernelsEnded(BaseModel):
    ended: int


class DangerOut(BaseModel):
    """A named pattern the gate found and the part of the line it came from."""

    pattern: str
    segment: str


class PatternOut(BaseModel):
    """A named pattern the gate found, with its sentence."""

    name: str
    description: str


class SuggestionOut(BaseModel):
    """A rule an "always" answer could save (docs/approvals.md#suggestions)."""

    rule: str
    matched: int  # recorded decisions of the profile it would have matched
    saves: bool  # what "always" saves when no rule is chosen
    bind: list[str] = Field(default_factory=list)  # workspace files it would be bound to
    redacted: bool = False  # shown redacted: it cannot be chosen by its text


class WhyFields(BaseModel):
    """Where the command would run and why it asks (docs/approvals.md#what-a-prompt-shows)."""

    cwd: str = ""
    backend: str = ""
    step: str = "ask"
    reason: str = ""
    patterns: list[PatternOut] = Field(default_factory=list)
    dangers: list[DangerOut] = Field(default_factory=list)
    suggestions: list[SuggestionOut] = Field(default_factory=list)
    # Who asked, in what, and why in words (docs/approvals.md#what-a-prompt-shows).
    context: str = ""
    asked_by: str = ""  # "the admin token", "the NAME profile's token", "the MCP client NAME"
    because: str = ""
    sandbox: str = ""  # bwrap, none, container, remote host
    network: str = ""  # terminal.network: on, off, host
    egress_allow: list[str] = Field(default_factory=list)


class PendingOut(WhyFields):
    approval_id: str
    command: str
    created_at: float
    expires_at: float


class RunOut(BaseModel):
    """``GET /v1/runs/{id}``."""

    run_id: str
    profile: str
    session_id: str
    context: RunContext
    asked_by: str = ""  # who submitted it (docs/approvals.md#what-a-prompt-shows)
    status: RunStatus
    kind: Literal["commands", "code"] = "commands"
    results: list[ResultOut | CellOut]
    pending_approval: PendingOut | None
    created_at: float
    finished_at: float | None
    error: str | None = None


class ApprovalOut(WhyFields):
    """One open approval request (``GET /v1/approvals``)."""

    approval_id: str
    run_id: str | None
    profile: str
    session_id: str
    command: str
    created_at: float
    expires_at: float


class OkOut(BaseModel):
    ok: bool


class CancelOut(BaseModel):
    run_id: str
    status: RunStatus
    cancelled: int


class ResetOut(BaseModel):
    cancelled: int


class TraceOut(BaseModel):
    step: str
    result: str
    detail: str


class VerdictOut(BaseModel):
    """The Verdict JSON of docs/cli.md (``approvals test --json``)."""

    profile: str
    command: str
    outcome: Literal["approved", "blocked", "ask"]
    cause: str
    decided_by: str | None
    rule: str | None
    segments: list[list[str]]
    trace: list[TraceOut]
    dangers: list[DangerOut] = Field(default_factory=list)


ProfileOut = dict[str, Any]


# The history, session, identity and reload bodies live beside these (one module was over 400 lines).
from multiplex.gateway.api._models_history import (  # noqa: E402
    DamagedOut,
    DecisionRow,
    DecisionsPage,
    FatigueOut,
    PolicyChangeOut,
    PolicyDiffIn,
    PolicyDiffOut,
    ReloadOut,
    RevokeIn,
    RevokeOut,
    RunSummary,
    SessionOut,
    WhoAmI,
)
