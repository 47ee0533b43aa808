"""The regexes rewritten for speed and their C-speed first tests agree with the forms they replace.

Each pair is run on random text over the characters that matter to it (shell.detection,
shell.parsing): a rewrite that let the regex engine skip ahead must match exactly where
the original did (docs/security.md#linear-time keeps both linear).
"""

from __future__ import annotations

import random
import re
import threading

import pytest

from multiplex._literals import LiteralSearch
from multiplex.shell import RuleSet, deny_match, parse_line
from multiplex.shell.detection import _inert, _scripts
from multiplex.shell.detection.network import _metadata
from multiplex.shell.detection.paths import _secret_paths, _target_checks, _targets
from multiplex.shell.parsing import _variants
from multiplex.shell.rules import _deny

# The forms before: the secret prefilter had a character class first, the escapes and the
# quoted word a look-around, the fork loops no literal prefix.
OLD_MAY_SECRET = re.compile(f"[$`{{~*?\\[]|{_secret_paths._SECRET_KEY.regex.pattern}")
OLD_ESCAPES = re.compile(r"^[/~]|\.\.|[$`*?\[{]")
OLD_ANY_ESCAPES = re.compile(OLD_ESCAPES.pattern, re.MULTILINE)
OLD_EXPANDABLE = re.compile(r"[$`{~]|\.\*|^\.\.?$")
OLD_QUOTED_WORD = re.compile(r"(?<!\\)'([^'\s;&|<>()`\\]*)'|(?<!\\)\"([^\"\s;&|<>()`\\]*)\"")


def _texts(alphabet: str, extra: tuple[str, ...], count: int = 20_000) -> list[str]:
    rng = random.Random(32)
    out = []
    for _ in range(count):
        text = "".join(rng.choices(alphabet, k=rng.randint(0, 24)))
        if extra and rng.random() < 0.3:
            at = rng.randint(0, len(text))
            text = text[:at] + rng.choice(extra) + text[at:]
        out.append(text)
    return out


def test_may_be_secret_matches_where_the_class_first_form_did() -> None:
    keys = (*_secret_paths._SECRET_KEYS, ".env")
    for text in _texts("ab.sgc/$`{~*?[\n-_ hk", keys):
        old = OLD_MAY_SECRET.search(text) is not None
        assert _secret_paths._MAY_SECRET.search(text) == old, text
        assert (_secret_paths._MAY_SECRET.regex.search(text) is not None) == old, text


@pytest.mark.parametrize("engine", [True, False], ids=["hyperscan", "regex"])
def test_literal_search_finds_a_literal_exactly_where_one_occurs(engine: bool) -> None:
    """The key sets' one-scan search (and its regex without the wheel) answers as ``in`` does:
    on any text, non-ASCII and lone surrogates included (docs/security.md#linear-time)."""
    sets = {
        "secret": (*_secret_paths._SECRET_KEYS, ".env"),
        "persistence": _secret_paths.PERSISTENCE_KEYS,
        "small": ("ab", "b/c", "ä/x", "\udcff", "a"),
    }
    for name, literals in sets.items():
        search = LiteralSearch(literals, engine=engine)
        pieces = (*literals[:40], *(lit[:-1] for lit in literals[:40] if len(lit) > 1))
        for text in _texts("ab./c~$ä\udcff\n-_ sshk", pieces, count=4_000):
            assert search.search(text) == any(lit in text for lit in literals), (name, text)


def test_literal_search_scans_in_each_thread_and_without_the_wheel() -> None:
    """Each thread scans with its own scratch space; a set the wheel cannot take (an empty
    literal) answers by the regex, as one built without the engine does."""
    search = LiteralSearch(("ssh", ".aws"))
    results: list[bool] = []
    threads = [
        threading.Thread(
            target=lambda: results.extend(search.search(f"~/.ssh/{i}") for i in range(500))
        )
        for _ in range(4)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == [True] * 2000
    assert LiteralSearch(("", "x")).search("abc") and not LiteralSearch(()).search("abc")


def test_any_escapes_matches_where_the_multiline_form_did() -> None:
    for text in _texts("ab./~$`*?[{\n-x ", ("..", "\n/", "\n~")):
        assert _target_checks._any_escapes(text) == (OLD_ANY_ESCAPES.search(text) is not None)


def test_expandable_and_escaping_words_are_the_ones_the_class_first_forms_found() -> None:
    for text in _texts("ab./~$`*?[{-x", ("..", ".", ".*")):
        expandable = text in (".", "..") or _targets._EXPANDABLE.search(text) is not None
        assert expandable == (OLD_EXPANDABLE.search(text) is not None), text
        escapes = text.startswith(("/", "~")) or _target_checks._INNER_ESCAPES.search(text)
        assert bool(escapes) == (OLD_ESCAPES.search(text) is not None), text


def test_quoted_words_are_unquoted_as_with_the_look_behind_first() -> None:
    def old(text: str) -> str:
        return _variants._ESCAPED.sub(
            r"\1", OLD_QUOTED_WORD.sub(lambda m: m.group(1) or m.group(2) or "", text)
        )

    for text in _texts("ab'\"\\ ;|x-", ("\\'", "'a'", '"b"', '\\"')):
        assert _variants.unquote_words(text) == old(text), text


def test_fork_text_finds_what_the_regexes_alone_find() -> None:
    pieces = ("fork", "while", "true", "for (;;)", "1 while fork", "loop do", "(", ")", "{", "}",
              "f", "|", "&", ":", " ", "os.fork()", "f(){ f|f& };f")  # fmt: skip
    rng = random.Random(5)
    for _ in range(20_000):
        text = "".join(rng.choices(pieces, k=rng.randint(0, 8)))
        loops = _scripts._FORK_LOOPS.search(text)
        found = _scripts.fork_text(text)
        if loops:
            assert found == loops.group(0), text
        elif not _scripts._FORK_DEF.search(text):
            assert found is None, text


def test_metadata_and_sql_first_tests_let_through_all_the_regexes_match() -> None:
    words = (*_metadata.METADATA_WORDS, "DROP TABLE x", "delete from t", "UPDATE t SET a=1",
             "TRUNCATE t", "FLUSHALL", "x.dropDatabase()", "169.254.169.254", "METADATA.google.internal",
             "169.254.170.2", "Metadata.Goog", "FD00:EC2::23")  # fmt: skip
    for text in _texts("abdrop.:0125 \n;", words):
        before = any(w in text.lower() for w in _metadata.METADATA_WORDS)
        assert before == (_metadata._METADATA_WORD.search(text.lower()) is not None), text
        if _metadata._METADATA.search(text):  # the first test never hides a match
            assert _metadata.metadata_text(text) is not None, text
        unbounded = any(
            not re.search(r"\bWHERE\b", m.group(2), re.I)
            for m in _scripts.SQL_UNBOUNDED.finditer(text)
        )
        assert _scripts.sql_text(text) == bool(_scripts.SQL.search(text) or unbounded), text


def test_deny_rules_skip_only_commands_no_rule_or_meaning_can_match(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A command whose program no deny rule names is not matched at all, nor a spelling that
    holds no rule's first literal word: the same rules as when every command is matched in
    every meaning (programs, paths, scripts, aliases, glob words, case)."""
    programs = ["git", "Git", "/usr/bin/git", "npm", "docker", "docker-compose", "service",
                "systemctl", "/etc/init.d/nginx", "python", "python3", "./deploy.py", "deploy.py",
                "ls", "make", "kubectl", "podman", "nginx", "rm", "find", "npx", "oc", "hub",
                "tofu", "terraform", "terragrunt", "pnpm", "nerdctl"]  # fmt: skip
    words = ["push", "pub", "publish", "image", "compose", "up", "stop", "nginx", "-C", "x",
             "--force", "deploy.py", "-m", "deploy", "send-pack", "-u", "start", "*", "-rf",
             "-r", "-delete", "apply", "exec", "--", "npm", "delete", "pu?h", "Push", "GIT",
             "stage", "-m", "pip", "uninstall", "publis[h]", "image"]  # fmt: skip
    rng = random.Random(9)
    for _ in range(600):
        rules = []
        for _ in range(rng.randint(1, 4)):
            rule = [rng.choice(programs), *rng.choices(words, k=rng.randint(0, 2))]
            rules.append(" ".join(rule) + (" *" if rng.random() < 0.5 else ""))
        if rng.random() < 0.1:
            rules.append("g?t push *")  # a glob program: nothing is skipped
        ruleset = RuleSet(rules, ignore_case_program=True)
        for _ in range(20):
            line = " ".join([rng.choice(programs), *rng.choices(words, k=rng.randint(0, 3))])
            parsed = parse_line(line)
            fast = deny_match(ruleset, parsed, cwd="/w")
            with monkeypatch.context() as patch:
                patch.setattr(_deny, "_may_match", lambda argv, words: True)
                patch.setattr(_deny, "_may_hold", lambda form, words: True)
                assert deny_match(ruleset, parsed, cwd="/w") == fast, (rules, line)


def test_a_program_that_may_not_destroy_has_no_destructive_targets() -> None:
    names = ["rm", "RM", "/bin/rm", "find", "mv", "chmod", "truncate", "pytest", "python",
             "python3", "Python3.12", "ls", "cat", "git", "rsync", "shred", "py.test", "echo"]  # fmt: skip
    words = ["-m", "pytest", "--basetemp=/", "-rf", "/", "-delete", "-exec", "rm", "{}", ";",
             "-R", "--delete", "a", "b", "-s", "0"]  # fmt: skip
    rng = random.Random(3)
    for _ in range(20_000):
        argv = (rng.choice(names), *rng.choices(words, k=rng.randint(0, 5)))
        program = argv[0][argv[0].rfind("/") + 1 :].lower()  # SimpleCommand.program
        if not _targets.may_destroy(program):
            assert list(_targets.destructive_targets(argv)) == [], argv


def test_str_lower_makes_ascii_letters_only_of_ascii_ones_and_of_i_and_k() -> None:
    """The first tests of SQL and of the metadata service read ``text.lower()``; the inert
    lines' one scan matches their words in ASCII case instead. The same, since no other
    character lower-cases to an ASCII letter and none of the words holds "i" or "k"."""
    made = {
        letter
        for code in range(0x80, 0x110000)
        for letter in chr(code).lower()
        if letter.isascii() and letter.isalpha()
    }
    assert made <= {"i", "k"}, made
    for word in (*_scripts.SQL_ANY_WORDS, *_metadata.METADATA_WORDS):
        assert not {"i", "k"} & set(word.lower()), word


@pytest.mark.parametrize("engine", [True, False], ids=["hyperscan", "regex"])
def test_the_inert_lines_one_scan_misses_only_what_each_first_test_misses(engine: bool) -> None:
    """Words placed in the folder, with keys, SQL and metadata words in any case, non-ASCII
    letters and "~": where the one scan finds nothing, no family's first test finds anything
    in the words joined (docs/security.md#inert-lines)."""
    # The scan reads the folder without its "~": no key read with the folder may hold one.
    assert not any("~" in key for key in _secret_paths.PERSISTENCE_KEYS)
    first = _inert._FIRST_WORDS
    if not engine:
        exact, folded = first._literals
        first = LiteralSearch(exact, caseless=folded, engine=False)
    pieces = ("ssh", ".ssh", "DROP", "dRoP", "Metadata", "169.254", "profile", "bashrc",
              "cron", "\u212a", "\u0130", "ä", "~", "FLU", "update", "src", "/bin/")  # fmt: skip
    rng = random.Random(11)
    for _ in range(6_000):
        words = [
            "".join(rng.choices([*pieces, "a", "b", "/", ".", "_"], k=rng.randint(1, 5)))
            for _ in range(rng.randint(1, 3))
        ]
        at = rng.choice(["~/src/", "~/w~1/", "~/x/ssl/", "~/a/.b/", "~/i3/"])  # _neutral's
        joined, placed = "\n".join(words), at + ("\n" + at).join(words)
        if first.search(at[1:] + ("\n" + at[1:]).join(words)):  # as inert() asks it
            continue
        assert not _secret_paths._MAY_SECRET.search(joined), words
        lowered = joined.lower()  # (what sql_text and metadata_text search first)
        assert not _scripts._SQL_ANY_WORD.search(lowered), words
        assert not _metadata._METADATA_WORD.search(lowered), words
        assert not _secret_paths.persistence_key(placed), (at, words)
