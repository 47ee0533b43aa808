"""docs/redaction.md#commands: a known value spelled by a command line's shell quoting is masked.

Hostile: each command passes the secret to a program (the shell undoes the
quoting) while never holding it as written, so plain matching misses it.
"""

from __future__ import annotations

import subprocess

import pytest

from multiplex.redaction import KnownValues, redact_always, redact_command

VALUE = "sk-alphaSECRETvalue42"
MASK = "[REDACTED:known]"


QUOTED = {
    "empty-single-quotes": ("echo sk-alphaSECRETv''alue42", f"echo {MASK}"),
    "empty-double-quotes": ('echo sk-alpha""SECRETvalue42 done', f"echo {MASK} done"),
    "double-then-single": ("""curl -H "x: "sk-al'phaSECRET'value42 x""", f'curl -H "x: "{MASK} x'),
    "quoted-halves": ("""echo "sk-al"'phaSECRETvalue42'""", f"echo {MASK}"),
    "backslash-escapes": ("echo sk\\-alpha\\SECRETvalue\\42", f"echo {MASK}"),
    "line-continuation": ('echo "sk-alpha\\\nSECRETvalue42"', f"echo {MASK}"),
    "ansi-c-hex": ("printf $'\\x73\\x6b'-alpha$'\\x53ECRET'value42 | sh", f"printf {MASK} | sh"),
    "ansi-c-octal": ("printf %s $'\\163\\153'-alphaSECRETvalue$'\\064\\062'", f"printf %s {MASK}"),
    "ansi-c-mixed": ("echo $'\\163\\x6b-alpha\\u0053ECRET'value42", f"echo {MASK}"),
    "nested-bash-c": ("""bash -c "echo 'sk-al''phaSECRETvalue42'" """, f"bash -c {MASK} "),
    "flag-value": ("tool -p 'sk-alpha'SECRETvalue42 --verbose", f"tool -p {MASK} --verbose"),
    "unterminated": ("echo sk-alpha'SECRETvalue42", f"echo {MASK}"),
    "reversed-in-quotes": ("echo 24eula'vTERCESahpla'-ks | rev", f"echo {MASK} | rev"),
}


@pytest.mark.parametrize(("command", "shown"), QUOTED.values(), ids=QUOTED.keys())
def test_a_value_spelled_by_shell_quoting_is_masked(command: str, shown: str) -> None:
    known = KnownValues([VALUE])
    assert redact_always(command, known) == command  # plain matching does not see it
    assert redact_command(command, known) == shown


@pytest.mark.parametrize(
    "command",
    [c for name, (c, _) in QUOTED.items() if name not in ("unterminated", "reversed-in-quotes")],
)
def test_the_shell_does_pass_the_value(command: str) -> None:
    # The cases are real: bash hands the program the value itself.
    if command.startswith("bash -c"):
        command = command.replace("bash -c", "eval", 1)
    if command.startswith("curl"):
        command = command.replace("curl -H", "printf '%s%s\\n'", 1)
    shown = command.replace("| sh", "").replace("tool ", "echo ", 1)
    out = subprocess.run(["bash", "-c", shown], capture_output=True, text=True, check=False)
    assert VALUE in out.stdout.replace("\n", ""), (shown, out.stdout)


def test_commands_without_a_known_value_are_unchanged() -> None:
    known = KnownValues([VALUE])
    for command in [
        "echo 'hello world' \"and more\" it\\'s $'\\x41' $HOME",
        "grep -r 'sk-alpha' . && echo \"SECRET\"'value'",  # parts of the value, apart
        "printf '%s\\n' \"$API_KEY\" | base32",
        "echo 'unterminated",
        "echo \\",
    ]:
        assert redact_command(command, known) == command


def test_a_quoted_piece_holding_part_of_the_value_is_masked_whole() -> None:
    known = KnownValues([VALUE])
    command = """echo "prefix words sk-alpha"SECRETvalue42' trailing' ok"""
    assert redact_command(command, known) == f"echo {MASK}' trailing' ok"


def test_other_shapes_are_still_masked_after_the_quoting_pass() -> None:
    known = KnownValues([VALUE])
    command = "API_KEY=hunter2hunter2 tool sk-al''phaSECRETvalue42 ghp_" + "a1" * 18
    assert redact_command(command, known) == (
        f"API_KEY=[REDACTED:assignment] tool {MASK} [REDACTED:github-token]"
    )


@pytest.mark.slow
@pytest.mark.timeout(30)
@pytest.mark.parametrize(
    "command",
    ["'" * 100_000, "\"'" * 50_000, "\\" * 100_000, "$'" * 50_000, "a''" * 50_000, '"\\' * 50_000],
    ids=["quotes", "mixed-quotes", "backslashes", "ansi-opens", "empty-pieces", "escaped-doubles"],
)
def test_long_quoting_takes_linear_time(command: str) -> None:
    assert isinstance(redact_command(command, KnownValues([VALUE, "a" * 40])), str)
