"""Ctrl-C while the gate decides (docs/approvals.md#the-terminal-prompt): never an exception
between two of the waiting code's steps.

A real supervisor, a real :class:`TerminalPrompter` on pipes, and a real SIGINT
(``signal.raise_signal``) sent from the gate's own approval events, which run in
the waiting thread: the moment an answer is being recorded, and the moment a
prompt is being opened. Before ``interrupts()`` deferred it, the first left the
answer unrecorded and the second left the request open in its table.
"""

from __future__ import annotations

import json
import os
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

import pytest

from multiplex import Supervisor
from multiplex.approval.waiting._pending import PendingApproval
from multiplex.approval.waiting._prompt import TerminalPrompter
from tests.conftest import HomeFactory

ASKS = "approvals:\n  mode: manual\n"
LINE = "rm -rf ./build && touch ran.txt"


@contextmanager
def _terminal() -> Iterator[tuple[IO[str], IO[str], IO[str]]]:
    """A prompter's stdin (read end), the person's keyboard (write end), its screen."""
    read_fd, write_fd = os.pipe()
    with (
        os.fdopen(read_fd, "r") as stdin,
        os.fdopen(write_fd, "w") as keys,
        open(os.devnull, "w") as screen,
    ):
        yield stdin, keys, screen


def _sigint_on(sup: Supervisor, event: str) -> list[str]:
    """SIGINT to this process once, when the gate emits ``event`` (in the waiting thread)."""
    sent: list[str] = []

    def listener(name: str, request: PendingApproval) -> None:
        if name == event and not sent:
            sent.append(threading.current_thread().name)
            signal.raise_signal(signal.SIGINT)

    sup.gate.subscribe(listener)
    return sent


def _records(home: Path) -> list[dict[str, object]]:
    path = home / "logs" / "decisions.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


@contextmanager
def _asked(
    make_home: HomeFactory, supervisor_of: Callable[..., Supervisor], event: str
) -> Iterator[tuple[Path, Supervisor, list[str], IO[str], TerminalPrompter]]:
    """A manual home, its supervisor with a terminal prompter on pipes, and a SIGINT
    sent once the gate emits ``event``: (home, supervisor, sent, keyboard, prompter)."""
    home = make_home("p", ASKS, files={"work/build/x": "x\n"})
    sup = supervisor_of("profiles_dir: profiles\n")
    sent = _sigint_on(sup, event)
    with _terminal() as (stdin, keys, screen):
        prompter = TerminalPrompter(stdin, screen)
        sup.gate.set_prompter(prompter)
        yield home, sup, sent, keys, prompter


def test_ctrl_c_as_the_answer_is_recorded_keeps_the_record_and_the_command_from_starting(
    make_home: HomeFactory, supervisor_of: Callable[..., Supervisor]
) -> None:
    with _asked(make_home, supervisor_of, "approval.resolved") as (home, sup, sent, keys, tty):
        keys.write("o\n")  # answered as soon as asked
        keys.flush()
        with pytest.raises(KeyboardInterrupt), tty.interrupts() as held:
            sup.run(LINE, profile="p", session="s", context="interactive", on_decided=held.decided)
    assert sent == [threading.main_thread().name]  # the SIGINT came while the answer was recorded
    assert [(r["outcome"], r.get("choice")) for r in _records(home)] == [("approved", "once")]
    assert not (home / "work" / "ran.txt").exists()  # approved, but Ctrl-C kept it from starting
    assert (home / "work" / "build" / "x").exists()
    assert sup.gate.tables()["p"].list_open() == []


def test_ctrl_c_as_a_prompt_opens_cancels_it_recorded(
    make_home: HomeFactory, supervisor_of: Callable[..., Supervisor]
) -> None:
    asked = _asked(make_home, supervisor_of, "approval.request")
    with asked as (home, sup, sent, _keys, tty), tty.interrupts() as held:
        result = sup.run(
            LINE, profile="p", session="s", context="interactive", on_decided=held.decided
        )
    assert sent
    assert (result.decision.outcome.value, result.decision.cause) == ("cancelled", "interrupted")
    assert [(r["outcome"], r["cause"]) for r in _records(home)] == [("cancelled", "interrupted")]
    assert sup.gate.tables()["p"].list_open() == []
    assert not (home / "work" / "ran.txt").exists()


def test_after_the_decision_ctrl_c_raises_at_once(
    make_home: HomeFactory, supervisor_of: Callable[..., Supervisor]
) -> None:
    """Once decided (the command running, or done) it stops everything, as before."""
    make_home("p", "command_allowlist: ['true']\n")
    sup = supervisor_of("profiles_dir: profiles\n")
    with _terminal() as (stdin, _keys, screen):
        prompter = TerminalPrompter(stdin, screen)
        with prompter.interrupts() as held:
            result = sup.run("true", profile="p", context="interactive", on_decided=held.decided)
            assert result.exit_code == 0
            with pytest.raises(KeyboardInterrupt):
                signal.raise_signal(signal.SIGINT)
