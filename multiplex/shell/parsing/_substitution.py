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

from multiplex.shell.parsing._argv import FLOOD, huge_count
from multiplex.shell.parsing._printed import stdin_text_after
from multiplex.shell.parsing._words import head, stages, text, word
from multiplex.shell.parsing.runs._payloads import STDIN_FILES, dollar_parens

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
# A value assigned on the line that holds code is parsed as code where bash may evaluate
# it (docs/security.md#code-carriers): the name written bare again (arithmetic: $((x)),
# ${y[x]}, ${@:x}, ${#y[x]}, let x, declare -i y; y=x, ${!x}), or its value handed to a
# command that takes a variable's name and evaluates its subscript (test -v "$x", read
# "$x", declare "$x"=1, printf -v "$x") or expanded as a prompt (${x@P}), or its value
# expanded where arithmetic evaluates it ($(( $x )), (( $x )), $[ $x ], [[ $x -eq 1 ]], an
# indexed array's subscript: ${a[$x]}, a[$x]=1).
# A plain "$x" given to any other command (echo "$x") is only its text.
_TAKES_A_NAME = re.compile(r"-v\b|-R\b|\bread\b|\bdeclare\b|\btypeset\b|\blocal\b|\bexport\b"
                           r"|\breadonly\b|\bunset\b|\blet\b|\bprintf\b|@P|\$\{!"
                           r"|\(\(|\$\[|-(?:eq|ne|lt|le|gt|ge)\b"
                           # an array's subscript holding an expansion: arithmetic, in a
                           # use (${a[$x]}) or an assignment (a[$x]=1)
                           r"|\$\{\w+\[[^\]$]*+\$|\b\w+\[[^\]$]*+\$[^\]]*+\]\+?=")  # fmt: skip
_MAX_CODE_VALUES = 16  # past these, every value holding code counts (the scan stays linear)


def _evaluated(line: str, name: str) -> bool:
    pattern = re.compile(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])")
    bare = expanded = 0
    for m in pattern.finditer(line):
        before = line[max(0, m.start() - 2) : m.start()]
        if before.endswith("$") or before == "${":
            expanded += 1
        else:
            bare += 1
        if bare >= 2:  # the assignment itself, then a bare use
            return True
    return expanded > 0 and _TAKES_A_NAME.search(line) is not None


_FOREVER = frozenset({"true", ":", "1", "[ 1 ]", "((1))", "(( 1 ))", "/bin/true"})


_BELOW = re.compile(r"<=?\s*(\d+)")


def endless_background(node: Node, src: bytes) -> bool:
    """``while true; do cmd & done``: a loop that never ends, or takes a thousand turns or
    more (``for i in $(seq 100000)``, ``for ((i=0; i<5000; i++))``), and starts a job each turn."""
    if node.type == "for_statement":
        values = " ".join(text(v, src) for v in node.children_by_field_name("value"))
        body = node.child_by_field_name("body")
        return body is not None and huge_count(values) and _backgrounds(text(body, src))
    conditions = node.children_by_field_name("condition")
    body = node.child_by_field_name("body")
    if node.type == "c_style_for_statement" and conditions and body is not None:
        bound = _BELOW.search(text(conditions[0], src))
        if bound is not None and int(bound.group(1)) >= FLOOD:
            return _backgrounds(text(body, src))
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
    elif node.children and node.children[0].type == "until":  # the grammar's while_statement
        forever = cond in ("false", "! true", "/bin/false", "((0))", "(( 0 ))", "[ ]")
    else:
        forever = cond in _FOREVER
    return forever and _backgrounds(text(body, src))


def _backgrounds(inside: str) -> bool:
    """A loop body that starts a job and does not wait for it."""
    return "&" in inside.replace("&&", "") and not re.search(r"\bwait\b", inside)


def expansion_backticks(node: Node, src: bytes) -> list[str]:
    """The commands of backticks in an expansion's default (``${x:-`cmd`}``) and of
    backticks and ``$(…)`` in its pattern (``${x#`cmd`}``, ``${x%$(cmd)}``): the grammar
    leaves them inside a plain word or pattern, where elsewhere they are substitution nodes."""
    if node.type != "expansion":
        return []
    found: list[str] = []
    for child in node.named_children:
        if child.type in ("word", "regex"):
            piece = text(child, src)
            found += [m.group(1) for m in _BACKTICK.finditer(piece)]
            if child.type == "regex":
                found += dollar_parens(piece)
    return [body for body in found if body.strip()]


def evaluated_values(line: str, assignments: Iterable[str]) -> list[str]:
    """Values assigned on the line that hold code (``x='a[$(cmd)]'``) where the line may
    evaluate them (``$((x))``, ``${x@P}``, ``test -v "$x"``, ``read "$x"`` …)."""
    coded = [
        (name, value)
        for name, _, value in (a.partition("=") for a in assignments)
        if "$(" in value or "`" in value
    ]
    if len(coded) > _MAX_CODE_VALUES:
        return [value for _, value in coded]
    return [value for name, value in coded if _evaluated(line, name.partition("[")[0])]


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
    """For a shell or ``source`` command node: what the ``<(…)`` given as its script prints,
    and the one its start-up file is (``BASH_ENV=<(…) bash -c …``: bash sources it first)."""
    found: list[str | None] = []
    for child in node.named_children:
        if child.type == "variable_assignment":
            start_up = _start_up_script(child, src)
            found.append(output_of(start_up, src) if start_up is not None else None)
            continue
        if child.type == "command_name" or child.type.endswith("_redirect"):
            continue
        if child.type == "process_substitution" and text(child, src).startswith("<"):
            found.append(output_of(child, src))
            break
        value = word(child, src)
        if not (value.startswith("-") or value in STDIN_FILES):
            break
    shown = [t for t in found if t is not None]
    return "\n".join(shown) if shown else None


_START_UP = frozenset({"BASH_ENV", "ENV"})  # the file a non-interactive bash (or sh -i) sources


def _start_up_script(assignment: Node, src: bytes) -> Node | None:
    """The ``<(…)`` of ``BASH_ENV=<(…)``: a start-up file given as a substitution's output."""
    name, value = assignment.child_by_field_name("name"), assignment.child_by_field_name("value")
    if name is None or value is None or text(name, src) not in _START_UP:
        return None
    shown = value.type == "process_substitution" and text(value, src).startswith("<")
    return value if shown else None


def spawns_itself(name: str, inner: list[tuple[str, ...]], body: str) -> bool:
    """A function body that calls its own name twice, or once in the background: a fork bomb."""
    calls = sum(1 for argv in inner if argv[:1] == (name,))
    return calls >= 2 or (calls == 1 and "&" in body.replace("&&", ""))
