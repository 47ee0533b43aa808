"""What a command writes: write targets and sensitive paths (docs/approvals.md#protected-files).

``write_targets`` lists the paths one simple command writes, creates, replaces or
deletes; ``sensitive`` says whether a path is a system or start-up file, and
``each_sensitive_write`` finds the commands that write one (``_protected`` matches
the same writes against ``approvals.protected_files``). A pure leaf: stdlib and
``shell.detection._command_checks``.
"""

from __future__ import annotations

import fnmatch
import itertools
import posixpath
import re
from collections.abc import Iterator

from multiplex.shell.carriers._tool_code import CARRYING, awk_program, carried, git_writes
from multiplex.shell.detection._catalogue import SENSITIVE_WRITE, Finding
from multiplex.shell.detection._command_checks import (
    CHMODS,
    dangerous_check,
    expand_braces,
    operands,
    permission_operands,
    short_flags,
)
from multiplex.shell.detection.paths._installs import INSTALLERS, installed_into
from multiplex.shell.detection.paths._py_modules import (
    PY_WRITERS,
    module_extracts_to,
    module_writes,
    python_module,
)
from multiplex.shell.detection.paths._replaced import REPLACERS, diff_targets, replaced
from multiplex.shell.detection.paths._reports import REPORTERS, reported
from multiplex.shell.detection.paths._secret_paths import SHELL_START_UP, resolved
from multiplex.shell.detection.paths._targets import Place, placed
from multiplex.shell.detection.paths._trees import UNPACKERS
from multiplex.shell.parsing._argv import (
    FOLDER,
    URL_NAME,
    fed_text,
    git_subcommand,
    landed_in,
    target_directory,
)
from multiplex.shell.parsing._getopt import read_options, table
from multiplex.shell.parsing._parsed import ParsedLine, SimpleCommand

__all__ = [
    "DOWNLOAD_OPTIONS",
    "LITERAL",
    "SENSITIVE_NAMES",
    "all_commands",
    "code_literals",
    "diff_targets",
    "each_sensitive_write",
    "evidence",
    "moved_writes",
    "script_writes",
    "sensitive",
    "unpacks",
    "write_targets",
    "writes_sensitive",
]

LITERAL = re.compile(r"'((?:[^'\\]|\\.)*)'|\"((?:[^\"\\]|\\.)*)\"|`((?:[^`\\]|\\.)*)`", re.DOTALL)
# Perl's and ruby's quote-like strings: q{…}, qq(…), qx[…], qw<…>, q/…/, %q{…}, %Q(…),
# %x[…], %w|…|, %(…). Not nested: the inner text up to the first closing delimiter.
_QUOTE_LIKE = re.compile(
    r"(?<![\w$@%&])(?:q[qxw]?[ \t]{0,8}|%[qQxwWiI]?)"
    r"(?:\{([^{}]*)\}|\(([^()]*)\)|\[([^\[\]]*)\]|<([^<>]*)>|/([^/]*)/|!([^!]*)!|\|([^|]*)\|)"
)


def code_literals(payload: str) -> list[str]:
    """The string literals of inline code: quoted, backquoted and quote-like."""
    found = [next(g for g in m.groups() if g is not None) for m in LITERAL.finditer(payload)]
    if "q" in payload or "%" in payload:
        found += [
            next(g for g in m.groups() if g is not None) for m in _QUOTE_LIKE.finditer(payload)
        ]
    return found


# awk's print > "FILE" and print >> "FILE".
_AWK_OUTPUT = re.compile(r">>?\s*\"([^\"\\]+)\"")
_WRITE_CALL = re.compile(
    r"write|open\s*\([^)]*['\"](?:[wax+]|>|\+<)|appendFile|rename|replace|unlink|remove|truncate"
    r"|rmSync|rm_rf|copy|move|symlink|chmod|put_contents|fputs"
    # a mode string after nested calls: File.open(File.expand_path("~/.bashrc"), "a")
    r"|\bopen\b[^;]{0,200}?['\"](?:[wax]b?\+?|r\+b?|rb\+|>>?|\+<)['\"]"
    r"|\bopen\b[^;]{0,200}?['\"](?:>|\+<)",  # perl's two arguments: open F, ">F"
)


_SENSITIVE = (
    "~/.ssh", "~/.ssh/*", "*/.ssh/*", "/etc/*", "/etc", "/root/*", "/boot/*", "/usr/*",
    "/bin/*", "/sbin/*", "/lib*/*", "/var/spool/cron/*", "~/.gnupg/*", "~/.aws/*",
    "~/.kube/config", "~/.docker/config.json", "~/.netrc", "~/.git-credentials",
    "~/.config/fish/config.fish", "/proc/sys/*", "/sys/*", "/var/log/*", "/var/lib/*",
    "/var/spool/*", "/var/mail/*",
    # the folders themselves: what is copied or extracted into them lands inside
    "/root", "/boot", "/usr", "/bin", "/sbin", "/lib*", "/var/log", "/var/lib", "/var/spool",
    "/proc/sys", "/sys",
    # shells' and REPLs' histories: emptied or linked to /dev/null, they erase what ran
    "~/.bash_history", "~/.zsh_history", "~/.history", "~/.python_history", "~/.psql_history",
    "~/.mysql_history", "~/.node_repl_history", "~/.sqlite_history", "~/.lesshst",
    "~/.local/share/fish/fish_history",
)  # fmt: skip
_SLASHES = re.compile(r"/+")
# All of them in one regex: fnmatchcase(path, p) is translate(p) matched at the start.
_SENSITIVE_GLOB = re.compile("|".join(f"(?:{fnmatch.translate(p)})" for p in _SENSITIVE))


_SENSITIVE_NAMES = frozenset(
    [
        *SHELL_START_UP,
        "authorized_keys",
        "authorized_keys2",
        "sudoers",
    ]
)


# Every program whose arguments name a file it writes (the branches of write_targets).
_WRITERS = frozenset(
    {"tee", "truncate", "rm", "unlink", "shred", "rmdir", "srm", "wipe", "mv", "cp", "install",
     "ln", "rsync", "scp", "link", "sed", "gsed", "perl", "yq", "dd", "chmod", "chown", "chgrp",
     "curl", "wget", "vi", "vim", "nvim", "nano", "emacs", "ed", "ex", "pico", "sponge", "git",
     "awk", "gawk", "mawk", "nawk", "patch", "dcfldd", "ddrescue", "unzip", "7z", "7za", "7zz",
     "cpio", "uniq", "iconv", "zip", "chattr", "setfacl", "chcon", "find", "shuf", "gpg", "gpg2", "base64",
     "exiftool", "xxd", "split", "csplit", "aria2c", "update-alternatives", "alternatives", *REPLACERS, *INSTALLERS, *REPORTERS}
)  # fmt: skip


_READ_ARGV = _WRITERS | CARRYING
_REMOTE = re.compile(r"^[^/:]+:")  # scp's and rsync's HOST: or USER@HOST: before a path
_FIND_FILES = frozenset({"-fprint", "-fprint0", "-fls", "-fprintf"})
_FED_COMMANDS = frozenset({"ed", "ex", "vim", "vi", "nvim"})  # their commands on stdin
_XXD = table("", "c= C= g= l= s= o= n= R=")
_SPLITS = {
    "split": table(
        "lines= bytes= line-bytes= number= additional-suffix= suffix-length= filter= "
        "separator= numeric-suffixes=? hex-suffixes=?", "l= b= C= n= a= t= d=? x=?"),
    "csplit": table("prefix= suffix-format= digits=", "f= b= n="),
}  # fmt: skip
_ICONV = table("from-code= to-code= output=", "f= t= o=")
_GPG = table("output= recipient= local-user= homedir= default-key= passphrase=", "o= r= u=")
_PATCH = table(
    "output= input= directory= reject-file= strip= fuzz= ifdef= prefix= basename-prefix= "
    "suffix= version-control= backup quiet silent forward reverse dry-run binary",
    "o= i= d= r= p= F= D= B= Y= z= V= b R N s f t E",
)
# Programs whose -o/--output names the file they write.
_OUTPUTS = {
    "iconv": _ICONV,
    "shuf": table("output= head-count= input-range= random-source=", "o= n= i="),
    "gpg": _GPG,
    "gpg2": _GPG,
    "base64": table("output= input= wrap=", "o= i= b= w="),
    "exiftool": table("", "o= w= tagsfromfile= p= ext="),
    "aria2c": table("out= dir= input-file=", "o= d= i="),
}
DOWNLOAD_OPTIONS = {  # curl's and wget's options as getopt reads them (those taking a value)
    "wget": table(
        "output-document= output-file= append-output= execute= directory-prefix= input-file= "
        "config= header= user= password= post-data= post-file= body-data= body-file=",
        "O= o= a= e= P= i= U=",
    ),
    "curl": table(
        "output= dump-header= cookie-jar= trace= trace-ascii= stderr= libcurl= etag-save= "
        "hsts= alt-svc= config= data= header= user= url= form= upload-file= write-out= "
        "output-dir= remote-name remote-name-all",
        "o= D= c= K= d= H= u= F= T= w=",
    ),
}
_DOWNLOAD_FILES = ("-O", "--output-document", "-o", "--output-file", "-a", "--append-output",
                   "--output", "-D", "--dump-header", "-c", "--cookie-jar", "--trace",
                   "--trace-ascii", "--stderr", "--libcurl", "--etag-save")  # fmt: skip


def all_commands(parsed: ParsedLine) -> tuple[SimpleCommand, ...]:
    return parsed.commands + parsed.variant_commands


def evidence(cmd: SimpleCommand) -> str:
    # A redirection is only visible in the source text, not in argv.
    return cmd.text if cmd.writes_file or not cmd.argv else " ".join(cmd.argv)


def _home(path: str) -> str:
    return _HOME_VAR.sub("~", path) if path.startswith("$") else path


_HOME_VAR = re.compile(r"^(\$\{HOME\}|\$HOME\b)")


def write_targets(cmd: SimpleCommand) -> tuple[str, ...]:
    """Paths ``cmd`` writes, creates, replaces or deletes (docs/approvals.md#protected-files)."""
    # Several checks ask of each command: read once per decision.
    return cmd.once("writes", lambda: tuple(_write_targets(cmd)))


def _write_targets(cmd: SimpleCommand) -> Iterator[str]:
    for r in cmd.redirects:
        if r.writes_file or (
            r.target.startswith("/dev/") and ">" in r.op and r.target != "/dev/null"
        ):
            yield r.target
    if not cmd.argv:
        return
    prog = cmd.program
    if prog not in _READ_ARGV and not prog.startswith("python"):
        return  # most programs write nothing by their arguments: their argv is not read
    args = cmd.argv[1:]
    if prog.startswith("python") and (module := python_module(args)) is not None:
        prog, args = module  # python -m pytest --junit-xml=FILE
        if prog in PY_WRITERS:  # python -m json.tool IN OUT, -m zipfile -c ZIP …
            yield from module_writes(prog, args)
            return
    if prog in CARRYING:  # tar cf, sort -o, sed w/-i, pytest --junit-xml, openssl -out …
        fed = fed_text(cmd.redirects, None) if prog in _FED_COMMANDS else None
        yield from carried(prog, args, fed).writes  # (ed w FILE <<< …: its commands fed)
    if prog not in _WRITERS:
        return  # most programs write nothing by their arguments: their argv is not read
    if prog in REPORTERS:  # coverage xml -o F, tsc --outDir D, docker save -o F …
        yield from reported(prog, args)
    target = target_directory(args) if prog in ("cp", "install", "ln", "mv") else None
    if prog in ("tee", "truncate", "rm", "unlink", "shred", "rmdir", "srm", "wipe", "mv"):
        yield from (op for op in operands(args) if not (prog == "truncate" and op.isdigit()))
        yield from [target] if target else []  # mv -t DIR: each file lands in DIR
        yield from landed_in(target, operands(args)) if target else ()
    elif prog in ("cp", "install", "ln", "rsync", "scp", "link"):
        ops = operands(args)
        yield from ([target] if target else ops[-1:] if len(ops) > 1 or prog == "ln" else [])
        if target:  # cp -t ~ .bashrc: ~/.bashrc
            yield from landed_in(target, ops)
        elif len(ops) > 1 and FOLDER.match(ops[-1]):  # cp .bashrc ~/ (a folder, surely)
            sources = ops[:-1]
            if prog in ("scp", "rsync"):  # scp host:AGENTS.md . lands as ./AGENTS.md
                sources = [_REMOTE.sub("", o) for o in sources]
            yield from landed_in(ops[-1], sources)
    elif prog in ("perl", "yq") and (
        "i" in short_flags(args) or any(a.startswith(("--in-place", "--inplace")) for a in args)
    ):
        scripted = any(a in ("-e", "-f", "--expression", "--file") or "e" in a[1:2] for a in args)
        ops = operands(args)
        yield from ops if scripted and prog != "yq" else ops[1:]
    elif prog == "git":
        sub, rest = git_subcommand(args)
        yield from git_writes(sub, rest)
        if sub in ("apply", "am"):
            yield from diff_targets(fed_text(cmd.redirects, None))
    elif prog in ("awk", "gawk", "mawk", "nawk"):
        for code in awk_program(args)[0]:
            yield from (m.group(1) for m in _AWK_OUTPUT.finditer(code))
        yield from replaced("gawk", args)  # gawk -i inplace edits its files
    elif prog == "patch":  # patch [opts] FILE [PATCH], -o OUT, -r REJECTS
        parsed = read_options(args, _PATCH)
        yield from parsed.operands[:1]
        yield from parsed.values("-o", "--output", "-r", "--reject-file")
        yield from diff_targets(fed_text(cmd.redirects, None))  # a diff the line shows
    elif prog == "unzip":  # unzip A.zip -d DIR: the archive's files land in DIR
        yield from (args[i + 1] for i, a in enumerate(args[:-1]) if a == "-d")
        yield from (a[2:] for a in args if a.startswith("-d") and len(a) > 2)
        listing = any(a.startswith("-") and set(a[1:]) & set("lptvZ") for a in args)
        ops = [a for i, a in enumerate(args) if not a.startswith("-") and args[i - 1] != "-d"]
        yield from ([] if listing else ops[1:])  # the members named are written over
    elif prog in ("7z", "7za", "7zz") and args[:1] and args[0] in ("x", "e", "a", "u", "d", "rn"):
        given = [a for a in args[1:] if not a.startswith("-")]  # 7z a A: A; 7z x A MEMBER: MEMBER
        yield from given[1:] if args[0] in "xe" else given[:1]
        yield from (a[2:] for a in args[1:] if args[0] in "xe" and a.startswith("-o") and a[2:])
    elif prog == "cpio" and any(a in ("-i", "--extract") or a.startswith("-i") for a in args):
        yield from operands(args)  # cpio -i PATTERN: the members it extracts
    elif prog == "uniq":
        yield from operands(args)[1:2]  # uniq INPUT OUTPUT
    elif prog == "xxd":  # xxd [-r] INFILE OUTFILE
        yield from read_options(args, _XXD).operands[1:2]
    elif prog in ("split", "csplit"):  # split FILE PREFIX: PREFIXaa, PREFIXab … (csplit -f)
        parsed = read_options(args, _SPLITS[prog])
        prefixes = parsed.operands[1:2] if prog == "split" else parsed.values("-f", "--prefix")
        yield from (p + "aa" for p in prefixes)
    elif prog in _OUTPUTS:  # iconv -o F, shuf -o F, gpg -o F, base64 -o F (BSD) …
        parsed = read_options(args, _OUTPUTS[prog])
        outs = parsed.values("-o", "--output", "--out")
        into = parsed.values("-d", "--dir") if prog == "aria2c" else []  # aria2c -d DIR -o F
        yield from (into[-1].rstrip("/") + "/" + o for o in outs) if into else outs
    elif prog == "zip":
        yield from operands(args)[:1]  # the archive it writes
    elif prog == "find":  # -fprint F, -fprint0 F, -fls F, -fprintf F FORMAT: F is written
        yield from (args[i + 1] for i, a in enumerate(args[:-1]) if a in _FIND_FILES)
    elif prog in ("dd", "dcfldd"):
        yield from (a[3:] for a in args if a.startswith("of="))
    elif prog in ("update-alternatives", "alternatives"):  # --install|--slave LINK NAME PATH
        yield from (args[i + 1] for i, a in enumerate(args[:-1]) if a in ("--install", "--slave"))
    elif prog == "ddrescue":
        yield from operands(args)[1:2]
    elif prog in CHMODS:
        yield from permission_operands(prog, args)[1]
    elif prog in ("curl", "wget"):
        # Read as getopt_long reads them: --output-document=F, -OF, --output-doc F. curl -O
        # names the file after the URL; wget -O names it.
        parsed = read_options(args, DOWNLOAD_OPTIONS[prog])
        yield from parsed.values(*_DOWNLOAD_FILES)
        yield from parsed.values("-P", "--directory-prefix")  # wget -P DIR: lands in DIR
        # Named after the URL: wget's own way (into -P DIR), curl's -O (into --output-dir).
        named = prog == "wget" or parsed.has("-O", "--remote-name", "--remote-name-all")
        if named and not parsed.values("-O", "--output-document", "-o", "--output"):
            into = parsed.values("-P", "--directory-prefix", "--output-dir")
            names = [m.group(1) for op in parsed.operands if (m := URL_NAME.match(op))]
            yield from landed_in(into[-1], names) if into else names
        for command in parsed.values("-e", "--execute"):  # wget -e output_document=F
            name, _, value = command.replace(" ", "").partition("=")
            if name.replace("_", "").lower() in ("outputdocument", "logfile"):
                yield value
    elif prog in ("vi", "vim", "nvim", "nano", "emacs", "ed", "ex", "pico", "sponge"):
        yield from operands(args)
    elif prog in INSTALLERS or prog in REPLACERS:
        if prog in INSTALLERS:  # cargo install --root ~/.local: ~/.local/bin
            yield from installed_into(prog, args, cmd.assignments)
        if prog in REPLACERS:  # gzip F, ruby -i, gawk -i inplace, sqlite3 DB, docker cp …
            fed = fed_text(cmd.redirects, None) if prog == "sqlite3" and cmd.redirects else None
            yield from replaced(prog, args if fed is None else (*args, fed))


def each_sensitive_write(parsed: ParsedLine, place: Place | None = None) -> Iterator[Finding]:
    """Each command writing a sensitive place by its own targets (``cp x /etc/passwd``),
    also as named from where a ``cd`` took it (``cd /etc && echo x > passwd``): never
    approved by an allow rule, as a protected file's write is not. Named by the command's
    own danger when it has one (``chmod 777 /etc/passwd``: system-permissions)."""
    found = list(filter(writes_sensitive, all_commands(parsed)))
    # (In ``~/…`` form where under a home, as the words themselves are read.)
    if place is not None:
        at = place
        moved = (
            cmd for cmd, path in moved_writes(parsed, at) if any(map(sensitive, resolved(path, at)))
        )
        found += itertools.islice(moved, 1)
    for cmd in found:
        own = dangerous_check(cmd.program, cmd.argv[1:]) if cmd.argv else None
        yield Finding(own or SENSITIVE_WRITE, evidence(cmd), cmd.text)


def moved_writes(parsed: ParsedLine, place: Place) -> Iterator[tuple[SimpleCommand, str]]:
    """Each relative write target of a command a ``cd`` took to a known folder, as the
    absolute path it names from there (``cd /etc/sudoers.d && echo … > x``)."""
    for cmd, here in placed(parsed, place):
        if here is place or not here.cwd:
            continue  # from the turn's folder: the targets as written are judged
        for target in write_targets(cmd):
            for variant in expand_braces(target):
                if variant[:1] not in ("/", "~", "$", ""):
                    yield cmd, posixpath.normpath(posixpath.join(here.cwd, variant))


def writes_sensitive(cmd: SimpleCommand) -> bool:
    """Whether one of ``cmd``'s write targets is :func:`sensitive` (asked twice a decision)."""
    return cmd.once("sensitive", lambda: any(sensitive(p) for p in write_targets(cmd)))


# Public for the inert lines' first test (docs/security.md#inert-lines): a relative path
# with no part starting with a dot is sensitive exactly when its last part is one of these.
SENSITIVE_NAMES = _SENSITIVE_NAMES


def sensitive(path: str) -> bool:
    path = _home(path.strip())
    norm = posixpath.normpath(_SLASHES.sub("/", path) if "//" in path else path) if path else path
    if norm.rsplit("/", 1)[-1] in _SENSITIVE_NAMES:
        return True
    return _SENSITIVE_GLOB.match(norm) is not None


def script_writes(payload: str) -> list[str]:
    """The string literals of inline code that writes, copies, moves or removes files
    (``open(P, "w")``, ``writeFileSync``, ``shutil.copy`` …): the paths it may write."""
    if not _WRITE_CALL.search(payload):
        return []
    # A mode in front of the path (perl's open F, ">>F") is not part of it.
    return [literal.lstrip("<>+| \t") for literal in code_literals(payload)]


def unpacks(cmd: SimpleCommand) -> bool:
    """Whether ``cmd`` puts files it does not name where it writes: an archive
    extracted, a tree copied (``rsync``, ``cp -r``), so a ``.bashrc`` among them.
    Asked once per target of a command: read once (a line stays linear in its words)."""
    return cmd.once("unpacks", lambda: _unpacks(cmd))


def _unpacks(cmd: SimpleCommand) -> bool:
    if cmd.program in UNPACKERS:
        return True
    args = cmd.argv[1:]
    if cmd.program.startswith("python") and (module := python_module(args)) is not None:
        return bool(module_extracts_to(*module))  # python -m zipfile -e X.zip ~
    return cmd.program == "cp" and (
        bool(set(short_flags(args)) & set("rRa")) or "--recursive" in args or "--archive" in args
    )
