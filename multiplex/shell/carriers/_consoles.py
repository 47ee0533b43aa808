"""Consoles and pagers that run a shell command from their options or input (docs/security.md#code-carriers).

The readers behind ``shell.carriers._tool_code.carried`` for database shells
(``sqlite3 '.shell CMD'``, ``psql -c '\\! CMD'``, ``mysql -e 'system CMD'``),
other languages' debuggers and editors (``lldb -o 'platform shell CMD'``,
``emacs --eval '(shell-command "CMD")'``), script hosts (``osascript -e 'do
shell script "CMD"'``, ``julia -e 'run(`CMD`)'``, ``pwsh -c CMD``, ``tclsh`` fed
``exec CMD``), ``less +!CMD`` and ``scp -S PROG``. Each gives the shell lines it
runs (``payloads``: checked like a line of their own, so hardline and deny rules
hold inside), why it runs code (``runs``: asks in every mode, never approved by
an allow rule) and what it loads that the line does not show (``unknown``).
Each text is read once, left to right (docs/security.md#linear-time). A pure
leaf: stdlib, ``shell.carriers._runners`` and ``shell.parsing._getopt``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from multiplex.shell.carriers._runners import Carried, carried_of, ssh_code
from multiplex.shell.parsing._getopt import read_options, table

__all__ = [
    "emacs_code",
    "julia_code",
    "less_code",
    "lldb_code",
    "mysql_code",
    "osascript_code",
    "psql_code",
    "pwsh_code",
    "scp_code",
    "sqlite_code",
    "tcl_code",
]

_STRING = re.compile(r'"((?:[^"\\]|\\.)*)"')


def _lines(texts: Iterable[str]) -> list[str]:
    return [line.strip() for text in texts for line in text.splitlines() if line.strip()]


def _after(text: str, verb: str) -> str:
    return text[len(verb) :].strip()


# ---- less +CMD ---------------------------------------------------------------------
_LESS = table(
    "log-file= LOG-FILE= lesskey-file= lesskey-src= tag= pattern=",
    "o= O= k= t= p= b= h= j= x= y= z= P=",
)


def less_code(args: Sequence[str], fed: str | None) -> Carried:
    """``less '+!CMD'``: a ``+`` option is keystrokes less runs first; ``!`` and ``|`` run
    a shell command, ``v`` an editor. A search (``+/x``) is only a search."""
    payloads: list[str] = []
    runs = False
    for arg in args:
        if not arg.startswith("+"):
            continue
        keys = arg.lstrip("+")
        if keys[:1] in ("/", "?") and "!" not in keys and "\n" not in keys:
            continue
        bang, pipe = keys.find("!"), keys.find("|")
        if bang >= 0:
            runs = True
            payloads.append(keys[bang + 1 :])
        elif pipe >= 0:
            runs = True
            payloads.append(keys[pipe + 2 :])  # "|mCMD": the mark letter, then the command
        elif keys.lstrip("0123456789")[:1] == "v":
            runs = True
    parsed = read_options([a for a in args if not a.startswith("+")], _LESS)
    writes = parsed.values("-o", "-O", "--log-file", "--LOG-FILE")
    loads = parsed.has("-k", "--lesskey-file", "--lesskey-src")
    return carried_of(
        payloads,
        "less runs a shell command" if runs else None,
        "less --lesskey-file" if loads else None,
        tuple(writes),
    )


# ---- emacs --eval ------------------------------------------------------------------
_EMACS_CODE = ("--eval", "-eval", "--execute", "-execute")
_EMACS_FILES = ("-l", "--load", "-load", "--script", "-script", "-f", "--funcall", "-funcall",
                "-x", "-L", "--directory")  # fmt: skip
_LISP_PROCESS = re.compile(
    r"\((?:async-)?shell-command(?:-to-string|-on-region)?\b|\((?:call|start)-process(?:-shell-command)?\b"
    r"|\(make-process\b|\(process-lines\b|\(process-file\b|\(compile\b"
)


def emacs_code(args: Sequence[str], fed: str | None) -> Carried:
    """``emacs --batch --eval '(shell-command "CMD")'``: Lisp runs anything; the strings of
    its process calls are the commands (``(call-process "rm" nil nil nil "-rf" "/")``)."""
    code: list[str] = []
    loads = False
    for i, arg in enumerate(args):
        name, eq, value = arg.partition("=")
        if name in _EMACS_CODE:
            code.extend([value] if eq else args[i + 1 : i + 2])
        elif name in _EMACS_FILES:
            loads = True
    payloads: list[str] = []
    for text in code:
        # Each call's strings are those before the next call: every string is read once.
        calls = [m.end() for m in _LISP_PROCESS.finditer(text)]
        if not calls:
            continue
        strings = [(m.start(), m.group(1)) for m in _STRING.finditer(text, calls[0])]
        bounds = [*calls[1:], len(text)]
        k = 0
        for end in bounds:
            mine: list[str] = []
            while k < len(strings) and strings[k][0] < end:
                mine.append(strings[k][1])
                k += 1
            # A process call's program may follow a name and a buffer: each start is tried.
            payloads.extend(" ".join(mine[j:]) for j in range(min(3, len(mine))))
    return carried_of(
        payloads,
        "emacs evaluates Lisp" if code else None,
        "emacs loads Lisp from a file" if loads else None,
        scripts=tuple(code),
    )


# ---- lldb -o -----------------------------------------------------------------------
_LLDB = table(
    "one-line= one-line-before-file= one-line-on-crash= source= source-before-file= "
    "source-on-crash= batch no-lldbinit local-lldbinit file= core= attach-pid= attach-name= "
    "arch= wait-for",
    "o= O= k= s= S= K= b x f= c= p= n= a= w",
    single=True,
)


_LLDB_LINES = ("-o", "--one-line", "-O", "--one-line-before-file", "-k", "--one-line-on-crash")


def _prefix(word: str, of: str, shortest: int) -> bool:
    """lldb takes any unique prefix of a command's name (``plat sh`` is ``platform shell``)."""
    return len(word) >= shortest and of.startswith(word)


def lldb_code(args: Sequence[str], fed: str | None) -> Carried:
    parsed = read_options(args, _LLDB)
    lines = _lines(parsed.values(*_LLDB_LINES))
    payloads: list[str] = []
    scripts: list[str] = []
    runs = False
    for line in lines:
        words = line.split(None, 2)
        head = words[0].lower() if words else ""
        if head.startswith("!") or _prefix(head, "shell", 2):
            runs = True
            payloads.append(line.lstrip("!") if head.startswith("!") else _after(line, words[0]))
        elif _prefix(head, "platform", 3) and len(words) > 1 and _prefix(words[1], "shell", 2):
            runs = True
            rest = words[2] if len(words) > 2 else ""
            while rest.startswith("-"):  # platform shell -t 5 -- CMD
                flag, _, rest = rest.partition(" ")
                if flag == "--":
                    break
                if flag in ("-t", "--timeout", "-s", "--shell"):
                    rest = rest.partition(" ")[2]
            payloads.append(rest)
        elif _prefix(head, "script", 3) or _prefix(head, "command", 3):
            runs = True  # Python in lldb, command script import
            scripts.append(line)
    sources = ("-s", "--source", "-S", "--source-before-file", "-K", "--source-on-crash")
    return carried_of(
        payloads,
        "lldb runs a shell command or script" if runs else None,
        "lldb -s command file" if parsed.has(*sources) else None,
        scripts=tuple(scripts),
    )


# ---- sqlite3, psql, mysql ------------------------------------------------------------
_SQLITE = table(
    "cmd= init= bail batch column csv echo header noheader html interactive json line list "
    "markdown quote readonly safe table box nullvalue= separator= newline= mmap= vfs= "
    "zip append deserialize ascii memtrace stats version lookaside= pagecache= maxsize=",
    single=True,
)


def _sqlite_line(line: str) -> tuple[str | None, bool, bool]:
    """(a shell command, whether it runs one, whether it loads unseen code) of one input line."""
    if not line.startswith("."):
        lowered = line.lower()
        return None, False, "load_extension" in lowered or "edit(" in lowered
    word, _, rest = line[1:].partition(" ")
    word = word.lower()
    rest = rest.strip().strip("'\"")
    if len(word) >= 2 and ("shell".startswith(word) or "system".startswith(word)):
        return rest, True, False  # sqlite3 takes a prefix of a dot command's name
    if word in ("once", "output", "o", "import", "read", "excel") and rest.startswith("|"):
        return rest[1:], True, False
    if word in ("once", "output") and rest.startswith(("-e", "-x")):
        return None, True, False  # opens an editor or a spreadsheet program
    return None, False, word in ("load", "read")


def sqlite_code(args: Sequence[str], fed: str | None) -> Carried:
    parsed = read_options(args, _SQLITE)
    texts = parsed.values("--cmd", "-cmd") + list(parsed.operands[1:])
    if fed is not None and len(parsed.operands) <= 1:
        texts.append(fed)
    payloads: list[str] = []
    runs = loads = False
    for line in _lines(texts):
        command, line_runs, line_loads = _sqlite_line(line)
        runs, loads = runs or line_runs, loads or line_loads
        payloads.extend([command] if command else [])
    return Carried(
        tuple(payloads),
        "sqlite3 runs a shell command" if runs else None,
        "sqlite3 loads code or commands" if loads or parsed.has("--init", "-init") else None,
    )


_PSQL = table(
    "command= file= output= log-file= host= port= username= dbname= set= variable= "
    "single-transaction echo-all no-psqlrc quiet tuples-only",
    "c= f= o= L= h= p= U= d= v= 1 a X q t",
)
_COPY_PROGRAM = re.compile(r"\bprogram\s+'((?:[^']|'')*)'", re.IGNORECASE)


def psql_code(args: Sequence[str], fed: str | None) -> Carried:
    parsed = read_options(args, _PSQL)
    texts = parsed.values("-c", "--command")
    if fed is not None and not parsed.has("-c", "--command", "-f", "--file"):
        texts.append(fed)
    payloads: list[str] = []
    runs = loads = False
    for line in _lines(texts):
        for meta in line.split("\\")[1:]:  # "\! CMD", "\o |CMD", "\g |CMD", "\i FILE"
            word, _, rest = meta.partition(" ")
            rest = rest.strip()
            if meta.startswith("!"):
                runs = True
                payloads.append(meta[1:])
            elif word in ("o", "out", "g", "gx", "w", "write") and rest.startswith("|"):
                runs = True
                payloads.append(rest[1:])
            elif word in ("e", "edit", "ef", "ev", "setenv"):
                runs = True
            elif word in ("i", "include", "ir", "include_relative"):
                loads = True
        for m in _COPY_PROGRAM.finditer(line):  # COPY … PROGRAM 'CMD', \copy … program
            runs = True
            payloads.append(m.group(1).replace("''", "'"))
    outputs = [o[1:] for o in parsed.values("-o", "--output") if o.startswith("|")]
    runs = runs or bool(outputs)
    return Carried(
        tuple(p for p in payloads + outputs if p.strip()),
        "psql runs a shell command" if runs else None,
        "psql -f file" if loads or parsed.has("-f", "--file") else None,
    )


_MYSQL = table(
    "execute= pager=? init-command= host= port= user= password=? database= socket= "
    "defaults-file= defaults-extra-file= tee= batch silent skip-column-names",
    "e= h= P= u= p=? D= S= B s N",
)
_MYSQL_RUNS = ("system", "pager", "edit")  # and their short forms \! \P \e
_MYSQL_SHORT = ("\\!", "\\P", "\\e")


def mysql_code(args: Sequence[str], fed: str | None) -> Carried:
    parsed = read_options(args, _MYSQL)
    texts = parsed.values("-e", "--execute")
    if fed is not None and not texts:
        texts.append(fed)
    payloads = [p for p in parsed.values("--pager") if p]
    runs = bool(payloads)
    loads = parsed.has("--defaults-file", "--defaults-extra-file")
    for line in _lines(t for text in texts for t in text.split(";")):
        lowered = line.lower()
        verb = next((v for v in _MYSQL_RUNS if lowered.startswith(v)), None)
        verb = verb or next((v for v in _MYSQL_SHORT if line.startswith(v)), None)
        if verb is not None:
            runs = True
            payloads.append(_after(line, verb))
        elif lowered.startswith(("source ", "\\.")):
            loads = True
    return carried_of(
        payloads,
        "mysql runs a shell command" if runs else None,
        "mysql reads commands or options from a file" if loads else None,
    )


# ---- osascript, julia, pwsh, tclsh ---------------------------------------------------
_DO_SCRIPT = re.compile(r"\bdo\s+(?:shell\s+)?script\s+\"((?:[^\"\\]|\\.)*)\"", re.IGNORECASE)


def osascript_code(args: Sequence[str], fed: str | None) -> Carried:
    code = [args[i + 1] for i, a in enumerate(args[:-1]) if a == "-e"]
    code += [a[2:] for a in args if a.startswith("-e") and len(a) > 2]
    if not code and fed is not None:
        code.append(fed)
    payloads = [m.group(1) for text in code for m in _DO_SCRIPT.finditer(text)]
    scripted = any("script" in text.lower() or "doShellScript" in text for text in code)
    loads = not code and any(not a.startswith("-") for a in args)
    return carried_of(
        payloads,
        "osascript runs a script" if scripted else None,
        "osascript script file" if loads else None,
        scripts=tuple(code),
    )


_JULIA = table(
    "eval= print= load= project=? threads= startup-file= history-file= sysimage= color= quiet",
    "e= E= L= t= J= q",
)
_JULIA_RUNS = re.compile(r"`|\brun\s*\(|\bpipeline\s*\(|\bspawn\b|\bccall\b|@cmd")


def julia_code(args: Sequence[str], fed: str | None) -> Carried:
    parsed = read_options(args, _JULIA, permute=False)
    code = parsed.values("-e", "--eval", "-E", "--print")
    if not code and not parsed.operands and fed is not None:
        code.append(fed)
    return Carried(
        runs="julia code runs a command" if any(_JULIA_RUNS.search(c) for c in code) else None,
        unknown="julia -L file" if parsed.has("-L", "--load") else None,
        scripts=tuple(code),
    )


def pwsh_code(args: Sequence[str], fed: str | None) -> Carried:
    """PowerShell is a shell of its own: its command line runs; parameters are
    case-insensitive and taken by any prefix (``-c``, ``-Com``, ``-enc``)."""
    payloads: list[str] = []
    hidden = False
    for i, arg in enumerate(args):
        name = arg.lower().lstrip("-").partition(":")[0]
        if not arg.startswith("-") or not name:
            continue
        if "command".startswith(name):
            payloads.append(" ".join(args[i + 1 :]))
            break
        if name in ("e", "ec", "en", "enc") or "encodedcommand".startswith(name):
            hidden = True
            break
        if "file".startswith(name):
            hidden = True
            break
    if payloads == ["-"] and fed is not None:
        payloads = [fed]
    return carried_of(
        payloads,
        "pwsh runs a command line" if payloads or hidden else None,
        "pwsh runs a script file or encoded command" if hidden else None,
    )


_TCL_RUNS = re.compile(
    r"(?:^|[;\[{]\s*)(?:exec|spawn|system)\s+([^;\]\n]*)|\bopen\s+[\"{]\|([^\"}\n]*)"
)


def tcl_code(args: Sequence[str], fed: str | None) -> Carried:
    """``tclsh <<< 'exec CMD'``: Tcl's ``exec`` and ``open "|CMD"`` run programs."""
    code = fed if fed is not None and not any(not a.startswith("-") for a in args) else ""
    payloads = [
        (m.group(1) or m.group(2) or "").strip("{} ")
        for line in code.splitlines()
        for m in _TCL_RUNS.finditer(line)
    ]
    runs = bool(payloads) or '"|' in code or "{|" in code
    return carried_of(payloads, "Tcl runs a program" if runs else None, scripts=(code,))


# ---- scp, sftp -------------------------------------------------------------------------
def scp_code(args: Sequence[str], fed: str | None) -> Carried:
    """``scp -S PROG``, ``sftp -S PROG`` and ``sftp -D PROG`` run a local program instead of
    ssh; ``-o ProxyCommand`` as ssh's."""
    found = ssh_code(args, fed)
    programs = [args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-S", "-D")]
    programs += [a[2:] for a in args if a[:2] in ("-S", "-D") and len(a) > 2]
    if not programs:
        return found
    return Carried(
        found.payloads + tuple(programs),
        found.runs or "scp -S runs a local program",
        found.unknown or f"runs {programs[0]!r}",
    )
