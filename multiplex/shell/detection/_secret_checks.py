"""Secret reads, persistence, privileged containers, code-loading variables, script exec.

Each ``find_*`` returns the first :class:`Finding` of its named pattern in a parsed
line judged at a :class:`Place`, or None (docs/security.md#named-patterns). A pure
leaf: stdlib and the shell leaves it imports.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from multiplex.shell.carriers._sed import sed_facts
from multiplex.shell.carriers._stdin_code import printed
from multiplex.shell.carriers._tool_code import CARRYING, carried
from multiplex.shell.carriers._transfers import reads_piped_commands
from multiplex.shell.detection._catalogue import (
    PERSISTENCE,
    SCRIPT_EXEC,
    SECRET_READ,
    Finding,
)
from multiplex.shell.detection._command_checks import (
    DISK_TOOLS,
)
from multiplex.shell.detection._lasting_settings import settings_persist
from multiplex.shell.detection._printers import echoes_credential, prints_credentials
from multiplex.shell.detection._schedules import schedules
from multiplex.shell.detection._variables import DECLARE, loads_code_safely
from multiplex.shell.detection.network._code_sends import reads_a_secret
from multiplex.shell.detection.network._uploads import (
    COPIERS,
    copier_operands,
    ssh_config_files,
)
from multiplex.shell.detection.paths._secret_paths import (
    is_home_root,
    is_persistence_path,
    is_secret_path,
    may_be_secret,
    may_hold_secret,
    resolved,
)
from multiplex.shell.detection.paths._startup_folders import (
    is_startup_root,
    startup_writes_where_run,
    writes_a_tree,
)
from multiplex.shell.detection.paths._targets import Place, device_at, path_words, placed
from multiplex.shell.detection.paths._trees import unpacks_anywhere
from multiplex.shell.detection.paths._writes import (
    all_commands,
    evidence,
    script_writes,
    write_targets,
)
from multiplex.shell.parsing._argv import fed_text, program_name
from multiplex.shell.parsing._parsed import ParsedLine, SimpleCommand
from multiplex.shell.parsing.runs._git import GIT_GLOBAL_VALUE, git_config_payload

__all__ = [
    "each_code_carrier",
    "each_persistence",
    "each_script_exec",
    "each_secret_read",
    "find_persistence",
    "find_script_exec",
    "find_secret_read",
    "starts_programs",
]

# Programs that look at a path without reading its content out.
_METADATA_ONLY = frozenset(
    [
        "ls",
        "stat",
        "test",
        "[",
        "[[",
        "file",
        "du",
        "chmod",
        "chown",
        "chgrp",
        "mkdir",
        "touch",
        "ssh",
        "ssh-add",
        "ssh-keygen",
        "realpath",
        "readlink",
        "basename",
        "dirname",
    ]
)
_SEDS = frozenset({"sed", "gsed"})
_SCRIPT_EXEC = re.compile(
    r"\bsystem\s*\(|\bexec[lv]?p?e?\s*\(|\bspawn\w*\s*\(|\bpopen\b|\bsubprocess\b"
    r"|\bchild_process\b|\bexecSync\b|\bPopen\b|\bcheck_output\b|\bcheck_call\b|`[^`]*`"
    r"|\bqx\s*[({/\[]|%x\s*[({\[]|\bshell_exec\b|\bpassthru\b|\bproc_open\b|\bRuntime\b|\bDeno\.(?:run|Command)\b|\bBun\.spawn"
    r"|\bos\.exec|\|\s*\"|\|&\s*\"|\bgetline\b|\bpty\b|\bos\.fork\b|\b__import__\b|(?:^|[;\n])\s*@load\s*\""
    # perl and ruby call without parentheses (exec "cmd", system 'cmd', system %q[cmd],
    # system *%w[…]); perl's piped open
    r"|\b(?:exec|system)\s+[\"'$@\w%*]|\bopen\b[^;)]{0,200}(?:[\"']\s*-?\||\|\s*[\"'])"
    # more hosts' ways: R's system2, posix_spawn, PHP's pcntl_exec, Ruby's Open3, node's
    # internal binding, Lisp's run-program, Erlang's os:cmd, Elixir's System.cmd, Groovy's
    # "…".execute(), Haskell's System.Process
    r"|\bsystem2\s*\(|posix_spawn|\bpcntl_exec\b|\bOpen3\b|\bprocess\.binding\b|spawn_sync"
    r"|\brun-program\b|\bos:cmd\b|\bSystem\.cmd\b|\.execute\s*\(|\b(?:call|read)(?:Command|Process)\b"
    # perl's IPC::Open2/Open3, the JVM's ProcessBuilder, Scala's sys.process
    r"|\bopen[23]\s*\(|\bProcessBuilder\b|\bsys\.process\b"
    # code built at run time and then run (eval(atob(…)), new Function(…), node's vm): what
    # it runs is not on the line (a literal's text is read where it stands)
    r"|\beval\s*\(\s*[^\s\"'`)]|\bFunction\s*\(\s*[^\s\"'`)]|\brunIn(?:This|New)?Context\b"
    r"|\beval[ \t]++[A-Za-z$@]"  # ruby's and perl's eval without parentheses: eval URI.open(…).read
    r"|\bcompileFunction\b"
    # asyncio's subprocesses, a program-starting module's attribute looked up by a name
    # built at run time (getattr(os, "sys"+"tem")), the sh and plumbum libraries
    r"|\bcreate_subprocess_(?:shell|exec)\b"
    r"|\bgetattr\s*\(\s*(?:os|posix|subprocess|pty|builtins|__builtins__|child_process)\b"
    r"|\bimport\s+sh\b|\bfrom\s+sh\s+import\b|\bplumbum\b"
    r"|\bshell\s*[\"'(<]"  # raku's shell "cmd"
    r"|\bsh\s*[\"'(]"  # rake's sh "cmd"
)


# Each alternative of _SCRIPT_EXEC holds one of these: a C-speed test before the search.
_SCRIPT_EXEC_WORDS = (
    "system", "exec", "spawn", "popen", "Popen", "subprocess", "child_process", "check_output",
    "check_call", "`", "qx", "%x", "passthru", "proc_open", "Runtime", "|", "getline", "pty",
    "os.fork", "__import__", "Deno.", "Bun.spawn", "open", "Open3", "binding", "run-program",
    "os:cmd", "System.cmd", "Command", "Process", "create_subprocess", "getattr", "sh",
    "plumbum", "shell", "sys.process", "eval", "Function", "Context", "@load",
)  # fmt: skip


def each_secret_read(parsed: ParsedLine, place: Place) -> Iterator[Finding]:
    """Each command or script literal that reads a private key or credential store."""
    # Each command where it runs: cd /etc && cat shadow reads /etc/shadow.
    lister = False  # a find over a whole home or / met earlier on the line
    for cmd, here in placed(parsed, place):
        if cmd.program in _LISTERS and not lister and not cmd.wrapped_by:
            lister = _lists_whole_home(cmd, here)
        if cmd.argv and cmd.program in _METADATA_ONLY:
            configs = ssh_config_files(cmd.program, cmd.argv[1:])
            if any(is_secret_path(p) for w in configs for p in resolved(w, here)):
                yield Finding(SECRET_READ, evidence(cmd), cmd.text)  # ssh -F ~/.aws/credentials
            continue
        if cmd.argv and (
            prints_credentials(cmd.program, cmd.argv[1:]) or echoes_credential(cmd, parsed.line)
        ):
            yield Finding(SECRET_READ, evidence(cmd), cmd.text)
            continue
        if cmd.program in _TREE_READERS and _reads_whole_home(cmd, here):
            yield Finding(SECRET_READ, evidence(cmd), cmd.text)  # grep -r token ~, cp -r ~ /tmp
            continue
        if lister and _given_listed_names(cmd):
            yield Finding(SECRET_READ, evidence(cmd), cmd.text)  # find ~ | xargs cat
            continue
        words = list(path_words(cmd.argv)) if cmd.argv else []
        if cmd.program in COPIERS:  # scp -i KEY, rsync -e 'ssh -i KEY': used, not sent
            args = cmd.argv[1:]
            words = [*path_words(("", *copier_operands(cmd.program, args)))]
            words += ssh_config_files(cmd.program, args)
        elif cmd.program in DECLARE:  # export F=~/.aws/credentials; cat $F
            words += [a.partition("=")[2] for a in cmd.argv[1:] if "=" in a]
        elif cmd.program in _SEDS:  # sed '1r /etc/shadow': the file is copied out
            words += sed_facts(cmd.argv[1:]).reads
        elif cmd.program == "cpio" and any(
            a in ("-o", "--create") or a[:2] == "-o" for a in cmd.argv
        ):
            fed = fed_text(cmd.redirects, None)  # cpio -o <<< KEY: the names it archives
            words += fed.split() if fed else []
        # Into any descriptor: exec 3< ~/.ssh/id_rsa; cat <&3
        read = [r.target for r in cmd.redirects if r.reads_file] if cmd.redirects else []
        raw = any(device_at(w, here.cwd) for w in words + read)  # (cd /dev && cat sda)
        if raw and cmd.program not in DISK_TOOLS:  # a raw disk: every file on it
            yield Finding(SECRET_READ, evidence(cmd), cmd.text)
            continue
        # The words before those it writes are taken out: when none of them may be a
        # secret, none of the rest is (the first test looks at each word alone).
        if not may_hold_secret(words + read, here):
            continue
        # (A database, an editor, an in-here edit or a compressor reads what it writes.)
        written = set() if cmd.program in _READS_ITS_TARGETS else set(write_targets(cmd))
        words = [w for w in words if w not in written] + read
        if may_hold_secret(words, here) and any(
            is_secret_path(p) for w in words if may_be_secret(w, here) for p in resolved(w, here)
        ):
            yield Finding(SECRET_READ, evidence(cmd), cmd.text)
    for payload in parsed.script_payloads:
        if reads_a_secret(payload, place):
            yield Finding(SECRET_READ, payload)


# Programs that read a whole tree: always (rg, tar c), or with a recursive option.
_TREE_READERS = {
    "grep": "rR", "egrep": "rR", "fgrep": "rR", "rg": "", "ag": "", "ack": "", "cp": "rRa",
    "rsync": "ra", "zip": "r", "tar": "", "7z": "", "scp": "r",
}  # fmt: skip
_RECURSIVE_LONG = ("--recursive", "--dereference-recursive", "--archive", "--recurse-paths")


def _reads_whole_home(cmd: SimpleCommand, place: Place) -> bool:
    """``cmd`` reads every file of a home or of ``/`` (each credential store in it):
    ``grep -r AKIA ~``, ``rg token $HOME``, ``cp -r ~ /tmp/h``, ``zip -r h.zip ~``."""
    flags = _TREE_READERS[cmd.program]
    args = cmd.argv[1:]
    if flags and not (
        any(a.startswith("-") and not a.startswith("--") and set(a[1:]) & set(flags) for a in args)
        or any(a.startswith(_RECURSIVE_LONG) for a in args)
    ):
        return False
    if (
        cmd.program == "tar"
        and not any(  # only an archive made: tar czf X ~, tar -c …
            a == "--create" or (not a.startswith("--") and "c" in a.lstrip("-")[:4])
            for a in args[:2]
        )
    ):
        return False
    words = [a for a in args if not a.startswith("-")]
    return any(
        is_home_root(p) or p.rstrip("/") == "" for w in words for p in resolved(w, place) if p
    )


# What lists every file of a tree, and what runs a command on names it is given.
_LISTERS = frozenset({"find", "fd", "fdfind"})
_FIND_OPTIONS = frozenset({"-H", "-L", "-P", "-O0", "-O1", "-O2", "-O3"})


def _lists_whole_home(cmd: SimpleCommand, place: Place) -> bool:
    """``cmd`` lists every file of a home or of ``/``: ``find ~``, ``find $HOME -type f``,
    ``find /``, ``fd . ~``; ``find`` and ``fd`` with no folder list the one they run in."""
    args = [a for a in cmd.argv[1:] if a not in _FIND_OPTIONS and not a.startswith("-D")]
    if cmd.program == "find":  # the folders come before the first test or action
        end = next((i for i, a in enumerate(args) if a[:1] in ("-", "(", "!")), len(args))
        roots = args[:end] or ["."]
    else:  # fd PATTERN FOLDER…
        operands = [a for a in args if not a.startswith("-")]
        roots = operands[1:] or ["."]
    return any(
        is_home_root(p) or p.rstrip("/") == "" for w in roots for p in resolved(w, place) if p
    )


_STDIN_NAMES = ("-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0")


def _given_listed_names(cmd: SimpleCommand) -> bool:
    """``cmd`` is run on, or reads, the names a lister before it printed: ``find … -exec
    cmd {} +``, ``find … | xargs cmd``, ``| parallel cmd``, ``| tar czf x -T -``,
    ``| cpio -o``, ``| zip x -@``, ``| rsync --files-from=- / dst``."""
    if cmd.wrapped_by:
        runner = cmd.wrapped_by[-1]
        if runner == "find" or runner == "parallel":
            return True
        if runner == "xargs":
            return not _LISTERS.isdisjoint(cmd.upstream)
    if _LISTERS.isdisjoint(cmd.upstream):
        return False
    args = cmd.argv[1:]
    if cmd.program == "cpio":  # -o, -ov, -vo, --create: an archive of the names read
        return any(
            a == "--create" or (a.startswith("-") and not a.startswith("--") and "o" in a)
            for a in args
        )
    if cmd.program == "zip":
        return "-@" in args or "--names-stdin" in args
    if cmd.program not in ("tar", "bsdtar", "rsync"):
        return False
    for i, arg in enumerate(args):
        key, eq, value = arg.partition("=")
        # --files-from and each unique prefix of it (getopt_long), tar's -T
        if key.startswith("--files") and "--files-from".startswith(key):
            named = value if eq else (args[i + 1] if i + 1 < len(args) else "")
        elif arg[:2] == "-T" and cmd.program != "rsync":
            named = arg[2:] or (args[i + 1] if i + 1 < len(args) else "")
        else:
            continue
        if named in _STDIN_NAMES:
            return True
    return False


def find_secret_read(parsed: ParsedLine, place: Place) -> Finding | None:
    """A command or script literal that reads a private key or credential store."""
    return next(each_secret_read(parsed, place), None)


def _git_runs(args: Sequence[str]) -> bool:
    """``git -c core.pager=CMD …``, ``--config-env=core.pager=VAR``: a command key set;
    ``--exec-path=DIR`` with a subcommand: git's own programs taken from DIR."""
    i = 0
    while i < len(args) and args[i].startswith("-"):
        arg = args[i]
        given = i + 1 if arg.startswith("--exec-path=") else i + 2 if arg == "--exec-path" else 0
        if 0 < given < len(args):  # a subcommand follows: it is run from that folder
            return True
        setting = args[i + 1] if arg == "-c" and i + 1 < len(args) else ""
        if arg.startswith("--config-env="):
            setting = arg.partition("=")[2]
        key, _, value = setting.partition("=")
        command = git_config_payload(key, value) if key else None
        if command is not None and not loads_code_safely(command):
            return True
        i += 2 if arg in GIT_GLOBAL_VALUE else 1
    return False


def each_persistence(parsed: ParsedLine, place: Place) -> Iterator[Finding]:
    """Each write to a place where code runs later by itself, or a setting that has later
    commands run other code (``_lasting_settings``)."""
    for cmd in all_commands(parsed):
        if settings_persist(cmd):  # git config core.pager CMD, npm config set registry URL
            yield Finding(PERSISTENCE, evidence(cmd), cmd.text)
        for target in write_targets(cmd):
            found = resolved(target, place)
            if (
                any(is_persistence_path(p) for p in found)
                or (writes_a_tree(cmd) and any(is_startup_root(p) for p in found))
                or (target.endswith(_SITE_HOOKS) and ("$(" in target or "`" in target))
            ):  # an archive or a tree copied into the home or /: its start-up files too; a
                # .pth in a folder computed at run time ($(python3 -m site --user-site)/x.pth)
                yield Finding(PERSISTENCE, evidence(cmd), cmd.text)
        if cmd.argv and unpacks_anywhere(cmd.program, cmd.argv[1:]):
            yield Finding(PERSISTENCE, evidence(cmd), cmd.text)  # tar -xPf: where members say
        if cmd.argv and schedules(program_name(cmd.argv[0]), cmd.argv[1:]):
            yield Finding(PERSISTENCE, evidence(cmd), cmd.text)
    # cd ~ && tar -xf x.tar, cd ~/.config/autostart && cp x x.desktop: where it runs
    for cmd in startup_writes_where_run(parsed, place):
        yield Finding(PERSISTENCE, evidence(cmd), cmd.text)
    for payload in parsed.script_payloads:  # open(os.path.expanduser("~/.bashrc"), "a")
        for literal in script_writes(payload):
            if any(is_persistence_path(p) for p in resolved(literal, place)):
                yield Finding(PERSISTENCE, payload)
                break


# What python runs at every start from a site folder (a .pth's import lines).
_SITE_HOOKS = (".pth", "/sitecustomize.py", "/usercustomize.py")
_READS_ITS_TARGETS = frozenset(
    {"sqlite3", "sqlite", "duckdb", "sed", "gsed", "perl", "ruby", "awk", "gawk", "vi", "vim",
     "nvim", "nano", "emacs", "ed", "ex", "pico", "gzip", "bzip2", "xz", "zstd", "lz4", "lzma"}
)  # fmt: skip


def find_persistence(parsed: ParsedLine, place: Place) -> Finding | None:
    """A write to a place where code runs later by itself, or git config of a command key."""
    return next(each_persistence(parsed, place), None)


def starts_programs(code: str) -> bool:
    """Inline interpreter code that may start another program (system, exec, spawn …)."""
    return any(w in code for w in _SCRIPT_EXEC_WORDS) and bool(_SCRIPT_EXEC.search(code))


def each_script_exec(parsed: ParsedLine) -> Iterator[Finding]:
    """Each piece of inline interpreter code that runs other programs."""
    for payload in parsed.script_payloads:
        if starts_programs(payload):
            yield Finding(SCRIPT_EXEC, payload)


def each_code_carrier(parsed: ParsedLine) -> Iterator[Finding]:
    """Each program told to run a shell command by its options or input (``sed 1e``,
    ``vim +!``, ``gdb -ex shell``, ``ssh -o ProxyCommand``, ``make --eval`` …)."""
    commands = all_commands(parsed)
    for k, cmd in enumerate(commands):
        if (
            cmd.argv
            and cmd.program == "git"
            and (
                _git_runs(cmd.argv[1:])
                or any(a[:5].lower() == "ext::" or "=ext::" in a.lower() for a in cmd.argv[1:])
            )
        ):  # -c core.pager=CMD; an ext:: remote runs its command (git clone 'ext::sh -c …')
            yield Finding(SCRIPT_EXEC, evidence(cmd), cmd.text)
        if not cmd.argv or cmd.program not in CARRYING:
            continue
        prog = cmd.program
        fed = fed_text(cmd.redirects, None)
        if fed is None and cmd.upstream and reads_piped_commands(prog, cmd.argv[1:]):
            yield Finding(SCRIPT_EXEC, evidence(cmd), cmd.text)  # "… | ed": commands piped in
            continue
        if fed is None and cmd.upstream and k:  # echo '.shell CMD' | sqlite3 app.db
            fed = printed(commands[k - 1], cmd)
        found = carried(prog, cmd.argv[1:], fed)
        if found.runs is not None:
            yield Finding(SCRIPT_EXEC, evidence(cmd), cmd.text)


def find_script_exec(parsed: ParsedLine) -> Finding | None:
    """Inline interpreter code that runs other programs."""
    return next(each_script_exec(parsed), None)
