"""The walk of a line's syntax tree: statements, pipelines, redirections and substitutions (docs/approvals.md#parsing).

:class:`Walker` parses a text with the tree-sitter grammar and descends its
nodes: lists and pipelines (each stage fed by the ones before), ``{ …; }`` and
subshells, redirections and here-documents, function bodies, ``$(…)``, backticks
and ``<(…)``/``>(…)`` (what they print or receive is a command's stdin). Each
simple command it reaches is emitted (``shell.parsing._emitting``), which hands
payloads back to :meth:`Walker.walktext`. A pure leaf: of the package it imports
only its fellow leaves.
"""

from __future__ import annotations

from tree_sitter import Node

from multiplex.shell.parsing._argv import feed_upstream
from multiplex.shell.parsing._bound import loop_values
from multiplex.shell.parsing._emitting import MAX_DEPTH, Emitter, OverLimit
from multiplex.shell.parsing._grammar import CONTAINERS, MAX_FRAMES, NESTING, parser
from multiplex.shell.parsing._grammar import WalkContext as _Ctx
from multiplex.shell.parsing._names import subscript_code
from multiplex.shell.parsing._parsed import Redirect
from multiplex.shell.parsing._printed import stdin_text_after
from multiplex.shell.parsing._substitution import (
    assignment,
    endless_background,
    expanded_words,
    expansion_backticks,
    fed_by,
    output_of,
    script_text,
    spawns_itself,
)
from multiplex.shell.parsing._words import (
    describe_error,
    flatten,
    head,
    may_substitute,
    redirect_parts,
    stages,
    text,
    word,
)
from multiplex.shell.parsing.runs._unwrap import SHELLS, program_name

__all__ = ["Walker"]

_SOURCING = SHELLS | {"source", "."}
_LOOPS = frozenset({"while_statement", "until_statement", "c_style_for_statement", "for_statement"})


class Walker(Emitter):
    """Collects the simple commands of one line and of every payload inside it."""

    def walktext(self, text: str, ctx: _Ctx, where: str) -> None:
        """Parse ``text`` and walk its tree; ``where`` names it in a syntax error."""
        if ctx.depth > MAX_DEPTH:
            self.over_limit = f"nesting deeper than {MAX_DEPTH} levels"
            raise OverLimit
        if ctx.depth:
            self.texts.append(text)
        src = text.encode("utf-8", "surrogatepass")
        root = parser().parse(src).root_node
        if root.has_error and self.error is None and self.strict:
            self.error = describe_error(root, src, where)
        self._node(root, src, ctx)

    def _misread(self, shown: str) -> None:
        """A piece of the line the grammar read otherwise than bash does: unparseable."""
        if self.error is None and self.strict:
            self.error = f"a brace read as a command: {shown[:80]}"

    def _node(self, node: Node, src: bytes, ctx: _Ctx) -> None:
        self.frames += 1
        if self.frames > MAX_FRAMES:
            self.over_limit = f"nesting deeper than {MAX_DEPTH} levels"
            raise OverLimit
        try:
            self._dispatch(node, src, ctx)
        finally:
            self.frames -= 1

    def _dispatch(self, node: Node, src: bytes, ctx: _Ctx) -> None:
        kind = node.type
        if kind in NESTING:
            if kind.endswith("_substitution"):
                # A substitution inherits the standard input of the command around it.
                ctx = _Ctx(ctx.depth + 1, ctx.wrapped_by, (), ctx.upstream, ctx.stdin)
            else:  # a subshell or { …; } keeps the redirections and stdin around it
                ctx = _Ctx(ctx.depth + 1, ctx.wrapped_by, ctx.redirects, ctx.upstream, ctx.stdin)
            if ctx.depth > MAX_DEPTH:
                self.over_limit = f"nesting deeper than {MAX_DEPTH} levels"
                raise OverLimit
        if kind == "command":
            self._command(node, src, ctx, [], node)
        elif kind == "command_substitution" and _reads_a_file(node):
            # $(< FILE): bash reads the file itself, as $(cat FILE) would
            redirect = Redirect(*redirect_parts(node.named_children[0], src, []))
            self._emit(("cat", redirect.target), (), text(node, src), ctx)
        elif kind == "redirected_statement":
            self._redirected(node, src, ctx)
        elif kind == "pipeline":
            self._pipeline(stages(node), src, ctx)
        elif kind == "list":
            for child in flatten(node, "list"):
                self._node(child, src, _Ctx(ctx.depth, ctx.wrapped_by, ctx.redirects))
        elif kind == "function_definition":
            self._function(node, src, ctx)
        elif kind in ("declaration_command", "unset_command"):
            words = [text(c, src) for c in node.children if c.type != "comment"]
            self._emit(tuple(words), ctx.redirects, text(node, src), ctx)
            self._substitutions(node, src, ctx)
            assigned = [assignment(c, src) for c in node.named_children]
            self._env_code([a for a in assigned if a], ctx)
        elif kind == "variable_assignment":
            self._substitutions(node, src, ctx)
            self._env_code([assignment(node, src)], ctx)
        else:
            if kind == "for_statement":  # for/select NAME in WORDS: NAME's values (_bound)
                self.assigned.update(dict.fromkeys(loop_values(node, src)))
            if kind in _LOOPS and endless_background(node, src):
                self.fork_bombs.append(text(node, src))
            if kind == "test_command" and ("-v" in (whole := text(node, src)) or "-R" in whole):
                for body in subscript_code(whole):  # [[ -v 'a[$(cmd)]' ]]: evaluated
                    self.walktext(body, _Ctx(ctx.depth + 1, ctx.wrapped_by), "substitution")
            if kind not in CONTAINERS and kind not in NESTING:
                self._substitutions(node, src, ctx)
                return
            for child in node.named_children:
                self._node(child, src, ctx)

    def _substitutions(self, node: Node, src: bytes, ctx: _Ctx) -> None:
        """Walk every ``$(…)``, backtick and ``<(…)`` inside a word-like node."""
        stack = [node]
        while stack:
            child = stack.pop()
            if child.type in ("command_substitution", "process_substitution"):
                self._node(child, src, ctx)
            else:
                for body in expansion_backticks(child, src):  # ${x:-`cmd`}
                    self.walktext(body, _Ctx(ctx.depth + 1, ctx.wrapped_by), "substitution")
                stack.extend(child.named_children)

    def _pipeline(self, stages: list[Node], src: bytes, ctx: _Ctx) -> None:
        upstream = ctx.upstream
        stdin = ctx.stdin
        for stage in stages:
            argv, own_stdin = head(stage, src)
            stage_ctx = _Ctx(ctx.depth, ctx.wrapped_by, ctx.redirects, upstream, own_stdin or stdin)
            emitted = len(self.order)
            self._node(stage, src, stage_ctx)
            # A compound stage ((…), { …; }, a loop, export -p): what feeds the next stage is
            # every command it ran (for i in …; do cat "$i"; done | nc …).
            for fed in [argv] if argv else self.order[emitted:]:
                upstream = feed_upstream(upstream, fed)
            stdin = stdin_text_after(argv, own_stdin or stdin)

    def _redirected(self, node: Node, src: bytes, ctx: _Ctx) -> None:
        redirects: list[Redirect] = []
        extra: list[str] = []
        tails: list[Node] = []
        fed: list[tuple[Redirect, Node]] = []
        # Every redirect, by its kind: the grammar leaves a here-string after a compound
        # command (``while …; done <<< TEXT``, ``if …; fi <<< TEXT``) without the field name.
        for child in node.children:
            if not child.type.endswith("_redirect"):
                continue
            redirects.append(Redirect(*redirect_parts(child, src, extra)))
            sub = fed_by(child)
            if sub is not None:
                fed.append((redirects[-1], sub))
            else:
                self._substitutions(child, src, ctx)
            if child.type != "heredoc_redirect":
                continue
            # The grammar nests what follows "<<EOF" (more redirects, "| sh") in it.
            for inner in child.named_children:
                if inner.type.endswith("_redirect"):
                    redirects.append(Redirect(*redirect_parts(inner, src, extra)))
                elif inner.type not in ("heredoc_start", "heredoc_body", "heredoc_end"):
                    tails.append(inner)
        body = node.child_by_field_name("body")
        in_sub = next((n for r, n in fed if ">" not in r.op), None)
        if in_sub is not None:  # "sh < <(echo CODE)": what it prints is the stdin
            ctx = self._fed_ctx(in_sub, src, ctx)
        if body is not None and body.type == "command":
            argv = self._command(body, src, ctx, redirects, node, extra)
        else:
            all_redirects = ctx.redirects + tuple(redirects)
            if body is None:
                self._emit((), all_redirects, text(node, src), ctx)
            else:
                # what a process substitution prints is its stdin too (``< <(echo CODE)``)
                body_ctx = _Ctx(ctx.depth, ctx.wrapped_by, all_redirects, ctx.upstream, ctx.stdin)
                self._node(body, src, body_ctx)
            argv = ()
        for redirect, sub in fed:
            if ">" in redirect.op:  # "echo CODE > >(sh)": the command's output feeds it
                self._into(sub, src, ctx, argv)
        heredoc = next((r.target for r in redirects if r.op.startswith("<<")), ctx.stdin)
        for tail in tails:
            if tail.type == "pipeline":
                stdin = stdin_text_after(argv, heredoc)
                tail_ctx = _Ctx(
                    ctx.depth, ctx.wrapped_by, ctx.redirects, feed_upstream((), argv), stdin
                )
                self._pipeline(stages(tail), src, tail_ctx)
            else:
                self._node(tail, src, _Ctx(ctx.depth, ctx.wrapped_by))

    def _function(self, node: Node, src: bytes, ctx: _Ctx) -> None:
        name_node = node.child_by_field_name("name")
        body = node.child_by_field_name("body")
        if body is None:
            return
        before = len(self.order)
        if any(c.type.endswith("_redirect") for c in node.children):
            # f() { sh; } <<< TEXT: the redirects apply to the body at every call
            self._redirected(node, src, ctx)
        else:
            self._node(body, src, ctx)
        name = text(name_node, src) if name_node is not None else ""
        if spawns_itself(name, self.order[before:], text(body, src)):
            self.fork_bombs.append(text(node, src))

    def _command(
        self,
        node: Node,
        src: bytes,
        ctx: _Ctx,
        redirects: list[Redirect],
        text_node: Node,
        extra: list[str] | None = None,
    ) -> tuple[str, ...]:
        argv: list[str] = []
        own = list(redirects)
        assignments: list[str] = []
        expanded: list[str] = []
        changed = False
        fed_in: list[Node] = []
        fed_out: list[Node] = []
        substitutes = may_substitute(node, src)  # one look at the bytes, not one per word
        for child in node.named_children:
            kind = child.type
            if kind == "variable_assignment":
                assignments.append(assignment(child, src))
                self._substitutions(child, src, ctx)
            elif kind.endswith("_redirect"):
                own.append(Redirect(*redirect_parts(child, src, argv)))
                sub = fed_by(child)
                if sub is None:
                    self._substitutions(child, src, ctx)
                else:
                    (fed_out if ">" in own[-1].op else fed_in).append(sub)
            elif kind != "comment":
                value = child.named_children[0] if kind == "command_name" else child
                if kind == "command_name" and text(value, src) in ("{", "}"):
                    # bash reads these as a group's braces, never as a command: a group
                    # the grammar did not take as one (``coproc { sh; } <<< …``)
                    self._misread(text(node, src))
                argv.append(word(value, src))
                fed = substitutes and value.type == "process_substitution"
                if fed and text(value, src).startswith(">"):
                    fed_out.append(value)  # "tee >(sh)"
                    continue
                if substitutes and may_substitute(value, src):
                    self._substitutions(child, src, ctx)
                    words = expanded_words(value, src)
                    if words is not None:
                        expanded.extend(words)
                        changed = True
                        continue
                expanded.append(argv[-1])
        argv.extend(extra or ())
        expanded.extend(extra or ())
        result = tuple(argv)
        for sub in fed_in:  # "sh < <(echo CODE)"
            ctx = self._fed_ctx(sub, src, ctx)
        all_redirects = ctx.redirects + tuple(own)
        self._emit(result, all_redirects, text(text_node, src), ctx, tuple(assignments))
        if changed:  # "rm -rf $(echo /)", "$(echo rm) -rf ~", "bash -c \"$(echo CODE)\""
            self._emit(
                tuple(expanded), all_redirects, text(text_node, src), ctx, tuple(assignments)
            )
        script = script_text(node, src) if result and program_name(result[0]) in _SOURCING else None
        if script is not None:  # "bash <(echo CODE)", "source <(…)"
            carrier = (*ctx.wrapped_by, program_name(result[0]))
            self.walktext(script, _Ctx(ctx.depth + 1, carrier), f"{carrier[-1]} script")
        for sub in fed_out:
            self._into(sub, src, ctx, result)
        return result

    def _fed_ctx(self, sub: Node, src: bytes, ctx: _Ctx) -> _Ctx:
        """Walk a ``<(…)`` read as stdin; the command's context gets what it prints."""
        self._node(sub, src, ctx)
        feeder = head(sub.named_children[0], src)[0] if sub.named_children else ()
        upstream = feed_upstream(ctx.upstream, feeder)
        return _Ctx(ctx.depth, ctx.wrapped_by, ctx.redirects, upstream, output_of(sub, src))

    def _into(self, sub: Node, src: bytes, ctx: _Ctx, argv: tuple[str, ...]) -> None:
        """``>(…)`` receives what the command writes: its commands' stdin is that text."""
        passes = bool(argv) and program_name(argv[0]) in ("tee", "cat")
        stdin = ctx.stdin if passes else stdin_text_after(argv, ctx.stdin)
        self._node(
            sub, src, _Ctx(ctx.depth, ctx.wrapped_by, (), feed_upstream(ctx.upstream, argv), stdin)
        )


def _reads_a_file(node: Node) -> bool:
    """``$(< FILE)``: a substitution holding one input redirection and no command."""
    named = node.named_children
    return (
        len(named) == 1
        and named[0].type == "file_redirect"
        and named[0].child_count > 0
        and (named[0].children[0].type == "<")
    )
