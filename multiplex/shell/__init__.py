"""Shell command analysis: parsing, the rule language and pattern detection.

Pure: no I/O, no state, nothing of the gate, profiles, scopes or supervisor.
A line is parsed (tree-sitter-bash) into simple commands with wrappers unwrapped
and payloads parsed recursively (``_parse`` with its ``_walker`` and
``_emitting``, ``_words``, ``_unwrap``, ``_variants``, ``_parsed``; a line of
plain words without the grammar: ``_plain``);
the named patterns live in ``_catalogue`` and are found by ``_command_checks``
(one argv) and ``_detection`` (a whole line), after ``_inert`` has told apart the
lines none of them can find anything in; options are read as each program
reads them by ``_getopt``, and what a program's options or input make it run or
write by ``_tool_code``, ``_runners`` and ``_sed``; the allow/deny rule language is
``_rules``. See docs/approvals.md#parsing and
docs/allowlist.md#rules.
"""

from multiplex.shell.carriers._options import risky_option
from multiplex.shell.detection._catalogue import Pattern
from multiplex.shell.detection._detection import (
    DANGEROUS,
    HARDLINE,
    Finding,
    find_dangerous,
    find_dangers,
    find_hardline,
    find_named,
    find_protected_write,
    write_targets,
)
from multiplex.shell.detection._inert import inert
from multiplex.shell.detection.paths._target_checks import find_other_home
from multiplex.shell.detection.paths._targets import Place
from multiplex.shell.parsing._argv import fed_text
from multiplex.shell.parsing._parse import (
    MAX_CHARS,
    MAX_DEPTH,
    MAX_SEGMENTS,
    ParsedLine,
    Redirect,
    SimpleCommand,
    parse_line,
)
from multiplex.shell.parsing._quoting import literal_words
from multiplex.shell.parsing.runs._everyday import WRITES_BY_OPTION
from multiplex.shell.rules._deny import deny_match
from multiplex.shell.rules._rules import MAX_RULE_LENGTH, Rule, RuleSet, exact_rule, parse_rule

__all__ = [
    "DANGEROUS",
    "HARDLINE",
    "MAX_CHARS",
    "MAX_DEPTH",
    "MAX_RULE_LENGTH",
    "MAX_SEGMENTS",
    "WRITES_BY_OPTION",
    "Finding",
    "ParsedLine",
    "Pattern",
    "Place",
    "Redirect",
    "Rule",
    "RuleSet",
    "SimpleCommand",
    "deny_match",
    "exact_rule",
    "fed_text",
    "find_dangerous",
    "find_dangers",
    "find_hardline",
    "find_named",
    "find_other_home",
    "find_protected_write",
    "inert",
    "literal_words",
    "parse_line",
    "parse_rule",
    "risky_option",
    "write_targets",
]
