"""Programs that run shell commands given in their options or their input (docs/security.md#code-carriers).

``carried(prog, args, fed)`` says what one invocation of such a program carries:
the shell lines it runs (``payloads``: parsed and checked like a line of their
own, so hardline and deny rules hold inside), why it runs code (``runs``: asks in
every mode, never approved by an allow rule), what it reads that the line does
not show (``unknown``: a script or argument file; never approved by an allow
rule) and the files it writes (``writes``). Options are read with the shared
reader (``shell._getopt``), so ``--use-compress=``, ``tar tIf PROG`` and
``-oProxyCommand=`` count. A pure leaf: stdlib and its fellow leaves.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from multiplex.shell._getopt import read_options, table
from multiplex.shell._sed import sed_facts

__all__ = ["CARRYING", "TAR_OPTIONS", "Carried", "awk_program", "carried", "endless_spawn"]

_STDIN_FILES = frozenset({"/dev/stdin", "/dev/fd/0", "/proc/self/fd/0", "-"})


@dataclass(frozen=True, slots=True)
class Carried:
    """What one invocation carries beyond its own work."""

    payloads: tuple[str, ...] = ()
    runs: str | None = None
    unknown: str | None = None
    writes: tuple[str, ...] = ()


_NOTHING = Carried()


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# ---- ex/ed/gdb commands ------------------------------------------------------------
# ":!cmd", ":silent !cmd", ":r !cmd", ":w !cmd", "e !cmd" (ed); gdb "shell cmd", "!cmd".
# Read by hand, not by a regex: each ex line is looked at once, left to right.
_SILENT = ("silent!", "silent", "sil!", "sil")
_BANG_VERBS = ("read", "write", "edit", "r", "w", "e")
_EX_CODE = _words(
    "call exe execute py python py3 python3 pyx pythonx pyf pyfile lua luafile perl perldo "
    "rub ruby rubyfile ter terminal so source"
)
_GDB_SHELL = ("shell", "pipe", "|")
_GDB_CODE = _words("python py pi python-interactive guile gu source so compile")


def _ex_line(line: str) -> str:
    text = line.lstrip(": \t")
    for word in _SILENT:
        if text.startswith(word):
            return text[len(word) :].lstrip()
    return text


def _bang(text: str) -> str | None:
    """The shell command of ``!cmd``, ``r !cmd``, ``1,2w !cmd`` (an ex line), or None."""
    text = text.lstrip("0123456789,.$%'<> \t")
    for verb in _BANG_VERBS:
        if text.startswith(verb) and text[len(verb) :].lstrip().startswith("!"):
            text = text[len(verb) :].lstrip()
            break
    return text[1:] if text.startswith("!") else None


def _first_word(text: str) -> str:
    words = text.split(None, 1)
    return words[0].rstrip("!(") if words else ""


def _ex(lines: Sequence[str], code: frozenset[str]) -> tuple[list[str], bool]:
    payloads: list[str] = []
    runs = False
    for line in lines:
        text = _ex_line(line)
        bang = _bang(text)
        if bang is not None:
            runs = True
            payloads.extend([bang] if bang.strip() else [])
        elif _first_word(text) in code or "system(" in text or "systemlist(" in text:
            runs = True
    return payloads, runs


_VIM = table(
    "cmd= clean noplugin remote-expr= servername= startuptime=", "c= S=? u= U= T= i= w= W="
)


def _vim(args: Sequence[str], fed: str | None) -> Carried:
    commands = [a[1:] for a in args if a.startswith("+")]
    parsed = read_options([a for a in args if not a.startswith("+")], _VIM)
    commands += parsed.values("-c", "--cmd")
    if fed is not None and parsed.has("-e", "-E"):
        commands += fed.splitlines()
    payloads, runs = _ex(commands, _EX_CODE)
    unknown = "vim -S script" if parsed.has("-S", "-u") else None
    return Carried(tuple(payloads), "vim runs a shell command" if runs else None, unknown)


def _ed(args: Sequence[str], fed: str | None) -> Carried:
    if fed is None:
        return Carried(unknown="ed reads its commands from standard input")
    payloads, runs = _ex(fed.splitlines(), frozenset())
    return Carried(tuple(payloads), "ed runs a shell command" if runs else None)


_GDB = table(
    "ex= eval-command= iex= init-eval-command= x= command= ix= init-command= batch p= pid= "
    "q quiet silent nx n nh args core= c= directory= d= cd= se= s= symbols= e= exec= tty= "
    "data-directory= D=",
    "x= ex= p= c= d= s= e= D=",
    single=True,
)


def _gdb(args: Sequence[str], fed: str | None) -> Carried:
    parsed = read_options(args, _GDB)
    lines = parsed.values("--ex", "--eval-command", "--iex", "--init-eval-command", "-ex")
    payloads: list[str] = []
    runs = False
    for line in lines:
        text = line.strip()
        verb = next((v for v in _GDB_SHELL if text.startswith(v)), "!" if text[:1] == "!" else "")
        if verb:
            runs = True
            rest = text[len(verb) :].strip()
            payloads.extend([rest] if rest else [])
        elif _first_word(text) in _GDB_CODE:
            runs = True
    unknown = (
        "gdb -x script" if parsed.has("--x", "--command", "--ix", "--init-command", "-x") else None
    )
    return Carried(tuple(payloads), "gdb runs a shell command" if runs else None, unknown)


_SSH_RUNS = ("proxycommand", "localcommand", "knownhostscommand", "match")
_SSH = table("", "B= b= c= D= E= e= F= I= i= J= L= l= m= O= o= p= Q= R= S= W= w=")


def _ssh(args: Sequence[str], fed: str | None) -> Carried:
    parsed = read_options(args, _SSH, permute=False)
    payloads: list[str] = []
    for value in parsed.values("-o"):
        name, _, rest = value.replace("=", " ", 1).strip().partition(" ")
        if name.lower() in _SSH_RUNS:
            payloads.append(rest.strip())
    runs = "ssh -o runs a local command" if payloads else None
    unknown = "ssh -F config" if parsed.has("-F") else None
    return Carried(tuple(p for p in payloads if p), runs, unknown)


_MAKE = table(
    "eval= file= makefile= directory= include-dir= jobs=? load-average=? old-file= assume-old= "
    "what-if= new-file= assume-new= output-sync=? debug=? always-make environment-overrides "
    "ignore-errors keep-going just-print dry-run recon question silent quiet touch trace "
    "print-directory no-print-directory warn-undefined-variables shuffle=?",
    "E= f= C= I= j=? l=? o= W= O=? d e i k n q s t w B L R r S",
)
_RECIPE_SHELL = re.compile(r"\$[({]shell\s+([^)}]*)[)}]")
_SHELL_WORDS = re.compile(r"[\s;&|`$()<>]")
_ASSIGN = re.compile(r"^([A-Za-z_.][A-Za-z0-9_.]*)\s*[:+?!]?=(.*)$", re.DOTALL)


def _makefile_code(text: str) -> list[str]:
    """Recipe lines (a tab first) and ``$(shell …)`` calls of makefile text."""
    found = [m.group(1) for m in _RECIPE_SHELL.finditer(text)]
    found += [ln[1:].lstrip("@-+") for ln in text.splitlines() if ln.startswith("\t")]
    return [f for f in found if f.strip()]


def _make(args: Sequence[str], fed: str | None) -> Carried:
    parsed = read_options(args, _MAKE)
    payloads: list[str] = []
    runs: str | None = None
    for text in parsed.values("-E", "--eval"):
        payloads += _makefile_code(text)
        runs = "make --eval"
    makefiles = parsed.values("-f", "--file", "--makefile")
    if any(f in _STDIN_FILES for f in makefiles) and fed is not None:
        payloads += _makefile_code(fed)
        runs = runs or "a makefile the line feeds"
    for op in parsed.operands:
        m = _ASSIGN.match(op)
        if m is None:
            continue
        if _SHELL_WORDS.search(m.group(2)):  # CC='rm -rf /': make runs it in its recipes
            payloads.append(m.group(2))
        if m.group(1) in ("SHELL", ".SHELLFLAGS", "MAKEFLAGS", "MAKEFILES"):
            runs = runs or f"make {m.group(1)}= override"
    unknown: str | None = None
    if any(f in _STDIN_FILES for f in makefiles):
        unknown = "a makefile from standard input"
    for folder in parsed.values("-C", "--directory"):
        if folder.startswith(("/", "~", "$")) or ".." in folder.split("/"):
            unknown = f"make -C {folder}"
    return Carried(tuple(p for p in payloads if p.strip()), runs, unknown)


_EXPECT = table("", "c= f= b= d D= i n N v")
_EXPECT_RUNS = re.compile(r"(?:^|[;\[{]\s*)(?:spawn|exec|system)\s+([^;\]\n}]*)")


def _expect(args: Sequence[str], fed: str | None) -> Carried:
    parsed = read_options(args, _EXPECT, permute=False)
    code = "\n".join(parsed.values("-c"))
    if not parsed.has("-c", "-f") and not parsed.operands and fed is not None:
        code += "\n" + fed
    payloads: list[str] = []
    for line in code.splitlines():
        for m in _EXPECT_RUNS.finditer(line):
            words = m.group(1).split()
            while words and words[0].startswith("-"):  # spawn -noecho CMD
                words.pop(0)
            payloads.append(" ".join(words))
    runs = "expect spawns a program" if payloads or 'open "|' in code else None
    unknown = "expect script file" if parsed.has("-f") or parsed.operands else None
    return Carried(tuple(p for p in payloads if p), runs, unknown)


_RSYNC = table(
    "rsh= rsync-path= log-file= write-batch= only-write-batch= files-from= exclude-from= include-from=",
    "e= f= T=",
)
_REMOTE_SHELLS = frozenset({"ssh", "rsh", "/usr/bin/ssh"})


def _rsync(args: Sequence[str], fed: str | None) -> Carried:
    parsed = read_options(args, _RSYNC)
    shells = parsed.values("-e", "--rsh")
    # "-e ./tool" names a program (judged by its name); "-e 'cmd; …'" is a command line.
    local = [
        s for s in shells if _SHELL_WORDS.search(s.strip()) and _first_word(s) not in _REMOTE_SHELLS
    ]
    writes = parsed.values("--log-file", "--write-batch", "--only-write-batch")
    return Carried(
        tuple(shells), "rsync -e runs a local command" if local else None, None, tuple(writes)
    )


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
    # Like a script named on the line, the program is judged by its words (payloads), and
    # an allow rule for tar never covers it (docs/allowlist.md#options-that-run-programs).
    unknown = "tar runs a program" if payloads or parsed.has("--checkpoint-action") else None
    writes = tuple(parsed.values("-f", "--file")) if parsed.has(*_TAR_WRITES) else ()
    if unknown is None and parsed.has("-T", "--files-from"):
        unknown = "tar -T list"
    return Carried(tuple(p for p in payloads if p.strip()), None, unknown, writes)


_SORT = table(
    "output= compress-program= files0-from= temporary-directory= key= field-separator=",
    "o= k= t= T= S=",
)


def _sort(args: Sequence[str], fed: str | None) -> Carried:
    parsed = read_options(args, _SORT)
    programs = parsed.values("--compress-program")
    unknown = "sort --compress-program" if programs else None
    return Carried(tuple(programs), None, unknown, tuple(parsed.values("-o", "--output")))


_MAN = table(
    "pager= html=? local-file config-file= manpath= prompt= troff-device=? preprocessor=",
    "P= H=? l C= M= r= T=? p=",
)


def _man(args: Sequence[str], fed: str | None) -> Carried:
    parsed = read_options(args, _MAN)
    programs = [p for p in parsed.values("-P", "--pager", "-H", "--html") if p]
    unknown = "man runs a pager or browser" if programs or parsed.has("-H", "--html") else None
    return Carried(tuple(programs), None, unknown)


_LESS = table(
    "log-file= LOG-FILE= lesskey-file= tag= pattern=", "o= O= k= t= p= b= h= j= x= y= z= P="
)


def _less(args: Sequence[str], fed: str | None) -> Carried:
    parsed = read_options(args, _LESS)
    writes = parsed.values("-o", "-O", "--log-file", "--LOG-FILE")
    return Carried(
        unknown="less --lesskey-file" if parsed.has("-k", "--lesskey-file") else None,
        writes=tuple(writes),
    )


_XARGS = table(
    "arg-file= delimiter= eof=? replace=? max-lines=? max-args= max-procs= max-chars= "
    "process-slot-var= null interactive no-run-if-empty open-tty verbose exit show-limits",
    "a= d= E= e=? I= i=? L= l=? n= P= s= 0 p r o t x",
)
_CODE_PROGRAMS = frozenset(
    {"git", "sh", "bash", "zsh", "dash", "ksh", "env", "sudo", "make", "node", "perl", "ruby",
     "python", "python3", "awk", "gawk", "sed", "tar", "find", "xargs", "eval", "ssh", "vim"}
)  # fmt: skip


def endless_spawn(prog: str, args: Sequence[str], upstream: Sequence[str]) -> bool:
    """``yes | xargs -P0 sh -c …``: endless input, each line a process, no limit on them."""
    if prog not in ("xargs", "parallel") or "yes" not in upstream:
        return False
    if prog == "parallel":
        return any(a in ("-j0", "--jobs=0") or a.endswith("-j0") for a in args) or "0" in [
            args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-j", "--jobs")
        ]
    return "0" in read_options(args, _XARGS, permute=False).values("-P", "--max-procs")


def _xargs(args: Sequence[str], fed: str | None) -> Carried:
    parsed = read_options(args, _XARGS, permute=False)
    if not parsed.has("-a", "--arg-file"):
        return _NOTHING
    inner = parsed.operands[0].rpartition("/")[2] if parsed.operands else "echo"
    why = "xargs reads the arguments from a file"
    return Carried(runs=why if inner in _CODE_PROGRAMS else None, unknown=why)


_PYTEST = table(
    "junit-xml= junitxml= debug=? resultlog= result-log= report-log= basetemp= html= "
    "log-file= cov-report= json-report-file= alluredir= pastebin= confcutdir= rootdir=",
)
_PYTEST_WRITES = ("--junit-xml", "--junitxml", "--resultlog", "--result-log", "--report-log",
                  "--basetemp", "--html", "--log-file", "--json-report-file")  # fmt: skip


def _pytest(args: Sequence[str], fed: str | None) -> Carried:
    parsed = read_options(args, _PYTEST)
    writes = parsed.values(*_PYTEST_WRITES)
    for value in parsed.values("--debug") or (["pytestdebug.log"] if parsed.has("--debug") else []):
        writes.append(value or "pytestdebug.log")
    return Carried(writes=tuple(writes))


def _openssl(args: Sequence[str], fed: str | None) -> Carried:
    outs = [args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-out", "-keyout", "--out")]
    outs += [a.partition("=")[2] for a in args if a.startswith("-out=")]
    return Carried(writes=tuple(outs))


def _sed(args: Sequence[str], fed: str | None) -> Carried:
    facts = sed_facts(args)
    if facts.sandbox:
        return Carried(writes=facts.files if facts.in_place else ())
    # "e CMD" runs a command the line shows; "s///e" and a bare "e" run the input's text,
    # which the line does not show (never allowlisted, judged like a script by name).
    runs = "sed e runs a shell command" if facts.commands else None
    writes = facts.writes + (facts.files if facts.in_place else ())
    unknown = "sed -f script" if facts.script_file else "sed -i" if facts.in_place else None
    if facts.runs_text:
        unknown = unknown or "sed runs the text it reads"
    if facts.writes:
        unknown = unknown or "sed w writes a file"
    return Carried(facts.commands, runs, unknown, writes)


_AWK = table(
    "source= file= include= load= assign= field-separator= exec= dump-variables=? profile=? "
    "pretty-print=? debug=? in-place",
    "e= f= i= l= v= F= E= d=? p=? o=? D=?",
)


def awk_program(args: Sequence[str]) -> tuple[list[str], bool]:
    """The program text of ``awk ARGS`` (``--source=``/``-e`` or the first operand) and
    whether it also loads code from a file (``-f``, ``-i``, ``-l``, ``-E``)."""
    parsed = read_options(args, _AWK)
    files = parsed.has("-f", "--file", "-i", "--include", "-l", "--load", "-E", "--exec")
    code = parsed.values("-e", "--source")
    if not code and not files and parsed.operands:
        code = [parsed.operands[0]]
    return code, files


_READERS: dict[str, Callable[[Sequence[str], str | None], Carried]] = {
    "sed": _sed, "gsed": _sed, "vim": _vim, "vi": _vim, "nvim": _vim, "ex": _vim, "view": _vim,
    "vimdiff": _vim, "gvim": _vim, "ed": _ed, "gdb": _gdb, "ssh": _ssh, "make": _make,
    "gmake": _make, "expect": _expect, "rsync": _rsync, "tar": _tar, "gtar": _tar, "bsdtar": _tar,
    "sort": _sort, "man": _man, "less": _less, "xargs": _xargs, "pytest": _pytest,
    "py.test": _pytest, "openssl": _openssl,
}  # fmt: skip
CARRYING = frozenset(_READERS)


@functools.lru_cache(maxsize=256)  # the unwrapper, the allowlist step and detection ask
def _carried(prog: str, args: tuple[str, ...], fed: str | None) -> Carried:
    return _READERS[prog](args, fed)


def carried(prog: str, args: Sequence[str], fed: str | None = None) -> Carried:
    """What ``prog ARGS`` (fed ``fed`` on stdin) carries; nothing for other programs."""
    if prog not in _READERS:
        return _NOTHING
    return _carried(prog, tuple(args), fed)
