"""Parsing command lines into simple commands (docs/approvals.md#parsing)."""

from __future__ import annotations

import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from multiplex.shell import (
    MAX_CHARS,
    MAX_DEPTH,
    MAX_SEGMENTS,
    ParsedLine,
    Redirect,
    SimpleCommand,
    parse_line,
)


def argvs(line: str) -> list[tuple[str, ...]]:
    return [c.argv for c in parse_line(line).commands]


def only(line: str) -> SimpleCommand:
    parsed = parse_line(line)
    assert parsed.error is None, parsed.error
    assert len(parsed.commands) == 1, parsed.commands
    return parsed.commands[0]


# ---- words ------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("line", "argv"),
    [
        ("ls -la", ("ls", "-la")),
        ("echo 'a b' \"c d\"", ("echo", "a b", "c d")),
        ('echo "a\\"b" "x\\ny"', ("echo", 'a"b', "x\\ny")),
        ("echo a\\ b \\$x", ("echo", "a b", "$x")),
        ("echo $'a\\tb\\x41\\101\\u00e9'", ("echo", "a\tbAAé")),
        ("echo 'a'\"b\"c\\d", ("echo", "abcd")),
        ('echo "$HOME" ${USER} $x', ("echo", "$HOME", "${USER}", "$x")),
        ('echo "$HOME/x"/y', ("echo", "$HOME/x/y")),
        ("echo 42", ("echo", "42")),
        ("r''m -rf x", ("rm", "-rf", "x")),
        ("\\rm x", ("rm", "x")),
        ('echo $"hi"', ("echo", "hi")),
    ],
)
def test_words_are_unquoted_and_expansions_kept(line: str, argv: tuple[str, ...]) -> None:
    assert only(line).argv == argv


def test_variable_prefixes_are_not_in_argv() -> None:
    cmd = only("FOO=1 BAR='x y' make test")
    assert cmd.argv == ("make", "test")
    assert cmd.wrapped_by == ()


# ---- redirects --------------------------------------------------------------------
def test_redirect_ops_targets_and_writes() -> None:
    cmd = only("cmd > out.txt 2>&1 >> log < in.txt 2>/dev/null &> all >| forced")
    assert cmd.redirects == (
        Redirect(">", "out.txt"),
        Redirect("2>", "&1"),
        Redirect(">>", "log"),
        Redirect("<", "in.txt"),
        Redirect("2>", "/dev/null"),
        Redirect("&>", "all"),
        Redirect(">|", "forced"),
    )
    assert [r.writes_file for r in cmd.redirects] == [True, False, True, False, False, True, True]
    assert cmd.writes_file


@pytest.mark.parametrize("line", ["ls > /dev/null", "ls 2>&1", "ls >&2", "cat < in", "ls"])
def test_no_file_write(line: str) -> None:
    assert not only(line).writes_file


def test_words_after_a_redirect_stay_arguments() -> None:
    # The grammar folds "-rf /" into the redirect node; they are rm's arguments.
    assert only("rm 2>/dev/null -rf /").argv == ("rm", "-rf", "/")


def test_redirect_of_a_group_applies_to_its_commands() -> None:
    parsed = parse_line("{ ls; pwd; } > listing.txt")
    assert [c.writes_file for c in parsed.commands] == [True, True]


def test_heredoc_and_herestring_targets_are_their_text() -> None:
    cmd = parse_line("cat <<'EOF' > out\nhello\nEOF").commands[0]
    assert cmd.redirects[0] == Redirect("<<", "hello\n")
    assert cmd.writes_file
    assert only("wc -c <<< 'x y'").redirects == (Redirect("<<<", "x y"),)


def test_bare_redirect_is_a_command_without_argv() -> None:
    (cmd,) = parse_line("> truncated.txt").commands
    assert cmd.argv == ()
    assert cmd.writes_file


# ---- structure --------------------------------------------------------------------
def test_every_simple_command_of_lists_pipelines_and_substitutions() -> None:
    line = "a | b && (c; d) || { e; } ; echo $(f `g`) <(h) >(i)\nj & k"
    got = {argv[0] for argv in argvs(line)}
    assert got == set("abcdefghijk") | {"echo"}


def test_compound_statements_and_functions() -> None:
    line = "if t1; then x1; elif t2; then x2; else x3; fi; for i in 1; do x4; done; f(){ x5; }"
    assert {a[0] for a in argvs(line)} == {"t1", "x1", "t2", "x2", "x3", "x4", "x5"}


def test_substitution_in_assignment_and_redirect_target() -> None:
    assert ("rm", "x") in argvs("A=$(rm x)")
    assert ("rm", "y") in argvs("echo hi > $(rm y)")
    assert ("rm", "z") in argvs("export A=$(rm z)")


# ---- wrappers ---------------------------------------------------------------------
def test_stacked_wrappers_each_appear_with_the_wrapped_program() -> None:
    parsed = parse_line("sudo -u root env A=1 nice -n 5 timeout -s KILL 10 nohup git push")
    by_wrapping = {c.wrapped_by: c.argv for c in parsed.commands}
    assert by_wrapping[()][0] == "sudo"
    assert by_wrapping[("sudo",)][:2] == ("env", "A=1")
    assert by_wrapping[("sudo", "env", "nice", "timeout", "nohup")] == ("git", "push")


@pytest.mark.parametrize(
    ("line", "inner"),
    [
        ("command -p ls -l", ("ls", "-l")),
        ("exec -a name python app.py", ("python", "app.py")),
        ("sudo -Eu deploy make", ("make",)),
        ("env -i -u X PATH=/bin make all", ("make", "all")),
        ("env -S 'make all'", ("make", "all")),
        ("timeout --signal=KILL 5s pytest", ("pytest",)),
        ("xargs -0 -n 1 rm -f", ("rm", "-f")),
        ("stdbuf -oL tail -f log", ("tail", "-f", "log")),
        ("uv run pytest -q", ("pytest", "-q")),
    ],
)
def test_wrapped_program(line: str, inner: tuple[str, ...]) -> None:
    assert inner in argvs(line)


def test_xargs_gets_items_piped_from_echo() -> None:
    assert ("rm", "-rf", "a", "b") in argvs("echo a b | xargs rm -rf")
    assert ("mv", "x", "x.bak") in argvs("printf 'x' | xargs -I{} mv {} {}.bak")


def test_find_exec_commands() -> None:
    got = argvs("find . -name '*.o' -exec rm -f {} \\; -execdir ls {} + -ok cat {} \\;")
    assert ("rm", "-f", "{}") in got
    assert ("ls", "{}") in got
    assert ("cat", "{}") in got
    (cmd,) = [c for c in parse_line("find . -exec rm {} +").commands if c.argv[0] == "rm"]
    assert cmd.wrapped_by == ("find",)


# ---- payloads ---------------------------------------------------------------------
@pytest.mark.parametrize(
    "line",
    [
        "bash -c 'git push origin'",
        "sh -lc 'git push origin'",
        "bash -xc 'git push origin'",
        "bash -e -o pipefail -c 'git push origin'",
        'zsh -c "cd x && git push origin"',
        "eval 'git push origin'",
        "eval git push origin",
        "bash -c \"bash -c 'git push origin'\"",
        "sh -c '$0 \"$@\"' git push origin",
        "echo 'git push origin' | bash",
        "bash <<< 'git push origin'",
        "bash <<EOF\ngit push origin\nEOF",
        "su -c 'git push origin' deploy",
        "ssh -p 22 host git push origin",
        "flock -c 'git push origin' /tmp/l",
        "watch -n 5 git push origin",
    ],
)
def test_shell_payloads_are_parsed(line: str) -> None:
    parsed = parse_line(line)
    assert parsed.error is None
    assert ("git", "push", "origin") in [c.argv for c in parsed.commands]


def test_payload_commands_name_their_carrier() -> None:
    (cmd,) = [c for c in parse_line("sudo bash -c 'ls'").commands if c.argv == ("ls",)]
    assert cmd.wrapped_by == ("sudo", "bash")


def test_script_of_a_file_is_not_a_payload() -> None:
    assert argvs("bash deploy.sh") == [("bash", "deploy.sh")]


@pytest.mark.parametrize(
    ("line", "payload"),
    [
        ("python3 -c 'print(1)'", "print(1)"),
        ("python -Bc 'print(2)'", "print(2)"),
        ("node -e 'console.log(1)'", "console.log(1)"),
        ("node --eval='x()'", "x()"),
        ("perl -ne 'print if /x/' f", "print if /x/"),
        ("perl -E 'say 1'", "say 1"),
        ("ruby -e 'puts 1'", "puts 1"),
        ("python3 - <<'EOF'\nimport os\nEOF", "import os\n"),
        ("awk '{print $1}' f", "{print $1}"),
    ],
)
def test_script_payloads(line: str, payload: str) -> None:
    assert payload in parse_line(line).script_payloads


def test_python_running_a_file_has_no_payload() -> None:
    assert parse_line("python3 script.py -c x").script_payloads == ()


# ---- variants ---------------------------------------------------------------------
def test_variants_normalise_disguise() -> None:
    parsed = parse_line("rm${IFS}-rf${IFS}x")
    assert "rm -rf x" in parsed.variants
    assert ("rm", "-rf", "x") in parsed.match_argvs()
    assert ("rm", "-rf", "x") not in [c.argv for c in parsed.commands]


@pytest.mark.parametrize(
    "line", ["ｇｉｔ push", "gi\u200bt push", "gi\x1b[0mt push", "gi\x00t push", "gi'\u200b't push"]
)
def test_variants_strip_unicode_ansi_and_nul(line: str) -> None:
    assert ("git", "push") in parse_line(line).match_argvs()


def test_quotes_that_group_operators_are_kept_in_variants() -> None:
    parsed = parse_line('git commit -m "stop; reboot later"')
    assert not any(a[0] == "reboot" for a in parsed.match_argvs())


def test_plain_line_has_no_variants() -> None:
    assert parse_line("git status").variants == ()


def test_match_argvs_dedupes_in_order() -> None:
    parsed = parse_line("ls; ls; pwd")
    assert parsed.match_argvs() == (("ls",), ("pwd",))


# ---- errors and limits --------------------------------------------------------------
@pytest.mark.parametrize(
    "line",
    ['echo "unterminated', "ls )", "if true; then ls", "echo $(ls", "bash -c 'echo \"x'", "a && "],
)
def test_parse_errors_fail_closed(line: str) -> None:
    parsed = parse_line(line)
    assert parsed.error is not None
    assert parsed.error.startswith("syntax error")


def test_error_inside_a_payload_is_reported() -> None:
    assert "bash payload" in (parse_line("bash -c 'echo (('").error or "")


def test_over_max_chars() -> None:
    parsed = parse_line("x" * (MAX_CHARS + 1))
    assert parsed.over_limit is not None
    assert parse_line("x" * 1000).over_limit is None


def _nested_bash(levels: int, inner: str = "ls") -> str:
    line = inner
    for _ in range(levels):
        line = "bash -c " + _quote(line)
    return line


def _quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def test_bash_c_nesting_beyond_max_depth_is_over_limit() -> None:
    # Quoting grows exponentially with bash -c levels, so deep lines mix in eval,
    # whose unquoted payload nests one level per word at linear cost.
    parsed = parse_line(_nested_bash(6, "eval " * (MAX_DEPTH - 6) + "ls"))
    assert parsed.over_limit is None, parsed.over_limit
    assert ("ls",) in parsed.match_argvs()
    assert parsed.commands[-1].wrapped_by == ("bash",) * 6 + ("eval",) * (MAX_DEPTH - 6)
    beyond = _nested_bash(6, "eval " * (MAX_DEPTH - 5) + "ls")
    assert parse_line(beyond).over_limit is not None


def test_eval_chain_depth() -> None:
    assert parse_line("eval " * MAX_DEPTH + "ls").over_limit is None
    assert parse_line("eval " * (MAX_DEPTH + 1) + "ls").over_limit is not None


def test_deep_substitution_nesting_is_over_limit() -> None:
    line = "echo " + "$(" * (MAX_DEPTH + 1) + "ls" + ")" * (MAX_DEPTH + 1)
    assert parse_line(line).over_limit is not None


def test_too_many_segments_is_over_limit() -> None:
    assert parse_line("a;" * (MAX_SEGMENTS + 1)).over_limit is not None
    assert parse_line("a && " * 2000 + "b").over_limit is None  # long chains are flat


@pytest.mark.parametrize("line", ["(" * 5000, "$(" * 3000, "{ " * 4000, "! " * 5000, "$((" * 3000])
def test_pathological_nesting_never_raises(line: str) -> None:
    assert parse_line(line).line == line


@settings(max_examples=300, deadline=None)
@given(
    st.text(alphabet=string.printable + "ｒｍ\u200b\x00\x1b$'\"`(){}|&;<>\\é\ud800", max_size=80)
)
def test_never_raises(line: str) -> None:
    parsed = parse_line(line)
    assert isinstance(parsed, ParsedLine)
    parsed.match_argvs()
