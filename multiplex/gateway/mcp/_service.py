"""The MCP server: the tools over one gateway, the same for stdio and HTTP (docs/agents.md#mcp).

Every call goes where ``POST /v1/runs`` goes: ``RunRegistry`` (the per-profile
limit), ``Supervisor.run_or_park`` (the gate, the scope, the sandbox, the
redaction) and the records; ``structuredContent`` is the run document of
``GET /v1/runs/{id}``. While the run waits for a human, its approval is an
ordinary pending approval (dashboard, CLI, other nodes); a client that
declared ``elicitation`` is asked too (``_consent``). A call cancelled by the
client, or whose connection closes, cancels its run: its prompt ends
``cancelled`` with that cause.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import secrets
from dataclasses import dataclass
from typing import Any, TypeVar

from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import Server
from mcp_types import (
    CallToolRequestParams,
    CallToolResult,
    InputRequiredResult,
    ListToolsResult,
    PaginatedRequestParams,
)
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel, ValidationError

from multiplex import __version__
from multiplex._errors import RoutingError
from multiplex.approval.records._records import MCP_CLIENT
from multiplex.approval.waiting._pending import PendingApproval
from multiplex.cluster import ClusterUnavailable
from multiplex.gateway._gateway import Gateway
from multiplex.gateway.http._auth import Principal
from multiplex.gateway.mcp._consent import answer_of, apply_reply, ask_client
from multiplex.gateway.mcp._results import cell_result, command_result, refused, text_result
from multiplex.gateway.mcp._rounds import consent_round, reply_of, state_of
from multiplex.gateway.mcp._tools import CodeArgs, CommandArgs, ListArgs, TestArgs, tool_list
from multiplex.gateway.runs._run import Run, approval_row
from multiplex.gateway.runs._runs import ShuttingDown, TooManyRuns
from multiplex.gateway.shared import _remote as remote
from multiplex.gateway.shared._shared import REDIS_UNAVAILABLE

__all__ = ["PRINCIPAL_KEY", "Fixed", "McpService"]

_M = TypeVar("_M", bound=BaseModel)
PRINCIPAL_KEY = "multiplex.principal"  # the ASGI scope key the HTTP endpoint sets
TOOL_CANCELLED = "the MCP tool call was cancelled or its connection closed"
_INSTRUCTIONS = (
    "multiplex runs shell commands and Python cells for you through one profile's approval "
    "gate, sandbox and redaction. Use test_command to see what the gate would do, run_command "
    "to run, execute_code for Python with state kept per session. A command a human must "
    "approve waits until they answer; a denied one must not be retried."
)


@dataclass(frozen=True, slots=True)
class Fixed:
    """What ``multiplex mcp`` fixes for its one connection: the profile, maybe the session."""

    profile: str
    session: str | None = None
    connection_session: str = ""  # the default session of this process's connection


@dataclass(frozen=True, slots=True)
class _Who:
    principal: Principal
    default_session: str
    by: str  # the answerer an elicited answer is recorded as
    can_elicit: bool
    per_request: bool  # a 2026-07-28 client: asked with an input-required answer (_rounds)
    asker: str = ""  # who its runs' prompts say asked (docs/approvals.md#what-a-prompt-shows)


class _Refused(Exception):
    """A call not carried out; the message is the tool result's text."""


class McpService:
    """The MCP tools of one gateway; :attr:`server` is the SDK's low-level server."""

    def __init__(self, gateway: Gateway, fixed: Fixed | None = None) -> None:
        self.gw = gateway
        if fixed is not None and not fixed.connection_session:
            fixed = Fixed(fixed.profile, fixed.session, f"mcp-{secrets.token_hex(6)}")
        self.fixed = fixed
        self.server: Server[Any] = Server(
            "multiplex",
            version=__version__,
            instructions=_INSTRUCTIONS,
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
        )

    # -- who is calling ---------------------------------------------------------
    def _who(self, ctx: ServerRequestContext[Any, Any]) -> _Who:
        session = ctx.session
        if self.fixed is not None:
            principal = Principal("profile", self.fixed.profile)
            default = self.fixed.session or self.fixed.connection_session
        else:
            found = None if ctx.request is None else ctx.request.scope.get(PRINCIPAL_KEY)
            if not isinstance(found, Principal):
                raise _Refused("missing or invalid bearer token")
            principal = found
            header = None if ctx.request is None else ctx.request.headers.get("mcp-session-id")
            # The transport's session id is the connection's key; only its digest is recorded.
            digest = hashlib.sha256(header.encode()).hexdigest()[:16] if header else "default"
            default = f"mcp-{digest}"
        params = session.client_params
        name = params.client_info.name if params is not None else ""
        name = " ".join(name.split())[:64]
        caps = session.client_capabilities
        per_request = ctx.protocol_version in MODERN_PROTOCOL_VERSIONS
        reachable = per_request or session.can_send_request
        elicits = caps is not None and caps.elicitation is not None and reachable
        by = f"{MCP_CLIENT}:{name}" if name else MCP_CLIENT
        asker = f"the MCP client {name}" if name else "an MCP client"
        return _Who(principal, default, by, elicits, per_request, asker)

    def _profile(self, who: _Who, requested: str | None) -> str:
        sup = self.gw.sup
        if self.fixed is not None:
            if requested is not None and requested != self.fixed.profile:
                raise _Refused(f"this MCP server acts as profile {self.fixed.profile!r} only")
            name = self.fixed.profile
        elif who.principal.admin:
            try:
                name = requested if requested is not None else sup.route()
            except RoutingError as exc:
                raise _Refused(f"{exc}; name one with the profile argument") from None
        else:
            name = who.principal.profile or ""
            if requested is not None and requested != name:
                # The same words whether it exists or not (docs/security.md#tokens-and-ids).
                raise _Refused(f"no profile named {requested!r} is served")
        try:
            sup.view(name)
        except RoutingError as exc:
            raise _Refused(
                str(exc)
                if who.principal.admin or self.fixed
                else f"profile {name!r} is not routable"
            ) from None
        return name

    def _session(self, who: _Who, requested: str | None) -> str:
        fixed = self.fixed.session if self.fixed is not None else None
        if fixed is not None and requested is not None and requested != fixed:
            raise _Refused(f"this MCP server uses session {fixed!r} only (--session)")
        return requested or who.default_session

    def _self_approve(self, profile: str) -> bool:
        home = self.gw.sup.profiles.get(profile)
        return home is not None and home.loaded and home.state.settings.approvals.self_approve

    # -- the handlers -----------------------------------------------------------
    async def _list_tools(
        self, ctx: ServerRequestContext[Any, Any], params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        kernels = True
        with contextlib.suppress(_Refused, RoutingError):
            who = self._who(ctx)
            if not who.principal.admin:
                kernels = self.gw.sup.view(self._profile(who, None)).backend == "local"
        fixed_session = self.fixed is not None and self.fixed.session is not None
        tools = tool_list(session=not fixed_session, profile=self.fixed is None, kernels=kernels)
        return ListToolsResult(tools=tools)

    async def _call_tool(
        self, ctx: ServerRequestContext[Any, Any], params: CallToolRequestParams
    ) -> CallToolResult | InputRequiredResult:
        arguments = params.arguments or {}
        try:
            who = self._who(ctx)
            if params.name == "run_command":
                return await self._run(ctx, who, _parse(CommandArgs, arguments), params)
            if params.name == "execute_code":
                return await self._run(ctx, who, _parse(CodeArgs, arguments), params)
            if params.name == "test_command":
                return await self._test(who, _parse(TestArgs, arguments))
            if params.name == "list_approvals":
                return await self._approvals(who, _parse(ListArgs, arguments))
        except _Refused as exc:
            return refused(str(exc))
        return refused(f"no tool named {params.name!r}")

    async def _test(self, who: _Who, args: TestArgs) -> CallToolResult:
        profile = self._profile(who, args.profile)
        session = self._session(who, args.session)  # the session's grants, as run_command's
        try:
            verdict = await self.gw.off_loop(
                self.gw.sup.test, profile, args.command, "api", session
            )
        except (RoutingError, ValueError) as exc:
            raise _Refused(" ".join(str(exc).split())) from None
        doc = verdict.as_dict()
        lines = [f"{verdict.outcome.value}: {verdict.cause}"]
        lines.extend(f"danger {d.pattern}: {d.segment}" for d in verdict.dangers)
        return text_result("\n".join(lines), doc)

    async def _approvals(self, who: _Who, args: ListArgs) -> CallToolResult:
        profile = self._profile(who, args.profile)
        if self.gw.cluster is not None:
            try:
                rows = await remote.open_rows(self.gw, Principal("profile", profile))
            except Exception as exc:  # the cluster's HTTPException: Redis away
                raise _Refused(getattr(exc, "detail", None) or REDIS_UNAVAILABLE) from None
        else:
            table = self.gw.sup.gate.tables().get(profile)
            open_ = table.list_open() if table is not None else []
            rows = sorted((approval_row(r) for r in open_), key=lambda r: r["created_at"])
        lines = [f"{r['approval_id']}: {r['command']} ({r['step']}: {r['reason']})" for r in rows]
        text = "\n".join(lines) if lines else "no open approval requests"
        return text_result(text, {"approvals": rows})

    async def _run(
        self,
        ctx: ServerRequestContext[Any, Any],
        who: _Who,
        args: CommandArgs | CodeArgs,
        params: CallToolRequestParams,
    ) -> CallToolResult | InputRequiredResult:
        profile = self._profile(who, args.profile)
        session = self._session(who, args.session)
        asks = who.can_elicit and (who.principal.admin or self._self_approve(profile))
        asked: set[str] = set()
        run = await self._resumed(who, profile, params, asked, asks) if who.per_request else None
        if run is None:
            if isinstance(args, CommandArgs):
                run = await self._submit(
                    profile, session, [args.command], timeout=args.timeout_s, asked_by=who.asker
                )
            else:
                run = await self._submit(
                    profile, session, [], code=[args.code], reset=args.reset, asked_by=who.asker
                )
        try:
            pending = await self._follow(run, ctx, who, asks, asked)
        except BaseException:
            # Cancelled by the client, or the connection closed: its prompt is withdrawn.
            self.gw.runs.cancel(run, TOOL_CANCELLED)
            raise
        if pending is not None:  # a per-request client asks its user, then calls again
            return consent_round(pending, run.run_id)
        doc = await self.gw.document(run)  # its output may be in the logs folder already
        return command_result(doc) if isinstance(args, CommandArgs) else cell_result(doc)

    async def _submit(
        self,
        profile: str,
        session: str,
        commands: list[str],
        *,
        code: list[str] | None = None,
        reset: bool = False,
        timeout: float | None = None,
        asked_by: str = "",
    ) -> Run:
        runs = self.gw.runs
        try:
            if self.gw.cluster is None:
                return runs.submit(
                    profile,
                    session,
                    "api",
                    commands,
                    code=code,
                    reset=reset,
                    timeout=timeout,
                    asked_by=asked_by,
                )
            self.gw.cluster.check_ready()  # docs/cluster.md: no new run without Redis
            run = runs.admit(
                profile, session, "api", commands, code=code, reset=reset, asked_by=asked_by
            )
            run.timeout = timeout
            try:
                await runs.announce(run)
            except ClusterUnavailable:
                runs.abandon(run, REDIS_UNAVAILABLE)
                raise ShuttingDown(REDIS_UNAVAILABLE) from None
            except BaseException:
                await asyncio.to_thread(runs.abandon, run, TOOL_CANCELLED)
                raise
            runs.start(run)
            return run
        except (ShuttingDown, TooManyRuns) as exc:
            raise _Refused(str(exc)) from None

    async def _resumed(
        self, who: _Who, profile: str, params: CallToolRequestParams, asked: set[str], asks: bool
    ) -> Run | None:
        """A per-request client's call again: its reply applied to the run it names, or None.

        A reply is taken only from a client that may be asked (``asks``: the admin, or a
        profile with ``approvals.self_approve``): one that was never sent the prompt
        cannot answer it by naming its ids (docs/agents.md#consent)."""
        try:
            state = state_of(params)
        except ValueError as exc:
            raise _Refused(str(exc)) from None
        if state is None:
            return None
        run = self.gw.runs.get(state[0])
        if run is None or run.profile != profile:
            raise _Refused("the request_state names no run of this profile")
        asked.add(state[1])  # asked once: a prompt still open after the reply is not asked again
        request = self.gw.sup.gate.find(state[1])
        reply = reply_of(params)
        if reply is not None and not asks:
            raise _Refused(
                "approvals.self_approve is false for this profile: its prompts are answered"
                " by the admin or at the terminal, not by this client"
            )
        if reply is not None and request is not None and request.run_id == run.run_id:
            await apply_reply(self.gw.sup.gate, request, answer_of(reply, who.by))
        return run

    async def _follow(
        self,
        run: Run,
        ctx: ServerRequestContext[Any, Any],
        who: _Who,
        asks: bool,
        asked: set[str],
    ) -> PendingApproval | None:
        """Wait for the run to finish, asking the client about each prompt it opens (once each).

        A per-request client is not asked here: the prompt comes back, for an input-required answer.
        """
        loop = asyncio.get_running_loop()
        changed = asyncio.Event()

        def poke(*_: object) -> None:
            with contextlib.suppress(RuntimeError):  # the loop is gone (shutdown)
                loop.call_soon_threadsafe(changed.set)

        def on_gate(event: str, request: PendingApproval) -> None:
            if request.run_id == run.run_id:
                poke()

        gate = self.gw.sup.gate
        gate.subscribe(on_gate)
        run.on_done(poke)
        try:
            while True:
                changed.clear()
                with run.lock:
                    finished, pending = run.finished, run.pending
                if finished:
                    return None
                if asks and pending is not None and pending.open and pending.id not in asked:
                    asked.add(pending.id)
                    if who.per_request:
                        return pending
                    await ask_client(gate, ctx.session, pending, by=who.by, related=ctx.request_id)
                    continue
                await changed.wait()
        finally:
            gate.unsubscribe(on_gate)


def _parse(model: type[_M], arguments: dict[str, Any]) -> _M:
    try:
        return model.model_validate(arguments)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}"
            for e in exc.errors()[:5]
        )
        raise _Refused(f"invalid arguments: {problems}") from None
