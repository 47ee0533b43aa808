"""Delivering approval requests to a human (docs/approvals.md#outcomes-and-what-the-agent-sees, docs/approvals.md#who-can-answer).

A prompter delivers a request; the answer comes back through
``request.answer(...)`` (any thread, any time) or the wait ends with a cause.
Every failure to get an answer is ``cancelled`` with its cause — never a deny.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import IO, Protocol, runtime_checkable

from multiplex.approval._decision import Decision
from multiplex.approval.waiting._pending import Answer, Choice, PendingApproval, command_block

__all__ = [
    "CallbackPrompter",
    "Interrupts",
    "PromptUndeliverable",
    "Prompter",
    "TerminalPrompter",
    "parse_choice",
    "prompt_lines",
]


class PromptUndeliverable(Exception):
    """The prompter cannot show this request to anyone (the message is the cause)."""


@runtime_checkable
class Prompter(Protocol):
    """Shows an approval request to a human.

    ``deliver`` must return promptly; the answer arrives later via
    ``request.answer`` or ``request.cancel``. Raise ``PromptUndeliverable`` when
    the request cannot be shown (another UI owns the terminal, ...).
    """

    def deliver(self, request: PendingApproval) -> None: ...


_WORDS = {
    "o": Choice.ONCE,
    "once": Choice.ONCE,
    "y": Choice.ONCE,
    "yes": Choice.ONCE,
    "s": Choice.SESSION,
    "session": Choice.SESSION,
    "a": Choice.ALWAYS,
    "always": Choice.ALWAYS,
    "d": Choice.DENY,
    "deny": Choice.DENY,
    "n": Choice.DENY,
    "no": Choice.DENY,
}


def parse_choice(text: str) -> Choice | None:
    """``o``/``once``, ``s``/``session``, ``a``/``always``, ``d``/``deny`` (case-insensitive)."""
    return _WORDS.get(text.strip().lower())


class CallbackPrompter:
    """Calls ``ask(request)`` on its own thread; the return value is the answer.

    ``ask`` returns an ``Answer``, a ``Choice`` or a choice word. If it raises,
    the request is cancelled with the cause ``prompt callback raised <Class>``.
    """

    def __init__(self, ask: Callable[[PendingApproval], Answer | Choice | str | None]) -> None:
        self._ask = ask

    def deliver(self, request: PendingApproval) -> None:
        threading.Thread(
            target=self._run, args=(request,), daemon=True, name="multiplex-prompt"
        ).start()

    def _run(self, request: PendingApproval) -> None:
        try:
            reply = self._ask(request)
        except Exception as exc:  # docs/approvals.md#outcomes-and-what-the-agent-sees: a raising callback is cancelled, not denied
            request.cancel(f"prompt callback raised {type(exc).__name__}")
            return
        if reply is None:
            return  # the callback will answer later (or the wait times out)
        if isinstance(reply, Answer):
            request.answer(reply)
            return
        choice = reply if isinstance(reply, Choice) else parse_choice(reply)
        if choice is None:
            request.cancel(f"prompt callback gave no valid answer ({reply!r})")
        else:
            request.answer(Answer(choice, by="terminal"))


def _is_terminal(stream: IO[str]) -> bool:
    try:
        return stream.isatty()
    except (OSError, ValueError, AttributeError):  # closed, or no such method
        return False


class TerminalPrompter:
    """Asks on a terminal: ``[o]nce [s]ession [a]lways [d]eny``, or the number of a
    suggested rule to save it "always" (docs/approvals.md#suggestions).

    Only one prompt owns the terminal at a time: a second concurrent request is
    undeliverable (cancelled with that cause), not queued behind a hidden one.
    EOF and interrupts cancel the request with their cause.
    """

    def __init__(self, stdin: IO[str], stdout: IO[str], *, attempts: int = 3) -> None:
        # Who answers: a person at a terminal, or whatever feeds a pipe (``yes | multiplex
        # exec``): the record says which (docs/approvals.md#who-answered).
        self._by = "terminal" if _is_terminal(stdin) else "stdin"
        self._in = stdin
        self._out = stdout
        self._attempts = attempts
        self._owner = threading.Lock()
        self._asking: PendingApproval | None = None
        self._held: Interrupts | None = None  # while interrupts() is entered

    def deliver(self, request: PendingApproval) -> None:
        held = self._held
        if held is not None and held.pressed:  # Ctrl-C as the prompt was being opened
            request.cancel("interrupted")
            return
        if not self._owner.acquire(blocking=False):
            raise PromptUndeliverable("another prompt owns the terminal")
        self._asking = request
        threading.Thread(
            target=self._run, args=(request,), daemon=True, name="multiplex-tty"
        ).start()

    def _run(self, request: PendingApproval) -> None:
        try:
            self._out.write("\n".join(prompt_lines(request)) + "\n")
            for _ in range(self._attempts):
                if not request.open:
                    return
                chosen = _choosable(request)
                more = f" or 1-{len(chosen)}" if len(chosen) > 1 else ""
                self._out.write(f"[o]nce [s]ession [a]lways [d]eny{more} > ")
                self._out.flush()
                line = self._in.readline()
                if line == "":
                    request.cancel("input closed (EOF) before an answer")
                    return
                choice = parse_choice(line)
                if choice is not None:
                    request.answer(Answer(choice, by=self._by))
                    return
                rule = chosen.get(line.strip()) if len(chosen) > 1 else None
                if rule is not None:
                    request.answer(Answer(Choice.ALWAYS, rule=rule, by=self._by))
                    return
                self._out.write(f"please answer o, s, a or d{more}\n")
            request.cancel("no valid answer on the terminal")
        except KeyboardInterrupt:
            request.cancel("interrupted")
        except (OSError, ValueError) as exc:
            request.cancel(f"terminal unavailable ({type(exc).__name__})")
        finally:
            self._asking = None
            self._owner.release()

    @contextmanager
    def interrupts(self) -> Iterator[Interrupts]:
        """While inside (main thread only), Ctrl-C never cuts the gate's decision short.

        With a prompt open on this terminal it cancels that prompt (cause
        ``interrupted``) from a thread of its own. Until the decision is made and
        recorded (the caller says so with :meth:`Interrupts.decided`), it is only
        noted: a prompt opening after it is cancelled the same way, and ``decided``
        then raises KeyboardInterrupt if the command was approved, so it does not
        start. After that, as before it, it raises KeyboardInterrupt at once (the
        command running is stopped as usual).

        The waiting code so never meets an exception raised between two of its
        steps, where it could leave a request open or an answer unrecorded.
        """
        held = Interrupts()

        def on_interrupt(signum: int, frame: FrameType | None) -> None:
            request = self._asking
            if request is not None and request.open:
                # Not here: the interrupted code may hold the request's lock.
                threading.Thread(
                    target=request.cancel,
                    args=("interrupted",),
                    daemon=True,
                    name="multiplex-ctrl-c",
                ).start()
            elif held.deciding:
                held.pressed = True
            else:
                signal.default_int_handler(signum, frame)

        before = signal.signal(signal.SIGINT, on_interrupt)
        self._held = held
        try:
            yield held
        finally:
            self._held = None
            signal.signal(signal.SIGINT, before)


class Interrupts:
    """Ctrl-C while :meth:`TerminalPrompter.interrupts` holds the terminal's SIGINT."""

    def __init__(self) -> None:
        self.deciding = True  # until decided(): a Ctrl-C is noted, not raised
        self.pressed = False

    def decided(self, decision: Decision) -> None:
        """The gate's decision is made and recorded: from now on Ctrl-C raises at once;
        one pressed meanwhile keeps an approved command from starting."""
        self.deciding = False
        if self.pressed and decision.approved:
            raise KeyboardInterrupt


def prompt_lines(request: PendingApproval) -> list[str]:
    """What a terminal shows a human before asking (docs/approvals.md#the-terminal-prompt):
    the command, who asked, when, where and in what, and why, once."""
    asked = time.strftime("%H:%M:%S", time.localtime(request.created_at))
    who = f" by {request.asked_by}" if request.asked_by else ""
    return [
        "",
        f"The agent wants to run (profile {request.profile}, session {request.session}):",
        command_block(request.display),
        f"  Asked:        at {asked}{who} (context {request.context})",
        *request.why.lines(),
    ]


def _choosable(request: PendingApproval) -> dict[str, str]:
    """The suggested rules a number picks (a redacted one cannot be saved by its text)."""
    return {
        str(number): item.rule
        for number, item in enumerate(request.why.suggestions, 1)
        if not item.redacted
    }
