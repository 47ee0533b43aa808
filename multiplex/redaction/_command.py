"""A command line's known values found after its shell quoting is undone (``docs/redaction.md``).

The shell joins adjacent quoted pieces into one word and removes the quoting:
``sk-alpha''SECRET``, ``"sk-al"'pha…'``, ``sk\\-alpha`` and ``$'\\x73\\x6b…'`` all
pass ``sk-alpha…`` to the program, and none holds it as written. A command's
text is read as the shell would read its quoting (a light pass, not a parser:
``$(…)`` and variables are left as they are), and again over that reading, up
to three rounds (``bash -c "printf 'sk-al''pha'"``), and wherever a known value
occurs in a reading, the quoted pieces it was read from are masked in the text
as written. Then the text goes through :func:`redact_always` as any other.
"""

from __future__ import annotations

import re

from multiplex.redaction._known import KNOWN_MASK, KnownValues
from multiplex.redaction._redactor import redact_always

__all__ = ["redact_command"]

_ROUNDS = 3
_QUOTING = re.compile(r"['\"\\]")

# One piece of shell quoting each; a piece whose closing quote is missing runs
# to the end (bash would read on past the line: masking more is the safe side).
_PIECE = re.compile(
    r"""
      (?P<plain>[^'"\\$]++|\$(?!['"]))
    | \\(?P<escaped>.)?+
    | '(?P<single>[^']*+)'?+
    | \$'(?P<ansi>(?:[^'\\]++|\\.?+)*+)'?+
    | \$?"(?P<double>(?:[^"\\]++|\\.?+)*+)"?+
    """,
    re.VERBOSE | re.DOTALL,
)
# Inside double quotes a backslash quotes only these (and joins lines before a newline).
_DOUBLE_ESCAPE = re.compile(r"\\([$`\"\\\n])")
_ANSI_ESCAPE = re.compile(
    r"\\(?:x([0-9A-Fa-f]{1,2})|u([0-9A-Fa-f]{1,4})|U([0-9A-Fa-f]{1,8})|([0-7]{1,3})|c(.)|(.)?)",
    re.DOTALL,
)
_ANSI_LETTERS = {"a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n"}
_ANSI_LETTERS.update({"r": "\r", "t": "\t", "v": "\v"})


def _ansi_char(m: re.Match[str]) -> str:
    hex2, u4, u8, octal, control, other = m.groups()
    code = hex2 or u4 or u8
    if code is not None:
        value = int(code, 16)
        return chr(value) if value <= 0x10FFFF else ""
    if octal is not None:
        return chr(int(octal, 8) & 0xFF)
    if control is not None:
        return chr(ord(control) & 0x1F)
    if other is None:
        return "\\"
    return _ANSI_LETTERS.get(other, other if other in "'\"\\?" else "\\" + other)


def _read(text: str) -> tuple[str, list[int], list[int]]:
    """The text as the shell reads its quoting, and for each character read the
    start and end in ``text`` of the piece it was read from."""
    chars: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    for m in _PIECE.finditer(text):
        start, end = m.span()
        kind = m.lastgroup
        if kind == "plain":
            chars.append(m.group())
            starts.extend(range(start, end))
            ends.extend(range(start + 1, end + 1))
            continue
        body = m.group(kind) if kind is not None else None
        if kind is None or body is None:  # a lone backslash, or one at the end
            read = "" if end - start == 2 else "\\"
        elif kind == "escaped":
            read = "" if body == "\n" else body  # backslash-newline joins lines
        elif kind == "single":
            read = body
        elif kind == "ansi":
            read = _ANSI_ESCAPE.sub(_ansi_char, body)
        else:
            read = _DOUBLE_ESCAPE.sub(lambda e: "" if e[1] == "\n" else e[1], body)
        chars.append(read)
        starts.extend([start] * len(read))
        ends.extend([end] * len(read))
    return "".join(chars), starts, ends


def _quoted_spans(text: str, known: KnownValues) -> list[tuple[int, int]]:
    """Spans of ``text`` whose reading, in some round, holds a known value."""
    found: list[tuple[int, int]] = []
    view = text
    starts: list[int] = list(range(len(text)))
    ends: list[int] = list(range(1, len(text) + 1))
    for _ in range(_ROUNDS):
        if not _QUOTING.search(view):
            break
        read, read_starts, read_ends = _read(view)
        # Back to the text as written: a character of this reading came from
        # the pieces of the last one that cover read_starts..read_ends.
        starts = [starts[s] for s in read_starts]
        ends = [ends[e - 1] for e in read_ends]
        view = read
        for first, last in known.spans(view):
            found.append((starts[first], ends[last - 1]))
    return found


def redact_command(text: str, known: KnownValues) -> str:
    """Audit-grade redaction of a command line: :func:`redact_always`, after every
    known value its shell quoting spells is masked where it is written.

    For the command in prompts, approval requests and decision records. A
    quoted piece part of which holds part of a known value is masked whole.
    """
    if known and _QUOTING.search(text):
        spans = sorted(_quoted_spans(text, known))
        if spans:
            pieces: list[str] = []
            last = 0
            for start, end in spans:
                if start < last:  # overlaps the one before: one mask for both
                    last = max(last, end)
                    continue
                pieces.append(text[last:start])
                pieces.append(KNOWN_MASK)
                last = end
            pieces.append(text[last:])
            text = "".join(pieces)
    return redact_always(text, known)
