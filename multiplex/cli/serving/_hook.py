"""``multiplex hook claude-code|gemini -p NAME``: an agent's pre-tool hook asks the gate (docs/agents.md).

Reads the hook's JSON on stdin, prints the agent's documented reply on stdout
and exits 0; a payload that is no tool call, or any failure to judge (a
profile that does not load included), exits 2 with one line on stderr, which
both agents treat as blocking. No other exit code: any other one lets the tool
run (docs/agents.md#exit-codes).
"""

from __future__ import annotations

import sys
from typing import Annotated, TextIO

import typer

from multiplex.cli._options import Command, Group
from multiplex.cli._state import state_of
from multiplex.supervision import MAX_HOOK_INPUT, HookAgent, answer_hook

__all__ = ["hook_app"]

hook_app = typer.Typer(
    cls=Group,
    help="Pre-tool hooks of coding agents: the profile's gate says allow, deny or ask.",
    no_args_is_help=True,
)

ProfileOpt = Annotated[str, typer.Option("-p", "--profile", help="Profile whose gate judges.")]
EXIT_REFUSED = 2  # blocking for Claude Code and Gemini CLI alike


def _answer(ctx: typer.Context, profile: str, agent: HookAgent) -> None:
    try:
        raw = sys.stdin.buffer.read(MAX_HOOK_INPUT + 1)
        sup = state_of(ctx).supervisor(profile)
        try:
            answer = answer_hook(sup, profile, raw, agent)
        finally:
            sup.close()
        if answer.refusal is None:
            _emit(sys.stdout, answer.stdout())
    except (Exception, KeyboardInterrupt) as exc:
        # Fail closed: an exit code other than 0 or 2 would let the tool run.
        detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        _emit(sys.stderr, f"multiplex hook {agent.value}: cannot judge the call: {detail}\n")
        raise typer.Exit(EXIT_REFUSED) from None
    if answer.refusal is not None:
        _emit(sys.stderr, answer.refusal + "\n")
        raise typer.Exit(EXIT_REFUSED)


def _emit(stream: TextIO, text: str) -> None:
    """``text`` as UTF-8 bytes, whatever the locale's encoding (cp1252, ascii): the agents
    read UTF-8 JSON, and a character the locale cannot write must not end the hook with
    an exit code that lets the tool run. Written at once, so a closed pipe fails here."""
    stream.flush()
    stream.buffer.write(text.encode("utf-8", "backslashreplace"))
    stream.buffer.flush()


@hook_app.command("claude-code", cls=Command)
def claude_code(ctx: typer.Context, profile: ProfileOpt) -> None:
    """Claude Code's PreToolUse hook for Bash: allow | deny | ask on stdout; runs nothing.

    Example: multiplex hook claude-code -p default < payload.json
    """
    _answer(ctx, profile, HookAgent.CLAUDE_CODE)


@hook_app.command("gemini", cls=Command)
def gemini(ctx: typer.Context, profile: ProfileOpt) -> None:
    """Gemini CLI's BeforeTool hook for run_shell_command: allow | deny on stdout; runs nothing.

    Example: multiplex hook gemini -p default < payload.json
    """
    _answer(ctx, profile, HookAgent.GEMINI)
