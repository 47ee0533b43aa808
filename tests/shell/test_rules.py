"""The rule language (docs/allowlist.md#rules): word-by-word globs, prefix rules, program names, errors."""

from __future__ import annotations

import fnmatch
import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from multiplex._errors import MultiplexError, RuleSyntaxError
from multiplex.shell import MAX_RULE_LENGTH, RuleSet, exact_rule, parse_rule


def matches(rule: str, argv: list[str], *, ignore_case_program: bool = False) -> bool:
    return parse_rule(rule).matches(argv, ignore_case_program=ignore_case_program)


# --- docs/allowlist.md#rules examples ---------------------------------------------------------------


def test_exact_rule_matches_only_that_command() -> None:
    assert matches("git status", ["git", "status"])
    assert not matches("git status", ["git", "status", "--short"])
    assert not matches("git status", ["git"])
    assert not matches("git status", ["git", "stat"])


def test_prefix_rule_matches_any_arguments_including_none() -> None:
    assert matches("git log *", ["git", "log"])
    assert matches("git log *", ["git", "log", "--oneline", "-5"])
    assert not matches("git log *", ["git"])
    assert not matches("git log *", ["git", "show", "log"])


def test_glob_inside_a_token() -> None:
    assert matches("npm run test:*", ["npm", "run", "test:unit"])
    assert matches("npm run test:*", ["npm", "run", "test:e2e"])
    assert not matches("npm run test:*", ["npm", "run", "build"])
    assert not matches("npm run test:*", ["npm", "run", "test:unit", "--watch"])


def test_glob_token_counts_exactly_one_word() -> None:
    assert matches("ls *.txt", ["ls", "a.txt"])
    assert not matches("ls *.txt", ["ls", "a.txt", "b.txt"])
    assert not matches("ls *.txt", ["ls"])
    assert not matches("ls *.txt", ["ls", "a.md"])


# --- word boundaries -------------------------------------------------------------------


def test_prefix_rule_respects_word_boundary() -> None:
    assert not matches("git log *", ["git", "logx"])
    assert not matches("git log *", ["git", "log-all"])


def test_glob_never_spans_words() -> None:
    # "a*" would match the joined string "ab c", but "c" is a separate word.
    assert not matches("echo a*", ["echo", "ab", "c"])
    assert not matches("echo a*c", ["echo", "ab", "c"])
    # A word containing a space is still one word.
    assert matches("echo a*c", ["echo", "ab c"])


def test_middle_star_matches_exactly_one_word() -> None:
    assert matches("git * status", ["git", "-C", "status"])
    assert not matches("git * status", ["git", "status"])
    assert not matches("git * status", ["git", "-C", "x", "status"])


def test_star_matches_slashes_and_empty_word_within_one_word() -> None:
    assert matches("cat *", ["cat"])
    assert matches("cat * x", ["cat", "", "x"])
    assert matches("cat /tmp/*", ["cat", "/tmp/a/b"])


def test_quoted_token_with_space_is_one_word() -> None:
    assert matches("echo 'hello world'", ["echo", "hello world"])
    assert not matches("echo 'hello world'", ["echo", "hello", "world"])
    assert parse_rule('echo "a b" c').tokens == ("echo", "a b", "c")


def test_quoting_does_not_disable_globs_but_brackets_do() -> None:
    assert matches("rm '*'", ["rm", "anything", "else"])  # lone final * stays a prefix
    assert not matches("rm [*]", ["rm", "anything"])
    assert matches("rm [*]", ["rm", "*"])
    assert matches("echo [?]", ["echo", "?"])
    assert not matches("echo [?]", ["echo", "x"])


def test_character_classes() -> None:
    assert matches("tail -n [0-9]", ["tail", "-n", "7"])
    assert not matches("tail -n [0-9]", ["tail", "-n", "10"])
    assert matches("tail -n [!a-z]", ["tail", "-n", "7"])
    assert not matches("tail -n [!a-z]", ["tail", "-n", "q"])


# --- program token ---------------------------------------------------------------------


def test_program_without_slash_matches_basename() -> None:
    assert matches("git status", ["/usr/bin/git", "status"])
    assert matches("git status", ["./git", "status"])
    assert not matches("git status", ["/usr/bin/gitx", "status"])
    assert not matches("git status", ["/usr/bin/git/", "status"])


def test_program_with_slash_matches_whole_path() -> None:
    assert matches("/usr/bin/git status", ["/usr/bin/git", "status"])
    assert not matches("/usr/bin/git status", ["git", "status"])
    assert not matches("/usr/bin/git status", ["/usr/local/bin/git", "status"])
    assert matches("/usr/*/git status", ["/usr/local/bin/git", "status"])
    assert matches("./build.sh *", ["./build.sh", "--fast"])
    assert not matches("./build.sh *", ["build.sh", "--fast"])


def test_program_glob_matches_basename() -> None:
    assert matches("python3* -m pytest *", ["/usr/bin/python3.11", "-m", "pytest", "-q"])
    assert not matches("python3* -m pytest *", ["python2", "-m", "pytest"])


def test_case_insensitive_program_only_when_asked() -> None:
    assert not matches("rm -rf *", ["RM", "-rf", "x"])
    assert matches("rm -rf *", ["RM", "-rf", "x"], ignore_case_program=True)
    assert matches("RM -rf *", ["/BIN/rm", "-rf"], ignore_case_program=True)
    assert matches("/bin/rm *", ["/BIN/RM"], ignore_case_program=True)
    assert matches("Py* *", ["pYTHON"], ignore_case_program=True)
    # Arguments keep their case even for deny rules.
    assert not matches("rm -rf *", ["rm", "-RF", "x"], ignore_case_program=True)


def test_empty_argv_matches_nothing() -> None:
    assert not matches("git *", [])
    assert RuleSet(["git *", "* status"]).match([]) is None


# --- Rule value ----------------------------------------------------------------------


def test_rule_fields() -> None:
    rule = parse_rule("  git   log  *  ")
    assert rule.text == "git   log  *"
    assert rule.tokens == ("git", "log", "*")
    assert rule.program == "git"
    assert rule.prefix
    assert not parse_rule("git log").prefix
    assert str(rule) == "git   log  *"


def test_rule_is_frozen_hashable_and_picklable() -> None:
    rule = parse_rule("git log *")
    with pytest.raises(AttributeError):
        rule.text = "rm *"  # type: ignore[misc]
    assert rule == parse_rule("git log *")
    assert hash(rule) == hash(parse_rule("git log *"))
    assert rule != parse_rule("git  log *")  # the text is the operator's, kept as written
    clone = pickle.loads(pickle.dumps(rule))
    assert clone == rule and clone.matches(["git", "log", "-1"])


# --- errors ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "invalid rule '': empty rule"),
        ("   \t ", "invalid rule '   \\t ': empty rule"),
        ("git 'log", 'invalid rule "git \'log": unbalanced quotes'),
        ('echo "hi', "invalid rule 'echo \"hi': unbalanced quotes"),
        ("echo hi\\", "invalid rule 'echo hi\\\\': dangling backslash"),
        ("git\x00status", "invalid rule 'git\\x00status': control character '\\x00' at position 3"),
        ("git status\nrm -rf /", "invalid rule 'git status\\nrm -rf /': control character '\\n'"),
        ("git\tstatus", "control character '\\t' at position 3"),
        ("echo \x1b[31m", "control character '\\x1b'"),
        ("echo \x7f", "control character '\\x7f'"),
        ("echo \x85 x", "control character '\\x85'"),
        ("*", "invalid rule '*': matches every command; name the program"),
        ("* *", "invalid rule '* *': matches every command"),
        ("** *", "matches every command"),
        ("'' status", "invalid rule \"'' status\": no program name"),
    ],
)
def test_syntax_errors_have_one_line_messages(text: str, message: str) -> None:
    with pytest.raises(RuleSyntaxError) as info:
        parse_rule(text)
    assert message in str(info.value)
    assert "\n" not in str(info.value)
    assert isinstance(info.value, ValueError) and isinstance(info.value, MultiplexError)


def test_too_long_rule_is_refused_with_truncated_message() -> None:
    longest = "echo " + "a" * (MAX_RULE_LENGTH - 5)
    assert parse_rule(longest).tokens[1] == "a" * (MAX_RULE_LENGTH - 5)
    with pytest.raises(RuleSyntaxError, match="longer than 4096 characters") as info:
        parse_rule(longest + "a")
    assert len(str(info.value)) < 200
    assert str(info.value).startswith("invalid rule 'echo aaa")


def test_non_string_rule_is_refused() -> None:
    with pytest.raises(RuleSyntaxError, match="expected a string, got int"):
        parse_rule(123)  # type: ignore[arg-type]


def test_star_program_with_arguments_is_allowed() -> None:
    # Not "everything": the arguments still constrain it.
    rule = parse_rule("* --version")
    assert rule.matches(["anything", "--version"])
    assert not rule.matches(["anything"])


def test_ruleset_refuses_a_bad_rule_text() -> None:
    with pytest.raises(RuleSyntaxError, match="unbalanced quotes"):
        RuleSet(["git status", "echo 'x"])


# --- exact_rule ------------------------------------------------------------------------


def test_exact_rule_escapes_globs_and_quotes_words() -> None:
    rule = exact_rule(["rm", "*", "a b", "it's", "[x]"])
    assert rule.matches(["rm", "*", "a b", "it's", "[x]"])
    assert not rule.matches(["rm", "file", "a b", "it's", "[x]"])
    assert not rule.matches(["rm", "*", "a b", "it's", "x"])
    assert not rule.prefix


def test_exact_rule_prefix_and_errors() -> None:
    rule = exact_rule(["git", "log"], prefix=True)
    assert rule.text == "git log *" and rule.matches(["git", "log", "-3"])
    with pytest.raises(RuleSyntaxError, match="empty command"):
        exact_rule([])
    with pytest.raises(RuleSyntaxError, match="control character"):
        exact_rule(["echo", "a\nb"])


# --- RuleSet ---------------------------------------------------------------------------


def test_ruleset_first_match_in_insertion_order_across_index_and_fallback() -> None:
    rules = RuleSet(["g* *", "git log *", "/usr/bin/git *", "git *"])
    assert rules.match(["git", "log"]) == parse_rule("g* *")
    later = RuleSet(["git log *", "g* *", "/usr/bin/git *"])
    assert later.match(["/usr/bin/git", "log"]) == parse_rule("git log *")
    assert later.match(["/usr/bin/git", "push"]) == parse_rule("g* *")
    paths = RuleSet(["/usr/bin/git *", "git *"])
    assert paths.match(["/usr/bin/git", "push"]) == parse_rule("/usr/bin/git *")
    assert paths.match(["git", "push"]) == parse_rule("git *")
    assert rules.match(["hg", "log"]) is None
    assert not rules.matches(["hg"])


def test_ruleset_collection_behaviour() -> None:
    rules = RuleSet(["git status", parse_rule("ls *"), "git status", " npm test "])
    assert rules.texts() == ("git status", "ls *", "npm test")
    assert len(rules) == 3
    assert [rule.text for rule in rules] == ["git status", "ls *", "npm test"]
    assert "git status" in rules and " npm test" in rules and parse_rule("ls *") in rules
    assert "git log" not in rules and 42 not in rules
    assert rules == RuleSet(["git status", "ls *", "npm test"])
    assert rules != RuleSet(["ls *", "git status", "npm test"])  # order decides first match
    assert rules != RuleSet(rules, ignore_case_program=True)
    assert hash(rules) == hash(RuleSet(["git status", "ls *", "npm test"]))
    assert len({rules, RuleSet(["git status", "ls *", "npm test"])}) == 1
    assert RuleSet() == RuleSet([]) and len(RuleSet()) == 0 and RuleSet().match(["ls"]) is None
    assert "ignore_case_program=True" in repr(RuleSet(["rm *"], ignore_case_program=True))


def test_ruleset_ignore_case_program() -> None:
    deny = RuleSet(["rm -rf *", "/usr/bin/curl *", "Py* -c *"], ignore_case_program=True)
    assert deny.ignore_case_program
    assert deny.matches(["RM", "-rf", "/"])
    assert deny.matches(["/USR/BIN/Curl", "x"])
    assert deny.matches(["PYTHON3", "-c", "print()"])
    assert not deny.matches(["rm", "-RF", "/"])
    allow = RuleSet(["rm -rf *"])
    assert not allow.ignore_case_program and not allow.matches(["RM", "-rf", "/"])


# --- properties --------------------------------------------------------------------------

PROGRAMS = [
    "git",
    "Git",
    "ls",
    "ΣIGMA",
    "/usr/bin/git",
    "./ls",
    "g*",
    "*t",
    "l?",
    "[gl]*",
    "/usr/*",
]
WORDS = ["a", "b", "A", "log", "*", "a*", "*.txt", "[ab]", "?", "[!a]", "x y", ""]
ARGV0 = ["git", "GIT", "/usr/bin/git", "/USR/BIN/Git", "ls", "./ls", "x/ls", "σigma", "gat", "l"]
ARGS = ["a", "b", "A", "log", "a.txt", "ab", "x y", "", "*", "?", "c"]

rule_texts = st.builds(
    lambda program, words: " ".join([program, *(f"'{word}'" for word in words)]),
    st.sampled_from(PROGRAMS),
    st.lists(st.sampled_from(WORDS), max_size=3),
)
argvs = st.builds(
    lambda program, words: [program, *words],
    st.sampled_from(ARGV0),
    st.lists(st.sampled_from(ARGS), max_size=4),
)


def reference_matches(tokens: tuple[str, ...], argv: list[str], ignore_case: bool) -> bool:
    """docs/allowlist.md#rules stated directly, independent of the module's compiled matchers."""
    if not argv:
        return False
    program = argv[0] if "/" in tokens[0] else argv[0].rsplit("/", 1)[-1]
    pattern = tokens[0]
    if ignore_case:
        program, pattern = program.casefold(), pattern.casefold()
    if not fnmatch.fnmatchcase(program, pattern):
        return False
    rest, words = list(tokens[1:]), argv[1:]
    if rest and rest[-1] == "*":
        rest.pop()
        if len(words) < len(rest):
            return False
        words = words[: len(rest)]
    if len(words) != len(rest):
        return False
    return all(fnmatch.fnmatchcase(word, token) for word, token in zip(words, rest, strict=True))


@settings(max_examples=400, deadline=None)
@given(text=rule_texts, argv=argvs, ignore_case=st.booleans())
def test_rule_matches_agrees_with_the_spec_reference(
    text: str, argv: list[str], ignore_case: bool
) -> None:
    rule = parse_rule(text)
    assert rule.matches(argv, ignore_case_program=ignore_case) == reference_matches(
        rule.tokens, argv, ignore_case
    )


@settings(max_examples=300, deadline=None)
@given(texts=st.lists(rule_texts, max_size=12), argv=argvs, ignore_case=st.booleans())
def test_ruleset_agrees_with_scanning_every_rule(
    texts: list[str], argv: list[str], ignore_case: bool
) -> None:
    rules = [parse_rule(text) for text in texts]
    ruleset = RuleSet(rules, ignore_case_program=ignore_case)
    found = [rule for rule in rules if rule.matches(argv, ignore_case_program=ignore_case)]
    assert ruleset.matches(argv) == bool(found)
    assert ruleset.match(argv) == (found[0] if found else None)


@settings(max_examples=200, deadline=None)
@given(
    argv=st.lists(
        st.text(st.characters(blacklist_categories=["Cc", "Cs"]), max_size=6), min_size=1
    ),
    other=argvs,
)
def test_exact_rule_matches_its_argv_and_nothing_else(argv: list[str], other: list[str]) -> None:
    if not argv[0]:
        with pytest.raises(RuleSyntaxError):
            exact_rule(argv)
        return
    rule = exact_rule(argv)
    assert rule.matches(argv)
    if "/" not in argv[0]:
        assert rule.matches([f"/some/bin/{argv[0]}", *argv[1:]])
    assert rule.matches(other) == (other == argv or _same_but_path(other, argv))


def _same_but_path(other: list[str], argv: list[str]) -> bool:
    return "/" not in argv[0] and other[1:] == argv[1:] and other[0].rsplit("/", 1)[-1] == argv[0]
