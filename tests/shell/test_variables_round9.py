"""More variables that make a program load or run other code (docs/security.md#named-patterns,
``command-variable``).

Each hostile line below was approved in the manual home: a prompt with a substitution
bash expands (``PS4='$(cmd)' bash -x``), psql's and rsync's programs (``PSQL_PAGER``,
``RSYNC_CONNECT_PROG``), and code found by a path (``PYTHONUSERBASE``'s site-packages,
``MAKEFILES``, ``CMAKE_TOOLCHAIN_FILE``, ``KUBECONFIG``'s exec plugins, ``TERMINFO``)
beyond the working folder (the usual ``~/.kube/`` configs and the project's files are not).
"""

from __future__ import annotations

import pytest

from multiplex import Supervisor
from tests.shell._carriers import APPROVED, assert_named, homes_fixture, outcome

sup = homes_fixture("variables_round9", ["bash *", "psql *", "rsync *", "python3 *", "make *",
                                         "cmake *", "kubectl *", "less *"])  # fmt: skip

LOADING = [
    "PS4='$(touch /tmp/p)' bash -xc true",
    "SHELLOPTS=xtrace PS4='$(touch /tmp/p)' bash -c true",
    "PS1='`id`' bash -i",
    "PSQL_PAGER='sh -c id' psql",
    "RSYNC_CONNECT_PROG='nc x.test 873' rsync rsync://h/x",
    "PYTHONUSERBASE=/tmp python3 x.py",
    "MAKEFILES=/tmp/evil.mk make",
    "CMAKE_TOOLCHAIN_FILE=/tmp/x.cmake cmake .",
    "KUBECONFIG=/tmp/kc kubectl get pods",
    "TERMINFO=/tmp/t less x",
]
PLAIN = [
    "PS1='$ ' bash -i",
    "PS4='+ ' bash -xc true",
    "PSQL_PAGER=less psql",
    "KUBECONFIG=~/.kube/config kubectl get pods",
    "KUBECONFIG=~/.kube/dev:~/.kube/prod kubectl get pods",
    "MAKEFILES=common.mk make",
    "PYTHONUSERBASE=.venv-user python3 x.py",
]


@pytest.mark.parametrize("line", LOADING)
def test_a_variable_that_loads_or_runs_code_asks(sup: Supervisor, line: str) -> None:
    assert_named(sup, line, "command-variable", ("strict", "manual"))


@pytest.mark.parametrize("line", PLAIN)
def test_a_plain_prompt_or_pager_does_not(sup: Supervisor, line: str) -> None:
    assert outcome(sup, "manual", line) == APPROVED


def test_a_hardline_command_in_a_prompt_is_blocked(sup: Supervisor) -> None:
    verdict = sup.test("manual", "PS4='$(mkfs.ext4 -q -F ./img.bin)' bash -xc true", context="api")
    assert verdict.outcome == "blocked"
