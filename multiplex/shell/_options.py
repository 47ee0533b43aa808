"""Options that make an allowlisted program write files or run other programs (docs/allowlist.md#options-that-run-programs).

An allow rule like ``git log *`` vouches for reading history, not for
``git log --output=FILE`` or ``--ext-diff``. ``risky_option`` names the first such
option of an argv, so the gate's allowlist step passes the command on to
detection instead of approving it. A pure leaf: stdlib only.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

__all__ = ["RISKY_OPTIONS", "risky_option"]


def _o(text: str) -> tuple[str, ...]:
    return tuple(text.split())


# program -> option prefixes ("--output" also covers "--output=FILE"; "-o" covers "-oFILE").
RISKY_OPTIONS: dict[str, tuple[str, ...]] = {
    "git": _o(
        "--output --ext-diff -c --exec-path --upload-pack --receive-pack --exec -x -O "
        "--open-files-in-pager --output-directory --template --config-env --textconv -u"
    ),
    "find": _o("-exec -execdir -ok -okdir -delete -fprint -fprint0 -fprintf -fls"),
    "fd": _o("-x --exec -X --exec-batch"),
    "sort": _o("-o --output --compress-program"),
    "tar": _o(
        "--to-command --checkpoint-action --use-compress-program -I --info-script -F "
        "--new-volume-script --rsh-command --rmt-command -x --extract --get -c --create -f"
    ),
    "rsync": _o("-e --rsh --rsync-path --log-file --write-batch --only-write-batch"),
    "less": _o("-o --log-file -O --LOG-FILE --lesskey-file"),
    "more": (),
    "man": _o("-P --pager -H --html -l --local-file -E"),
    "zip": _o("-T -TT --unzip-command"),
    "ssh": _o("-o -F -L -R -D -w"),
    "scp": _o("-S -o -F"),
    "curl": _o(
        "-o --output -O --remote-name -K --config -T --upload-file -D --dump-header -c --cookie-jar"
    ),
    "wget": _o("-O --output-document -o --output-file -a --append-output -e --execute -P"),
    "rg": _o("--pre --pre-glob"),
    "vim": _o("-c --cmd -S"),
    "vi": _o("-c --cmd -S"),
    "nvim": _o("-c --cmd -S"),
    "diff": _o("--to-file"),
    "date": _o("-s --set"),
    "xxd": _o("-r"),
    "jq": _o("--rawfile --slurpfile"),
    "tee": (),
    "sqlite3": _o("-cmd -init"),
    "psql": _o("-c --command -f --file -o --output"),
    "mysql": _o("-e --execute"),
    "ls": (),
    "cat": (),
}
# sed scripts that write files (w/W) or run commands (e): s///e, s///w FILE, "e cmd".
_SED_RISK = re.compile(r"(?:^|[;\n{}])\s*[ewW](?:\s|$)|/[gpIiMm0-9]*[ewW]")


def _starts(arg: str, option: str) -> bool:
    if arg == option:
        return True
    if option.startswith("--"):
        return arg.startswith(option + "=")
    # "-oFILE": a short option glued to its value (only for options of one letter).
    return len(option) == 2 and arg.startswith(option) and not arg.startswith("--")


def risky_option(argv: Sequence[str]) -> str | None:
    """The first option of ``argv`` that writes a file or runs a program, or None."""
    if not argv:
        return None
    prog = argv[0].rpartition("/")[2].lower()
    args = argv[1:]
    if prog in ("sed", "gsed"):
        if any(a.startswith(("-i", "--in-place", "-s")) for a in args if a != "-s"):
            return "-i"
        scripts = [a for a in args if not a.startswith("-")][:1]
        scripts += [args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-e", "--expression")]
        return "e/w command" if any(_SED_RISK.search(s) for s in scripts) else None
    if prog in ("awk", "gawk", "mawk", "nawk"):
        code = " ".join(a for a in args if not a.startswith("-"))
        return "system/pipe" if re.search(r"system|\||>|getline|-i\s*inplace", code) else None
    options = RISKY_OPTIONS.get(prog, ())
    if not options:
        return None
    exact, long_values, glued = _shapes(options)
    for arg in args:
        if arg == "--":
            break
        # One set lookup and two C-level prefix tests per word; the option's name only on a hit.
        if arg in exact or arg.startswith(long_values) or _glued(arg, glued):
            return next(option for option in options if _starts(arg, option))
    return None


def _glued(arg: str, glued: tuple[str, ...]) -> bool:
    return arg.startswith(glued) and not arg.startswith("--")


@functools.lru_cache(maxsize=128)
def _shapes(options: tuple[str, ...]) -> tuple[frozenset[str], tuple[str, ...], tuple[str, ...]]:
    """What :func:`_starts` accepts, by shape: exact words, ``--long=`` and glued ``-oVALUE``."""
    long_values = tuple(o + "=" for o in options if o.startswith("--"))
    glued = tuple(o for o in options if len(o) == 2 and not o.startswith("--"))
    return frozenset(options), long_values, glued
