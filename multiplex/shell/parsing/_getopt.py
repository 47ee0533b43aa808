"""Options read the way the program reads them (docs/allowlist.md#options-that-run-programs).

GNU ``getopt_long`` takes any unique prefix of a long option (``--outp`` is
``--output``), a value glued (``--output=F``, ``-oF``) or in the next word, and
short options clustered (``-tIprog``: ``-t``, then ``-I`` with ``prog``). tar and
ps also take an old-style bundle as their first word (``tar tIf prog a.tar``:
each letter that takes a value takes the next word, in order). ``read_options``
reads an argv with a per-program :class:`OptionTable` built once at import.
A pure leaf: stdlib only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import chain
from operator import itemgetter

__all__ = ["NONE", "OPTIONAL", "REQUIRED", "OptionTable", "Parsed", "read_options", "table"]

NONE, REQUIRED, OPTIONAL = 0, 1, 2


@dataclass(frozen=True, slots=True)
class OptionTable:
    """A program's options: long names (no dashes) and short letters, each with its arity."""

    longs: dict[str, int]
    shorts: dict[str, int]
    bundle: bool = False  # a first word without a dash is a bundle of short letters
    single_dash_long: bool = False  # "-name" is a long option too (gdb -ex, find -exec)
    # Each prefix of a long option and the options it begins, in table order: made from the
    # table alone, at the first abbreviation asked, where each ask went through every option.
    _prefixes: dict[str, tuple[str, ...]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def resolve(self, name: str) -> tuple[str, ...]:
        """The long options ``name`` stands for: itself, else every option it abbreviates."""
        if name in self.longs:
            return (name,)
        if not name:
            return ()
        prefixes = self._prefixes
        if not prefixes and self.longs:
            begun: dict[str, list[str]] = {}
            for option in self.longs:
                for end in range(1, len(option) + 1):
                    begun.setdefault(option[:end], []).append(option)
            prefixes.update((prefix, tuple(options)) for prefix, options in begun.items())
        return prefixes.get(name, ())


def table(
    longs: str, shorts: str = "", *, bundle: bool = False, single: bool = False
) -> OptionTable:
    """``"output= color=? quiet"``: ``=`` takes a value, ``=?`` an optional glued one."""

    def arity(spec: str) -> tuple[str, int]:
        if spec.endswith("=?"):
            return spec[:-2], OPTIONAL
        if spec.endswith("="):
            return spec[:-1], REQUIRED
        return spec, NONE

    return OptionTable(
        dict(arity(s) for s in longs.split()),
        dict(arity(s) for s in shorts.split()),
        bundle,
        single,
    )


@dataclass(frozen=True, slots=True)
class Parsed:
    """Options as ``(names, value)``: ``--x`` for long ones (every name an ambiguous
    prefix may be), ``-x`` for short ones; and the operands, in order."""

    options: tuple[tuple[tuple[str, ...], str | None], ...]
    operands: tuple[str, ...]
    names: frozenset[str] = field(init=False, repr=False, compare=False)
    """Every name of every option read: most asks name none of them."""

    def __post_init__(self) -> None:
        names = frozenset(chain.from_iterable(map(itemgetter(0), self.options)))
        object.__setattr__(self, "names", names)

    def has(self, *names: str) -> bool:
        return not self.names.isdisjoint(names)

    def values(self, *names: str) -> list[str]:
        if self.names.isdisjoint(names):
            return []
        wanted = set(names)
        return [v for found, v in self.options if v is not None and not wanted.isdisjoint(found)]


def _long(
    body: str, args: Sequence[str], i: int, spec: OptionTable
) -> tuple[tuple[str, ...], str | None, int]:
    name, eq, glued = body.partition("=")
    found = spec.resolve(name)
    if not found:
        return (f"--{name}",), (glued if eq else None), i + 1
    arity = max(spec.longs[f] for f in found)
    names = tuple(f"--{f}" for f in found)
    if eq:
        return names, glued, i + 1
    if arity == REQUIRED and i + 1 < len(args):
        return names, args[i + 1], i + 2
    return names, None, i + 1


def _cluster(
    letters: str,
    args: Sequence[str],
    i: int,
    spec: OptionTable,
    out: list[tuple[tuple[str, ...], str | None]],
) -> int:
    """``-abVALUE``: letters until one takes a value (the rest, else the next word)."""
    for j, ch in enumerate(letters):
        arity = spec.shorts.get(ch, NONE)
        if arity == NONE:
            out.append(((f"-{ch}",), None))
            continue
        rest = letters[j + 1 :]
        if rest or arity == OPTIONAL:
            out.append(((f"-{ch}",), rest))
            return i + 1
        value = args[i + 1] if i + 1 < len(args) else None
        out.append(((f"-{ch}",), value))
        return i + 2
    return i + 1


def read_options(args: Sequence[str], spec: OptionTable, *, permute: bool = True) -> Parsed:
    """Read ``args`` (without the program) as the program does; ``permute``: options may
    follow operands (GNU), else the first operand ends them (POSIX, ``git`` before its verb)."""
    out: list[tuple[tuple[str, ...], str | None]] = []
    ops: list[str] = []
    i = 0
    if spec.bundle and args and args[0] and not args[0].startswith("-"):
        # tar tIf PROG FILE: each letter taking a value takes the next word, in order.
        i = 1
        for ch in args[0]:
            if spec.shorts.get(ch, NONE) == REQUIRED and i < len(args):
                out.append(((f"-{ch}",), args[i]))
                i += 1
            else:
                out.append(((f"-{ch}",), None))
    while i < len(args):
        arg = args[i]
        if arg == "--":
            ops.extend(args[i + 1 :])
            break
        if arg.startswith("--"):
            names, value, i = _long(arg[2:], args, i, spec)
            out.append((names, value))
        elif arg.startswith("-") and len(arg) > 1:
            name = arg[1:].partition("=")[0]
            if spec.single_dash_long and (
                name in spec.longs or (len(name) > 1 and spec.resolve(name))
            ):
                names, value, i = _long(arg[1:], args, i, spec)
                out.append((names, value))
            else:
                i = _cluster(arg[1:], args, i, spec, out)
        else:
            if not permute:
                ops.extend(args[i:])
                break
            ops.append(arg)
            i += 1
    return Parsed(tuple(out), tuple(ops))
