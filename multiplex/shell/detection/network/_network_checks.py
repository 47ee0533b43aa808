"""Reverse shells, /dev/tcp redirections and exfiltration (docs/security.md#named-patterns).

``find_network`` returns the first of: ``reverse-shell`` (a shell bound to a
socket: ``nc -e``, ``socat exec:``, ``bash -i >& /dev/tcp/…``, a shell piped to or
from a network tool, script code joining a socket to a shell), ``exfiltration``
(a whole home or credential files uploaded or piped to a network tool) and
``network-redirect`` (any /dev/tcp or /dev/udp redirection). A pure leaf.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from multiplex.shell.detection._catalogue import (
    DOWNLOAD_EXEC,
    EXFILTRATION,
    NETWORK_REDIRECT,
    REVERSE_SHELL,
    Finding,
)
from multiplex.shell.detection._command_checks import operands, short_flags
from multiplex.shell.detection._printers import prints_credentials
from multiplex.shell.detection.network._code_sends import sends_a_secret
from multiplex.shell.detection.network._from_network import FROM_THE_NETWORK, runs_from_the_network
from multiplex.shell.detection.network._remote_access import SERVERS, serves_remote_access
from multiplex.shell.detection.network._uploads import (
    NC,
    NETWORK_TOOLS,
    SIGNS_IN,
    UPLOADERS,
    git_remote_redefined,
    token_elsewhere,
    uploads,
)
from multiplex.shell.detection.paths._secret_paths import (
    is_home_root,
    is_secret_path,
    may_be_secret,
    may_hold_secret,
    resolved,
)
from multiplex.shell.detection.paths._targets import Place, placed
from multiplex.shell.detection.paths._writes import all_commands, evidence, write_targets
from multiplex.shell.parsing._argv import URL_NAME, git_subcommand, option_values
from multiplex.shell.parsing._parsed import ParsedLine, SimpleCommand, in_order
from multiplex.shell.parsing.runs._unwrap import SHELLS

__all__ = [
    "each_downloaded_run",
    "each_network",
    "find_network",
    "network_redirect",
]

_NC = NC
_NET = NETWORK_TOOLS
_LISTENERS = _NC | {"socat", "telnet", "openssl", "ssh"}  # a shell on either side is remote
# A socket opened by inline code, in each language's spelling (php's fsockopen, ruby's
# TCPSocket, node's net module, lua's socket.tcp, perl's IO::Socket, awk's /inet/tcp/).
_SOCKET_SHELL = re.compile(
    r"\bsocket\b|fsockopen|TCPSocket|\bIO::Socket|require\(\s*['\"]net['\"]\s*\)"
    r"|\bnet\.(?:connect|createConnection|Socket)\b|/inet6?/tcp/"
)
_SHELL_HINT = re.compile(
    r"/bin/(?:ba|z|da)?sh\b|\bpty\b|\bdup2\b|\bsubprocess\b|\bspawn\b|\bexec\b"
    r"|\bos\.execute\b|['\"](?:ba|z|da)?sh(?: -i)?['\"]|\|&\s*getline"
)


def network_redirect(cmd: SimpleCommand) -> bool:
    """Some redirection of ``cmd`` opens /dev/tcp or /dev/udp."""
    return any(r.target.startswith(("/dev/tcp/", "/dev/udp/")) for r in cmd.redirects)


def _is_shell(cmd: SimpleCommand) -> bool:
    return bool(cmd.argv) and cmd.program in SHELLS


# X terminals: shown on another host's display (xterm -display HOST:1), they hand it a shell.
_X_TERMINALS = frozenset({"xterm", "uxterm", "urxvt", "rxvt", "rxvt-unicode", "aterm", "eterm",
                          "xfce4-terminal", "gnome-terminal", "konsole", "lxterminal",
                          "mate-terminal", "terminator", "x-terminal-emulator", "mlterm"})  # fmt: skip
# This host's display: :N, unix:N, localhost:N, a socket's path, the session's own $DISPLAY.
_LOCAL_DISPLAY = re.compile(r"^(?:\$|/|(?:unix|localhost|127\.0\.0\.1)?:\d)")


def _remote_display(cmd: SimpleCommand, set_on_line: Sequence[str]) -> bool:
    args = cmd.argv[1:]
    # -display, --display, or any prefix X's toolkit takes down to -dis
    shown = [
        args[i + 1] for i, a in enumerate(args[:-1]) if len(a) > 3 and "-display".startswith(a)
    ]
    shown += [a.partition("=")[2] for a in args if a.startswith("--display=")]
    return any(d and not _LOCAL_DISPLAY.match(d) for d in [*shown, *set_on_line])


def _displays_set(line: str) -> list[str]:
    """DISPLAY values set anywhere on the line: before a command, by env, export,
    declare, a statement of its own (the text is read: the parse keeps no bare one)."""
    return _DISPLAY_SET.findall(line)


_DISPLAY_SET = re.compile(r"(?<![\w$])DISPLAY=['\"]?([^\s;&|'\")]*)")


def _ztcp_shell(commands: Sequence[SimpleCommand]) -> bool:
    """zsh's ``ztcp HOST PORT`` (a connection in ``$REPLY``) and a shell whose input or
    output is redirected to a descriptor held in a variable: ``zsh >&$REPLY 0>&$REPLY``."""
    connects = any(
        c.program == "ztcp"
        and len(operands(c.argv[1:])) >= 2
        and "l" not in short_flags(c.argv[1:])
        for c in commands
    )
    return connects and any(
        _is_shell(c) and any(r.target.startswith("$") for r in c.redirects) for c in commands
    )


def _reverse(cmd: SimpleCommand, displays: Sequence[str]) -> bool:
    prog = cmd.program
    args = cmd.argv[1:]
    if prog in _X_TERMINALS:
        return _remote_display(cmd, displays)
    if prog in _NC:
        longs = ("--exec", "--sh-exec", "--lua-exec", "-e", "-c")
        if set(short_flags(args)) & set("ec") or any(a.startswith(longs) for a in args):
            return True
    if prog == "socat":
        return any(a.lower().startswith(("exec:", "system:")) for a in args)
    if prog in SHELLS and set(cmd.upstream) & (_LISTENERS - {"ssh"}):
        return True
    return prog in _LISTENERS and bool(set(cmd.upstream) & SHELLS)


def _sensitive_source(word: str, place: Place) -> bool:
    if not may_be_secret(word, place) and word not in ("/", "."):
        return False
    return any(is_home_root(p) or is_secret_path(p) for p in resolved(word, place))


# Programs that print secret keys or stored passwords: gpg --export-secret-keys, pass show.
_SECRET_EXPORTS = ("--export-secret", "--export-ssh-key")


def _exports_secrets(cmd: SimpleCommand) -> bool:
    prog = cmd.program
    if prog in ("gpg", "gpg2") and any(a.startswith(_SECRET_EXPORTS) for a in cmd.argv[1:]):
        return True
    # gh auth token, vault kv get, git credential fill …: a stored credential printed
    return prints_credentials(prog, cmd.argv[1:]) or _dumps_environment(cmd)


def _dumps_environment(cmd: SimpleCommand) -> bool:
    """``env``, ``printenv``, ``export`` (``-p``), ``declare -p``/``-x``, ``set``, ``ps e``,
    inline code printing ``os.environ``/``process.env``: the environment printed, with every
    credential the command was given."""
    prog, args = cmd.program, cmd.argv[1:]
    if prog == "printenv" or (prog == "set" and not args):
        return True
    if prog == "env":  # no command after its options and NAME=VALUE words
        return all(a.startswith("-") or "=" in a for a in args)
    if prog == "export":  # bare, or -p: every exported variable with its value
        return not operands(args)
    if prog in ("declare", "typeset"):
        return bool(set(short_flags(args)) & set("px")) and not operands(args)
    if prog == "ps":  # BSD style "e" (ps eww, ps auxe): each process's environment
        return any(not a.startswith("-") and "e" in a for a in args[:1])
    if prog == "compgen":  # every variable's name, for a loop that reads ${!name}
        return bool(set(short_flags(args)) & set("ve")) or "variable" in args or "export" in args
    if prog == "jq":  # jq -n env, jq -n '$ENV': the environment as JSON
        return any(_JQ_ENV.search(a) for a in args if not a.startswith("-"))
    if prog in ("awk", "gawk", "mawk", "nawk", "busybox"):
        return any("ENVIRON" in a for a in args)
    hosts = prog in _ENV_HOSTS or prog.startswith("python")
    return hosts and any(_ENV_CODE.search(a) for a in args)


_JQ_ENV = re.compile(r"(?<![\w$.])env\b|\$ENV\b(?!\s*\.)|\$__loc__")
# A variable named like a credential (``$GITHUB_TOKEN``, ``${AWS_SECRET_ACCESS_KEY}``,
# ``$DB_PASSWORD``) in a network tool's words: its value sent along (not ``$PWD``).
_SECRET_VAR = re.compile(
    r"\$\{?[A-Za-z0-9_]*(?:TOKEN|SECRET|PASSW|PASSPHRASE|API_?KEY|ACCESS_?KEY|PRIVATE|"
    r"CREDENTIAL|AUTH|COOKIE|SESSION|_PAT|_KEY)[A-Za-z0-9_]*",
    re.IGNORECASE,
)


# Web servers of a folder: the option that names it (else their first operand); with
# neither, each serves the folder it runs in.
_SERVER_ROOTS = {"php": ("-t",), "busybox": ("-h",), "webfsd": ("-r",), "caddy": ("--root",),
                 "twistd": ("--path",), "serve": (), "http-server": (), "darkhttpd": (),
                 "miniserve": ()}  # fmt: skip


def _serves(prog: str, args: list[str]) -> bool:
    """Whether a program of ``_SERVER_ROOTS`` runs as a web server (``busybox httpd``,
    ``php -S``, ``twistd web``) rather than another of its tools."""
    if prog == "busybox":
        return args[:1] == ["httpd"]
    if prog == "php":
        return bool({"-S", "--server"} & set(args))
    return prog != "twistd" or "web" in args


def _served(cmd: SimpleCommand) -> list[str]:
    """The folder a web server started by ``cmd`` serves to the network (``python -m
    http.server -d ~``, ``php -S 0.0.0.0:80 -t ~``, ``npx serve ~``, ``ruby -run -e httpd
    /``, ``ngrok http file://~``; ``.`` when it names none), or nothing."""
    prog, args = cmd.program, list(cmd.argv[1:])
    if prog.startswith("python") and args[:2] == ["-m", "http.server"]:
        named = option_values(args[2:], ("-d", "--directory"))
    elif prog == "ruby" and "httpd" in args and ("-run" in args or "-r" in args):
        named = [a for a in args[args.index("httpd") + 1 :] if not a.startswith("-")][:1]
    elif prog == "ngrok":  # ngrok http file:///DIR: its own file server, on the internet
        return [a[7:] for a in args if a.startswith("file://")] if args[:1] == ["http"] else []
    elif prog not in _SERVER_ROOTS or not _serves(prog, args):
        return []
    elif _SERVER_ROOTS[prog]:
        named = option_values(args, _SERVER_ROOTS[prog])
    else:
        named = [a for a in args if not a.startswith("-")][:1]
    return named or ["."]


def _serves_secrets(folder: str, place: Place) -> bool:
    """Whether a web server of ``folder`` serves ``/``, a home or a credential."""
    root = folder.strip("/") == "" or any(p == "/" for p in resolved(folder, place))
    return root or _sensitive_source(folder, place)


def _sends_secret_variable(cmd: SimpleCommand) -> bool:
    """A credential variable in a network tool's words or in what the line feeds it."""
    if cmd.program not in _NET:
        return False
    fed = [r.target for r in cmd.redirects if r.op.startswith("<<")]
    return any("$" in a and _SECRET_VAR.search(a) is not None for a in (*cmd.argv[1:], *fed))


# Inline code that reads the whole environment (not one variable of it), in the
# interpreters' own spellings.
_ENV_CODE = re.compile(
    r"os\.environ\b(?![\[.])|process\.env\b(?![.\[])|%ENV\b|\bENV\.to_h\b|\$_ENV\b(?!\[)"
    r"|(?<![\w$%])ENV\b(?!\s*[\[.{])"  # ruby's ENV printed whole (not ENV["X"], ENV.fetch)
    r"|\bgetenv\(\s*\)"
)
_ENV_HOSTS = frozenset({"node", "nodejs", "bun", "deno", "perl", "ruby", "php"})


def _reads_secrets(cmd: SimpleCommand, place: Place) -> bool:
    if _exports_secrets(cmd):
        return True
    if any("$" in a and _SECRET_VAR.search(a) is not None for a in cmd.argv[1:]):
        return True  # echo "$GITHUB_TOKEN" | curl -d @- URL: a credential's value printed
    ops = operands(cmd.argv[1:]) if cmd.argv else []
    if not may_hold_secret(ops, place) and "/" not in ops and "." not in ops:
        return False
    return any(_sensitive_source(w, place) for w in ops)


def each_network(parsed: ParsedLine, place: Place) -> Iterator[Finding]:
    """Each reverse shell, exfiltration or network redirection."""
    commands = all_commands(parsed)
    redirecting = [c for c in commands if c.redirects and network_redirect(c)]
    if redirecting and any(_is_shell(c) for c in commands):
        yield Finding(REVERSE_SHELL, evidence(redirecting[0]), redirecting[0].text)
    if "ztcp" in parsed.line and _ztcp_shell(commands):
        yield Finding(REVERSE_SHELL, parsed.line)
    displays = _displays_set(parsed.line) if "DISPLAY=" in parsed.line else []
    for cmd in commands:
        serving = cmd.argv and (cmd.program in SERVERS or cmd.program.startswith("python"))
        if cmd.argv and (_reverse(cmd, displays) or (serving and serves_remote_access(cmd))):
            yield Finding(REVERSE_SHELL, evidence(cmd), cmd.text)
    for payload in parsed.script_payloads:
        if _SOCKET_SHELL.search(payload) and _SHELL_HINT.search(payload):
            yield Finding(REVERSE_SHELL, payload)
        if sends_a_secret(payload, place):  # requests.post(URL, data=open(".env").read())
            yield Finding(EXFILTRATION, payload)
    readers_of_secrets: bool | None = None  # looked for once a network tool reads a pipe
    dumped: set[str] = set()  # files a dump or a credential's copy wrote earlier on the line
    staged = False  # a credential (or its copy) git-added earlier on the line
    removed: set[str] = set()  # git remotes removed or renamed earlier on the line
    judged: dict[int, tuple[int, bool]] = {}  # a repeated command once per state it met
    ordered, repeats = in_order(parsed)
    for cmd in ordered:  # curl -T /tmp/k x; cp KEY /tmp/k; curl -T /tmp/k x
        if not cmd.argv:
            continue
        if repeats:
            if judged.get(id(cmd)) == (len(dumped), staged):
                continue
            judged[id(cmd)] = (len(dumped), staged)
        # git add ~/.ssh/id_rsa && git commit && git push (the words tested before git's parse)
        if cmd.program == "git" and ("add" in cmd.argv or (staged and "push" in cmd.argv)):
            sub, rest = git_subcommand(cmd.argv[1:])
            # (after a credential's copy, any add may take it: git add -A, git add .)
            if sub == "add" and (
                bool(dumped) or any(_sensitive_source(p, place) for p in operands(rest))
            ):
                staged = True
            elif sub == "push" and staged:
                yield Finding(EXFILTRATION, evidence(cmd), cmd.text)
        # env > /tmp/e; curl -T /tmp/e …, and a credential copied first: cp KEY /tmp/k
        written = write_targets(cmd)  # (once per command: the other checks ask for it too)
        if written and (_dumps_environment(cmd) or _reads_secrets(cmd, place)):
            dumped.update(written)
        # _uploads yields only for these programs or from a redirection.
        sends = cmd.program in UPLOADERS or cmd.redirects
        if sends and any(p in dumped or _sensitive_source(p, place) for p in uploads(cmd)):
            yield Finding(EXFILTRATION, evidence(cmd), cmd.text)
        # Fed a pipe, or a substitution's output in its words (curl -d "$(env)").
        piped = cmd.program in _NET and (
            cmd.upstream or any("$(" in a or "`" in a for a in cmd.argv[1:])
        )
        if piped and readers_of_secrets is None:
            readers_of_secrets = any(_reads_secrets(c, place) for c in commands)
        if (piped and readers_of_secrets) or _sends_secret_variable(cmd):
            yield Finding(EXFILTRATION, evidence(cmd), cmd.text)
        if cmd.program in SIGNS_IN and token_elsewhere(cmd.program, cmd.argv[1:], cmd.assignments):
            yield Finding(EXFILTRATION, evidence(cmd), cmd.text)
        elif cmd.program == "git" and git_remote_redefined(cmd.argv[1:], removed):
            yield Finding(
                EXFILTRATION, evidence(cmd), cmd.text
            )  # git remote rm origin; … add origin
        if cmd.redirects and network_redirect(cmd) and _reads_secrets(cmd, place):
            yield Finding(EXFILTRATION, evidence(cmd), cmd.text)  # cat KEY > /dev/tcp/h/80
    for cmd, here in placed(parsed, place):  # cd ~ && python3 -m http.server
        if cmd.argv and any(_serves_secrets(d, here) for d in _served(cmd)):
            yield Finding(EXFILTRATION, evidence(cmd), cmd.text)  # a web server of the home
    if redirecting:
        yield Finding(NETWORK_REDIRECT, evidence(redirecting[0]), redirecting[0].text)


def find_network(parsed: ParsedLine, place: Place) -> Finding | None:
    """The first reverse shell, exfiltration or network redirection, or None."""
    return next(each_network(parsed, place), None)


# What a later command runs a downloaded file with (``bash x.sh``, ``python3 i.py``).
_RUNNERS = SHELLS | {"source", ".", "perl", "ruby", "node", "nodejs", "php", "bun", "deno"}
_DOWNLOADERS = frozenset({"curl", "wget", "aria2c", "http", "xh", "fetch", "lwp-download"})


_EXTRACTORS = frozenset({"tar", "bsdtar", "unzip", "cpio", "7z", "busybox"})


def each_downloaded_run(parsed: ParsedLine) -> Iterator[Finding]:
    """Each command that runs a file a download earlier on the line wrote:
    ``curl -o x.sh URL && bash x.sh``, ``wget URL; chmod +x f; ./f`` (``download-exec``)."""
    fetched: set[str] = set()
    extracted = False  # a download unpacked here: its files' names are not on the line
    judged: dict[int, tuple[int, bool]] = {}  # a repeated command once per state it met
    ordered, repeats = in_order(parsed)
    for cmd in ordered:  # bash x.sh; curl -o x.sh URL; bash x.sh
        if not cmd.argv:
            continue
        if repeats:
            if judged.get(id(cmd)) == (len(fetched), extracted):
                continue
            judged[id(cmd)] = (len(fetched), extracted)
        prog = cmd.program
        if (
            prog in FROM_THE_NETWORK or prog.startswith(("python", "pip"))
        ) and runs_from_the_network(cmd):
            yield Finding(DOWNLOAD_EXEC, evidence(cmd), cmd.text)
            continue
        if prog in _EXTRACTORS and not _DOWNLOADERS.isdisjoint(cmd.upstream):
            extracted = True  # curl URL | tar xz
            continue
        if prog in _DOWNLOADERS:
            # Its output file as getopt reads it, and the names the URLs give (curl -O, wget).
            fetched.update(p.rpartition("/")[2] for p in write_targets(cmd))
            fetched.update(m.group(1) for a in cmd.argv[1:] if (m := URL_NAME.match(a)))
            continue
        if not fetched and not extracted:
            continue
        run = cmd.argv[0] if "/" in cmd.argv[0] else None
        if run is None and (prog in _RUNNERS or prog.startswith("python")):
            ops = operands(cmd.argv[1:])
            run = ops[0] if ops else None
        unpacked = extracted and run is not None and not run.startswith(("/", "~", "$"))
        if run is not None and (run.rpartition("/")[2] in fetched or unpacked):
            yield Finding(DOWNLOAD_EXEC, evidence(cmd), cmd.text)
