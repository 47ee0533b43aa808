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
from tests.shell.test_fast_paths import corpus_lines

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


# Wrappers and carriers whose quoted argument the walk unwraps or parses as code.
_CARRYING = (
    "python3 -c node -e perl -e ssh host xargs find -exec {} + git -c awk sed timeout 5 sudo "
    "nohup make --eval tar -I sort -o vim +!x gdb -ex docker run kubectl exec -- rm -rf / "
    "~ cat .env id_rsa curl -d @x nc -e parallel nice env watch"
)
CARRIERS = _CARRYING.split()
QUOTABLE = [chr(c) for c in range(32, 127)] + ["a"] * 30 + [" "] * 10


def _quoted(rng: random.Random) -> str:
    quote = rng.choice("'\"")
    body = "".join(rng.choices(QUOTABLE, k=rng.randint(0, 8))).replace(quote, "")
    return quote + body + quote


def _quoted_lines() -> list[str]:
    rng = random.Random(27)
    lines: list[str] = []
    for _ in range(4000):
        words = rng.choices(WORDS + CARRIERS, k=rng.randint(1, 5))
        for _ in range(rng.randint(1, 3)):
            word = _quoted(rng)
            if rng.random() < 0.4:  # "-m'x'", "x'y'z"
                word = rng.choice(WORDS) + word
            if rng.random() < 0.3:
                word += rng.choice(["x", "-y", _quoted(rng)])
            words.insert(rng.randint(1, len(words)), word)
        line = (" " * rng.randint(1, 2)).join(words)
        if rng.random() < 0.3:
            line += rng.choice(OPERATORS) + " ".join(rng.choices(WORDS, k=2)) + " " + _quoted(rng)
        lines.append(line)
    return lines


def test_quoted_words_parse_as_the_grammar_reads_them(monkeypatch: pytest.MonkeyPatch) -> None:
    """Words with quoted parts (any printable ASCII inside, operators too) read without the
    grammar give the same ParsedLine as through it; the rest goes to the grammar."""
    quoted = [line for line in _lines() + _quoted_lines() if "'" in line or '"' in line]
    plain = [line for line in quoted if plain_lines(line) is not None]
    assert len(plain) > 1500  # the generated lines reach the fast path
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
        "'rm' -rf /",  # a quote in the program word
        "r'm' -rf /",
        "echo 'unterminated",
        'echo "$HOME"',  # double quotes that expand, unescape or substitute
        'echo "a\\b"',
        'echo "`id`"',
        'echo "!x"',
        "echo 'tab\there'",  # not printable ASCII inside
        "echo 'é'",
        "echo 'a' == b",
        "echo 'a'&",
    ],
)
def test_lines_the_grammar_must_read(line: str) -> None:
    assert plain_lines(line) is None


def test_quoted_words_are_unquoted_and_operators_inside_them_stay() -> None:
    parsed = parse_line("git add -A && git commit -m 'a && b; c | d'")
    assert [c.argv for c in parsed.commands] == [
        ("git", "add", "-A"),
        ("git", "commit", "-m", "a && b; c | d"),
    ]
    assert parse_line("""awk '{print $1}' "x y"'z'""").commands[0].argv == (
        "awk",
        "{print $1}",
        "x yz",
    )


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


def test_everyday_lines_parse_as_the_walk_reads_them(monkeypatch: pytest.MonkeyPatch) -> None:
    """The parse of a line of everyday commands made without the walk (docs/security.md#inert-lines)."""
    lines = list(dict.fromkeys([*_lines(), *corpus_lines(), *EVERYDAY]))
    taken = [
        line
        for line in lines
        if (plain := plain_lines(line)) is not None
        and _parse._everyday_line(line, plain) is not None
    ]
    assert len(taken) > 300  # the lines reach the fast path
    with monkeypatch.context() as patch:
        patch.setattr(_parse, "_everyday_line", lambda line, pipelines: None)
        walked = {line: parse_line(line) for line in taken}
    differ = [
        line
        for line in taken
        if (fast := parse_line(line)) != walked[line]
        or fast.plain != walked[line].plain
        or [c.upstream for c in fast.sequence] != [c.upstream for c in walked[line].sequence]
    ]
    assert differ == []


EVERYDAY = [
    f"{a}{op}{b}"
    for a in (
        "git status", "ls -la src", "cat a.txt", "grep -rn 'a b' src", "make build",
        "find . -name '*.py'", "jq '.items[]' a.json", "sed -n '1,5p' a.py", "git diff --stat",
        "npm run test:api", "python -m pytest -q", "docker ps -a", "kubectl get pods -n x",
    )
    for op in (" && ", " | ", "; ", " || ", " | sort | ", "  &&  ", " |")
    for b in (
        "head -5", "wc -l", "cat", "git log --oneline -3", "uniq -c", "sort -n", "tail -n 3",
        "grep -v x", "cp -r a b", "tar czf x.tgz src", "mkdir -p out", "true", "pwd",
    )
]  # fmt: skip
