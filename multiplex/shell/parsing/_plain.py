"""Lines of plain words, read without the grammar (docs/approvals.md#parsing).

Most lines an agent sends are one program and its words: ``git push origin
main``, ``ls -la src``. When every character is a letter, a digit or one of
``_ . / : , + @ % = -`` (the first word: a letter, digit, ``_ . /``, then ``-`` too)
and words are separated by spaces,
bash sees exactly the words ``line.split(" ")`` gives, with no quote, escape,
expansion, glob, redirection, operator or comment to read; tree-sitter returns
one ``command`` node whose words are those texts. ``plain_argv`` returns that
argv, or None whenever anything else could be meant, so that the grammar reads
the line: a first word that is a reserved word, a builtin
that declares, a shell or ``source`` (their scripts are read from the node).
A word may also hold quoted parts the shell reads literally (``-m 'wip 3'``,
``'{print $1}'``, ``"a b"``): printable ASCII, and inside double quotes none of
``$ ` \\ !``; the program word stays unquoted. Operators and spaces are then looked
for with every quoted part masked, and each word is its text with the quotes
removed, as the grammar's ``word`` gives it.
``tests/shell/test_plain.py`` checks the two readings agree. A pure leaf.
"""

from __future__ import annotations

import re

__all__ = ["Pipelines", "plain_argv", "plain_lines"]

_CHAIN = re.compile(r"[A-Za-z0-9_./:,+@%=\- |&;]+")
_LIST_OPS = re.compile(r"&&|\|\||;")
_LISTED = re.compile(r"&&|\|\|")  # the grammar makes a list node of these (";" stays flat)


class Pipelines(list[list[tuple[tuple[str, ...], str]]]):
    """The pipelines of a plain line, each stage as (argv, text); ``listed``: joined by ``&&``
    or ``||`` somewhere (outside quotes), where the grammar makes a list node."""

    listed: bool = False


_PLAIN = re.compile(r"[A-Za-z0-9_./:,+@%=\- ]+")
# The program word: fewer characters (the grammar reads "a@b" there as an error).
_PLAIN_FIRST = re.compile(r"[A-Za-z0-9_./][A-Za-z0-9_./-]*")
# First words the grammar reads as something other than a command name, or whose
# command the walker reads from the node (declarations, shells, source).
_NOT_PLAIN_FIRST = frozenset(
    {
        "if", "then", "else", "elif", "fi", "case", "esac", "for", "select", "while",
        "until", "do", "done", "in", "function", "time", "coproc",
        "export", "declare", "typeset", "local", "readonly", "unset",
        "sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "rbash", "yash", "fish", "csh",
        "tcsh", "source", ".",
    }
)  # fmt: skip


_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"")
# What a quoted word may hold and still be read here: printable ASCII; in double quotes
# nothing the shell expands or unescapes there ($ ` \) and no "!".
_SINGLE_BODY = re.compile(r"[ -&(-~]*")
_DOUBLE_BODY = re.compile(r"[ #%-\[\]-_a-~]*")
_UNQUOTE = re.compile(r"'([^']*)'|\"([^\"]*)\"")


def _masked(line: str) -> str | None:
    """``line`` with each quoted part replaced by as many ``x`` (the same length), or None
    when a quoted part holds what only the grammar reads. An unmatched quote stays."""
    parts: list[str] = []
    at = 0
    for m in _QUOTED.finditer(line):
        quoted = m[0]
        body = quoted[1:-1]
        if not (_SINGLE_BODY if quoted[0] == "'" else _DOUBLE_BODY).fullmatch(body):
            return None
        parts += (line[at : m.start()], "x" * len(quoted))
        at = m.end()
    parts.append(line[at:])
    return "".join(parts)


def _unquoted(word: str) -> str:
    return (
        _UNQUOTE.sub(lambda m: m[1] if m[1] is not None else m[2], word)
        if "'" in word or '"' in word
        else word
    )


def plain_argv(line: str) -> tuple[str, ...] | None:
    """The argv of a line of plain words, or None (the grammar must read it)."""
    if not _PLAIN.fullmatch(line) or "==" in line:  # the grammar drops a "==" word
        return None
    return _plain_words(line)


def _plain_words(line: str) -> tuple[str, ...] | None:
    # (line: plain characters only, its one blank the space: split() splits on spaces alone)
    words = tuple(line.split())
    if not words or not _plain_first(words[0]):
        return None
    return words


def _plain_first(first: str) -> bool:
    # "- a=b" reads as an assignment in the grammar and "a@b" as an error: it decides.
    return bool(_PLAIN_FIRST.fullmatch(first)) and (
        first.rpartition("/")[2].lower() not in _NOT_PLAIN_FIRST
    )


def _quoted_argv(stage: str, masked: str) -> tuple[str, ...] | None:
    """:func:`plain_argv` of a stage whose quoted words are read as the grammar reads them
    (``masked``: the stage with their insides masked, as :func:`_masked` makes it)."""
    if not _PLAIN.fullmatch(masked):
        return None
    words: list[str] = []
    at = 0
    for part in masked.split(" "):
        if part:
            words.append(_unquoted(stage[at : at + len(part)]))
        at += len(part) + 1
    # The program word as plain_argv wants it, unquoted (a quote there: the grammar decides).
    if not words or words[0] != masked.lstrip(" ").partition(" ")[0]:
        return None
    return tuple(words) if _plain_first(words[0]) else None


def plain_lines(line: str) -> Pipelines | None:
    """A list of pipelines of plain commands joined by ``&&``, ``||`` or ``;`` (``make &&
    make test``, ``cat f | head``): each pipeline's stages as (argv, text), or None.

    Every element and stage must be a line :func:`plain_argv` accepts, none empty (a
    trailing ``;``, ``a && && b`` go to the grammar), no ``&`` but in ``&&``, no ``|&``, and
    a pipeline of more than two stages only alone. A word may hold single- or
    double-quoted parts (``-m 'wip 3'``) whose insides the shell reads literally: what
    the operators and spaces split is then read with those insides masked.
    """
    if "==" in line:  # the grammar drops a "==" word
        return None
    masked = _masked(line) if "'" in line or '"' in line else line
    if masked is None or not _CHAIN.fullmatch(masked):
        return None
    out = Pipelines()
    if "|" not in masked and "&" not in masked and ";" not in masked:
        # One stage alone (most lines): what the loop below makes of it, without the splits
        # (_CHAIN matched, and no operator: the line is _PLAIN's, with no "==").
        argv = _plain_words(line) if masked == line else _quoted_argv(line, masked)
        if argv is None:
            return None
        out.listed = False
        out.append([(argv, line.strip(" "))])
        return out
    if "&" in masked.replace("&&", "") or "|&" in masked or "&&&" in masked or "|||" in masked:
        return None
    out.listed = bool(_LISTED.search(masked))
    at = 0
    for element in _LIST_OPS.split(masked):
        stages: list[tuple[tuple[str, ...], str]] = []
        for stage in element.split("|"):
            # Only separators lie between two stages, and a stage holds none: found where it is.
            start = masked.index(stage, at)
            at = start + len(stage)
            original = line[start:at]
            argv = plain_argv(original) if stage == original else _quoted_argv(original, stage)
            if argv is None:
                return None
            stages.append((argv, original.strip(" ")))
        out.append(stages)
    if len(out) > 1 and any(len(stages) > 2 for stages in out):
        return None  # "a | b | c && d": the grammar nests it otherwise than bash; it decides
    return out
