"""Fixtures the shell tests share."""

from __future__ import annotations

import pytest

from multiplex import Supervisor


@pytest.fixture
def alice_and_bob(make_home, supervisor_of) -> Supervisor:  # type: ignore[no-untyped-def]
    """Two manual homes: alice works in ``work/`` (holding ``keep.txt``), bob holds ``notes.txt``."""
    make_home("alice", "terminal:\n  cwd: work\napprovals:\n  mode: manual\n",
              files={"work/keep.txt": "x\n"})  # fmt: skip
    make_home("bob", "approvals:\n  mode: manual\n", files={"notes.txt": "x\n"})
    return supervisor_of("profiles_dir: profiles\ndefault_profile: null\n")  # type: ignore[no-any-return]
