"""Inline script code: fork-bomb text and the shell lines a script hands to system() (docs/approvals.md#order-of-checks).

``fork_text`` finds ``f(){ f|f& }`` and fork loops in plain text in linear time;
``script_lines`` parses the string literals that ``python -c``/``perl -e``/``awk``
code passes to ``system``/``subprocess``/backticks, so they are checked like a
line of their own. A pure leaf: stdlib, ``shell.parsing._parse`` and ``shell.detection._writes``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from multiplex.shell.detection._call_lines import call_lines
from multiplex.shell.detection.paths._writes import LITERAL, code_literals
from multiplex.shell.parsing._parse import ParsedLine, parse_line

__all__ = [
    "RMTREE_HOME",
    "SCRIPT_DELETE",
    "SCRIPT_EXEC",
    "SQL",
    "SQL_UNBOUNDED",
    "fork_text",
    "script_lines",
    "sql_text",
]

_MAX_SCRIPT_DEPTH = 4

_FORK_DEF = re.compile(r"\(\s*\)\s*\{")

_FORK_LOOPS = re.compile(
    r"fork\s*(?:\(\s*\)\s*)?(?:while|until)\s*(?:\(\s*)?(?:fork|1\b|true\b|!\s*0\b)"
    r"|while\s*(?:\(\s*)?(?:True|1|true)\s*(?:\)\s*)?(?::\s*)?(?:\{\s*)?(?:os\.|POSIX::)?fork"
    r"|for\s*\(\s*;\s*;\s*\)\s*(?:\{\s*)?fork"
    r"|\bloop\s*(?:do|\{)\s*(?:Process\.)?fork|\b1\s*while\s*fork\b",
)

_FORK_BODY = 256  # characters of a function body looked at (structural bombs: the walker)

_NAME_STOP = frozenset(" \t\n(){};|&")

SCRIPT_DELETE = re.compile(
    r"shutil\.rmtree|os\.(remove|unlink|rmdir|removedirs)\b|\brmSync\b|\brmdirSync\b"
    r"|\bunlinkSync\b|rm_rf|FileUtils\.rm|remove_tree|\bunlink\s*\(|File\.delete"
    r"|\brm\s*\([^()]{0,200}recursive\s*+=\s*+true"  # julia's rm(p, recursive=true)
)

# "rm_rf (" with spaces on either side: one \s* before the optional "(", one inside it,
# so no two quantifiers can take the same spaces (docs/security.md#linear-time).
# Every language's recursive delete of "/" or "~": python/perl rmtree, node rmSync/rmdirSync
# and fs.rm, perl remove_tree, Go RemoveAll, Rust remove_dir_all, Deno.remove, ruby rm_rf.
# The home or the root named by an expression rather than a literal: each alternative
# ends at a fixed text, and the call's argument must end right after it ("," or ")"),
# so ``HOME + "/x"`` is not the home (docs/security.md#hardline).
_HOME_OR_ROOT = (
    r"(?:[\w'\"()]{0,40}\.)?(?:path\.)?expanduser\(\s*['\"]~/?['\"]\s*\)|(?:pathlib\.)?Path\.home\(\s*\)"
    r"|(?:pathlib\.)?Path\(\s*['\"](?:/|~/?)['\"]\s*\)(?:\.expanduser\(\s*\))?"
    r"|os\.environ\[\s*['\"]HOME['\"]\s*\]|os\.(?:getenv|environ\.get)\(\s*['\"]HOME['\"]\s*\)"
    r"|process\.env\.HOME\b|process\.env\[\s*['\"]HOME['\"]\s*\]"
    r"|(?:require\(\s*['\"](?:node:)?os['\"]\s*\)\.|os\.)?homedir\(\s*\)"
    r"|ENV\[\s*['\"]HOME['\"]\s*\]|\$ENV\{\s*['\"]?HOME['\"]?\s*\}|Dir\.home\b"
    r"|os\.sep\b|Deno\.env\.get\(\s*['\"]HOME['\"]\s*\)"
)
RMTREE_HOME = re.compile(
    r"(?:rmtree|rmSync|rmdirSync|remove_tree|RemoveAll|remove_dir_all|Deno\.remove(?:Sync)?|\bfs\.rm"
    r"|promises\.rm|['\"]\)\.rm)"  # node's fs.promises.rm(…), require("fs/promises").rm(…)
    r"\s*\(\s*(?:['\"](/|~)['\"]|(?:" + _HOME_OR_ROOT + r")\s*[,)])"
    r"|rm_rf\s*(?:\(\s*)?(?:['\"](/|~)['\"]|(?:"
    + _HOME_OR_ROOT
    + r")\s*[,)\s;]|(?:"
    + _HOME_OR_ROOT
    + r")$)"
    # julia's rm(homedir(), recursive=true), R's unlink("~", recursive=TRUE)
    r"|\b(?:rm|unlink)\s*\(\s*(?:['\"](/|~)['\"]|(?:" + _HOME_OR_ROOT + r"))\s*,"
    r"[^()]{0,80}recursive\s*+=\s*+(?:true|TRUE|T)\b"
    # called without parentheses too (perl's rmtree "/", ruby's FileUtils.rm_r "/"): a
    # literal / or ~ that the call's argument ends at, not one an expression goes on from
    r"|\b(?:rm_r|rmtree|remove_tree|remove_dir|remove_entry(?:_secure)?)\b\s*(?:\(\s*)?"
    r"(?:['\"](/|~)['\"]|(?:" + _HOME_OR_ROOT + r"))[ \t]*+(?:[,);\n#]|$)"
    # Tcl's file delete -force / (or $env(HOME))
    r"|\bfile\s+delete\s+-force\s+(?:--\s+)?"
    r"(?:[\"{]?(/|~)[\"}]?|\$(?:::)?env\(HOME\))(?![\w./~(-])"
)
SCRIPT_EXEC = re.compile(
    r"system|exec|spawn|popen|subprocess|check_output|\bcall\b|\brun\b|child_process|`|\bqx\b|%x"
    r"|\brun_path\b"  # python's runpy.run_path("deploy.py") runs that script
    r"|\bshell\s*[\"'(<]"  # raku's shell "cmd", emacs's (shell-command "cmd")
    r"|\bsh\s*[\"'(]"  # rake's (and Ruby's FileUtils) sh "cmd"
    r"|getline|\|\s*\"|\|&\s*\""  # awk: print "cmd" | "sh", "cmd" | getline
    r"|\bopen\b[^;)]{0,200}(?:[\"']\s*-?\||\|\s*[\"'])"  # perl: open(F, "|cmd")
    r"|proc_open|\bcmd\b|Command\s*\(|[\"']\s*\.\s*!"  # php, erlang's os:cmd, deno, scala's "cmd".!
)

# Each alternative of SCRIPT_EXEC holds one of these: a C-speed test before the search.
_EXEC_WORDS = (
    "system", "exec", "spawn", "popen", "subprocess", "check_output", "call", "run",
    "child_process", "`", "qx", "%x", "getline", "|", "open", "shell", "sh", "cmd", "Command",
    "!",  # ("run" is in "run_path", "open" in "proc_open")
)  # fmt: skip
_LIST = re.compile(r"\[([^\[\]]*)\]")


def fork_text(text: str) -> str | None:
    """``f(){ f|f& }`` or a fork loop in plain text (payloads, variants), in linear time."""
    # Every alternative of _FORK_LOOPS holds "fork" and _FORK_DEF starts with "(": a
    # C-speed test first (the loops' regex has no first character to skip by).
    match = _FORK_LOOPS.search(text) if "fork" in text else None
    if match:
        return match.group(0)
    if "(" not in text:
        return None
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


def script_lines(parsed: ParsedLine, depth: int) -> Iterator[ParsedLine]:
    """Shell lines passed to system()/subprocess/backticks inside script payloads."""
    if not parsed.script_payloads:
        return iter(())
    # Hardline, deny and detection each ask for the same line: parsed once per decision.
    return iter(
        parsed.once(("script_lines", depth), lambda: tuple(_parsed_literals(parsed, depth)))
    )


def _parsed_literals(parsed: ParsedLine, depth: int) -> Iterator[ParsedLine]:
    if depth >= _MAX_SCRIPT_DEPTH:
        return
    for payload in parsed.script_payloads:
        if not any(w in payload for w in _EXEC_WORDS) or not SCRIPT_EXEC.search(payload):
            continue
        # (a line once: what a call builds may be one of the literals as written)
        literals = list(dict.fromkeys(code_literals(payload) + call_lines(payload)))
        for group in _LIST.findall(payload):
            words = [next(g for g in m.groups() if g is not None) for m in LITERAL.finditer(group)]
            if len(words) > 1:
                literals.append(" ".join(words))
        for literal in literals[:64]:
            # perl's piped open: "|cmd", "cmd|", "-|" mode strings around the command
            command = literal.strip().removeprefix("-|").removeprefix("|").removesuffix("|")
            if command.strip():
                yield parse_line(command)


SQL = re.compile(
    r"\bDROP\s+(TABLE|DATABASE|SCHEMA|VIEW|INDEX|USER|ROLE|FUNCTION|TRIGGER|COLLECTION)\b"
    r"|\bTRUNCATE\s+(TABLE\s+)?[\w.\"`\[]|\bALTER\s+TABLE\s+\S+\s+DROP\b"
    r"|\bFLUSH(ALL|DB)\b|\.dropDatabase\s*\(|\.drop(?:Collection)?\s*\("
    # MongoDB's deletes of every document: deleteMany({}), remove({})
    r"|\.(?:deleteMany|remove)\s*\(\s*\{\s*\}\s*\)",
    re.IGNORECASE,
)
SQL_UNBOUNDED = re.compile(
    r"\b(DELETE\s+FROM|UPDATE\s+[\w.\"`\[\]]+\s+SET)\b([^;]*)", re.IGNORECASE
)
_SQL_WORDS = ("drop", "truncate", "flu", "deletemany", "remove")  # in every alternative of SQL
# _SQL_WORDS and SQL_UNBOUNDED's: one of them is in every text sql_text() finds.
SQL_ANY_WORDS = ("drop", "truncate", "flu", "delete", "update", "remove")
_SQL_ANY_WORD = re.compile("|".join(SQL_ANY_WORDS))


def sql_text(text: str) -> bool:
    """SQL that drops, truncates or flushes, or deletes or updates without a WHERE."""
    # C-speed prefilter: each pattern holds one of these words (none has an i, s or k,
    # the letters IGNORECASE matches to other characters than their lower case).
    lowered = text.lower()
    if not _SQL_ANY_WORD.search(lowered):
        return False  # none of the words below: neither test can hold
    if any(w in lowered for w in _SQL_WORDS) and SQL.search(text):
        return True
    if "delete" not in lowered and "update" not in lowered:
        return False
    return any(not re.search(r"\bWHERE\b", m.group(2), re.I) for m in SQL_UNBOUNDED.finditer(text))
