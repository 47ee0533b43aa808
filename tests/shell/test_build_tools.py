"""Build and project tools that run what their words say (docs/security.md#code-carriers).

Found probing a strict home that allowlists common build tools (``mix *``, ``sbt *``,
``rake *``, ``stack *``, ``bazel *``, ``gh *`` …): each line below was approved under
its rule. ``mix run -e`` and ``sbt 'eval …'`` run Elixir and Scala (``System.cmd``,
``sys.process`` start programs), ``rake -e`` Ruby, ``stack exec``/``cabal exec`` any
program, ``bazel test --run_under=CMD`` a command, and ``gh alias set NAME '!CMD'``
keeps a shell line that each later ``gh NAME`` runs. Inline code that starts programs
is never approved by an allow rule, whichever tool carries it; a hardline command in
any of them is blocked.
"""

from __future__ import annotations

import pytest

from multiplex import Supervisor
from tests.shell._carriers import (
    APPROVED,
    assert_hardline,
    assert_named,
    homes_fixture,
    outcome,
)

sup = homes_fixture(
    "build_tools", ["mix *", "sbt *", "rake *", "stack *", "cabal *", "bazel *", "gh *"]
)

STAND_IN = "mkfs.ext4 -q -F ./img.bin"

CARRIED = [
    ('mix run -e \'System.cmd("touch", ["x"])\'', "script-exec"),
    ("sbt 'eval sys.process.Process(\"touch x\").!'", "script-exec"),
    ("sbt compile '; eval sys.process.Process(\"touch x\").!'", "script-exec"),
    ("rake -e 'sh \"touch x\"'", "script-exec"),
    ("bazel test --run_under='touch x' //:t", "script-exec"),
    ("gh alias set x '!touch x'", "persistence"),
    ("gh alias set --shell x 'touch x'", "persistence"),
]
HARDLINE = [
    f"stack exec {STAND_IN}",
    f"stack exec -- {STAND_IN}",
    f"cabal exec {STAND_IN}",
    f"bazel build --run_under='{STAND_IN}' //:x",
    f'mix run -e \'System.cmd("sh", ["-c", "{STAND_IN}"])\'',
]
PLAIN = [
    "mix test",
    "mix run -e 'IO.puts(1)'",
    "sbt compile",
    "rake test",
    "stack build",
    "bazel build //...",
    "gh alias set co 'pr checkout'",
    "gh alias list",
]


@pytest.mark.parametrize(("line", "pattern"), CARRIED)
def test_what_they_carry_is_never_allowlisted(sup: Supervisor, line: str, pattern: str) -> None:
    assert_named(sup, line, pattern, ("strict", "manual"))


@pytest.mark.parametrize("line", HARDLINE)
def test_a_hardline_command_in_them_is_blocked(sup: Supervisor, line: str) -> None:
    assert_hardline(sup, line)


@pytest.mark.parametrize("line", PLAIN)
def test_their_plain_work_stays_allowlisted(sup: Supervisor, line: str) -> None:
    assert outcome(sup, "strict", line) == APPROVED
    assert outcome(sup, "manual", line) == APPROVED


ARGV_RUNNERS = [
    f"python3 -c 'import os,sys; os.system(sys.argv[1])' '{STAND_IN}'",
    f"python3 -c 'import subprocess,sys; subprocess.run(sys.argv[1:])' {STAND_IN}",
    f"python3 -c 'import os,sys; os.system(\" \".join(sys.argv[1:]))' {STAND_IN}",
    f"perl -e 'system @ARGV' {STAND_IN}",
    f"perl -e 'exec $ARGV[0]' '{STAND_IN}'",
    f"node -e 'require(\"child_process\").execSync(process.argv[1])' '{STAND_IN}'",
    f"awk 'BEGIN{{system(ARGV[1])}}' '{STAND_IN}'",
    f"ruby -e 'system ARGV[0]' '{STAND_IN}'",
    f"php -r 'system($argv[1]);' '{STAND_IN}'",
]


@pytest.mark.parametrize("line", ARGV_RUNNERS)
def test_inline_code_running_its_own_arguments_runs_them_as_a_line(
    sup: Supervisor, line: str
) -> None:
    assert_hardline(sup, line)


def test_arguments_it_only_prints_are_not_a_line(sup: Supervisor) -> None:
    line = f"python3 -c 'import sys; print(sys.argv[1])' '{STAND_IN}'"
    assert "mkfs" not in sup.test("manual", line, context="api").cause
