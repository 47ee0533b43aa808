"""Lines of plain words are read without the grammar (shell.parsing._plain): the two readings agree.

Every line of the corpora and many generated ones (lists and pipelines of plain
commands too) that ``plain_lines`` accepts must parse to the same ParsedLine as
through tree-sitter; the grammar's quirks (``- a=b``, ``a@b`` as a program, a ``==``
word, ``a | b | c && d``) are left to the grammar.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from multiplex.shell import parse_line
from multiplex.shell.parsing import _parse
from multiplex.shell.parsing._plain import plain_argv, plain_lines

CORPORA = Path(__file__).resolve().parent.parent
CHARS = "abcXYZ019_./:,+@%=-"
_SENTENCE = (
    "ls -la git push rm -rf / sudo env xargs nohup time find . .. /bin/ls kill -9 echo exec eval "
    "command builtin nice timeout 10 chroot ssh docker run -c core.pager=less npm test:unit "
    "python3 -m pip make CC=gcc a=b -o=x strace gdb busybox trap alias let mapfile history % %1 "
    "@ a:b x,y +x - -- = if then do done in IF"
)
WORDS = _SENTENCE.split()
OPERATORS = ["&&", " && ", "||", " || ", ";", " ; ", "|", " | "]


def _grammar(line: str, monkeypatch: pytest.MonkeyPatch) -> object:
    with monkeypatch.context() as patch:
        patch.setattr(_parse, "plain_lines", lambda line: None)
        return parse_line(line)


def _lines() -> list[str]:
    lines: list[str] = []
    for path in sorted(CORPORA.glob("*/corpus/*")):
        for row in path.read_text(encoding="utf-8", errors="replace").splitlines():
            lines += [row, *row.split("\t")]
    rng = random.Random(32)
    for _ in range(3000):
        words = [rng.choice(WORDS) for _ in range(rng.randint(1, 5))]
        words += ["".join(rng.choices(CHARS, k=rng.randint(1, 5))) for _ in range(2)]
        rng.shuffle(words)
        lines.append((" " * rng.randint(1, 2)).join(words))
    for _ in range(3000):
        parts = [" ".join(rng.choices(WORDS, k=rng.randint(1, 3))) for _ in range(4)]
        ops = rng.choices(OPERATORS, k=3)
        lines.append("".join(p + o for p, o in zip(parts, [*ops, ""], strict=True)))
    return list(dict.fromkeys(lines))


def test_plain_lines_parse_as_the_grammar_reads_them(monkeypatch: pytest.MonkeyPatch) -> None:
    plain = [line for line in _lines() if plain_lines(line) is not None]
    assert len(plain) > 1000  # the generated lines reach the fast path
    differ = [line for line in plain if parse_line(line) != _grammar(line, monkeypatch)]
    assert differ == []


@pytest.mark.parametrize(
    "line",
    [
        "- a=b rm -rf /",  # the grammar takes a=b for an assignment after "-"
        "a@b:c rm -rf /",  # and "a@b" as a program for an error
        "git == x",  # and drops a "==" word
        "A=1 rm -rf /",
        "if true",
        "bash script.sh",
        "/bin/sh x",
        "export X=1",
        "ls ~",
        "rm -rf $HOME",
        "ls\t-la",
        "ls # comment",
        "",
        "   ",
        "a | b | c && d",  # the grammar nests it otherwise than bash
        "sleep 9 &",
        "make ;",
        "a && && b",
        "a |& b",
        "echo ls | sh",
    ],
)
def test_lines_the_grammar_must_read(line: str) -> None:
    assert plain_lines(line) is None


def test_plain_line_is_still_unwrapped_and_judged() -> None:
    parsed = parse_line("sudo  nohup rm -rf /")
    assert plain_argv(parsed.line) == ("sudo", "nohup", "rm", "-rf", "/")
    assert [c.argv for c in parsed.commands] == [
        ("sudo", "nohup", "rm", "-rf", "/"),
        ("nohup", "rm", "-rf", "/"),
        ("rm", "-rf", "/"),
    ]
    assert parsed.commands[0].text == "sudo  nohup rm -rf /"


def test_plain_pipeline_feeds_its_stages() -> None:
    parsed = parse_line("cat notes | xargs rm -rf && echo done")
    assert [(c.argv, c.upstream) for c in parsed.commands] == [
        (("cat", "notes"), ()),
        (("xargs", "rm", "-rf"), ("cat",)),
        (("rm", "-rf"), ("cat",)),
        (("echo", "done"), ()),
    ]
