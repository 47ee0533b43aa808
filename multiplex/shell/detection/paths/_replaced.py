"""Files a program replaces, edits in place or creates by its arguments, beyond the copy and
delete tools of ``shell.detection._writes`` (docs/approvals.md#protected-files).

A compressor replaces each file it names (``gzip AGENTS.md`` leaves ``AGENTS.md.gz``
and no ``AGENTS.md``) unless told to keep it; ``ruby -i`` and ``gawk -i inplace`` edit
their files in place; ``sqlite3 DB`` writes its database; ``script FILE`` its log;
``ssh-keygen -f F`` the key; ``docker``/``podman``/``kubectl cp`` the local end. A pure
leaf: stdlib and its fellow leaves.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator, Sequence

from multiplex.shell.parsing._argv import operands, option_values, short_flags

__all__ = ["REPLACERS", "diff_targets", "replaced"]

# Compressors that remove the file they compress (or, decompressing, the archive, and
# write the file it held); -c/-k/-t/-l keep it. zstd and lz4 keep it unless --rm.
_COMPRESSORS = frozenset(
    {"gzip", "gunzip", "bzip2", "bunzip2", "xz", "unxz", "lzma", "unlzma", "lzip", "compress",
     "uncompress", "pigz", "unpigz", "pbzip2", "pixz"}
)  # fmt: skip
_KEEPING = frozenset("cklt")
_KEEPING_LONG = ("--stdout", "--to-stdout", "--keep", "--list", "--test")
_RM_LONG = ("--rm",)
_KEYGEN_READS = frozenset("lyLFBQe")
_CP_CLIS = frozenset({"docker", "podman", "nerdctl", "kubectl", "oc"})

# Formatters, fixers and text tools that rewrite the files they are given in place:
# always, unless told only to check (black, isort, rustfmt, dos2unix, sd …), or with a
# flag (prettier --write, eslint --fix, gofmt -w, clang-format -i …); the words of their
# own before the files (sd FIND REPLACE, rpl OLD NEW, rename EXPR, ruff format).
_ALWAYS = {"black": 0, "isort": 0, "mdformat": 0, "rustfmt": 0, "dos2unix": 0, "unix2dos": 0,
           "mac2unix": 0, "unix2mac": 0, "sd": 2, "rpl": 2, "rename": 1, "prename": 1,
           "perl-rename": 1, "file-rename": 1, "docformatter": 0, "pyupgrade": 0, "stylua": 0,
           "nixfmt": 0, "alejandra": 0, "yamlfmt": 0}  # fmt: skip
# The flags with which each only checks or shows (no program below writes without its
# files, so one that only checks names none to write).
_CHECKING = {"black": ("--check", "--diff"), "isort": ("--check", "--check-only", "-c", "--diff"),
             "mdformat": ("--check",), "rustfmt": ("--check",), "sd": ("-p", "--preview"),
             "rename": ("-n", "--no-act", "--nono"), "prename": ("-n", "--no-act"),
             "perl-rename": ("-n", "--no-act"), "file-rename": ("-n", "--no-act"),
             "ruff": ("--check", "--diff"), "terraform": ("-check",), "tofu": ("-check",),
             "docformatter": ("--check",), "rpl": ("-s", "--simulate"), "stylua": ("--check",),
             "nixfmt": ("--check", "-c"), "alejandra": ("--check", "-c"),
             "yamlfmt": ("-lint", "-dry")}  # fmt: skip
_WITH_FLAG = {"autopep8": ("-i", "--in-place"), "yapf": ("-i", "--in-place"),
              "prettier": ("--write", "-w"), "eslint": ("--fix",), "stylelint": ("--fix",),
              "gofmt": ("-w",), "goimports": ("-w",), "clang-format": ("-i",),
              "shfmt": ("-w", "--write"), "perltidy": ("-b", "--backup-and-modify-in-place"),
              "standard": ("--fix",), "biome": ("--write", "--apply"), "rubocop": ("-a", "-A",
              "--autocorrect", "--autocorrect-all"), "php-cs-fixer": ("fix",),
              "swiftformat": ("",), "ktlint": ("-F", "--format"), "markdownlint": ("--fix",),
              "markdownlint-cli2": ("--fix",), "eslint_d": ("--fix",), "oxlint": ("--fix",),
              "tslint": ("--fix",), "djlint": ("--reformat",), "cmake-format": ("-i", "--in-place"),
              "autoflake": ("-i", "--in-place")}  # fmt: skip
# "TOOL VERB FILES": ruff format, ruff check --fix, terraform fmt, cargo fmt (its crate's).
_VERBS = {"ruff": ("format", "check"), "terraform": ("fmt",), "tofu": ("fmt",), "sqlfluff": ("fix",),
          "taplo": ("fmt", "format"), "dprint": ("fmt",)}  # fmt: skip

# Compilers and preprocessors: -o FILE (or -oFILE) is what they write.
_COMPILERS = frozenset({"cc", "gcc", "g++", "c++", "clang", "clang++", "cpp", "tcc", "rustc"})
# sqlite3's dot-commands that write a file (".output F", ".once F", ".save F", ".backup F").
_SQLITE_WRITES = (".output", ".once", ".save", ".backup", ".excel")
_WRITEFILE = re.compile(r"\bwritefile\s*\(\s*'((?:[^']|'')*)'", re.IGNORECASE)
# psql's meta-commands that write a file: \o F, \out F, \w F, \g F (not \o |cmd).
_PSQL_OUTPUTS = frozenset({"o", "out", "w", "write", "g", "gx"})
# mysql's: SELECT … INTO OUTFILE|DUMPFILE 'F' (the server writes it), tee F, \T F.
_MYSQL_WRITES = re.compile(
    r"\binto[ \t]+(?:out|dump)file[ \t]+'([^']*)'|(?:^|[;\s])(?:tee|\\T)[ \t]+([^\s;]+)",
    re.IGNORECASE,
)
# Their options that name a file written (psql -o F, -L F; mysql --tee=F).
_SQL_CLIENTS = {"psql": ("-o", "--output", "-L", "--log-file"), "mysql": ("--tee",),
                "mariadb": ("--tee",)}  # fmt: skip

REPLACERS = frozenset(
    {*_COMPRESSORS, "zstd", "unzstd", "lz4", "brotli", "ruby", "awk", "gawk", "sqlite3", "script",
     "ssh-keygen", "mount", "umount", "npm", "cmake", "pdftk", "qpdf", "make", "gmake", "go",
     *_CP_CLIS, *_ALWAYS, *_WITH_FLAG, *_VERBS, *_COMPILERS, *_SQL_CLIENTS}
)  # fmt: skip


def replaced(prog: str, args: Sequence[str]) -> Iterator[str]:
    """The files ``prog ARGS`` replaces or writes (``prog`` one of :data:`REPLACERS`)."""
    flags = set(short_flags(args))
    if prog in _COMPRESSORS:
        unpacks = prog.startswith("un") or prog == "gunzip" or "d" in flags
        if not (flags & _KEEPING or any(a.startswith(_KEEPING_LONG) for a in args)):
            yield from _packed(operands(args), unpacks)
        elif (
            unpacks and not flags & set("clt") and not any(a.startswith(_NOT_WRITING) for a in args)
        ):
            yield from _packed(operands(args), unpacks, keep=True)  # unxz -k F.xz writes F
    elif prog in _ALWAYS or prog in _WITH_FLAG or prog in _VERBS:
        yield from _rewritten(prog, args)
    elif prog in ("zstd", "unzstd", "lz4", "brotli"):
        ops = operands(args)
        if (any(a in _RM_LONG for a in args) or (prog == "brotli" and "j" in flags)) and not (
            flags & {"c"}
        ):
            yield from ops
        yield from option_values(args, ("-o", "--output"))  # zstd -d x.zst -o F, brotli -o F
        if prog == "lz4" and len(ops) == 2 and not flags & set("cm"):
            yield ops[1]  # lz4 [-d] IN OUT
    elif prog in _COMPILERS or (prog == "go" and operands(args)[:1] == ["build"]):
        yield from option_values(args, ("-o",))
        yield from (a[2:] for a in args if a.startswith("-o") and len(a) > 2)
    elif prog == "pdftk":  # pdftk IN … output OUT
        yield from (args[i + 1] for i, a in enumerate(args[:-1]) if a == "output")
    elif prog == "qpdf":  # qpdf IN OUT, or IN --replace-input
        ops = operands(args)
        yield from ops[:1] if "--replace-input" in args else ops[1:2]
    elif prog in ("make", "gmake"):  # the targets named: the files a makefile builds
        yield from _make_targets(args)
    elif prog in ("ruby", "awk", "gawk"):
        yield from _in_place(prog, args)
    elif prog == "sqlite3":
        yield from operands(args)[:1]  # the database it opens: created or changed
        for text in args:  # sqlite3 DB '.output F' 'select …', or the SQL it is fed
            for line in text.splitlines():
                words = line.split()
                if len(words) > 1 and words[0] in _SQLITE_WRITES and not words[-1].startswith("-"):
                    yield words[-1]
            if "writefile" in text.lower():  # select writefile('F', …): the CLI's own function
                yield from (m.group(1).replace("''", "'") for m in _WRITEFILE.finditer(text))
    elif prog in _SQL_CLIENTS:  # psql -c '\o F', mysql -e "… INTO OUTFILE 'F'", --tee=F
        yield from option_values(args, _SQL_CLIENTS[prog])
        for text in args:
            if prog == "psql":
                yield from _psql_writes(text)
            else:
                yield from (m.group(1) or m.group(2) for m in _MYSQL_WRITES.finditer(text))
    elif prog == "script":
        yield from _script(args)
    elif prog == "ssh-keygen":
        if not flags & _KEYGEN_READS:  # -l, -y, -F … read the key file, the rest write it
            yield from (args[i + 1] for i, a in enumerate(args[:-1]) if a == "-f")
            yield from (a[2:] for a in args if a.startswith("-f") and len(a) > 2)
    elif prog in ("mount", "umount"):
        yield from [a for a in args if a.startswith("/")][-1:]  # the mount point
    elif prog in ("npm", "cmake"):  # npm i -g --prefix DIR, cmake --install . --prefix DIR
        yield from (args[i + 1] for i, a in enumerate(args[:-1]) if a == "--prefix")
        yield from (a.partition("=")[2] for a in args if a.startswith("--prefix="))
    elif prog in _CP_CLIS and operands(args)[:1] == ["cp"]:
        ends = operands(args)[1:]
        if len(ends) == 2 and ":" not in ends[1]:
            yield ends[1]  # docker cp C:/x LOCAL


_NOT_WRITING = ("--stdout", "--to-stdout", "--list", "--test")
_NOT_A_FILE = frozenset({"program", "stdout", "pstdout"})


def _psql_writes(text: str) -> Iterator[str]:
    """The files psql's meta-commands in ``text`` write: ``\\o F``, ``\\w F``, ``\\g F`` and
    ``\\copy … to 'F'`` (not ``to program 'cmd'``, ``to stdout``). Word by word, no regex."""
    for chunk in text.split("\\")[1:]:
        words = chunk.split()
        verb = words[0].lower() if words else ""
        if verb in _PSQL_OUTPUTS and len(words) > 1 and not words[1].startswith("|"):
            yield words[1].strip("'\";")
        elif verb == "copy":
            tos = [k for k, w in enumerate(words) if w.lower() == "to" and k + 1 < len(words)]
            target = words[tos[-1] + 1].strip("'\";") if tos else ""
            if target and target.lower() not in _NOT_A_FILE:
                yield target


# make's options whose value is the next word (-C DIR, -f FILE, -I DIR, -o FILE …).
_MAKE_VALUED = frozenset({"-C", "-f", "-I", "-o", "-W", "-E", "--directory", "--file",
                          "--makefile", "--include-dir", "--old-file", "--what-if",
                          "--new-file", "--assume-old", "--assume-new", "--eval"})  # fmt: skip


def _make_targets(args: Sequence[str]) -> Iterator[str]:
    """The targets ``make ARGS`` names (not its options' values, not ``VAR=VALUE``)."""
    skip = False
    for arg in args:
        if skip:
            skip = False
        elif arg in _MAKE_VALUED:
            skip = True
        elif not arg.startswith("-") and "=" not in arg:
            yield arg


def _rewritten(prog: str, args: Sequence[str]) -> Iterator[str]:
    """The files a formatter or fixer rewrites in place (nothing when it only checks)."""
    if any(a in _CHECKING.get(prog, ()) for a in args):
        return
    ops = operands(args)
    if prog in _ALWAYS:
        yield from ops[_ALWAYS[prog] :]
    elif prog in _VERBS:
        verb = ops[:1]
        if verb and verb[0] in _VERBS[prog] and (verb != ["check"] or "--fix" in args):
            yield from ops[1:]
    elif any(a in _WITH_FLAG[prog] for a in args) or _WITH_FLAG[prog] == ("",):
        yield from (o for o in ops if o not in _WITH_FLAG[prog])


def _packed(files: list[str], unpacks: bool, *, keep: bool = False) -> Iterator[str]:
    for name in files:
        if not keep:
            yield name  # removed: replaced by its compressed (or uncompressed) form
        stem, dot, _ = name.rpartition(".")
        if unpacks and dot and stem:
            yield stem  # what the archive held, written over


def _in_place(prog: str, args: Sequence[str]) -> Iterator[str]:
    """``ruby -i[EXT] -pe CODE FILES``, ``gawk -i inplace PROGRAM FILES``: FILES."""
    if prog == "ruby":
        if "i" in short_flags(args):
            yield from operands(args)[1:]  # the code or script, then the files
        return
    included = [args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-i", "--include")]
    included += [a.partition("=")[2] for a in args if a.startswith("--include=")]
    included += [a[2:] for a in args if a.startswith("-i") and len(a) > 2]
    if "inplace" in included:
        valued = ("-i", "--include", "-f", "-v", "-e", "-F", "--file", "--source")
        ops = [
            a for i, a in enumerate(args) if a[:1] != "-" and (i == 0 or args[i - 1] not in valued)
        ]
        yield from ops[1:]  # the program, then the files


_SCRIPT_VALUED = frozenset(
    {"-c", "--command", "-O", "--log-out", "-I", "--log-in", "-B", "--log-io", "-T",
     "--log-timing", "-E", "--echo", "-m", "--logging-format", "-o", "--output-limit"}
)  # fmt: skip


def _script(args: Sequence[str]) -> Iterator[str]:
    """``script [FILE]``: its log (``typescript`` when none is named) and its -O/-I/-B/-T logs."""
    for i, arg in enumerate(args[:-1]):
        if arg in ("-O", "--log-out", "-I", "--log-in", "-B", "--log-io", "-T", "--log-timing"):
            yield args[i + 1]
    ops = [
        a
        for i, a in enumerate(args)
        if a[:1] != "-" and (i == 0 or args[i - 1] not in _SCRIPT_VALUED)
    ]
    yield from ops[:1]


# A diff's files: unified ("+++ PATH"), git's ("rename to PATH", "copy to PATH").
_DIFF_FILE = re.compile(r"^(?:\+\+\+ |rename to |copy to )([^\t\n]+)", re.MULTILINE)
_DIFF_FILES_MAX = 256


def diff_targets(text: str | None) -> Iterator[str]:
    """The files a diff fed to ``patch`` or ``git apply`` writes, each also with its
    leading folders stripped one by one (``-pN`` says how many: any may be the one)."""
    if not text or ("+++ " not in text and " to " not in text):
        return
    for m in itertools.islice(_DIFF_FILE.finditer(text), _DIFF_FILES_MAX):
        path = m.group(1).strip()
        if len(path) > 1 and path[0] == path[-1] == '"':
            path = path[1:-1]  # git quotes a name with unusual characters
        if path == "/dev/null":
            continue
        parts = path.split("/")  # (an empty first part: from the root, "/etc/x")
        yield from filter(None, ("/".join(parts[k:]) for k in range(len(parts))))
