"""Programs that run shell commands given in their options or their input (docs/security.md#code-carriers).

``carried(prog, args, fed)`` says what one invocation of such a program carries:
the shell lines it runs (``payloads``: parsed and checked like a line of their
own, so hardline and deny rules hold inside), why it runs code (``runs``: asks in
every mode, never approved by an allow rule), what it reads that the line does
not show (``unknown``: a script or argument file; never approved by an allow
rule) and the files it writes (``writes``). Options are read with the shared
reader (``shell.parsing._getopt``), so ``--use-compress=``, ``tar tIf PROG`` and
``-oProxyCommand=`` count. The readers of editors, debuggers, ssh, make and expect
live in ``shell.carriers._runners``. A pure leaf: stdlib and its fellow leaves.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Sequence

from multiplex.shell.carriers._builds import (
    apt_code,
    cargo_code,
    dotnet_code,
    dpkg_code,
    go_code,
    latexmk_code,
    mvn_code,
    npm_settings,
    pytest_code,
    tex_code,
)
from multiplex.shell.carriers._configs import CONFIG_READERS, loads_from_elsewhere
from multiplex.shell.carriers._consoles import (
    emacs_code,
    julia_code,
    less_code,
    lldb_code,
    mysql_code,
    osascript_code,
    psql_code,
    pwsh_code,
    scp_code,
    sqlite_code,
    tcl_code,
)
from multiplex.shell.carriers._make import make_code
from multiplex.shell.carriers._media import MEDIA_READERS, openssl_engine
from multiplex.shell.carriers._runners import (
    NOTHING,
    SHELL_WORDS,
    Carried,
    carried_of,
    command_line,
    ed_code,
    expect_code,
    first_word,
    gdb_code,
    m4_code,
    ssh_code,
    vim_code,
)
from multiplex.shell.carriers._sed import sed_facts
from multiplex.shell.carriers._sockets import curl_code, nc_code, socat_code, wget_code
from multiplex.shell.carriers._transfers import ftp_code, lftp_code, sftp_code
from multiplex.shell.carriers._utilities import UTILITY_READERS
from multiplex.shell.carriers._vcs import VCS_READERS
from multiplex.shell.parsing._argv import ENDLESS, huge_count
from multiplex.shell.parsing._getopt import read_options, table

__all__ = [
    "CARRYING",
    "CODE_PROGRAMS",
    "TAR_OPTIONS",
    "XARGS_OPTIONS",
    "Carried",
    "awk_program",
    "carried",
    "endless_spawn",
    "git_writes",
]

_RSYNC = table(
    "rsh= rsync-path= log-file= write-batch= only-write-batch= files-from= exclude-from= include-from=",
    "e= f= T=",
)
_REMOTE_SHELLS = frozenset({"ssh", "rsh", "/usr/bin/ssh"})


def _rsync(args: Sequence[str], fed: str | None) -> Carried:
    parsed = read_options(args, _RSYNC)
    shells = parsed.values("-e", "--rsh")
    remote = parsed.values("--rsync-path")  # run on the other host, like "ssh host CMD"
    # "-e ./tool" names a program (judged by its name); "-e 'cmd; …'" is a command line.
    local = [
        s for s in shells if SHELL_WORDS.search(s.strip()) and first_word(s) not in _REMOTE_SHELLS
    ]
    writes = parsed.values("--log-file", "--write-batch", "--only-write-batch")
    why = "rsync -e runs a local command" if local else None
    return Carried(tuple(shells + remote), why, None, tuple(writes))


TAR_OPTIONS = table(
    "to-command= checkpoint=? checkpoint-action= use-compress-program= info-script= "
    "new-volume-script= rsh-command= rmt-command= file= directory= files-from= exclude-from= "
    "create extract get list append update concatenate catenate delete diff compare test-label "
    "to-stdout verbose gzip bzip2 xz zstd lzip lzma compress auto-compress exclude= transform= "
    "xform= owner= group= mode= mtime= blocking-factor= record-size= label= tape-length= "
    "starting-file= newer= after-date= newer-mtime= index-file= totals=? strip-components= "
    "one-file-system overwrite keep-old-files skip-old-files remove-files wildcards",
    "f= C= T= X= I= F= b= H= K= L= N= V= g= c x t r u A d z j J Z a v k m O p P h W",
    bundle=True,
)
_TAR_PROGRAMS = ("--to-command", "--use-compress-program", "-I", "--info-script", "--new-volume-script",
                 "-F", "--rsh-command", "--rmt-command")  # fmt: skip
_TAR_WRITES = (
    "-c",
    "-r",
    "-u",
    "-A",
    "--create",
    "--append",
    "--update",
    "--concatenate",
    "--catenate",
)


def _tar(args: Sequence[str], fed: str | None) -> Carried:
    parsed = read_options(args, TAR_OPTIONS)
    payloads = parsed.values(*_TAR_PROGRAMS)
    for action in parsed.values("--checkpoint-action"):
        kind, _, command = action.partition("=")
        if kind in ("exec", "sleep") or kind.startswith("ex"):
            payloads.append(command)
    # A program named alone (./filter.sh) is judged by its name, like a script on the
    # line; a command line (sh -c "…") runs code and asks. Neither is ever allowlisted.
    unknown = "tar runs a program" if payloads or parsed.has("--checkpoint-action") else None
    writes = tuple(parsed.values("-f", "--file")) if parsed.has(*_TAR_WRITES) else ()
    if parsed.has("-x", "--extract", "--get"):
        writes += parsed.operands  # the members named are written over
        writes += tuple(parsed.values("-C", "--directory"))  # and into this folder
    if unknown is None and parsed.has("-T", "--files-from"):
        unknown = "tar -T list"
    return carried_of(payloads, command_line(payloads), unknown, writes)


_SORT = table(
    "output= compress-program= files0-from= temporary-directory= key= field-separator=",
    "o= k= t= T= S=",
)


def _sort(args: Sequence[str], fed: str | None) -> Carried:
    parsed = read_options(args, _SORT)
    programs = parsed.values("--compress-program")
    unknown = "sort --compress-program" if programs else None
    writes = tuple(parsed.values("-o", "--output"))
    return Carried(tuple(programs), command_line(programs), unknown, writes)


_MAN = table(
    "pager= html=? local-file config-file= manpath= prompt= troff-device=? preprocessor=",
    "P= H=? l C= M= r= T=? p=",
)


def _man(args: Sequence[str], fed: str | None) -> Carried:
    parsed = read_options(args, _MAN)
    programs = [p for p in parsed.values("-P", "--pager", "-H", "--html") if p]
    unknown = "man runs a pager or browser" if programs or parsed.has("-H", "--html") else None
    return Carried(tuple(programs), command_line(programs), unknown)


XARGS_OPTIONS = table(
    "arg-file= delimiter= eof=? replace=? max-lines=? max-args= max-procs= max-chars= "
    "process-slot-var= null interactive no-run-if-empty open-tty verbose exit show-limits",
    "a= d= E= e=? I= i=? L= l=? n= P= s= 0 p r o t x",
)
CODE_PROGRAMS = frozenset(
    {"git", "sh", "bash", "zsh", "dash", "ksh", "env", "sudo", "make", "node", "perl", "ruby",
     "python", "python3", "awk", "gawk", "sed", "tar", "find", "xargs", "eval", "ssh", "vim"}
)  # fmt: skip


def endless_spawn(prog: str, args: Sequence[str], upstream: Sequence[str]) -> bool:
    """``yes | xargs -P0 sh -c …``: endless input, each line a process, no limit on them;
    also ``parallel -j0 CMD ::: $(seq 100000)``, a thousand or more at once."""
    endless = "yes" in upstream or ENDLESS in upstream
    if prog == "parallel" and not endless and ":::" in args:
        endless = huge_count(" ".join(args[args.index(":::") + 1 :]))
    if prog not in ("xargs", "parallel") or not endless:
        return False
    if prog == "parallel":
        return any(a in ("-j0", "--jobs=0") or a.endswith("-j0") for a in args) or "0" in [
            args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-j", "--jobs")
        ]
    return "0" in read_options(args, XARGS_OPTIONS, permute=False).values("-P", "--max-procs")


def _xargs(args: Sequence[str], fed: str | None) -> Carried:
    parsed = read_options(args, XARGS_OPTIONS, permute=False)
    inner = parsed.operands[0].rpartition("/")[2] if parsed.operands else "echo"
    if _runs_input(parsed.operands, parsed.values("-I", "--replace", "-i")):
        # xargs -I{} sh -c '{}', xargs sh -c: what xargs reads becomes the code a shell runs
        why = "xargs hands the text it reads to a shell as code"
        return Carried(runs=why, unknown=why)
    if not parsed.has("-a", "--arg-file"):
        return NOTHING
    why = "xargs reads the arguments from a file"
    return Carried(runs=why if inner in CODE_PROGRAMS else None, unknown=why)


_SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "busybox", "fish"})


def _runs_input(command: Sequence[str], replace: Sequence[str]) -> bool:
    """``sh -c`` with no code after it (the first item read is the code), or a code word
    holding the replace string (``-I{}``; ``-i`` means ``{}``)."""
    if not command or command[0].rpartition("/")[2] not in _SHELLS | CODE_PROGRAMS:
        return False
    if command[-1] == "-c" or (len(command) > 1 and command[1:] == ["sh", "-c"]):
        return True
    marks = [r or "{}" for r in replace]
    return any(mark in word for mark in marks for word in command[1:])


def _enable(args: Sequence[str], fed: str | None) -> Carried:
    """bash's ``enable -f LIB NAME``: a builtin loaded from a shared library, its code run."""
    loads = any(a == "-f" or (a.startswith("-") and "f" in a[1:] and a[1:].isalpha()) for a in args)
    return Carried(runs="bash loads a builtin from a library (enable -f)" if loads else None)


def _openssl(args: Sequence[str], fed: str | None) -> Carried:
    outs = [args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-out", "-keyout", "--out")]
    outs += [a.partition("=")[2] for a in args if a.startswith("-out=")]
    return Carried(runs=openssl_engine(args), writes=tuple(outs))


def _sed(args: Sequence[str], fed: str | None) -> Carried:
    facts = sed_facts(args)
    if facts.script_from_stdin and fed is not None:  # sed -f - <<< SCRIPT: the line shows it
        facts = sed_facts([*args, "-e", fed])
    if facts.sandbox:
        return Carried(writes=facts.files if facts.in_place else ())
    # "e CMD" runs a command the line shows; "s///e" and a bare "e" run the input's text
    # as a command: asked in every mode, and what the line shows of it (s///e's
    # replacement, the text it is fed) judged as a line.
    runs = "sed e runs a shell command" if facts.commands or facts.runs_text else None
    payloads = facts.commands + facts.replaced
    if facts.runs_text and fed is not None:
        payloads += tuple(fed.splitlines())
    writes = facts.writes + (facts.files if facts.in_place else ())
    unknown = "sed -f script" if facts.script_file else "sed -i" if facts.in_place else None
    if facts.writes:
        unknown = unknown or "sed w writes a file"
    return Carried(payloads, runs, unknown, writes)


_AWK = table(
    "source= file= include= load= assign= field-separator= exec= dump-variables=? profile=? "
    "pretty-print=? debug=? in-place",
    "e= f= i= l= v= F= E= d=? p=? o=? D=?",
)


def awk_program(args: Sequence[str]) -> tuple[list[str], bool]:
    """The program text of ``awk ARGS`` (``--source=``/``-e`` or the first operand) and
    whether it also loads code from a file (``-f``, ``-i``, ``-l``, ``-E``).

    gawk's ``-l LIB`` and ``-i FILE`` are its ``@load "LIB"`` and ``@include "FILE"`` at
    the program's start (its manual says so): the text holds them as such.
    """
    code, files = _awk_program(tuple(args))
    return list(code), files


@functools.lru_cache(maxsize=128)  # the unwrapper, the allowlist step and the writes ask
def _awk_program(args: tuple[str, ...]) -> tuple[tuple[str, ...], bool]:
    parsed = read_options(args, _AWK)
    head = [f'@load "{v}"' for v in parsed.values("-l", "--load")]
    head += [f'@include "{v}"' for v in parsed.values("-i", "--include")]
    from_file = parsed.has("-f", "--file", "-E", "--exec")
    code = parsed.values("-e", "--source")
    if not code and not from_file and parsed.operands:
        code = [parsed.operands[0]]
    return tuple(head + code), from_file or bool(head)


_GIT_WRITERS = table(
    "output= output-directory= source= staged worktree ours theirs force quiet patch "
    "pathspec-from-file= ignore-unmerged overlay no-overlay merge conflict= cached "
    "ignore-unmatch dry-run depth= branch= origin= template= reference= separate-git-dir= "
    "config= filter= jobs= upload-pack= shallow-since= shallow-exclude= initial-branch= "
    "object-format= ref-format= reason=",
    "o= s= f q p m n r k b= c= j= u= B=",
)


def git_writes(sub: str, rest: Sequence[str]) -> tuple[str, ...]:
    """Files a git subcommand writes over: ``--output=F``, the paths of ``checkout -- P``,
    ``restore P``, ``checkout-index P``, ``rm P``, ``mv A B``, ``archive -o F``, ``format-patch -o DIR``,
    ``bundle create F`` (docs/approvals.md#protected-files)."""
    if sub not in _GIT_WRITING and not any("--o" in a for a in rest):
        return ()  # git status, commit, push …: one C-level scan of the words
    return _git_writes(sub, tuple(rest))


@functools.lru_cache(maxsize=128)  # write_targets is asked by several checks per command
def _git_writes(sub: str, rest: tuple[str, ...]) -> tuple[str, ...]:
    parsed = read_options(rest, _GIT_WRITERS)
    out = parsed.values("--output")
    if sub == "checkout":
        dash = list(rest).index("--") if "--" in rest else -1
        out += list(rest[dash + 1 :]) if dash >= 0 else list(parsed.operands[1:])
    elif sub in ("restore", "rm", "mv", "checkout-index"):
        out += list(parsed.operands)
    elif sub in ("archive", "format-patch"):  # -o is --output, or --output-directory
        out += parsed.values("-o", "--output-directory")
    elif sub == "init":
        out += list(parsed.operands[:1])
    elif sub == "submodule" and list(parsed.operands[:1]) == ["add"]:
        out += list(parsed.operands[2:3])  # submodule add URL PATH: cloned into PATH
    elif sub == "clone" or list(parsed.operands[:1]) == [_SECOND_WRITES.get(sub)]:
        # bundle create F, clone URL DIR (else named after the repository), worktree add DIR
        out += list(parsed.operands[1:2])
    return tuple(out)


_SECOND_WRITES = {"bundle": "create", "worktree": "add"}
_GIT_WRITING = frozenset(
    {"checkout", "restore", "rm", "mv", "archive", "format-patch", "bundle", "clone", "init",
     "worktree", "submodule", "checkout-index"}
)  # fmt: skip


_NPM = table(
    "script-shell= node-options= prefix= userconfig= globalconfig= call= shell= workspace= "
    "workspaces include-workspace-root if-present ignore-scripts silent loglevel= registry= "
    "global",
    "C= c= w= g s",
)


def _npm(args: Sequence[str], fed: str | None) -> Carried:
    """``npm run x --script-shell=CMD``, ``npx -c CMD``; nopt takes abbreviations too."""
    parsed = read_options(args, _NPM)
    shells = parsed.values("--script-shell", "--shell")
    calls = parsed.values("--call", "-c")
    settings, sets = npm_settings(args)  # npm config set script-shell CMD, npm pkg set scripts.x=
    calls += settings
    runs = "npm runs a command" if calls or any(SHELL_WORDS.search(s) for s in shells) else None
    runs = runs or ("npm sets a command a later run runs" if sets else None)
    loads = ("--node-options", "--prefix", "-C", "--userconfig", "--globalconfig", "--script-shell")
    unknown = "npm runs another script or config" if parsed.has(*loads, "--shell") else None
    return Carried(tuple(shells + calls), runs, unknown)


_READERS: dict[str, Callable[[Sequence[str], str | None], Carried]] = {
    "sed": _sed, "gsed": _sed, "vim": vim_code, "vi": vim_code, "nvim": vim_code, "ex": vim_code, "view": vim_code,
    "vimdiff": vim_code, "gvim": vim_code, "ed": ed_code, "gdb": gdb_code, "ssh": ssh_code, "make": make_code,
    "gmake": make_code, "m4": m4_code, "expect": expect_code, "rsync": _rsync, "tar": _tar, "gtar": _tar, "bsdtar": _tar,
    "sort": _sort, "man": _man, "less": less_code, "more": less_code, "xargs": _xargs,
    "pytest": pytest_code, "py.test": pytest_code, "openssl": _openssl, "enable": _enable, "scp": scp_code, "sftp": sftp_code,
    "npm": _npm, "npx": _npm, "pnpm": _npm, "yarn": _npm, "wget": wget_code, "curl": curl_code, "socat": socat_code,
    "ncat": nc_code, "nc": nc_code, "netcat": nc_code, "lftp": lftp_code, "ftp": ftp_code,
    # docs/security.md#code-carriers: consoles, other languages' hosts and debuggers
    "emacs": emacs_code, "emacs-nox": emacs_code, "lldb": lldb_code, "sqlite3": sqlite_code,
    "sqlite": sqlite_code, "duckdb": sqlite_code,
    "psql": psql_code, "mysql": mysql_code, "mariadb": mysql_code, "osascript": osascript_code,
    "julia": julia_code, "pwsh": pwsh_code, "powershell": pwsh_code, "tclsh": tcl_code,
    "wish": tcl_code, **MEDIA_READERS, **UTILITY_READERS, **CONFIG_READERS, **VCS_READERS,
    # docs/security.md#code-carriers: build and package tools' command options
    "go": go_code, "cargo": cargo_code, "apt": apt_code, "apt-get": apt_code, "dpkg": dpkg_code, "mvn": mvn_code,
    "mvnw": mvn_code, "dotnet": dotnet_code, "latexmk": latexmk_code, "pdflatex": tex_code,
    "xelatex": tex_code, "lualatex": tex_code, "latex": tex_code, "tex": tex_code,
    "pdftex": tex_code, "luatex": tex_code, "etex": tex_code,
}  # fmt: skip
CARRYING = frozenset(_READERS)


@functools.lru_cache(maxsize=256)  # the unwrapper, the allowlist step and detection ask
def _carried(prog: str, args: tuple[str, ...], fed: str | None) -> Carried:
    found = _READERS[prog](args, fed)
    if prog in ("mvn", "rake") and found.unknown is None:  # their own reader, and this
        why = loads_from_elsewhere(prog, args)
        if why is not None:
            return dataclasses.replace(found, unknown=why)
    return found


def carried(prog: str, args: Sequence[str], fed: str | None = None) -> Carried:
    """What ``prog ARGS`` (fed ``fed`` on stdin) carries; nothing for other programs."""
    if prog not in _READERS:
        return NOTHING
    return _carried(prog, tuple(args), fed)
