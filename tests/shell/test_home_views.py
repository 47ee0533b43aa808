"""Another profile's home reached through a view of the filesystem (docs/security.md#another-profiles-home).

Each hostile line read a non-secret file of bob's home from alice's (working in
``work/``) and was approved: the other-home check resolved words as text, so it
missed a process's own view of the filesystem (``/proc/self/root/…``,
``/proc/self/cwd/..``), a symbolic link the line made and then went through
(``ln -s .. u && cat u/../bob/x``), a ``cd`` searched in the ``CDPATH`` the line
set, and a ``cd`` to a word of known variables (``cd $OLDPWD/../..``), after which
relative words were taken for safe.
"""

from __future__ import annotations

import pytest

from multiplex import Supervisor


@pytest.fixture
def sup(alice_and_bob: Supervisor) -> Supervisor:
    return alice_and_bob


def _profiles(sup: Supervisor) -> str:
    return str(sup.profiles["alice"].home.parent)


HOSTILE = [
    "cat /proc/self/root{P}/bob/notes.txt",
    "cat /proc/1/root{P}/bob/notes.txt",
    "cat /proc/self/cwd/../../bob/notes.txt",
    "cat /proc/$$/cwd/../../bob/notes.txt",
    "cat /proc/thread-self/cwd/../../bob/notes.txt",
    "ls /proc/self/root{P}/bob",
    "ln -s .. u && cat u/../bob/notes.txt",
    "ln -sf .. u; cat ./u/../bob/notes.txt",
    "ln --symbolic .. u && cp u/../bob/notes.txt .",
    "ln -s .. && cat ../../bob/notes.txt",
    "CDPATH=../.. cd bob && cat notes.txt",
    "export CDPATH=../..; cd bob; cat notes.txt",
    "CDPATH=../..:. cd bob && rm -rf .",
    "cd $OLDPWD/../.. && cat bob/notes.txt",
    "cd ${PWD}/../.. && cat bob/notes.txt",
]

OWN = [
    "cat /proc/self/status",
    "cat /proc/self/cwd/keep.txt",
    "ln -s .. u && cat u/work/keep.txt",
    "mkdir -p a/b && ln -s ../../.. a/b/c && ls a/b/c",
    "CDPATH=.. cd work && cat keep.txt",
    "cd $OLDPWD && cat keep.txt",
    'cd "$(git rev-parse --show-toplevel)" && cat README.md',
]


@pytest.mark.parametrize("line", HOSTILE)
def test_a_view_into_another_home_is_blocked(sup: Supervisor, line: str) -> None:
    line = line.replace("{P}", _profiles(sup))
    verdict = sup.test("alice", line, context="api")
    assert verdict.outcome == "blocked" and "another profile's home" in verdict.cause, line


@pytest.mark.parametrize("line", OWN)
def test_ones_own_home_through_those_views_stays_approved(sup: Supervisor, line: str) -> None:
    verdict = sup.test("alice", line, context="api")
    assert verdict.outcome == "approved", (line, verdict.cause)
