"""Files the line writes and then runs (docs/approvals.md#parsing).

``echo 'rm -rf ~' > x.sh && bash x.sh`` runs what the line wrote, and the line shows
it: the text a command writes into a file (``echo``/``printf`` redirected, ``tee F
<<< TEXT``, ``cat > F << EOF … EOF``) is read where a later command runs that file —
as shell code by a shell, ``source``, ``.`` or ``./F``; as script code by an
interpreter (``python3 F``, ``node F``, ``perl F`` …). A file the line does not
write is judged by its name, as before. A pure leaf.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from multiplex.shell.parsing._argv import fed_text, program_name
from multiplex.shell.parsing._parsed import SimpleCommand

__all__ = ["written_then_run"]

_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "busybox", "source", "."})
_INTERPRETERS = re.compile(
    r"python[\d.]*|pypy[\d.]*|node|nodejs|deno|bun|perl[\d.]*|ruby[\d.]*|php[\d.]*|lua[\d.]*|Rscript"
)
_MAX_FILES = 32  # files followed, at most (a line of thousands of writes stays linear)
_ESCAPES = {"\\n": "\n", "\\t": "\t", "\\\\": "\\"}


def _text_written(cmd: SimpleCommand) -> str | None:
    """What ``cmd`` writes on its standard output that the line shows, or None."""
    prog, args = cmd.program, cmd.argv[1:]
    if prog == "echo":
        words = list(args)
        while words and words[0] in ("-n", "-e", "-E", "-ne", "-en"):
            words.pop(0)
        text = " ".join(words)
        return (
            re.sub(r"\\[nt\\]", lambda m: _ESCAPES[m.group(0)], text) if "-e" in args[:2] else text
        )
    if prog == "printf" and args:
        return re.sub(r"\\[nt\\]", lambda m: _ESCAPES[m.group(0)], " ".join(args))
    if prog in ("cat", "tee"):  # cat > F << EOF, tee F <<< TEXT
        return fed_text(cmd.redirects, None)
    return None


def _targets(cmd: SimpleCommand) -> list[str]:
    found = [r.target for r in cmd.redirects if r.writes_file]
    if cmd.program == "tee":
        found += [a for a in cmd.argv[1:] if not a.startswith("-")]
    return found


def _same(path: str, word: str) -> bool:
    """``word`` names the file written as ``path`` (``x.sh``, ``./x.sh``)."""
    return path.removeprefix("./") == word.removeprefix("./")


def written_then_run(sequence: Sequence[SimpleCommand]) -> tuple[list[str], list[str]]:
    """(shell code, script code) of files the line writes and a later command runs."""
    written: dict[str, str] = {}
    shell: list[str] = []
    scripts: list[str] = []
    for cmd in sequence:
        if not cmd.argv:
            continue
        text = _text_written(cmd) if cmd.redirects or cmd.program == "tee" else None
        if text is not None and len(written) < _MAX_FILES:
            for path in _targets(cmd):
                appended = any(r.op.endswith(">>") and r.target == path for r in cmd.redirects)
                written[path] = (written.get(path, "") + "\n" if appended else "") + text
        if not written:
            continue
        program = cmd.argv[0]
        if any(_same(path, program) for path in written) and "/" in program:  # ./x.sh
            shell += [t for p, t in written.items() if _same(p, program)]
            continue
        ops = [a for a in cmd.argv[1:] if not a.startswith("-")]
        if not ops:
            continue
        runner = program_name(program)
        if runner == "busybox" and ops[0] in ("sh", "ash"):
            ops = ops[1:]
        texts = [t for p, t in written.items() if ops and _same(p, ops[0])]
        if runner in _SHELLS:
            shell += texts
        elif _INTERPRETERS.fullmatch(runner):
            scripts += texts
    return shell, scripts
