"""The files Python's own command-line modules write (``python -m MODULE ARGS``).

The standard library ships tools an allow rule for ``python *`` (or ``python3 -m *``)
lets run, each writing where its arguments say: ``json.tool IN OUT``, ``zipfile -c
ZIP …`` and ``-e ZIP DIR``, ``tarfile -c``/``-e``, ``zipapp -o``, ``cProfile -o``,
``trace -C``, ``venv DIR``, ``gzip F``. :func:`module_writes` names what each
writes, so a protected, sensitive or start-up file is judged as ``cp``'s
destination is (docs/approvals.md#protected-files); :func:`module_extracts_to`
names the folder an archive is extracted into, whose members' names the line
does not show (a ``.bashrc`` among them when it is the home).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from multiplex.shell.parsing._getopt import read_options, table

__all__ = ["PY_WRITERS", "module_extracts_to", "module_writes", "python_module"]

# The interpreter's own options before -m: those that take the next word as a value.
_VALUED = frozenset({"-W", "-X", "-Q"})


def python_module(args: Sequence[str]) -> tuple[str, tuple[str, ...]] | None:
    """``(MODULE, its args)`` of ``python [OPTIONS] -m MODULE ARGS`` (also ``-mMODULE``,
    ``-Bm MODULE``), the module lower-cased; None when it runs no module."""
    i = 0
    while i < len(args):
        arg = args[i]
        if not arg.startswith("-") or arg in ("-", "--") or arg.startswith("--"):
            return None
        if arg in _VALUED:
            i += 2
            continue
        at = arg.find("m", 1)
        if at > 0 and "c" not in arg[1:at]:  # -m, -Bm, -mjson.tool (not -c's code)
            module = arg[at + 1 :] or (args[i + 1] if i + 1 < len(args) else "")
            rest = args[i + 1 :] if arg[at + 1 :] else args[i + 2 :]
            return (module.lower(), tuple(rest)) if module else None
        if "c" in arg[1:]:
            return None  # python -c CODE
        i += 1
    return None


_OPTIONS = {
    "json.tool": table("sort-keys no-ensure-ascii json-lines indent= tab no-indent compact"),
    "zipfile": table("list= extract= test= create=", "l= e= t= c="),
    "tarfile": table("list= extract= test= create= verbose filter=", "l= e= t= c= v"),
    "zipapp": table("output= python= main= compress info", "o= p= m= c"),
    "cprofile": table("outfile= sort=", "o= s= m"),
    "profile": table("outfile= sort=", "o= s= m"),
    "trace": table(
        "count trace listfuncs trackcalls report file= coverdir= missing summary no-report "
        "ignore-module= ignore-dir= timing module",
        "c t l T r f= C= m s R g",
    ),
    "venv": table(
        "system-site-packages symlinks copies clear upgrade without-pip prompt= upgrade-deps"
    ),
    "gzip": table("decompress best fast", "d"),
}
PY_WRITERS = frozenset(_OPTIONS)


def module_writes(module: str, args: Sequence[str]) -> Iterator[str]:
    """The files (or folders) ``python -m MODULE ARGS`` writes."""
    parsed = read_options(args, _OPTIONS[module])
    ops = list(parsed.operands)
    if module == "json.tool":
        yield from ops[1:2]  # [infile [outfile]]
    elif module in ("zipfile", "tarfile"):
        created = parsed.values("-c", "--create")
        yield from created[:1]  # -c ARCHIVE SOURCE…: the archive (the sources follow)
        yield from module_extracts_to(module, args)
    elif module == "zipapp":
        yield from parsed.values("-o", "--output")
    elif module in ("cprofile", "profile"):
        yield from parsed.values("-o", "--outfile")
    elif module == "trace":
        yield from parsed.values("-C", "--coverdir", "-f", "--file")
    elif module == "venv":
        yield from ops  # each ENV_DIR made (and written) as a folder
    elif module == "gzip":  # F -> F.gz, -d F.gz -> F
        undo = parsed.has("-d", "--decompress")
        yield from (op[:-3] if undo and op.endswith(".gz") else op + ".gz" for op in ops)


def module_extracts_to(module: str, args: Sequence[str]) -> list[str]:
    """The folder ``python -m zipfile|tarfile -e ARCHIVE [DIR]`` extracts into, or ``[]``."""
    if module not in ("zipfile", "tarfile"):
        return []
    parsed = read_options(args, _OPTIONS[module])
    archives = parsed.values("-e", "--extract")
    if not archives:
        return []
    ops = list(parsed.operands)
    return ops[:1] or ["."]  # -e ARCHIVE DIR (tarfile: DIR may be left out: the cwd)
