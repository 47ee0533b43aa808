"""The tree-sitter bash grammar as the walker of ``shell.parsing._walker`` uses it (docs/approvals.md#parsing).

One parser per thread (tree-sitter parsers are not thread-safe) and the node
kinds the walker descends into. A pure leaf.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import tree_sitter_bash
from tree_sitter import Language, Parser

from multiplex.shell.parsing._parsed import Redirect

__all__ = ["CONTAINERS", "MAX_FRAMES", "NESTING", "WalkContext", "parser"]

# Nodes whose children are simply more statements, walked in order.
CONTAINERS = frozenset(
    {
        "program",
        "compound_statement",
        "do_group",
        "if_statement",
        "elif_clause",
        "else_clause",
        "while_statement",
        "for_statement",
        "c_style_for_statement",
        "case_statement",
        "case_item",
        "negated_command",
        "subshell",
        "test_command",
        "variable_assignment",
        "variable_assignments",
    }
)
# Constructs that nest a new level for MAX_DEPTH.
NESTING = frozenset(
    {"subshell", "command_substitution", "process_substitution", "compound_statement"}
)
# Python frames are bounded separately so that no input can exhaust the stack.
MAX_FRAMES = 120


_local = threading.local()


def parser() -> Parser:
    # tree_sitter.Parser is not thread-safe: one per thread.
    parser: Parser | None = getattr(_local, "parser", None)
    if parser is None:
        parser = Parser(Language(tree_sitter_bash.language()))
        _local.parser = parser
    return parser


@dataclass(frozen=True, slots=True)
class WalkContext:
    """Where the walker is: nesting depth, wrappers, redirections and stdin around a node."""

    depth: int
    wrapped_by: tuple[str, ...] = ()
    redirects: tuple[Redirect, ...] = ()
    upstream: tuple[str, ...] = ()  # program names feeding stdin, distinct, at most MAX_UPSTREAM
    stdin: str | None = None  # text known to flow into this command's stdin
