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
A pure leaf: stdlib, ``shell._parse`` and ``shell._catalogue`` only.
"""

from __future__ import annotations

import fnmatch
import posixpath
import re
from collections.abc import Iterator, Sequence

from multiplex.shell._catalogue import (
    BLOCK_DEVICE_WRITE,
    CLOUD_METADATA,
    DANGEROUS,
    DELETE_SYSTEM,
    DOWNLOAD_EXEC,
    DYNAMIC_PROGRAM,
    FORK_BOMB,
    HARDLINE,
    OVER_LIMIT,
    PIPE_TO_SHELL,
    PRIVILEGE,
    PROTECTED_FILE,
    SCRIPT_DESTRUCTIVE,
    SENSITIVE_WRITE,
    SQL_DESTRUCTIVE,
    UNPARSEABLE,
    Finding,
    Pattern,
)
from multiplex.shell._command_checks import (
    catastrophic_path,
    dangerous_check,
    expand_braces,
    hardline_check,
    is_block_device,
    operands,
    program,
    short_flags,
)
from multiplex.shell._parse import ParsedLine, SimpleCommand, parse_line
from multiplex.shell._unwrap import SHELLS, unwrap_step

__all__ = [
    "DANGEROUS",
    "HARDLINE",
    "Finding",
    "Pattern",
    "find_dangerous",
    "find_hardline",
    "find_protected_write",
    "write_targets",
]

_MAX_SCRIPT_DEPTH = 4
_EXEC_SINKS = SHELLS | {"eval", "source", ".", "perl", "ruby", "node", "nodejs", "php", "bun"}
_DOWNLOADERS = frozenset({"curl", "wget", "aria2c", "fetch", "lwp-download", "http", "xh"})
_DOWNLOAD_WORD = re.compile(r"(?<![\w.-])(curl|wget|aria2c|lwp-download)\b")
_SEARCHERS = frozenset({"grep", "egrep", "fgrep", "rg", "ag", "ack", "git"})
_METADATA = re.compile(
    r"169\.254\.169\.254|169\.254\.170\.2\b|metadata\.google\.internal|fd00:ec2::254"
    r"|100\.100\.100\.200|\b2852039166\b|0xa9fea9fe|0251\.0376\.0251\.0376|metadata\.azure",
    re.IGNORECASE,
)
_SQL = re.compile(
    r"\bDROP\s+(TABLE|DATABASE|SCHEMA|VIEW|INDEX|USER|ROLE|FUNCTION|TRIGGER|COLLECTION)\b"
    r"|\bTRUNCATE\s+(TABLE\s+)?[\w.\"`\[]|\bALTER\s+TABLE\s+\S+\s+DROP\b"
    r"|\bFLUSH(ALL|DB)\b|\.dropDatabase\s*\(",
    re.IGNORECASE,
)
_SQL_UNBOUNDED = re.compile(
    r"\b(DELETE\s+FROM|UPDATE\s+[\w.\"`\[\]]+\s+SET)\b([^;]*)", re.IGNORECASE
)
# Linear-time fork-bomb text checks: every pattern starts at a literal and no two
# quantifiers can match the same characters (docs/security.md#linear-time).
_FORK_DEF = re.compile(r"\(\s*\)\s*\{")
_FORK_LOOPS = re.compile(
    r"fork\s*(?:\(\s*\)\s*)?while\s*fork"
    r"|while\s*(?:\(\s*)?(?:True|1|true)\s*(?:\)\s*)?(?::\s*)?(?:\{\s*)?os\.fork"
    r"|for\s*\(\s*;\s*;\s*\)\s*(?:\{\s*)?fork",
)
_FORK_BODY = 256  # characters of a function body looked at (structural bombs: the walker)
_NAME_STOP = frozenset(" \t\n(){};|&")
_SCRIPT_DELETE = re.compile(
    r"shutil\.rmtree|os\.(remove|unlink|rmdir|removedirs)\b|\brmSync\b|\brmdirSync\b"
    r"|\bunlinkSync\b|rm_rf|FileUtils\.rm|remove_tree|\bunlink\s*\(|File\.delete"
)
_SCRIPT_EXEC = re.compile(
    r"system|exec|spawn|popen|subprocess|check_output|\bcall\b|\brun\b|child_process|`|\bqx\b|%x"
)
_LITERAL = re.compile(r"'((?:[^'\\]|\\.)*)'|\"((?:[^\"\\]|\\.)*)\"|`((?:[^`\\]|\\.)*)`", re.DOTALL)
_LIST = re.compile(r"\[([^\[\]]*)\]")
_WRITE_CALL = re.compile(
    r"write|open\s*\([^)]*['\"][wax+]|appendFile|rename|replace|unlink|remove|truncate"
    r"|rmSync|rm_rf|copy|move|symlink|chmod",
)
_SENSITIVE = (
    "~/.ssh", "~/.ssh/*", "*/.ssh/*", "/etc/*", "/etc", "/root/*", "/boot/*", "/usr/*",
    "/bin/*", "/sbin/*", "/lib*/*", "/var/spool/cron/*", "~/.gnupg/*", "~/.aws/*",
    "~/.kube/config", "~/.docker/config.json", "~/.netrc", "~/.git-credentials",
    "~/.config/fish/config.fish", "/proc/sys/*", "/sys/*",
)  # fmt: skip
_SENSITIVE_NAMES = frozenset(
    [
        ".bashrc",
        ".bash_profile",
        ".bash_login",
        ".bash_logout",
        ".profile",
        ".zshrc",
        ".zprofile",
        ".zshenv",
        ".zlogin",
        "authorized_keys",
        "authorized_keys2",
        "sudoers",
    ]
)


_EVERYTHING_HERE = frozenset({"*", ".", "./", "./*", ".*", "*/", "..", "../*"})


def _all(parsed: ParsedLine) -> tuple[SimpleCommand, ...]:
    return parsed.commands + parsed.variant_commands


def _evidence(cmd: SimpleCommand) -> str:
    # A redirection is only visible in the source text, not in argv.
    return cmd.text if cmd.writes_file or not cmd.argv else " ".join(cmd.argv)


def _home(path: str) -> str:
    return re.sub(r"^(\$\{HOME\}|\$HOME\b)", "~", path)


def write_targets(cmd: SimpleCommand) -> Iterator[str]:
    """Paths ``cmd`` writes, creates, replaces or deletes (docs/approvals.md#protected-files)."""
    for r in cmd.redirects:
        if r.writes_file or (
            r.target.startswith("/dev/") and ">" in r.op and r.target != "/dev/null"
        ):
            yield r.target
    if not cmd.argv:
        return
    prog, args = program(cmd.argv), cmd.argv[1:]
    ops = operands(args)
    flags = short_flags(args)
    if prog in ("tee", "truncate", "rm", "unlink", "shred", "rmdir", "srm", "wipe", "mv"):
        yield from (op for op in ops if not (prog == "truncate" and op.isdigit()))
    elif prog in ("cp", "install", "ln", "rsync", "scp", "link"):
        target = next(
            (a.split("=", 1)[1] for a in args if a.startswith("--target-directory=")), None
        )
        yield from ([target] if target else ops[-1:] if len(ops) > 1 or prog == "ln" else [])
    elif prog in ("sed", "gsed", "perl", "yq") and (
        "i" in flags or any(a.startswith(("--in-place", "--inplace")) for a in args)
    ):
        scripted = any(a in ("-e", "-f", "--expression", "--file") or "e" in a[1:2] for a in args)
        yield from ops if scripted and prog != "yq" else ops[1:]
    elif prog == "dd":
        yield from (a[3:] for a in args if a.startswith("of="))
    elif prog in ("chmod", "chown", "chgrp"):
        yield from ops[1:]
    elif prog in ("curl", "wget"):
        for i, arg in enumerate(args[:-1]):
            # curl -O names the file after the URL; wget -O names it.
            if arg in ("-o", "--output", "--output-document") or (arg == "-O" and prog == "wget"):
                yield args[i + 1]
    elif prog in ("vi", "vim", "nvim", "nano", "emacs", "ed", "ex", "pico", "sponge"):
        yield from ops


def _hardline_command(cmd: SimpleCommand) -> Pattern | None:
    if not cmd.argv:
        return BLOCK_DEVICE_WRITE if any(is_block_device(p) for p in write_targets(cmd)) else None
    prog = program(cmd.argv)
    found = hardline_check(prog, cmd.argv[1:])
    writes_device = any(is_block_device(p) for p in write_targets(cmd))
    if found is None and prog not in ("chmod", "chown", "chgrp") and writes_device:
        return BLOCK_DEVICE_WRITE
    return found


def _cd_then_delete(commands: Sequence[SimpleCommand]) -> SimpleCommand | None:
    """``cd / && rm -rf *``: a recursive delete of everything in a system dir or home."""
    dangerous_dir = False
    for cmd in commands:
        prog, args = program(cmd.argv), cmd.argv[1:]
        if prog in ("cd", "pushd"):
            ops = operands(args)
            dangerous_dir = not ops or catastrophic_path(ops[0])
        elif (
            prog == "rm"
            and dangerous_dir
            and set(short_flags(args)) & set("rR")
            and any(t in _EVERYTHING_HERE for t in operands(args))
        ):
            return cmd
    return None


def find_hardline(parsed: ParsedLine, _depth: int = 0) -> Finding | None:
    """The first hardline pattern in the line (docs/approvals.md#order-of-checks step 2), or None."""
    for cmd in _all(parsed):
        found = _hardline_command(cmd)
        if found is not None:
            return Finding(found, _evidence(cmd))
    for commands in (parsed.commands, parsed.variant_commands):
        hit = _cd_then_delete(commands)
        if hit is not None:
            return Finding(DELETE_SYSTEM, " ".join(hit.argv))
    if parsed.fork_bombs:
        return Finding(FORK_BOMB, parsed.fork_bombs[0])
    for text in (parsed.line, *parsed.variants, *parsed.script_payloads):
        bomb = _fork_text(text)
        if bomb is not None:
            return Finding(FORK_BOMB, bomb)
    for inner in _script_lines(parsed, _depth):
        finding = find_hardline(inner, _depth + 1)
        if finding is not None:
            return finding
    for payload in parsed.script_payloads:
        if re.search(r"rmtree\s*\(\s*['\"](/|~)['\"]|rm_rf\s*\(?\s*['\"](/|~)['\"]", payload):
            return Finding(DELETE_SYSTEM, payload)
    return None


def _fork_text(text: str) -> str | None:
    """``f(){ f|f& }`` or a fork loop in plain text (payloads, variants), in linear time."""
    match = _FORK_LOOPS.search(text)
    if match:
        return match.group(0)
    for m in _FORK_DEF.finditer(text):
        end = m.start()
        while end > 0 and text[end - 1] in " \t":
            end -= 1
        start = end
        while start > 0 and end - start < 64 and text[start - 1] not in _NAME_STOP:
            start -= 1
        name = text[start:end]
        if not name:
            continue
        close = text.find("}", m.end(), m.end() + _FORK_BODY)
        if close < 0:
            continue
        if f"{name}|{name}&" in "".join(text[m.end() : close].split()):
            return text[start : close + 1]
    return None


def _script_lines(parsed: ParsedLine, depth: int) -> Iterator[ParsedLine]:
    """Shell lines passed to system()/subprocess/backticks inside script payloads."""
    if depth >= _MAX_SCRIPT_DEPTH:
        return
    for payload in parsed.script_payloads:
        if not _SCRIPT_EXEC.search(payload):
            continue
        literals = [
            next(g for g in m.groups() if g is not None) for m in _LITERAL.finditer(payload)
        ]
        for group in _LIST.findall(payload):
            words = [next(g for g in m.groups() if g is not None) for m in _LITERAL.finditer(group)]
            if len(words) > 1:
                literals.append(" ".join(words))
        for literal in literals[:64]:
            if literal.strip():
                yield parse_line(literal)


def _download_exec(cmd: SimpleCommand) -> Pattern | None:
    prog = program(cmd.argv)
    if prog not in _EXEC_SINKS and not prog.startswith("python"):
        return None
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


def _sensitive(path: str) -> bool:
    path = _home(path.strip())
    norm = posixpath.normpath(re.sub(r"/+", "/", path)) if path else path
    if norm.rsplit("/", 1)[-1] in _SENSITIVE_NAMES:
        return True
    return any(fnmatch.fnmatchcase(norm, pattern) for pattern in _SENSITIVE)


def _sql(cmd: SimpleCommand) -> bool:
    if program(cmd.argv) in _SEARCHERS:
        return False
    texts = [" ".join(cmd.argv[1:])] + [r.target for r in cmd.redirects if r.op.startswith("<<")]
    return any(_sql_text(t) for t in texts)


def _sql_text(text: str) -> bool:
    if _SQL.search(text):
        return True
    return any(not re.search(r"\bWHERE\b", m.group(2), re.I) for m in _SQL_UNBOUNDED.finditer(text))


def _dangerous_command(cmd: SimpleCommand) -> Pattern | None:
    if not cmd.argv:
        return SENSITIVE_WRITE if any(_sensitive(p) for p in write_targets(cmd)) else None
    prog = program(cmd.argv)
    found = _hardline_command(cmd) or dangerous_check(prog, cmd.argv[1:])
    if found is None and ("$" in cmd.argv[0] or "`" in cmd.argv[0]):
        found = DYNAMIC_PROGRAM
    if found is None:
        found = _download_exec(cmd)
    if found is None and any(_sensitive(p) for p in write_targets(cmd)):
        found = SENSITIVE_WRITE
    if found is None and _sql(cmd):
        found = SQL_DESTRUCTIVE
    return found


def find_dangerous(parsed: ParsedLine, _depth: int = 0) -> Finding | None:
    """The first dangerous pattern in the line (docs/approvals.md#order-of-checks step 7), or None.

    A parse error (pattern ``unparseable``), a passed limit and every hardline
    pattern count as dangerous too.
    """
    if parsed.over_limit is not None:
        return Finding(OVER_LIMIT, parsed.over_limit)
    if parsed.error is not None:
        return Finding(UNPARSEABLE, parsed.error)
    hard = find_hardline(parsed, _depth)
    if hard is not None:
        return hard
    # A wrapper like sudo is reported only when what it runs shows nothing more specific.
    escalation: Finding | None = None
    for cmd in _all(parsed):
        found = _dangerous_command(cmd)
        if found is PRIVILEGE:
            escalation = escalation or Finding(found, _evidence(cmd))
        elif found is not None:
            return Finding(found, _evidence(cmd))
    for text in (parsed.line, *parsed.variants):
        match = _METADATA.search(text)
        if match:
            return Finding(CLOUD_METADATA, match.group(0))
    for payload in parsed.script_payloads:
        match = _SCRIPT_DELETE.search(payload) or _METADATA.search(payload)
        if match:
            pattern = CLOUD_METADATA if _METADATA.search(match.group(0)) else SCRIPT_DESTRUCTIVE
            return Finding(pattern, payload)
        if _sql_text(payload):
            return Finding(SQL_DESTRUCTIVE, payload)
    for inner in _script_lines(parsed, _depth):
        if inner.error is None and find_dangerous(inner, _depth + 1) is not None:
            return Finding(SCRIPT_DESTRUCTIVE, inner.line)
    return escalation


def _protected(path: str, patterns: Sequence[str]) -> bool:
    path = path.strip()
    if not path:
        return False
    norm = posixpath.normpath(path)
    base = norm.rsplit("/", 1)[-1]
    return any(
        fnmatch.fnmatchcase(base, p) or fnmatch.fnmatchcase(norm, p) or fnmatch.fnmatchcase(path, p)
        for p in patterns
    )


def find_protected_write(parsed: ParsedLine, protected: Sequence[str]) -> Finding | None:
    """A write to a path matching one of the ``protected`` globs (docs/approvals.md#protected-files), or None.

    A glob matches the basename or the path; writes are output redirections, ``tee``,
    ``cp``/``mv``/``install``/``ln`` destinations, ``sed -i``/``perl -i`` files,
    ``truncate``, ``dd of=``, ``chmod``/``chown`` targets, deletes and editors.
    """
    if not protected:
        return None
    for cmd in _all(parsed):
        for path in write_targets(cmd):
            for variant in expand_braces(path):
                if _protected(variant, protected):
                    return Finding(PROTECTED_FILE, _evidence(cmd))
    for payload in parsed.script_payloads:
        if not _WRITE_CALL.search(payload):
            continue
        for m in _LITERAL.finditer(payload):
            literal = next(g for g in m.groups() if g is not None)
            if _protected(literal, protected):
                return Finding(PROTECTED_FILE, payload)
    return None
