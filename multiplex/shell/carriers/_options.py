"""Options that make an allowlisted program write files or run other programs (docs/allowlist.md#options-that-run-programs).

An allow rule like ``git log *`` vouches for reading history, not for
``git log --output=FILE`` or ``--ext-diff``. ``risky_option`` names the first such
option of an argv, so the gate's allowlist step passes the command on to
detection instead of approving it. Options are read as the program reads them: a
unique prefix of a long option counts (``--outp`` is ``--output``), and the
programs of ``shell.carriers._tool_code`` are judged by what they carry. A pure leaf.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

from multiplex.shell.carriers._tool_code import CARRYING, TAR_OPTIONS, awk_program, carried
from multiplex.shell.detection._secret_checks import starts_programs
from multiplex.shell.detection.paths._writes import DOWNLOAD_OPTIONS
from multiplex.shell.parsing._argv import (
    git_elsewhere,
    git_subcommand,
    leaves_cwd,
    names,
    operands,
    option_given,
)
from multiplex.shell.parsing._getopt import read_options, table
from multiplex.shell.parsing.runs._inline import INLINE_HOSTS
from multiplex.shell.parsing.runs._unwrap import unwrap_step

__all__ = ["OPTION_RISKS", "RISKY_OPTIONS", "risky_option"]


# program -> option prefixes ("--output" also covers "--output=FILE"; "-o" covers "-oFILE").
RISKY_OPTIONS: dict[str, tuple[str, ...]] = {
    # Long options: one meaning in every git command. The short ones mean it in one
    # command only (git push -u, git add -u, git switch -c are plain): _GIT_SHORT.
    "git": names(
        "--output --ext-diff --exec-path --upload-pack --receive-pack --exec "
        "--open-files-in-pager --output-directory --template --config-env --textconv "
        "--httpd --browser --sendmail-cmd --to-cmd --cc-cmd --header-cmd --smtp-server"
    ),
    "find": names("-exec -execdir -ok -okdir -delete -fprint -fprint0 -fprintf -fls"),
    "fd": names("-x --exec -X --exec-batch"),
    "sort": names("-o --output --compress-program"),
    # the system's logs deleted, rotated away or moved: never the reading an allow rule meant
    "journalctl": names(
        "--vacuum-size --vacuum-time --vacuum-files --rotate --flush --relinquish-var --setup-keys "
        "--cursor-file"
    ),
    "tar": names(
        "--to-command --checkpoint-action --use-compress-program -I --info-script -F "
        "--new-volume-script --rsh-command --rmt-command -x --extract --get"
    ),
    "rsync": names("-e --rsh --rsync-path --log-file --write-batch --only-write-batch"),
    "less": names("-o --log-file -O --LOG-FILE --lesskey-file"),
    "more": (),
    "man": names("-P --pager -H --html -l --local-file -E"),
    "zip": names("-T -TT --unzip-command"),
    "ssh": names("-o -F -L -R -D -w"),
    "scp": names("-S -o -F"),
    "curl": names(
        "-o --output -O --remote-name -K --config -T --upload-file -D --dump-header -c --cookie-jar"
    ),
    "wget": names(
        "-O --output-document -o --output-file -a --append-output -e --execute -P -N --timestamping"
    ),
    "rg": names("--pre --pre-glob"),
    "vim": names("-c --cmd -S -s"),  # -s FILE: keys typed from FILE
    "vi": names("-c --cmd -S -s"),
    "nvim": names("-c --cmd -S -s"),
    "diff": names("--to-file"),
    "date": names("-s --set"),
    "xxd": names("-r"),
    "jq": names("--rawfile --slurpfile"),
    "tee": (),
    "sqlite3": names("-cmd -init"),
    "psql": names("-c --command -f --file -o --output"),
    "mysql": names("-e --execute"),
    "ls": (),
    "cat": (),
    "pytest": names(
        "--junit-xml --junitxml --debug --resultlog --result-log --report-log --basetemp"
    ),
    "openssl": names("-out -keyout"),
}
# Long options that are not risky but that a risky one begins with: an exact word is that
# option, not an abbreviation of the longer one (GNU getopt_long, git's parse-options).
_EXACT_SAFE: dict[str, tuple[str, ...]] = {
    "git": names("--text"),
    "tar": names("--checkpoint --to-stdout --totals --touch --file --list"),
    "man": names("--help"),
}


_INTERPRETERS = frozenset(
    {"node", "nodejs", "bun", "deno", "perl", "ruby", "lua", "luajit", "rscript", "r", "php",
     *INLINE_HOSTS}
)  # fmt: skip
_PYTHON = re.compile(r"^(python|pypy)[0-9.]*$")


# Every program risky_option reads the options of (the rest return at once).
_JUDGED = frozenset(
    {*RISKY_OPTIONS, *CARRYING, *_INTERPRETERS, "awk", "gawk", "mawk", "nawk", "gtar", "bsdtar"}
)
# Programs some option of which writes a file or runs a program: a word computed at run
# time may be that option (shell.detection.paths._target_checks.each_unseen_arguments).
OPTION_RISKS = frozenset(
    {*(p for p, o in RISKY_OPTIONS.items() if o), *CARRYING, *_INTERPRETERS, "awk", "gawk",
     "mawk", "nawk", "gtar", "bsdtar"}
) - {"xargs", "enable"}  # fmt: skip


# git filter-branch's options whose value is a shell command (a shell script: exact names).
_FILTERS = names(
    "--env-filter --tree-filter --index-filter --msg-filter --commit-filter --parent-filter "
    "--tag-name-filter"
)


# git's short options that run a program or set its configuration, by command: clone
# -u PROG (upload-pack) and -c KEY=VALUE, rebase -x CMD, difftool -x CMD, grep -O PAGER.
_GIT_SHORT = {"clone": ("-u", "-c"), "rebase": ("-x",), "difftool": ("-x",), "grep": ("-O",)}


def _git_runs_or_leaves(args: Sequence[str]) -> str | None:
    """A tree elsewhere (``git -C /``), a command run per submodule or commit, a server;
    ``-c`` before the command (any configuration key), a command's own short option."""
    elsewhere = git_elsewhere(args)
    if elsewhere is not None:
        return elsewhere
    sub, rest = git_subcommand(args)
    before = args[: len(args) - len(rest) - 1] if sub else args
    if any(a == "-c" or (a.startswith("-c") and not a.startswith("--")) for a in before):
        return "-c"
    for short in _GIT_SHORT.get(sub, ()):
        if any(a == short or (a.startswith(short) and not a.startswith("--")) for a in rest):
            return short
    if sub in ("clean", "rm"):  # a pathspec outside the working folder: git clean -ffdx ~
        outside = next((op for op in operands(rest) if leaves_cwd(op)), None)
        if outside is not None:
            return f"git {sub} {outside}"
    if sub == "submodule" and "foreach" in rest:
        return "git submodule foreach"
    if sub == "filter-branch":
        return next((a for a in rest if a.partition("=")[0] in _FILTERS), None)
    if sub == "filter-repo":  # Python callbacks it runs on every commit, blob or name
        return next((a for a in rest if a.partition("=")[0].endswith("-callback")), None)
    if sub == "daemon":  # serves the repositories it is given (or all below a path) to anyone
        return "git daemon"
    return None


def _abbreviates(arg: str, prog: str, longs: tuple[str, ...]) -> str | None:
    """The risky long option ``--name`` abbreviates (``--outp`` for ``--output``), or None."""
    name = arg.partition("=")[0]
    if len(name) < 3 or name in _EXACT_SAFE.get(prog, ()):
        return None
    return next((o for o in longs if o.startswith(name)), None)


def risky_option(argv: Sequence[str], fed: str | None = None) -> str | None:
    """The first option of ``argv`` that writes a file or runs a program, or None;
    ``fed``: what the line feeds its standard input, where it shows it."""
    if not argv:
        return None
    prog = argv[0].rpartition("/")[2].lower()
    if prog not in _JUDGED and not _PYTHON.match(prog):
        return None  # ls, cat, echo …: no option of theirs writes or runs anything
    args = argv[1:]
    if prog in _INTERPRETERS or _PYTHON.match(prog):
        # node -e 'execSync(…)', python -m timeit 'os.system(…)': inline code that starts
        # programs (docs/security.md#code-carriers)
        scripts = unwrap_step(tuple(argv), (), fed).scripts
        if any(starts_programs(code) for code in scripts):
            return "inline code starts programs"
    if prog.startswith("python") and len(args) > 1 and args[0] == "-m":
        prog, args = args[1].lower(), args[2:]  # python -m pytest --junit-xml=…
    if prog in ("awk", "gawk", "mawk", "nawk"):
        return _awk(args)
    if prog == "git" and (why := _git_runs_or_leaves(args)) is not None:
        return why
    tool = carried(prog, args, fed)
    why = tool.runs or tool.unknown or ("writes " + tool.writes[0] if tool.writes else None)
    if why is None and any(starts_programs(code) for code in tool.scripts):
        why = "inline code starts programs"  # mix run -e, sbt eval, rake -e, vim :py …
    if why is not None:
        return why
    if prog in ("tar", "gtar", "bsdtar") and read_options(args, TAR_OPTIONS).has(
        "-x", "--extract", "--get"
    ):
        return "-x"
    options = RISKY_OPTIONS.get(prog, ())
    if not options:
        return None
    if prog in _GETOPT:  # read as getopt reads them: curl -sSLO, scp -qS PROG (a cluster)
        given = read_options(args, _GETOPT[prog])
        found = next((option for option in options if given.has(option)), None)
        if found is not None:
            return found
    exact, long_values, glued, longs = _shapes(options)
    for arg in args:
        if arg == "--":
            break
        # One set lookup and two C-level prefix tests per word; the option's name only on a hit.
        if arg in exact or arg.startswith(long_values) or _glued(arg, glued):
            return next(option for option in options if option_given(arg, option))
        if arg.startswith("--") and longs:
            found = _abbreviates(arg, prog, longs)
            if found is not None:
                return found
    return None


_AWK_RISK = re.compile(r"system|\||>|getline|inplace")


def _awk(args: Sequence[str]) -> str | None:
    code, files = awk_program(args)
    if files or any("@include" in c or "@load" in c for c in code):  # code from a file
        return "awk program file"
    return "system/pipe" if any(_AWK_RISK.search(c) for c in code) else None


# How programs whose options cluster as getopt's do read them (the short options that
# take a value): a risky one further into a cluster is seen (``scp -qS PROG``), the letters
# after one taking a value are its value (``ssh -lroot``). curl's and wget's from _writes.
_GETOPT = {
    **DOWNLOAD_OPTIONS,
    **{prog: table("", " ".join(f"{c}=" for c in values)) for prog, values in {
        "ssh": "BbcDEeFIiJLlmOopQRSWw", "scp": "cFiJloPSX", "sort": "koStT", "xxd": "cglosn",
        "less": "bhjkoOpPtTxyz", "man": "CELMmpPSsre", "rsync": "eBfMT", "zip": "bnOtxiZ",
        "date": "dfrsI", "mysql": "DehPpSuU", "psql": "cdfhpUvoLTFR", "vim": "cSuUiTwW",
        "vi": "cSuUiTwW", "nvim": "cSuUiTwW",
    }.items()},
}  # fmt: skip


def _glued(arg: str, glued: tuple[str, ...]) -> bool:
    return arg.startswith(glued) and not arg.startswith("--")


@functools.lru_cache(maxsize=128)
def _shapes(
    options: tuple[str, ...],
) -> tuple[frozenset[str], tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """What :func:`_starts` accepts, by shape: exact words, ``--long=``, glued ``-oVALUE``;
    and the long options an abbreviation may stand for."""
    long_values = tuple(o + "=" for o in options if o.startswith("--"))
    glued = tuple(o for o in options if len(o) == 2 and not o.startswith("--"))
    longs = tuple(o for o in options if o.startswith("--"))
    return frozenset(options), long_values, glued, longs
