"""Where an installer puts the programs it installs (docs/security.md#named-patterns).

``cargo install --root ~/.local X`` puts ``X`` in ``~/.local/bin``, which is on
``PATH`` ahead of the system's; ``pip install --root / X``, ``make install
PREFIX=/usr`` and ``meson install --destdir /`` write the system's folders. The
folder each one fills is a write target of the command, judged as any other
(``persistence``, ``sensitive-write``). Only what the line names counts: a bare
``make install`` writes where its makefile says, which the line does not show.
A pure leaf.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterator, Sequence

from multiplex.shell.parsing._argv import operands, option_values

__all__ = ["INSTALLERS", "installed_into"]

INSTALLERS = frozenset({"cargo", "go", "npm", "pnpm", "make", "gmake", "meson", "pip", "pip3",
                        "esbuild", "ld", "ld.lld", "ld.gold", "zig"})  # fmt: skip


def _bin(root: str) -> str:
    return posixpath.join(root, "bin") if root else root


def _assigned(words: Sequence[str], name: str) -> list[str]:
    return [w.partition("=")[2] for w in words if w.startswith(name + "=")]


def installed_into(prog: str, args: Sequence[str], assignments: Sequence[str]) -> Iterator[str]:
    """The folders (or files) ``prog ARGS``, run with ``assignments``, installs into."""
    ops = operands(args)
    if prog == "cargo" and ops[:1] == ["install"]:
        roots = option_values(args, ("--root",)) or _assigned(assignments, "CARGO_INSTALL_ROOT")
        yield from (_bin(r) for r in roots)
    elif prog == "go" and ops[:1] == ["install"]:
        yield from _assigned(assignments, "GOBIN")
        yield from (_bin(p) for p in _assigned(assignments, "GOPATH"))
    elif prog in ("npm", "pnpm") and ({"-g", "--global"} & set(args)):
        yield from (_bin(p) for p in option_values(args, ("--prefix",)))
    elif prog in ("make", "gmake") and "install" in ops:
        given = [*assignments, *args]
        prefixes = _assigned(given, "PREFIX") + _assigned(given, "prefix")
        for destdir in _assigned(given, "DESTDIR"):
            yield from (destdir + _bin(p or "/usr/local") for p in prefixes or [""])
        if not _assigned(given, "DESTDIR"):
            yield from (_bin(p) for p in prefixes)
    elif prog == "meson" and ops[:1] == ["install"]:
        yield from (d + "/usr/local/bin" for d in option_values(args, ("--destdir",)))
    elif prog in ("pip", "pip3") and ops[:1] == ["install"]:
        yield from (r.rstrip("/") + "/usr/local/bin" for r in option_values(args, ("--root",)))
    elif prog == "esbuild":
        yield from option_values(args, ("--outfile", "--outdir"))
    elif prog in ("ld", "ld.lld", "ld.gold"):
        yield from option_values(args, ("-o", "--output"))
        yield from (a[2:] for a in args if a.startswith("-o") and len(a) > 2)
    elif prog == "zig":
        yield from (a.partition("=")[2] for a in args if a.startswith("-femit-bin="))
