"""The issue-27 strict profile (``sed *``, ``tar *``, ``git *``, ``node *``, ``xargs *``,
``make *``, ``awk *``, ``python -m pytest *`` …) against code fed or loaded another way.

Found this session: a script read from ``/dev/stdin`` (``node /dev/stdin <<< CODE``,
``python3 /dev/stdin``, ``perl``, ``ruby``), an awk program read with ``-f /dev/stdin``
or ``-f -``, and a makefile from a process substitution (``make -f <(echo 'all:; CMD')``)
ran a hardline command approved in both homes; awk's ``@include``/``@load`` and
pytest's code from beyond the project (``-p PLUGIN``, tests or a config elsewhere,
``addopts``, ``--pyargs``) were approved by their allow rules
(docs/allowlist.md#options-that-run-programs, docs/security.md#code-carriers).
"""

from __future__ import annotations

import pytest

from multiplex import Supervisor
from tests.shell._carriers import APPROVED, ASK, assert_hardline, homes_fixture, outcome

sup = homes_fixture(
    "strict_tools", ["sed *", "echo *", "ls *", "cat *", "tar *", "git *", "node *", "xargs *",
                     "make *", "awk *", "python -m pytest *", "npm run test:*"],
)  # fmt: skip

M = "mkfs.ext4 -q -F ./img.bin 1M"
FED_CODE = [
    f'node /dev/stdin <<< \'require("child_process").execSync("{M}")\'',
    f"python3 /dev/stdin <<< 'import os; os.system(\"{M}\")'",
    f"perl /dev/stdin <<< 'system(\"{M}\")'",
    f"ruby /dev/fd/0 <<< 'system(\"{M}\")'",
    f"awk -f /dev/stdin f <<< 'BEGIN{{system(\"{M}\")}}'",
    f"awk -f - f <<< 'BEGIN{{system(\"{M}\")}}'",
    f"make -f <(echo 'all:; {M}')",
    f"make -f <(printf 'all:\\n\\t{M}\\n')",
    f"git archive --remote='ext::{M}' HEAD",
    f"git archive --remote 'ext::{M}' HEAD",
    f"git clone 'ext::{M}' x",
    f"git ls-remote 'ext::sh -c \"{M}\"'",
]
NOT_VOUCHED = [
    "awk '@include \"/tmp/evil.awk\"; 1' f",
    "gawk '@load \"/tmp/evil\"; 1' f",
    "make -f <(cat evil.mk)",
    "make -f /dev/fd/3 3< evil.mk",
    "python -m pytest -p evil_plugin",
    "python -m pytest /tmp/evil_test.py",
    "python -m pytest ../other/tests",
    "python -m pytest --pyargs evil",
    "python -m pytest -o addopts='-p evil'",
    "python -m pytest -c /tmp/evil.ini",
    "python -m pytest --rootdir=/tmp/evil",
    "python -m pytest -o pythonpath=/tmp/evil",
]
STILL_VOUCHED = [
    "python -m pytest -p no:cacheprovider",
    "python -m pytest -c pytest.ini",
    "python -m pytest -o addopts=-q tests/",
    "python -m pytest -o pythonpath=src",
    "python -m pytest tests/ -x -q",
    "python -m pytest -k test_x tests/test_a.py",
    "make -f Makefile.ci",
    "awk '{print $1}' f",
    "node x.js",
    "git commit -m 'document the ext:: transport'",
]


@pytest.mark.parametrize("line", FED_CODE)
def test_code_fed_through_a_file_name_is_read(sup: Supervisor, line: str) -> None:
    assert_hardline(sup, line)


@pytest.mark.parametrize("line", NOT_VOUCHED)
def test_code_from_beyond_the_line_is_not_allowlisted(sup: Supervisor, line: str) -> None:
    assert outcome(sup, "strict", line) == ASK


@pytest.mark.parametrize("line", STILL_VOUCHED)
def test_the_projects_own_runs_stay_allowlisted(sup: Supervisor, line: str) -> None:
    assert outcome(sup, "strict", line) == APPROVED
