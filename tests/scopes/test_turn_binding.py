"""A turn's bind and unbind: what is bound after it ends, wherever it ends."""

from __future__ import annotations

import contextvars
from collections.abc import Iterator
from pathlib import Path

import pytest

from multiplex import Supervisor
from multiplex.scopes import ProfileScope, peek_scope


@pytest.fixture
def sup(tmp_path: Path) -> Iterator[Supervisor]:
    for name in ("p", "q"):
        (tmp_path / "profiles" / name).mkdir(parents=True)
        (tmp_path / "profiles" / name / "config.yaml").write_text("command_allowlist: []\n")
    (tmp_path / "multiplex.yaml").write_text("profiles_dir: profiles\ndefault_profile: null\n")
    supervisor = Supervisor.from_config(tmp_path / "multiplex.yaml")
    yield supervisor
    supervisor.close()


def test_nested_turns_put_back_what_each_replaced(sup: Supervisor) -> None:
    with sup.turn("p") as outer:
        with sup.turn("q") as inner:
            assert peek_scope() is inner and inner.parent is outer
        assert peek_scope() is outer
    assert peek_scope() is None


def test_a_turn_ended_in_another_context_puts_back_there_what_it_replaced(
    sup: Supervisor,
) -> None:
    ended: list[ProfileScope] = []
    sup.on_turn_end(ended.append)
    with sup.turn("p") as outer:
        turn = sup.turn("q")
        inner = turn.__enter__()
        copied = contextvars.copy_context()  # inner is bound in the copy too
        assert copied.run(peek_scope) is inner
        copied.run(turn.__exit__, None, None, None)
        assert copied.run(peek_scope) is outer  # the copy: what the bind replaced
        assert ended == [inner]
        assert peek_scope() is inner  # this context still holds its own bind
        turn.__exit__(None, None, None)  # ended again here: put back here too
        assert peek_scope() is outer
        assert ended == [inner]  # the end hooks ran once


def test_turn_ids_are_fresh(sup: Supervisor) -> None:
    ids = set()
    for _ in range(600):  # more than one draw of ids
        with sup.turn("p") as scope:
            ids.add(scope.turn_id)
    assert len(ids) == 600
    assert all(i.startswith("t-") and len(i) == 26 for i in ids)
