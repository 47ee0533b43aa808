"""Shell command lines parsed into the simple commands they would run (docs/approvals.md#parsing).

``parse_line`` (tree-sitter bash) returns every simple command of a line: stages,
list members, substitutions, wrappers with what they wrap, recursively parsed
payloads (``bash -c``, ``eval``, ``find -exec``, ``ssh host CMD``, text fed into a
shell). Never raises: errors go in ``ParsedLine.error``, limits in ``over_limit``.
Here: the limits on the whole line, plain lines read without the grammar, and the
normalised variants merged in; the walk of the tree is ``shell.parsing._walker``,
the commands it emits ``shell.parsing._emitting``. A pure leaf: of the package it
imports only its fellow leaves.
"""

from __future__ import annotations

from multiplex.shell.parsing._argv import feed_upstream
from multiplex.shell.parsing._bound import GROWTH, TooLong, bindings, bound_text, growth_limit
from multiplex.shell.parsing._emitting import MAX_DEPTH, MAX_SEGMENTS, OverLimit
from multiplex.shell.parsing._grammar import WalkContext as _Ctx
from multiplex.shell.parsing._parsed import ParsedLine, Redirect, SimpleCommand
from multiplex.shell.parsing._plain import Pipelines, plain_lines
from multiplex.shell.parsing._substitution import evaluated_values
from multiplex.shell.parsing._variants import (
    normalised_variants,
    renamed_programs,
    unquote_words,
)
from multiplex.shell.parsing._walker import Walker
from multiplex.shell.parsing.runs._everyday import runs_nothing
from multiplex.shell.parsing.runs._written import written_then_run

__all__ = [
    "MAX_CHARS",
    "MAX_DEPTH",
    "MAX_PIPES",
    "MAX_SEGMENTS",
    "ParsedLine",
    "Redirect",
    "SimpleCommand",
    "parse_line",
]

MAX_CHARS = 128_000
MAX_PIPES = 512


def _walk(line: str, *, strict: bool, plain: Pipelines | bool | None = True) -> Walker:
    """The walk of ``line``; ``plain``: its plain reading when already made (True: not yet)."""
    walker = Walker(strict=strict)
    try:
        if plain is True:
            plain = plain_lines(line)
        if plain:  # plain words: what the grammar would give, without it
            walker.emit_plain(plain, listed=plain.listed)
            walker.plain = True
        else:
            walker.walktext(line, _Ctx(0), "command line")
        if walker.assigned:  # x='a[$(cmd)]'; echo $((x))
            for value in evaluated_values(line, walker.assigned):
                walker.walktext(value, _Ctx(1, ("arithmetic",)), "evaluated variable")
        if len(walker.sequence) > 1:  # echo 'rm -rf ~' > x.sh && bash x.sh
            shell, scripts = written_then_run(tuple(walker.sequence))
            for text in shell:
                walker.walktext(text, _Ctx(1, ("file",)), "file written on the line")
            for script in scripts:
                walker.payloads.setdefault(script, None)
    except OverLimit:
        pass
    except RecursionError:
        walker.over_limit = f"nesting deeper than {MAX_DEPTH} levels"
    return walker


def parse_line(line: str) -> ParsedLine:
    """Parse one command line; never raises (docs/approvals.md#parsing)."""
    if len(line) > MAX_CHARS:
        return ParsedLine(line, (), over_limit=f"longer than {MAX_CHARS} characters")
    # The grammar's time grows faster than linearly with pipeline stages: bound them first.
    if line.count("|") > MAX_PIPES:
        return ParsedLine(line, (), over_limit=f"more than {MAX_PIPES} '|' characters")
    plain = plain_lines(line)
    if plain is not None:
        everyday = _everyday_line(line, plain)
        if everyday is not None:
            return everyday
    walker = _walk(line, strict=True, plain=plain)
    variants = normalised_variants(line)
    if "hash" in line:  # hash -p /bin/rm ls; ls -rf ~
        variants += tuple(v for v in renamed_programs(line) if v not in variants)
    error = walker.error
    if walker.assigned and "$" in line:  # f=~/.ssh/id_rsa; cat $f (docs/approvals.md#parsing)
        try:
            bound = bindings(walker.assigned, growth_limit(len(line)))
            more = [bound_text(text, bound) for text in (line, *walker.texts)]
        except TooLong:
            more = []
            error = error or f"its variables expand to more than {GROWTH} times the line"
        variants += tuple(v for v in dict.fromkeys(more) if v is not None and v not in variants)
    primary = walker.commands
    extra: dict[SimpleCommand, None] = {}
    sequences: list[tuple[SimpleCommand, ...]] = []
    bombs = list(walker.fork_bombs)
    payloads = dict(walker.payloads)
    requoted = unquote_words(line) if variants else line
    for variant in variants:
        if variant == requoted:
            # Only single-word quotes/escapes removed: the grammar already unquoted
            # those words exactly this way, so a second parse would add nothing.
            continue
        other = _walk(variant, strict=False)
        new = [cmd for cmd in other.commands if cmd not in primary]
        if new:
            extra.update(dict.fromkeys(new))
            sequences.append(tuple(other.sequence))
        bombs.extend(b for b in other.fork_bombs if b not in bombs)
        payloads.update(other.payloads)
    return ParsedLine(
        line=line,
        commands=tuple(primary),
        variants=variants,
        script_payloads=tuple(payloads),
        error=error,
        over_limit=walker.over_limit,
        variant_commands=tuple(extra),
        fork_bombs=tuple(bombs),
        variant_sequences=tuple(sequences),
        sequence=tuple(walker.sequence),
        plain=walker.plain and not walker.texts and all(v == requoted for v in variants),
    )


def _everyday_line(line: str, pipelines: Pipelines) -> ParsedLine | None:
    """The parse of a plain line whose every command is an everyday one, or None.

    What the walk gives such a line, without it (``tests/shell/test_plain.py`` checks
    the two agree on every line of the tests): each command as the walk emits it, fed
    by the stages before it; an everyday command (``shell.parsing.runs._everyday``)
    runs nothing beyond itself, binds no value and writes no file another command
    runs. awk (its code is read as a script), ``hash`` (it renames programs) and a
    variant other than the line with its quotes removed go through the walk.
    """
    if "hash" in line:
        return None
    if len(pipelines) == 1 and len(pipelines[0]) == 1:  # most lines: one command
        argv, shown = pipelines[0][0]
        cmd = SimpleCommand(argv, (), shown)
        if not runs_nothing(cmd):
            return None
        return _everyday_parsed(line, (cmd,), (cmd,))
    commands: dict[SimpleCommand, SimpleCommand] = {}
    sequence: list[SimpleCommand] = []
    for pipeline in pipelines:
        upstream: tuple[str, ...] = ()
        last = len(pipeline) - 1
        for stage, (argv, shown) in enumerate(pipeline):
            cmd = SimpleCommand(argv, (), shown, (), upstream)
            if not runs_nothing(cmd):
                return None
            sequence.append(commands.setdefault(cmd, cmd))
            if stage < last:
                upstream = feed_upstream(upstream, argv)
    if len(sequence) > MAX_SEGMENTS:
        return None
    return _everyday_parsed(line, tuple(commands), tuple(sequence))


def _everyday_parsed(
    line: str, commands: tuple[SimpleCommand, ...], sequence: tuple[SimpleCommand, ...]
) -> ParsedLine | None:
    # What normalised_variants gives such a line: nothing without quotes (plain words hold
    # no escape, "$" or "{"); with them, the line with its words' quotes removed.
    variants: tuple[str, ...] = ()
    if "'" in line or '"' in line:
        if "IFS" in line or "{" in line or "\\" in line:
            return None  # ($IFS, a brace word, an escape inside quotes: the walk reads them)
        unquoted = unquote_words(line)
        variants = (unquoted,) if unquoted != line else ()
    return ParsedLine(line, commands, variants, sequence=sequence, plain=True)
