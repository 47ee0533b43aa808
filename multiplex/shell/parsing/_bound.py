"""The line with its own variables put in: ``f=~/.ssh/id_rsa; cat $f`` is read as ``cat ~/.ssh/id_rsa`` (docs/approvals.md#parsing).

A value the line binds itself (``NAME=VALUE``, ``export``/``local``/``declare``,
``for``/``select NAME in WORDS``, ``read NAME <<< WORD``) is known, so each
``$NAME`` and ``${NAME}`` of the line is replaced by it as bash would expand it:
inside double quotes as one word, unquoted split into words (never into shell
operators: ``a;b`` stays a word). A loop's words all go in at once, so
``for d in /etc /usr; do rm -rf "$d"; done`` is read as a delete of both. The
result is one more variant of the line: every check reads it besides the line
itself, so this only ever finds more. Bindings are taken wherever they stand on
the line (before or after, in any branch): an over-reading, never an under-one.

The text may grow: past :data:`GROWTH` times the line (or :data:`FLOOR`
characters), the line is not expanded but reported as such, and the gate asks.
A pure leaf: of the package it imports only its fellow leaves.
"""

from __future__ import annotations

import functools
import re
import shlex
from collections.abc import Iterable

from tree_sitter import Node

from multiplex.shell.parsing._grammar import parser
from multiplex.shell.parsing._parsed import Redirect
from multiplex.shell.parsing._words import word

__all__ = [
    "FLOOR",
    "GROWTH",
    "TooLong",
    "bindings",
    "bound_text",
    "growth_limit",
    "loop_values",
    "printf_values",
    "read_values",
    "set_values",
]

GROWTH = 4
FLOOR = 8192
# Rounds of putting values into values (b=$a/x): a chain longer than this is rare.
_ROUNDS = 3
_REFERENCE = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")
# A word of a value that means the same bare as quoted (globs stay: bash expands
# them in an unquoted expansion's words too).
_BARE = re.compile(r"[A-Za-z0-9_./~*?\[\]@%+=:,^{}-]+")
_IN_QUOTES = re.compile(r'([\\"$`])')


class TooLong(Exception):
    """The line with its values put in would pass the bound above."""


def bindings(assigned: Iterable[str], limit: int) -> dict[str, list[str]]:
    """``NAME=VALUE`` words (values unquoted) as each name's values, in order.

    ``NAME+=VALUE`` adds a value; an array element (``a[1]=x``) is left out. A
    value naming another bound variable gets its values too, up to a few levels;
    raises :class:`TooLong` when that makes them longer than ``limit`` in all.
    """
    found: dict[str, list[str]] = {}
    for item in assigned:
        name, sep, value = item.partition("=")
        name = name.removesuffix("+")
        if not sep or not (name.isidentifier() or name.isdigit() or name == "@"):
            continue
        values = found.setdefault(name, [])
        for one in _elements(value):
            if one not in values:
                values.append(one)
    budget = [limit - sum(len(v) for values in found.values() for v in values)]
    for _ in range(_ROUNDS):
        changed = False
        for name, values in found.items():
            put = functools.partial(_joined, found, own=name, budget=budget)
            resolved = [_REFERENCE.sub(put, v) for v in values]
            if resolved != values:
                found[name] = resolved
                changed = True
        if not changed:
            break
    return found


def _elements(value: str) -> list[str]:
    """An array's elements (``(a "b c")``), or the value itself."""
    if not (value.startswith("(") and value.endswith(")")):
        return [value]
    try:
        return shlex.split(value[1:-1])
    except ValueError:  # an unbalanced quote: its words as they stand
        return value[1:-1].split()


def _joined(found: dict[str, list[str]], m: re.Match[str], *, own: str, budget: list[int]) -> str:
    # PATH=$PATH:x: a value's own name is the value before, not this one.
    name = m.group(1) or m.group(2)
    values = found.get(name) if name != own else None
    if not values:
        return m.group(0)
    put = " ".join(values)
    budget[0] -= len(put)
    if budget[0] < 0:
        raise TooLong
    return put


def bound_text(line: str, bound: dict[str, list[str]]) -> str | None:
    """``line`` with every ``$NAME``/``${NAME}`` of a name in ``bound`` replaced; None if none is.

    Raises :class:`TooLong` past the bound on growth.
    """
    if not bound or "$" not in line:
        return None
    src = line.encode("utf-8", "surrogatepass")
    edits: list[tuple[int, int, bytes]] = []
    limit = growth_limit(len(src))
    size = len(src)
    # Each node with the name whose assignment it stands in: PATH="$PATH:x" keeps its $PATH.
    stack: list[tuple[Node, str]] = [(parser().parse(src).root_node, "")]
    while stack:
        node, own = stack.pop()
        name = _reference(node, src)
        if name is None or name not in bound or name == own:
            if node.type == "variable_assignment" and (left := node.child_by_field_name("name")):
                own = _bytes(left, src).decode("utf-8", "surrogatepass")
            stack.extend((child, own) for child in node.children)
            continue
        values = bound[name]
        quoted = _quoted(node)
        put = (_in_quotes(values) if quoted else _split(values)).encode("utf-8", "surrogatepass")
        size += len(put) - (node.end_byte - node.start_byte)
        if size > limit:
            raise TooLong
        edits.append((node.start_byte, node.end_byte, put))
    if not edits:
        return None
    edits.sort()
    out: list[bytes] = []
    at = 0
    for start, end, put in edits:
        out += (src[at:start], put)
        at = end
    out.append(src[at:])
    return b"".join(out).decode("utf-8", "surrogatepass")


# What may follow the name in ${NAME…} for the expansion to give (part of) its value:
# ${f}, ${f:-x}, ${f%.pub}, ${f/a/b}, ${f^^}, ${f@Q}, ${a[@]} (not ${#f}, ${!f}).
_AFTER_NAME = frozenset(b"}:-=?%#/^,@[+")


def growth_limit(size: int) -> int:
    """How long a text of ``size`` may become with its values put in."""
    return max(GROWTH * size, FLOOR)


def _reference(node: Node, src: bytes) -> str | None:
    """The name a ``$NAME`` or ``${NAME…}`` expansion gives the value of; None for any other node.

    ``${NAME:-w}``, ``${NAME%p}``, ``${NAME[i]}`` … count as the whole value: more than
    bash gives, never less (a check reads ``~/.ssh/id_rsa`` where bash would read
    ``~/.ssh/id_rsa`` without a suffix).
    """
    kind = node.type
    if kind not in ("simple_expansion", "expansion") or not node.named_child_count:
        return None
    first = node.named_children[0]
    if first.type == "subscript":  # ${a[@]}, ${a[0]}
        first = first.child_by_field_name("name") or first
    name = _bytes(first, src)
    if first.type == "special_variable_name" and name in (b"@", b"*"):
        name = b"@"  # "$@", $*: every positional parameter
    elif first.type != "variable_name":
        return None
    if kind == "expansion":
        written = _bytes(first, src)
        after = node.start_byte + 2 + len(written)
        if src[node.start_byte + 2 : after] != written or src[after] not in _AFTER_NAME:
            return None
    return name.decode("utf-8", "surrogatepass")


def _bytes(node: Node, src: bytes) -> bytes:
    return src[node.start_byte : node.end_byte]


def _quoted(node: Node) -> bool:
    """Whether the expansion stands inside double quotes or a here-document (one word)."""
    parent = node.parent
    while parent is not None and parent.type == "concatenation":
        parent = parent.parent
    return parent is not None and parent.type in ("string", "heredoc_body", "heredoc_content")


def _in_quotes(values: list[str]) -> str:
    if len(values) == 1 and _SUBSTITUTION.fullmatch(values[0]):
        return values[0]
    # Several values (a loop's words, an array) as several quoted words: "$f" -> "a" "b".
    return '" "'.join(_IN_QUOTES.sub(r"\\\1", v) for v in values)


# A value that is one substitution ($(…) or `…`) goes in as written: what it prints is
# what bash would put in, and the substitution is parsed and checked where it lands.
_SUBSTITUTION = re.compile(r"\$\((?s:.*)\)|`[^`]*`")


def _split(values: list[str]) -> str:
    if len(values) == 1 and _SUBSTITUTION.fullmatch(values[0]):
        return values[0]
    words = [w for v in values for w in v.split()]
    return " ".join(w if _BARE.fullmatch(w) else "'" + w.replace("'", "'\\''") + "'" for w in words)


def loop_values(node: Node, src: bytes) -> list[str]:
    """``NAME=WORD`` for each word of a ``for``/``select NAME in WORDS`` loop (unquoted)."""
    name = node.child_by_field_name("variable")
    if name is None:
        return []
    head = _bytes(name, src).decode("utf-8", "surrogatepass")
    return [f"{head}={word(value, src)}" for value in node.children_by_field_name("value")]


# read's options that take a value (bash's builtin).
_READ_VALUED = frozenset("adinNptu")


def printf_values(argv: tuple[str, ...]) -> list[str]:
    """``NAME=TEXT`` for ``printf -v NAME FORMAT ARGS…``: the arguments (or the format) as the text."""
    if len(argv) < 4 or argv[1] != "-v":
        return []
    return [f"{argv[2]}={' '.join(argv[4:]) or argv[3]}"]


def read_values(
    argv: tuple[str, ...], redirects: Iterable[Redirect], fed: str | None = None
) -> list[str]:
    """``NAME=TEXT`` for each name ``read NAME… <<< TEXT`` sets (each gets the whole text);
    ``read -a NAME`` makes NAME an array of the text's words. The text is its own
    here-string or here-document, else the one of the loop it reads in (``while read f;
    do …; done <<< TEXT``), else what the line pipes into it (``fed``); from a text of
    several lines each name also gets each line, as the loop's turns do."""
    text = next((r.target for r in redirects if r.op in _FEEDS), fed)
    if text is None:
        return []
    lines = [ln for ln in text.splitlines() if ln.strip()][:_MAX_LINES]
    texts = [text, *lines] if len(lines) > 1 else [text]
    return [v for each in texts for v in _read_one(argv, each)]


def _read_one(argv: tuple[str, ...], text: str) -> list[str]:
    names: list[str] = []
    args = iter(argv[1:])
    for arg in args:
        if arg.startswith("-") and len(arg) > 1 and not names:
            if arg[-1] in _READ_VALUED:
                value = next(args, None)
                if arg[-1] == "a" and value is not None:
                    return [f"{value}=({text})"]
            continue
        names.append(arg)
    return [f"{n}={text}" for n in names or ["REPLY"]]


# Redirects that feed ``read`` a text the line shows; the lines of one read, at most.
_FEEDS = frozenset({"<<<", "<<", "<<-"})
_MAX_LINES = 64


def set_values(argv: tuple[str, ...]) -> list[str]:
    """``@=WORD`` and ``N=WORD`` for ``set -- WORDS`` (or ``set WORDS``): the positional
    parameters ``"$@"``, ``$*`` and ``$1``… give."""
    args = list(argv[1:])
    if "--" in args:
        words = args[args.index("--") + 1 :]
    elif args and not args[0].startswith(("-", "+")):
        words = args
    else:
        return []
    return [f"@={w}" for w in words] + [f"{i}={w}" for i, w in enumerate(words[:9], 1)]
