"""docs/allowlist.md#rules: a rule's literal word covers a word written literally only.

The approved ``rm '*.bak'`` is saved as ``rm '[*].bak'``; the command's argv has its
quotes removed, so ``rm *.bak`` (which bash expands to every ``.bak`` file) gave the same
words and was approved by that grant, and deleted them. The same held for ``ls '~'``
against ``ls ~``, ``echo '$HOME'`` against ``echo $HOME``, ``rm '{a,b}'`` against ``rm
{a,b}`` and ``rm '[ab].txt'`` against ``rm [ab].txt``. Each such word of a rule now covers
the command's word only where the command writes it literally too.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from multiplex import Outcome, Supervisor
from multiplex.approval import Answer, Choice
from multiplex.approval.waiting._prompt import CallbackPrompter
from multiplex.shell import exact_rule, literal_words

PAIRS = [
    (["rm", "*.bak"], "rm '*.bak'", "rm *.bak"),
    (["ls", "~"], "ls '~'", "ls ~"),
    (["echo", "$HOME"], "echo '$HOME'", "echo $HOME"),
    (["echo", "$HOME"], "echo '$HOME'", 'echo "$HOME"'),
    (["rm", "{a,b}"], "rm '{a,b}'", "rm {a,b}"),
    (["rm", "[ab].txt"], "rm '[ab].txt'", "rm [ab].txt"),
    (["cat", "a?"], r"cat a\?", "cat a?"),
    (["echo", "`id`"], "echo '`id`'", "echo `id`"),
    (["echo", "x=~/a"], "echo 'x=~/a'", "echo x=~/a"),
    (["echo", "*"], "echo $'\\x2a'", "echo *"),
]


@pytest.fixture
def sup(make_home, supervisor_of) -> Supervisor:  # type: ignore[no-untyped-def]
    rules = "".join(f"  - {exact_rule(argv).text!r}\n" for argv, _, _ in PAIRS)
    make_home("p", f"command_allowlist:\n{rules}approvals:\n  mode: strict\n  timeout: 30\n")
    make_home("s", "approvals:\n  mode: strict\n  timeout: 30\n")
    return supervisor_of("profiles_dir: profiles\ndefault_profile: p\n")  # type: ignore[no-any-return]


@pytest.mark.parametrize(("argv", "literal", "bare"), PAIRS)
def test_the_saved_rule_covers_the_literal_word_not_the_expanding_one(
    sup: Supervisor, argv: list[str], literal: str, bare: str
) -> None:
    assert sup.test("p", literal).outcome == "approved", literal
    assert sup.test("p", bare).outcome == "ask", bare


def test_a_session_grant_of_a_quoted_glob_does_not_delete_every_file(
    sup: Supervisor, tmp_path: Path
) -> None:
    work = sup.profiles["s"].home / "workspace"
    work.mkdir(exist_ok=True)
    for name in ("a.bak", "b.bak", "*.bak"):
        (work / name).write_text("x")
    answers = iter([Answer(Choice.SESSION), Answer(Choice.DENY, reason="no")])
    sup.gate.set_prompter(CallbackPrompter(lambda _r: next(answers)))
    first = sup.run("rm '*.bak'", profile="s", session="g", context="interactive")
    assert first.decision.outcome is Outcome.APPROVED
    assert sorted(p.name for p in work.iterdir()) == ["a.bak", "b.bak"]
    second = sup.run("rm *.bak", profile="s", session="g", context="interactive")
    assert second.decision.outcome is Outcome.DENIED  # asked again, and refused
    assert sorted(p.name for p in work.iterdir()) == ["a.bak", "b.bak"]
    assert sup.test("p", "rm '*.bak'", session="g").outcome == "approved"


def test_a_rule_that_is_a_pattern_still_matches_as_a_pattern(make_home, supervisor_of) -> None:  # type: ignore[no-untyped-def]
    make_home("p", "command_allowlist: ['ls *', 'find . -name * -exec rm {} ;']\n")
    sup = supervisor_of("profiles_dir: profiles\ndefault_profile: p\n")
    assert sup.test("p", "ls *.py ~").outcome == "approved"
    assert sup.test("p", r"find . -name x -exec rm {} \;").outcome == "approved"


@pytest.mark.parametrize(
    ("text", "word", "literal"),
    [
        ("rm '*.bak'", "*.bak", True),
        ("rm *.bak", "*.bak", False),
        ("rm *.bak '*.bak'", "*.bak", False),  # one place expands: not as written
        ('echo "$HOME"', "$HOME", False),
        (r'echo "\$HOME"', "$HOME", True),
        ("echo \\$HOME", "$HOME", True),
        ("echo a~", "a~", True),
        ("echo ~a", "~a", False),
        ("echo 'a'~", "a~", True),
        ("echo {}", "{}", True),
        ("echo {a..c}", "{a..c}", False),
        ("echo [", "[", True),
        ("echo $", "$", True),
    ],
)
def test_words_written_as_taken(text: str, word: str, literal: bool) -> None:
    assert literal_words(text)[word] is literal


def test_a_grant_keeps_the_assignments_the_human_approved(make_home, supervisor_of) -> None:  # type: ignore[no-untyped-def]
    # The answer covered `DRY_RUN=1 sh -c …`; saving only `sh -c …` approved the same
    # command without its prefix (not a dry run any more), and `FOO=1 echo hi` asked again.
    make_home("s", "approvals:\n  mode: strict\n  timeout: 30\n")
    sup = supervisor_of("profiles_dir: profiles\ndefault_profile: s\n")
    answers = iter([Answer(Choice.SESSION), Answer(Choice.ALWAYS)])
    sup.gate.set_prompter(CallbackPrompter(lambda _r: next(answers)))
    dry = "DRY_RUN=1 sh -c 'echo deploying'"
    assert sup.run(dry, profile="s", session="g", context="interactive").decision.approved
    assert sup.test("s", dry, session="g").outcome == "approved"
    assert sup.test("s", "sh -c 'echo deploying'", session="g").outcome == "ask"
    first = sup.run("FOO=1 echo hi", profile="s", context="interactive")
    assert first.decision.approved and first.stdout == "hi\n"
    config = (sup.profiles["s"].home / "config.yaml").read_text()
    assert "FOO=1 echo hi" in config
    again = sup.run("FOO=1 echo hi", profile="s", context="interactive")  # not asked again
    assert again.decision.cause == "allowlisted", again.decision.cause
    assert sup.test("s", "echo hi").outcome == "ask"


def test_a_rule_with_an_assignment_is_not_said_revoked_while_waiting(
    make_home, supervisor_of
) -> None:  # type: ignore[no-untyped-def]
    make_home("s", "command_allowlist: ['FOO=1 echo hi']\napprovals:\n  mode: strict\n")
    sup = supervisor_of("profiles_dir: profiles\ndefault_profile: s\n")
    result = sup.run("FOO=1 echo hi", profile="s")
    assert result.decision.approved, result.decision.cause
    assert result.stdout == "hi\n"
