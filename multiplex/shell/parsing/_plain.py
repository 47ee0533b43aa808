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
``tests/shell/test_plain.py`` checks the two readings agree. A pure leaf.
"""

from __future__ import annotations

import re

__all__ = ["plain_argv", "plain_lines"]

_CHAIN = re.compile(r"[A-Za-z0-9_./:,+@%=\- |&;]+")
_LIST_OPS = re.compile(r"&&|\|\||;")

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


def plain_argv(line: str) -> tuple[str, ...] | None:
    """The argv of a line of plain words, or None (the grammar must read it)."""
    if not _PLAIN.fullmatch(line) or "==" in line:  # the grammar drops a "==" word
        return None
    words = tuple(w for w in line.split(" ") if w)
    if not words:
        return None
    first = words[0]
    # "- a=b" reads as an assignment in the grammar and "a@b" as an error: it decides.
    if not _PLAIN_FIRST.fullmatch(first) or first.rpartition("/")[2].lower() in _NOT_PLAIN_FIRST:
        return None
    return words


def plain_lines(line: str) -> list[list[tuple[tuple[str, ...], str]]] | None:
    """A list of pipelines of plain commands joined by ``&&``, ``||`` or ``;`` (``make &&
    make test``, ``cat f | head``): each pipeline's stages as (argv, text), or None.

    Every element and stage must be a line :func:`plain_argv` accepts, none empty (a
    trailing ``;``, ``a && && b`` go to the grammar), no ``&`` but in ``&&``, no ``|&``, and
    a pipeline of more than two stages only alone.
    """
    if not _CHAIN.fullmatch(line) or "==" in line:
        return None
    if "&" in line.replace("&&", "") or "|&" in line or "&&&" in line or "|||" in line:
        return None
    out: list[list[tuple[tuple[str, ...], str]]] = []
    for element in _LIST_OPS.split(line):
        stages: list[tuple[tuple[str, ...], str]] = []
        for stage in element.split("|"):
            argv = plain_argv(stage)
            if argv is None:
                return None
            stages.append((argv, stage.strip(" ")))
        out.append(stages)
    if len(out) > 1 and any(len(stages) > 2 for stages in out):
        return None  # "a | b | c && d": the grammar nests it otherwise than bash; it decides
    return out
