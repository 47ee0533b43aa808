"""The values ``parse_line`` returns: redirections, simple commands, parsed lines (docs/approvals.md#parsing).

Frozen, hashable and free of tree-sitter nodes, so deny rules, detection and the
gate can keep and compare them; the limits they mention (MAX_CHARS …) are
:mod:`multiplex.shell.parsing._parse`'s. A pure leaf: it imports only the stdlib.

Each value keeps what the checks derived from it (``once``): parsed once per
decision, every check that asks the same question of the same line or command
gets the first answer, and nothing is carried over to another decision (each
decision parses its line anew). The memo takes no part in equality or hashing.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

__all__ = ["ParsedLine", "Redirect", "SimpleCommand", "in_order", "pipeline_text", "slot_setters"]

_T = TypeVar("_T")


_UNSET = object()


def _once(memo: dict[Hashable, object], key: Hashable, compute: Callable[[], _T]) -> _T:
    # A lookup with a default: the first ask of each key (most asks) raised a KeyError.
    value = memo.get(key, _UNSET)
    if value is _UNSET:
        value = memo[key] = compute()
    return value  # type: ignore[return-value]


# Redirect targets that are not files: writing there changes nothing on disk (docs/allowlist.md#rules).
_NOT_FILES = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"})


@dataclass(frozen=True, slots=True)
class Redirect:
    """One redirection: ``op`` as written (``>``, ``2>``, ``<<<`` …) and its target.

    ``target`` is the unquoted target word; ``&1`` for a descriptor duplicate; for a
    here-document (``<<``) the document text, for a here-string (``<<<``) the string.
    """

    op: str
    target: str

    @property
    def reads_file(self) -> bool:
        """An input redirection from a file, into any descriptor (``< F``, ``3< F``, ``<> F``)."""
        return self.op.lstrip("0123456789") in ("<", "<>") and not self.target.startswith("&")

    @property
    def writes_file(self) -> bool:
        """An output redirection into a file other than /dev/null (fd dups are not)."""
        if ">" not in self.op or self.target.startswith("&"):
            return False
        return self.target not in _NOT_FILES and not self.target.startswith("/dev/fd/")


def slot_setters(cls: type, names: str) -> tuple[Callable[[object, object], None], ...]:
    """The setters of the slots ``names`` (space-separated) of ``cls``, in that order.

    A frozen dataclass's generated ``__init__`` sets each field through
    ``object.__setattr__``, which looks the name up on the class again for every field.
    The gate makes these values every decision (each command of a line, the line), so
    their ``__init__`` is written by hand and sets each slot through its own descriptor:
    0.7 µs less a command, about 40 % of its making. ``tests/test_slots.py`` checks each
    takes the dataclass's fields in order, with their defaults, and sets every one.
    """
    return tuple(vars(cls)[name].__set__ for name in names.split())


@dataclass(frozen=True, slots=True, init=False)
class SimpleCommand:
    """One program invocation as it would receive its arguments.

    ``argv`` has quotes and escapes removed and expansions kept literally (``$HOME``);
    ``VAR=x`` prefixes are not part of it. ``wrapped_by`` names the wrappers and
    payload carriers (``sudo``, ``bash`` for ``bash -c``) stripped to reach it,
    outermost first. ``upstream`` lists the program names of the earlier stages of the
    pipeline feeding this command's standard input. ``assignments`` are the
    ``NAME=VALUE`` words written before the program (``PATH=. ls``), unquoted.
    """

    argv: tuple[str, ...]
    redirects: tuple[Redirect, ...]
    text: str
    wrapped_by: tuple[str, ...] = ()
    upstream: tuple[str, ...] = ()
    assignments: tuple[str, ...] = ()
    program: str = field(init=False, repr=False, compare=False)
    """The basename of ``argv[0]``, lower-cased (``""`` for no argv): what the checks match."""
    memo: dict[Hashable, object] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def __init__(
        self,
        argv: tuple[str, ...],
        redirects: tuple[Redirect, ...],
        text: str,
        wrapped_by: tuple[str, ...] = (),
        upstream: tuple[str, ...] = (),
        assignments: tuple[str, ...] = (),
    ) -> None:
        first = argv[0] if argv else ""
        put = _COMMAND_FIELDS
        put[0](self, argv)
        put[1](self, redirects)
        put[2](self, text)
        put[3](self, wrapped_by)
        put[4](self, upstream)
        put[5](self, assignments)
        put[6](self, first[first.rfind("/") + 1 :].lower())
        put[7](self, {})

    @property
    def writes_file(self) -> bool:
        """Some redirection of this command writes a file (docs/allowlist.md#rules)."""
        return any(r.writes_file for r in self.redirects)

    def once(self, key: Hashable, compute: Callable[[], _T]) -> _T:
        """``compute()`` the first time ``key`` is asked of this command, then that value."""
        return _once(self.memo, key, compute)


_COMMAND_FIELDS = slot_setters(
    SimpleCommand, "argv redirects text wrapped_by upstream assignments program memo"
)


@dataclass(frozen=True, slots=True, init=False)
class ParsedLine:
    """A command line broken into everything it would run (docs/approvals.md#parsing).

    ``error`` is set for a grammar error anywhere (also inside a payload): no allow
    rule can match and the line counts as dangerous. ``over_limit`` is set when the
    line passes MAX_CHARS, MAX_SEGMENTS or MAX_DEPTH: the gate blocks it.
    ``variant_commands`` are the commands of the normalised ``variants`` (those the
    line itself does not run), ``variant_sequences`` each variant's commands in
    order where one is new (``cd $d && rm -rf *`` with ``d=/``), ``sequence`` the
    line's own commands in the order they run with repeats kept (``commands`` holds
    each once: ``cd ..; cd ..`` is one ``cd ..`` there, two here), and
    ``fork_bombs`` the texts of functions that spawn themselves more than once.
    ``plain``: the line was read as plain words (``shell.parsing._plain``), nothing
    inside it was parsed again (no variable's value, no file written then run) and its
    only variant, if any, is itself with the quotes of its words removed.
    """

    line: str
    commands: tuple[SimpleCommand, ...]
    variants: tuple[str, ...] = ()
    script_payloads: tuple[str, ...] = ()
    error: str | None = None
    over_limit: str | None = None
    variant_commands: tuple[SimpleCommand, ...] = ()
    fork_bombs: tuple[str, ...] = ()
    variant_sequences: tuple[tuple[SimpleCommand, ...], ...] = ()
    sequence: tuple[SimpleCommand, ...] = ()
    plain: bool = field(default=False, compare=False)
    memo: dict[Hashable, object] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def __init__(
        self,
        line: str,
        commands: tuple[SimpleCommand, ...],
        variants: tuple[str, ...] = (),
        script_payloads: tuple[str, ...] = (),
        error: str | None = None,
        over_limit: str | None = None,
        variant_commands: tuple[SimpleCommand, ...] = (),
        fork_bombs: tuple[str, ...] = (),
        variant_sequences: tuple[tuple[SimpleCommand, ...], ...] = (),
        sequence: tuple[SimpleCommand, ...] = (),
        plain: bool = False,
    ) -> None:
        put = _LINE_FIELDS
        put[0](self, line)
        put[1](self, commands)
        put[2](self, variants)
        put[3](self, script_payloads)
        put[4](self, error)
        put[5](self, over_limit)
        put[6](self, variant_commands)
        put[7](self, fork_bombs)
        put[8](self, variant_sequences)
        put[9](self, sequence)
        put[10](self, plain)
        put[11](self, {})

    def once(self, key: Hashable, compute: Callable[[], _T]) -> _T:
        """``compute()`` the first time ``key`` is asked of this line, then that value."""
        return _once(self.memo, key, compute)

    def match_argvs(self) -> tuple[tuple[str, ...], ...]:
        """Every argv deny rules and detection must see, deduplicated, order kept."""
        if len(self.commands) == 1 and not self.variant_commands:  # most lines: one command
            return (self.commands[0].argv,) if self.commands[0].argv else ()
        seen: dict[tuple[str, ...], None] = {}
        for cmd in self.commands + self.variant_commands:
            if cmd.argv:
                seen.setdefault(cmd.argv, None)
        return tuple(seen)


_LINE_FIELDS = slot_setters(
    ParsedLine,
    "line commands variants script_payloads error over_limit variant_commands fork_bombs "
    "variant_sequences sequence plain memo",
)


def in_order(parsed: ParsedLine) -> tuple[tuple[SimpleCommand, ...], bool]:
    """The line's commands in the order they run, repeats kept, then its variants' (for
    checks that carry what an earlier command did to a later one: a ``cd``, a copy); and
    whether any command repeats (else each is met once, as in ``commands``)."""
    repeats = len(parsed.sequence) > len(parsed.commands)
    return (parsed.sequence if repeats else parsed.commands) + parsed.variant_commands, repeats


def pipeline_text(commands: Sequence[SimpleCommand], k: int) -> str:
    """``commands[k]``'s text with the stages that feed it (``curl -s URL | sudo bash``),
    when the commands before it are those stages (and the wrappers it was found in); else
    its own."""
    cmd = commands[k]
    shown, j = cmd, k - 1
    while j >= 0 and cmd.wrapped_by and shown.wrapped_by and commands[j].text.endswith(shown.text):
        shown, j = commands[j], j - 1  # sudo -E bash: the pipe feeds the wrapper
    stages = commands[max(0, j + 1 - len(cmd.upstream)) : j + 1]
    if not cmd.upstream or tuple(c.program for c in stages) != cmd.upstream:
        return cmd.text
    return " | ".join(c.text for c in (*stages, shown))
