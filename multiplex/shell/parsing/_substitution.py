"""What a substitution prints and what a word becomes with it (docs/approvals.md#parsing).

``output_of`` knows the output of ``$(echo …)``, ``<(printf …)`` and decoder
pipelines (``base64 -d``, ``xxd -r``, ``rev``); ``expanded_words`` puts those
outputs into a word, so ``rm -rf $(echo /)`` is checked as ``rm -rf /``.
A pure leaf: tree-sitter nodes in, strings out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from tree_sitter import Node

from multiplex.shell.parsing._payloads import STDIN_FILES
from multiplex.shell.parsing._unwrap import stdin_text_after
from multiplex.shell.parsing._words import head, stages, text, word

__all__ = [
    "assignment",
    "endless_background",
    "evaluated_values",
    "expanded_words",
    "expansion_backticks",
    "fed_by",
    "output_of",
    "script_text",
    "spawns_itself",
]

_BACKTICK = re.compile(r"`((?:[^`\\]|\\.)*)`", re.DOTALL)
# Where bash evaluates a variable's value as arithmetic (an array subscript in it runs
# "$(…)") or as a prompt string (${x@P}): docs/security.md#code-carriers.
_EVALUATING = (
    "$((", "$[", "@P", "((", "[[", "let", "declare", "typeset", "local", "${!", "]=", "printf",
)  # fmt: skip
# ${y[x]}, ${y:x:1}: a subscript or an offset is arithmetic (a plain ${x} is not).
_EVALUATING_EXPANSION = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*[\[:]")


_FOREVER = frozenset({"true", ":", "1", "[ 1 ]", "((1))", "(( 1 ))", "/bin/true"})


def endless_background(node: Node, src: bytes) -> bool:
    """``while true; do cmd & done``: a loop that never ends and starts a job each turn."""
    conditions = node.children_by_field_name("condition")
    body = node.child_by_field_name("body")
    if node.type == "c_style_for_statement" and body is not None and not conditions:
        conditions = [body]  # for ((;;)): no condition, never ends
        forever_for = True
    else:
        forever_for = False
    if not conditions or body is None:
        return False
    cond = text(conditions[0], src).strip()
    if forever_for:
        forever = True
    elif node.type == "while_statement":
        forever = cond in _FOREVER
    else:
        forever = cond in ("false", "! true")
    inside = text(body, src)
    return forever and "&" in inside.replace("&&", "") and not re.search(r"\bwait\b", inside)


def expansion_backticks(node: Node, src: bytes) -> list[str]:
    """The commands of backticks in an expansion's default (``${x:-`cmd`}``): the grammar
    leaves them inside a plain word, where ``$(…)`` would be a substitution node."""
    if node.type != "expansion":
        return []
    words = [text(c, src) for c in node.named_children if c.type == "word"]
    return [m.group(1) for w in words for m in _BACKTICK.finditer(w) if m.group(1).strip()]


def evaluated_values(line: str, assignments: Iterable[str]) -> list[str]:
    """Values assigned on the line that hold code (``x='a[$(cmd)]'``) when the line also
    has a context that evaluates a variable's value (``$((x))``, ``${x@P}``, ``let``)."""
    out: list[str] = []
    for assigned in assignments:
        value = assigned.partition("=")[2]
        if "$(" in value or "`" in value:
            out.append(value)
    if not out:  # most lines assign nothing: no need to look for an evaluating context
        return out
    if not any(marker in line for marker in _EVALUATING) and not (
        "${" in line and _EVALUATING_EXPANSION.search(line)
    ):
        return []
    return out


def output_of(node: Node, src: bytes) -> str | None:
    """What a ``$(…)``/``<(…)`` prints, when the line shows it (``echo``, ``printf``, decoders)."""
    statements = [c for c in node.named_children if c.type != "comment"]
    if len(statements) != 1:
        return None
    only = statements[0]
    out: str | None = None
    for stage in stages(only) if only.type == "pipeline" else [only]:
        argv, own = head(stage, src)
        out = stdin_text_after(argv, own or out)
        if out is None:
            return None
    return out


def expanded_words(value: Node, src: bytes) -> list[str] | None:
    """The words a word with ``$(…)`` becomes when every substitution's output is known."""
    found: list[Node] = []
    stack = [value]
    while stack:
        child = stack.pop()
        if child.type == "command_substitution":
            found.append(child)
        elif child.type != "process_substitution":
            stack.extend(child.named_children)
    if not found:
        return None
    result = word(value, src)
    for sub in found:
        out = output_of(sub, src)
        if out is None:
            return None
        result = result.replace(text(sub, src), out.rstrip("\n"), 1)
    return [result] if value.type == "string" else result.split()


def fed_by(node: Node) -> Node | None:
    """The ``<(…)``/``>(…)`` a redirection reads from or writes into, if any."""
    return next((c for c in node.named_children if c.type == "process_substitution"), None)


def assignment(node: Node, src: bytes) -> str:
    """``NAME=VALUE`` of a variable_assignment node, the value unquoted."""
    if node.type != "variable_assignment":
        return ""
    name = node.child_by_field_name("name")
    value = node.child_by_field_name("value")
    return f"{text(name, src) if name else ''}={word(value, src) if value else ''}"


def script_text(node: Node, src: bytes) -> str | None:
    """For a shell or ``source`` command node: what the ``<(…)`` given as its script prints."""
    for child in node.named_children:
        if child.type in ("command_name", "variable_assignment") or child.type.endswith(
            "_redirect"
        ):
            continue
        if child.type == "process_substitution" and text(child, src).startswith("<"):
            return output_of(child, src)
        value = word(child, src)
        if not (value.startswith("-") or value in STDIN_FILES):
            return None
    return None


def spawns_itself(name: str, inner: list[tuple[str, ...]], body: str) -> bool:
    """A function body that calls its own name twice, or once in the background: a fork bomb."""
    calls = sum(1 for argv in inner if argv[:1] == (name,))
    return calls >= 2 or (calls == 1 and "&" in body.replace("&&", ""))
