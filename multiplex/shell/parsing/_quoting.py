"""Which words of a command's text bash would take as written (docs/allowlist.md#rules).

A command's ``argv`` has its quotes removed: ``rm '*.bak'`` and ``rm *.bak`` both
give the word ``*.bak``, ``echo '$HOME'`` and ``echo $HOME`` both ``$HOME``. A rule's
literal word must cover only the first of each (bash expands the second), so
:func:`literal_words` reads the text again and tells, for each word's value, whether
every place it is written leaves nothing to expand: no glob, brace, tilde,
parameter or command substitution outside quotes, no ``$`` or backquote inside
double quotes. A word it cannot place is not literal (the caller asks). A pure leaf:
stdlib and ``_variants``.
"""

from __future__ import annotations

import re

from multiplex.shell.parsing._variants import decode_ansi_c

__all__ = ["literal_words"]

_ENDS = frozenset(" \t\n|&;<>()")
# Unquoted text that expands: a glob character, a bracket expression, a brace list or
# sequence, a parameter, arithmetic or command substitution, a tilde at a word's start
# or after "=" or ":" (an assignment's value).
_EXPANDS = re.compile(r"[*?`]|\[[^\]]+\]|\{[^}]*(?:,|\.\.)[^}]*\}|\$[^\s]|(?:^|[=:])~")


def literal_words(text: str) -> dict[str, bool]:
    """Each word's value in ``text`` (one simple command) and whether every place it is
    written is taken as written."""
    words: dict[str, bool] = {}
    value: list[str] = []
    bare: list[str] = []  # the word's unquoted characters: what may expand
    quoted_active = False  # a "$" or backquote inside double quotes
    started = False
    i, size = 0, len(text)
    while i < size:
        ch = text[i]
        if ch in _ENDS:
            if started:
                _keep(words, value, bare, quoted_active)
                value, bare, quoted_active, started = [], [], False, False
            i += 1
            continue
        started = True
        if ch == "'":
            end = _closing(text, i + 1, "'")
            value.append(text[i + 1 : end])
            bare.append(" ")  # (a break: "~" after a quote expands nothing)
            i = end + 1
        elif ch == "$" and text[i + 1 : i + 2] == "'":
            end = _closing(text, i + 2, "'", escapes=True)
            value.append(decode_ansi_c(text[i + 2 : end]))
            bare.append(" ")
            i = end + 1
        elif ch == '"':
            i += 1
            while i < size and text[i] != '"':
                inner = text[i]
                if inner == "\\" and text[i + 1 : i + 2] in ("$", "`", '"', "\\", "\n"):
                    value.append(text[i + 1])
                    i += 2
                    continue
                quoted_active = quoted_active or inner in "$`"
                value.append(inner)
                i += 1
            bare.append(" ")
            i += 1
        elif ch == "\\":
            value.append(text[i + 1 : i + 2])
            bare.append(" ")
            i += 2
        else:
            value.append(ch)
            bare.append(ch)
            i += 1
    if started:
        _keep(words, value, bare, quoted_active)
    return words


def _keep(words: dict[str, bool], value: list[str], bare: list[str], quoted: bool) -> None:
    word = "".join(value)
    literal = not quoted and _EXPANDS.search("".join(bare)) is None
    words[word] = words.get(word, True) and literal


def _closing(text: str, start: int, quote: str, *, escapes: bool = False) -> int:
    """Where the quote opened before ``start`` closes (the text's end if never)."""
    i = start
    while i < len(text) and text[i] != quote:
        i += 2 if escapes and text[i] == "\\" else 1
    return min(i, len(text))
