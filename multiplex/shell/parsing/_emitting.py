"""The simple commands a walk emits, each wrapper unwrapped into what it runs (docs/approvals.md#parsing).

:class:`Emitter` is the record of one walk: every simple command, the script
payloads, the ``NAME=VALUE`` words and the fork bombs it meets, and the limits
(:data:`MAX_DEPTH`, :data:`MAX_SEGMENTS`) past which it stops with
:class:`OverLimit`. Emitting a command unwraps it (``sudo``, ``env``, ``xargs``…)
step by step and hands each payload (``bash -c``, ``GIT_PAGER='…'``) back to the
walk of the tree, ``shell.parsing._walker``. A pure leaf: of the package it
imports only its fellow leaves.
"""

from __future__ import annotations

import shlex

from multiplex.shell.parsing._argv import feed_upstream
from multiplex.shell.parsing._bound import printf_values, read_values, set_values
from multiplex.shell.parsing._grammar import WalkContext as _Ctx
from multiplex.shell.parsing._parsed import Redirect, SimpleCommand
from multiplex.shell.parsing._printed import stdin_text_after
from multiplex.shell.parsing.runs._everyday import runs_nothing
from multiplex.shell.parsing.runs._payloads import env_payloads
from multiplex.shell.parsing.runs._unwrap import NextStep, program_name, unwrap_step

__all__ = ["MAX_DEPTH", "MAX_SEGMENTS", "Emitter", "OverLimit"]

MAX_SEGMENTS = 25_000
MAX_DEPTH = 16


class OverLimit(Exception):
    """Raised inside the walk when a limit is passed; caught by ``parse_line``."""


class Emitter:
    """The simple commands of one line and of every payload inside it, as they are emitted."""

    def __init__(self, *, strict: bool) -> None:
        self.strict = strict  # variants are best effort: their errors are ignored
        self.commands: dict[SimpleCommand, SimpleCommand] = {}  # each to its first instance
        self.sequence: list[SimpleCommand] = []  # every command emitted, in order, repeats kept
        self.order: list[tuple[str, ...]] = []  # every argv emitted, in order
        self.payloads: dict[str, None] = {}
        self.assigned: dict[str, None] = {}  # NAME=VALUE words of the line
        self.texts: list[str] = []  # the payloads walked as shell text (bash -c '…')
        self.fork_bombs: list[str] = []
        self.plain = False  # read as plain words (shell.parsing._plain), not by the grammar
        self.error: str | None = None
        self.over_limit: str | None = None
        self.frames = 0
        self.segments = 0

    def walktext(self, text: str, ctx: _Ctx, where: str) -> None:  # the walker's
        raise NotImplementedError

    def emit_plain(self, pipelines: list[list[tuple[tuple[str, ...], str]]], listed: bool) -> None:
        """The commands of a line of plain words (``shell.parsing._plain``), as the walk of the tree
        emits them: each list element at depth 0, each pipeline stage fed by the ones before."""
        # Frames as the walk counts them: the root, a list node if && or || is there, a
        # pipeline node, the command node.
        for pipeline in pipelines:
            frames = 1 + listed + (len(pipeline) > 1) + 1
            self.frames += frames
            upstream: tuple[str, ...] = ()
            stdin: str | None = None
            last = len(pipeline) - 1
            for stage, (argv, shown) in enumerate(pipeline):
                self._emit(argv, (), shown, _Ctx(0, (), (), upstream, stdin))
                if stage < last:  # what feeds the next stage; the last feeds none
                    upstream = feed_upstream(upstream, argv)
                    stdin = stdin_text_after(argv, stdin)
            self.frames -= frames

    def _env_code(self, assignments: list[str], ctx: _Ctx) -> None:
        """``GIT_PAGER='…'``: the value some program later runs is parsed as a command."""
        self.assigned.update(dict.fromkeys(assignments))
        for payload in env_payloads(assignments):
            self.walktext(payload, _Ctx(ctx.depth + 1, (*ctx.wrapped_by, "env")), "variable")

    def _emit(
        self,
        argv: tuple[str, ...],
        redirects: tuple[Redirect, ...],
        text: str,
        ctx: _Ctx,
        assignments: tuple[str, ...] = (),
    ) -> None:
        wrapped = ctx.wrapped_by
        upstream = ctx.upstream
        if assignments:
            self._env_code(list(assignments), ctx)
        if argv[:1] == ("read",):  # values the line binds (shell.parsing._bound)
            fed = (*redirects, *ctx.redirects)  # its own, then its loop's
            self.assigned.update(dict.fromkeys(read_values(argv, fed, ctx.stdin)))
        elif argv[:2] == ("printf", "-v"):
            self.assigned.update(dict.fromkeys(printf_values(argv)))
        elif argv[:1] == ("set",):
            self.assigned.update(dict.fromkeys(set_values(argv)))
        while True:
            cmd = SimpleCommand(argv, redirects, text, wrapped, upstream, assignments)
            self.order.append(cmd.argv)
            assignments = ()
            # A repeat is the first instance again: what a check remembers of it holds.
            self.sequence.append(self.commands.setdefault(cmd, cmd))
            self.segments += 1
            if self.segments > MAX_SEGMENTS:
                self.over_limit = f"more than {MAX_SEGMENTS} simple commands"
                raise OverLimit
            if not argv:
                return
            # An everyday command of no redirection runs nothing beyond itself.
            if not redirects and runs_nothing(cmd):
                return
            step = unwrap_step(argv, redirects, ctx.stdin)
            if step.scripts or step.shell_payloads or step.sub_commands:  # most run nothing
                self._step(step, argv, ctx, wrapped)
            if step.inner is None:
                return
            wrapped = (*wrapped, program_name(argv[0]))
            argv = step.inner
            text = shlex.join(argv)

    def _step(
        self, step: NextStep, argv: tuple[str, ...], ctx: _Ctx, wrapped: tuple[str, ...]
    ) -> None:
        carrier = (*wrapped, program_name(argv[0]))
        for script in step.scripts:
            self.payloads.setdefault(script, None)
        for payload in step.shell_payloads:
            where = f"{carrier[-1]} payload"
            self.walktext(payload, _Ctx(ctx.depth + 1, carrier), where)
        for sub in step.sub_commands:
            if ctx.depth + 1 > MAX_DEPTH:
                self.over_limit = f"nesting deeper than {MAX_DEPTH} levels"
                raise OverLimit
            self._emit(sub, (), shlex.join(sub), _Ctx(ctx.depth + 1, carrier))
