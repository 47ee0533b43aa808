"""Hardline, dangerous-command and protected-file detection (docs/approvals.md#order-of-checks, docs/approvals.md#protected-files).

Every check runs over ALL simple commands of a parsed line (wrappers, payloads,
substitutions) and over the commands of its normalised variants, so disguise
(quoting, ``$IFS``, fullwidth letters, ``sudo``/``bash -c`` nesting) does not hide
a command. Inline script payloads (``python -c`` …) are scanned as text; shell
command strings inside them that are passed to ``system``/``subprocess``-like calls
are parsed and checked like a line of their own.

Plain ``rm FILE`` (no ``-r``/``-f``) is NOT dangerous: deleting one named file is
routine for an agent and ``rm`` refuses directories and asks for write-protected
files; ``rm -r``/``-f`` and deletes of system paths are flagged.
A pure leaf: stdlib, ``shell.parsing._parse`` and ``shell.detection._catalogue`` only.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from multiplex.shell.carriers._stdin_code import STDIN_CODE_PROGRAMS, stdin_code
from multiplex.shell.carriers._tool_code import endless_spawn
from multiplex.shell.detection._attach_checks import each_process_attach
from multiplex.shell.detection._catalogue import (
    BLOCK_DEVICE_WRITE,
    DANGEROUS,
    DELETE_SYSTEM,
    DOWNLOAD_EXEC,
    DYNAMIC_PROGRAM,
    FORK_BOMB,
    HARDLINE,
    OVER_LIMIT,
    PIPE_TO_SHELL,
    PRIVILEGE,
    SCRIPT_DESTRUCTIVE,
    SENSITIVE_WRITE,
    SQL_DESTRUCTIVE,
    UNPARSEABLE,
    Finding,
    Pattern,
)
from multiplex.shell.detection._command_checks import (
    catastrophic_path,
    dangerous_check,
    hardline_check,
    is_block_device,
    operands,
    short_flags,
)
from multiplex.shell.detection._containers import each_privileged_container
from multiplex.shell.detection._globbed import globbed_programs, is_glob_program
from multiplex.shell.detection._scripts import (
    RMTREE_HOME,
    SCRIPT_DELETE,
    fork_text,
    script_lines,
    sql_text,
)
from multiplex.shell.detection._secret_checks import (
    each_code_carrier,
    each_persistence,
    each_script_exec,
    each_secret_read,
)
from multiplex.shell.detection._supervisor_checks import each_supervisor_control
from multiplex.shell.detection._variables import each_command_variable
from multiplex.shell.detection.network._metadata import each_metadata
from multiplex.shell.detection.network._network_checks import each_downloaded_run, each_network
from multiplex.shell.detection.paths._protected import find_protected_write
from multiplex.shell.detection.paths._target_checks import (
    each_dynamic_target,
    each_target_hardline,
    each_unseen_arguments,
    each_unseen_xargs,
    find_target_hardline,
)
from multiplex.shell.detection.paths._targets import Place
from multiplex.shell.detection.paths._writes import (
    all_commands,
    each_sensitive_write,
    evidence,
    script_writes,
    sensitive,
    write_targets,
    writes_sensitive,
)
from multiplex.shell.parsing._parse import ParsedLine, SimpleCommand
from multiplex.shell.parsing._parsed import pipeline_text
from multiplex.shell.parsing.runs._unwrap import SHELLS, unwrap_step

_NOWHERE = Place()

__all__ = [
    "DANGEROUS",
    "HARDLINE",
    "Finding",
    "Pattern",
    "find_dangerous",
    "find_dangers",
    "find_hardline",
    "find_named",
    "find_protected_write",
    "write_targets",
]

_EXEC_SINKS = SHELLS | {"eval", "source", ".", "perl", "ruby", "node", "nodejs", "php", "bun"}
# (Lower-cased: the names are matched against SimpleCommand.program.)
_EXEC_SINKS |= {"lua", "luajit", "tclsh", "wish", "rscript", "r", "julia", "pwsh", "deno", "irb"}
_DOWNLOADERS = frozenset(
    {"curl", "wget", "aria2c", "fetch", "lwp-download", "http", "xh", "websocat", "nc", "ncat"}
)
_DOWNLOAD_WORD = re.compile(r"(?<![\w.-])(curl|wget|aria2c|lwp-download|websocat|nc|ncat)\b")
_SEARCHERS = frozenset({"grep", "egrep", "fgrep", "rg", "ag", "ack", "git"})
# Linear-time fork-bomb text checks: every pattern starts at a literal and no two
# quantifiers can match the same characters (docs/security.md#linear-time).
_SPAWNERS = frozenset({"xargs", "parallel"})  # the programs endless_spawn looks at
_EVERYTHING_HERE = frozenset({"*", ".", "./", "./*", ".*", "*/", "..", "../*"})


def _hardline_command(cmd: SimpleCommand) -> Pattern | None:
    targets = write_targets(cmd)
    if not cmd.argv:
        return BLOCK_DEVICE_WRITE if any(is_block_device(p) for p in targets) else None
    prog = cmd.program
    found = hardline_check(prog, cmd.argv[1:])
    if found is None and is_glob_program(prog):  # /???/r? -rf ~: rm among what it names
        found = next(
            (f for name in globbed_programs(prog) if (f := hardline_check(name, cmd.argv[1:]))),
            None,
        )
    if found is None and prog in _SPAWNERS and endless_spawn(prog, cmd.argv[1:], cmd.upstream):
        return FORK_BOMB
    chmods = prog in ("chmod", "chown", "chgrp")
    if found is None and targets and not chmods and any(is_block_device(p) for p in targets):
        return BLOCK_DEVICE_WRITE
    return found


def _cd_then_delete(commands: Sequence[SimpleCommand]) -> SimpleCommand | None:
    """``cd / && rm -rf *``: a recursive delete of everything in a system dir or home."""
    dangerous_dir = False
    for cmd in commands:
        prog, args = cmd.program, cmd.argv[1:]
        if prog in ("cd", "pushd"):
            ops = operands(args)
            dangerous_dir = not ops or ops[0] == "-" or catastrophic_path(ops[0])  # cd -: ~-
        elif (
            prog == "rm"
            and dangerous_dir
            and set(short_flags(args)) & set("rR")
            and any(t in _EVERYTHING_HERE for t in operands(args))
        ):
            return cmd
    return None


def find_hardline(
    parsed: ParsedLine, _depth: int = 0, *, place: Place | None = None
) -> Finding | None:
    """The first hardline pattern in the line (docs/approvals.md#order-of-checks step 2), or None.

    ``place`` (the turn's cwd and homes) resolves destructive targets
    (docs/security.md#resolved-targets); without it ``~`` and ``$HOME`` stand for a home.
    """
    here = place or _NOWHERE
    # The gate asks twice (step 2, then inside detection): once per decision.
    return parsed.once(
        ("hardline", _depth, here), lambda: next(_each_hardline(parsed, _depth, here), None)
    )


# Each check yields every finding in the order the first-only finders report them:
# ``next()`` stops at the first (the gate's outcome), find_dangers takes them all.
def _each_hardline(parsed: ParsedLine, _depth: int, place: Place) -> Iterator[Finding]:
    if _depth == 0:
        targeted = find_target_hardline(parsed, place)  # cached: step 2 asked already
        if targeted is not None:
            yield targeted
            yield from each_target_hardline(parsed, place)
    else:
        yield from each_target_hardline(parsed, place)
    for cmd in all_commands(parsed):
        found = _hardline_command(cmd)
        if found is not None:
            yield Finding(found, evidence(cmd), cmd.text)
    for commands in (parsed.sequence or parsed.commands, *parsed.variant_sequences):
        hit = _cd_then_delete(commands)
        if hit is not None:
            yield Finding(DELETE_SYSTEM, " ".join(hit.argv), hit.text)
    for bomb_text in parsed.fork_bombs:
        yield Finding(FORK_BOMB, bomb_text)
    for text in (parsed.line, *parsed.variants, *parsed.script_payloads):
        bomb = fork_text(text)
        if bomb is not None:
            yield Finding(FORK_BOMB, bomb)
    for inner in script_lines(parsed, _depth):
        yield from _each_hardline(inner, _depth + 1, place)
    for payload in parsed.script_payloads:
        if RMTREE_HOME.search(payload):
            yield Finding(DELETE_SYSTEM, payload)


def _download_exec(cmd: SimpleCommand) -> Pattern | None:
    prog = cmd.program
    if prog not in _EXEC_SINKS and not prog.startswith("python"):
        # The others that run what stdin hands them (carriers._stdin_code): "code" whoever
        # pipes it, "sql" (a database client) only from a download.
        kind = (
            stdin_code(prog, cmd.argv[1:]) if prog in STDIN_CODE_PROGRAMS and cmd.upstream else None
        )
        if kind is None:
            return None
        fed = PIPE_TO_SHELL if kind == "code" else None
        return DOWNLOAD_EXEC if set(cmd.upstream) & _DOWNLOADERS else fed
    if set(cmd.upstream) & _DOWNLOADERS:
        return DOWNLOAD_EXEC
    for word in cmd.argv[1:]:
        if ("$(" in word or "`" in word or word.startswith("<(")) and _DOWNLOAD_WORD.search(word):
            return DOWNLOAD_EXEC
    if cmd.upstream and _reads_stdin(cmd):
        return PIPE_TO_SHELL
    return None


def _reads_stdin(cmd: SimpleCommand) -> bool:
    # A bare shell/interpreter (no -c, no script file) runs what it reads on stdin.
    probe = "\x00probe"
    step = unwrap_step(cmd.argv, (), probe)
    return probe in step.shell_payloads or probe in step.scripts


def _sql(cmd: SimpleCommand) -> bool:
    if cmd.program in _SEARCHERS:
        return False
    if sql_text(" ".join(cmd.argv[1:])):
        return True
    return any(sql_text(r.target) for r in cmd.redirects if r.op.startswith("<<"))


def _dangerous_command(cmd: SimpleCommand) -> Pattern | None:
    if not cmd.argv:
        return SENSITIVE_WRITE if writes_sensitive(cmd) else None
    prog = cmd.program
    # No _hardline_command here: find_dangerous comes here only once find_hardline found
    # nothing, and that looked at every command of the line with it.
    found = dangerous_check(prog, cmd.argv[1:])
    if found is None and ("$" in cmd.argv[0] or "`" in cmd.argv[0] or is_glob_program(prog)):
        found = DYNAMIC_PROGRAM  # (a glob's name is the file it matches when the line runs)
    # (Code piped or downloaded into a shell is a named pattern: _each_fed_code found it.)
    if found is None and writes_sensitive(cmd):
        found = SENSITIVE_WRITE
    if found is None and _sql(cmd):
        found = SQL_DESTRUCTIVE
    return found


def find_named(parsed: ParsedLine, place: Place | None = None) -> Finding | None:
    """The first pattern no allow rule vouches for (docs/allowlist.md#what-an-allow-rule-never-covers).

    Reverse shells, exfiltration, /dev/tcp, secret reads, persistence, privileged
    containers, code-loading variables, destructive commands with computed targets,
    programs told to run a command (``sed 1e``, ``make --eval``), inline
    interpreter code that starts programs (docs/security.md#code-carriers) and code
    piped or downloaded into a shell or interpreter.
    """
    here = place or _NOWHERE
    # The gate asks twice (allowlist step, then detection): once per decision.
    return parsed.once(("named", here), lambda: next(_each_named(parsed, here), None))


def _each_named(parsed: ParsedLine, place: Place) -> Iterator[Finding]:
    yield from each_metadata(parsed)
    yield from each_network(parsed, place)
    yield from each_secret_read(parsed, place)
    yield from each_persistence(parsed, place)
    yield from each_privileged_container(parsed, place)
    yield from each_supervisor_control(parsed, place)
    yield from each_process_attach(parsed)
    yield from each_sensitive_write(parsed, place)
    yield from each_command_variable(parsed)
    yield from each_dynamic_target(parsed, place)
    yield from each_unseen_xargs(parsed)
    yield from each_unseen_arguments(parsed)
    # docs/security.md#code-carriers: code a program is told to run is never allowlisted.
    yield from each_code_carrier(parsed)
    yield from _each_fed_code(parsed)


def _each_fed_code(parsed: ParsedLine) -> Iterator[Finding]:
    """A shell or interpreter running what a pipe or a download hands it (``curl URL |
    python3``, ``echo CODE | perl``): code that is not its words, so ``python3 *``
    never vouches for it (docs/allowlist.md#what-an-allow-rule-never-covers)."""
    commands = all_commands(parsed)
    for k, cmd in enumerate(commands):
        found = _download_exec(cmd) if cmd.argv else None
        if found is not None:
            yield Finding(found, evidence(cmd), pipeline_text(commands, k))


def find_dangerous(
    parsed: ParsedLine, _depth: int = 0, *, place: Place | None = None
) -> Finding | None:
    """The first dangerous pattern in the line (docs/approvals.md#order-of-checks step 7), or None.

    A parse error (pattern ``unparseable``), a passed limit and every hardline
    pattern count as dangerous too; ``place`` as for :func:`find_hardline`.
    """
    return next(_each_dangerous(parsed, _depth, place or _NOWHERE), None)


def _each_dangerous(parsed: ParsedLine, _depth: int, place: Place) -> Iterator[Finding]:
    if parsed.over_limit is not None:
        yield Finding(OVER_LIMIT, parsed.over_limit, parsed.line)
        return
    if parsed.error is not None:
        yield Finding(UNPARSEABLE, parsed.error, parsed.line)
    if _depth == 0:
        hard = find_hardline(parsed, _depth, place=place)  # cached: step 2 asked already
        if hard is not None:
            yield hard
            yield from _each_hardline(parsed, _depth, place)
        named = find_named(parsed, place)  # cached: the allowlist step asked already
        if named is not None:
            yield named
            yield from _each_named(parsed, place)
    else:
        yield from _each_hardline(parsed, _depth, place)
        yield from _each_named(parsed, place)
    # A wrapper like sudo is reported only when what it runs shows nothing more specific.
    escalations: list[Finding] = []
    commands = all_commands(parsed)
    for cmd in commands:
        found = _dangerous_command(cmd)
        if found is PRIVILEGE:
            escalations.append(Finding(found, evidence(cmd), cmd.text))
        elif found is not None:
            yield Finding(found, evidence(cmd), cmd.text)
    for payload in parsed.script_payloads:
        if SCRIPT_DELETE.search(payload):
            yield Finding(SCRIPT_DESTRUCTIVE, payload)
        elif sql_text(payload):
            yield Finding(SQL_DESTRUCTIVE, payload)
        if any(sensitive(t) for t in script_writes(payload)):  # open("/etc/hosts", "a")
            yield Finding(SENSITIVE_WRITE, payload)
    for inner in script_lines(parsed, _depth):
        if inner.error is None:
            found_inside = _each_dangerous(inner, _depth + 1, place)
            first = next(found_inside, None)
            if first is not None:
                yield Finding(SCRIPT_DESTRUCTIVE, inner.line)
                yield first
                yield from found_inside
    yield from each_script_exec(parsed)
    yield from each_downloaded_run(parsed)
    yield from escalations


def find_dangers(parsed: ParsedLine, place: Place | None = None) -> tuple[Finding, ...]:
    """Every pattern the line shows, once per pattern and segment, in line order.

    docs/approvals.md#what-a-prompt-shows: a human approving one danger sees them
    all. One pass over the same checks as :func:`find_dangerous`, without its stop
    at the first finding; an empty tuple exactly when that finds nothing.
    """
    # The verdict, the prompt and the record share it: once per decision.
    return parsed.once(("dangers", place), lambda: _find_dangers(parsed, place))


def _find_dangers(parsed: ParsedLine, place: Place | None) -> tuple[Finding, ...]:
    places = _places(parsed)
    seen: dict[tuple[str, str], tuple[int, Finding]] = {}
    for found in _each_dangerous(parsed, 0, place or _NOWHERE):
        at, shown = places.get(found.where) or _found_at(found.where, parsed.line)
        if shown != found.where:
            found = Finding(found.pattern, found.evidence, shown)
        seen.setdefault((found.pattern.name, shown), (at, found))
    ranked = sorted(enumerate(seen.values()), key=lambda item: (item[1][0], item[0]))
    return tuple(found for _, (_, found) in ranked)


def _places(parsed: ParsedLine) -> dict[str, tuple[int, str]]:
    """Where each command's text starts in the line, and the text to show for it.

    A nested command whose text the parser rebuilt (``find … -exec rm -f {} +``
    runs ``rm -f '{}'``) is shown as the command of the line that carries it.
    """
    line, at, carrier = parsed.line, 0, ""
    places: dict[str, tuple[int, str]] = {}
    for cmd in parsed.commands:
        start = line.find(cmd.text, at)
        if not cmd.wrapped_by and start >= 0:
            at, carrier = start, cmd.text
        shown = cmd.text if start >= 0 or not carrier else carrier
        places.setdefault(cmd.text, (at, shown))
    return places


def _found_at(segment: str, line: str) -> tuple[int, str]:
    start = line.find(segment)
    return (start if start >= 0 else len(line)), segment
