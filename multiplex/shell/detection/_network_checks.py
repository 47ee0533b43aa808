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
from multiplex.shell.detection._secret_paths import (
    is_home_root,
    is_secret_path,
    may_be_secret,
    may_hold_secret,
    resolved,
)
from multiplex.shell.detection._targets import Place
from multiplex.shell.detection._writes import all_commands, evidence, write_targets
from multiplex.shell.parsing._getopt import read_options, table
from multiplex.shell.parsing._parsed import ParsedLine, Redirect, SimpleCommand
from multiplex.shell.parsing._unwrap import SHELLS

__all__ = [
    "COPIERS",
    "copier_operands",
    "each_downloaded_run",
    "each_network",
    "find_network",
    "network_redirect",
    "ssh_config_files",
]

_NC = frozenset({"nc", "ncat", "netcat", "nc.traditional", "nc.openbsd", "pwncat"})
_NET = _NC | {
    "socat",
    "telnet",
    "curl",
    "wget",
    "ssh",
    "openssl",
    "rclone",
    "scp",
    "sftp",
    "ftp",
    "lftp",
}
_LISTENERS = _NC | {"socat", "telnet", "openssl", "ssh"}  # a shell on either side is remote
_COPIERS = frozenset({"scp", "rsync", "sftp", "rclone", "pscp"})
# Their options that take a value, so a value is not read as a file to send: the key
# of scp -i, rsync --exclude .env. OpenSSH's are short only; rsync's long ones are
# matched whole (popt takes no abbreviation: its flags that begin a valued option's
# name are listed, so --partial is not read as --partial-dir).
_SSH_COPY = "c= D= F= i= J= l= o= P= S= X= b= B= R= s="
_COPIER_OPTIONS = {
    "scp": table("", _SSH_COPY),
    "sftp": table("", _SSH_COPY),
    "rsync": table(
        "rsh= rsync-path= exclude= include= exclude-from= include-from= files-from= filter= "
        "password-file= log-file= log-file-format= temp-dir= partial-dir= compare-dest= "
        "copy-dest= link-dest= backup-dir= suffix= chmod= chown= usermap= groupmap= timeout= "
        "contimeout= bwlimit= port= address= sockopts= out-format= max-size= min-size= "
        "max-delete= max-alloc= block-size= checksum-choice= compress-choice= compress-level= "
        "skip-compress= iconv= info= debug= stop-after= stop-at= modify-window= outbuf= "
        "remote-option= checksum-seed= protocol= write-batch= only-write-batch= read-batch= "
        "early-input= copy-as= partial compress checksum backup",
        "e= f= B= T= M= @=",
    ),
}


COPIERS = frozenset(_COPIER_OPTIONS)
_SSH = table("", "B= b= c= D= E= e= F= I= i= J= L= l= m= O= o= P= p= Q= R= S= W= w=")


def ssh_config_files(prog: str, args: Sequence[str]) -> list[str]:
    """The files ssh, scp or sftp reads as its configuration (``-F FILE``): ssh prints each
    line it cannot read as an option, so a secret named there reaches the output."""
    spec = _SSH if prog == "ssh" else _COPIER_OPTIONS.get(prog) if prog != "rsync" else None
    return read_options(args, spec).values("-F") if spec and "F" in "".join(args) else []


def copier_operands(prog: str, args: Sequence[str]) -> list[str]:
    """The files and hosts a copier (scp, sftp, rsync …) is given, without its options' values."""
    spec = _COPIER_OPTIONS.get(prog)
    return list(read_options(args, spec).operands) if spec else operands(args)


# File-transfer clients that take their commands as text: from a here-string or
# here-document, or from an option (lftp -e/-c, tftp -c).
_FILE_CLIENTS = frozenset({"sftp", "ftp", "lftp", "ncftp", "tftp", "pftp", "yafc"})
_PUTS = frozenset({"put", "mput", "reput", "send", "append"})
_CLIENT_SCRIPT = ("-e", "-c")
_SOCKET_SHELL = re.compile(r"\bsocket\b")
_SHELL_HINT = re.compile(
    r"/bin/(?:ba|z|da)?sh\b|\bpty\b|\bdup2\b|\bsubprocess\b|\bspawn\b|\bexec\b"
)
_CURL_DATA = ("-d", "--data", "--data-binary", "--data-urlencode", "--json", "-F", "--form")
_CURL_UPLOAD = ("-T", "--upload-file")
_WGET_POST = ("--post-file", "--body-file")
_UPLOADERS = frozenset({"curl", "http", "https", "xh", "wget", *_COPIERS, *_FILE_CLIENTS})
_REMOTE = re.compile(r"^(?:[A-Za-z0-9_.@-]+|\[[0-9a-fA-F:]+\]):(?!//)")


def network_redirect(cmd: SimpleCommand) -> bool:
    """Some redirection of ``cmd`` opens /dev/tcp or /dev/udp."""
    return any(r.target.startswith(("/dev/tcp/", "/dev/udp/")) for r in cmd.redirects)


def _is_shell(cmd: SimpleCommand) -> bool:
    return bool(cmd.argv) and cmd.program in SHELLS


def _reverse(cmd: SimpleCommand) -> bool:
    prog = cmd.program
    args = cmd.argv[1:]
    if prog in _NC:
        longs = ("--exec", "--sh-exec", "--lua-exec", "-e", "-c")
        if set(short_flags(args)) & set("ec") or any(a.startswith(longs) for a in args):
            return True
    if prog == "socat":
        return any(a.lower().startswith(("exec:", "system:")) for a in args)
    if prog in SHELLS and set(cmd.upstream) & (_LISTENERS - {"ssh"}):
        return True
    return prog in _LISTENERS and bool(set(cmd.upstream) & SHELLS)


def _uploads(cmd: SimpleCommand) -> Iterator[str]:
    """Paths ``cmd`` sends to the network by its own options (curl -d @f, scp f host:)."""
    prog = cmd.program
    args = cmd.argv[1:]
    if prog in ("curl", "http", "https", "xh"):
        for i, arg in enumerate(args):
            value = args[i + 1] if i + 1 < len(args) else ""
            for opt in _CURL_DATA + _CURL_UPLOAD:
                if arg.startswith(opt + "="):
                    value = arg[len(opt) + 1 :]
                elif arg != opt:
                    continue
                if opt in _CURL_UPLOAD:
                    yield value
                elif "@" in value:
                    yield value.split("@", 1)[1].split(";", 1)[0]
                elif "<" in value:
                    yield value.split("<", 1)[1]
            if prog != "curl" and "@" in arg and not arg.startswith("-"):
                yield arg.split("@", 1)[1]
    elif prog == "wget":
        for i, arg in enumerate(args):
            for opt in _WGET_POST:
                if arg.startswith(opt + "="):
                    yield arg[len(opt) + 1 :]
                elif arg == opt and i + 1 < len(args):
                    yield args[i + 1]
    if prog in _FILE_CLIENTS:  # sftp <<< 'put .env', lftp -e 'put .env', tftp -c put .env
        yield from _client_puts(prog, args, cmd.redirects)
    elif prog in _COPIERS:
        ops = copier_operands(prog, args)
        if len(ops) > 1 and (_REMOTE.match(ops[-1]) or prog == "rclone"):
            yield from ops[:-1]
    for r in cmd.redirects:
        if r.op in ("<", "0<") and prog in _NET:
            yield r.target


def _client_puts(prog: str, args: Sequence[str], redirects: tuple[Redirect, ...]) -> Iterator[str]:
    """The local files a file-transfer client's own commands send (``put F``, ``mput F G``)."""
    texts = [r.target for r in redirects if r.op.startswith("<<")]
    for i, arg in enumerate(args[:-1]):
        if arg in _CLIENT_SCRIPT:
            texts.append(" ".join(args[i + 1 :]) if prog == "tftp" else args[i + 1])
    for text in texts:
        for step in re.split(r"[;\n]", text):
            words = step.split()
            if words and words[0].lower() in _PUTS:
                yield from (w for w in words[1:] if not w.startswith("-"))


def _sensitive_source(word: str, place: Place) -> bool:
    if not may_be_secret(word, place) and word not in ("/", "."):
        return False
    return any(is_home_root(p) or is_secret_path(p) for p in resolved(word, place))


# Programs that print secret keys or stored passwords: gpg --export-secret-keys, pass show.
_SECRET_EXPORTS = ("--export-secret", "--export-ssh-key")


def _exports_secrets(cmd: SimpleCommand) -> bool:
    prog = cmd.program
    if prog in ("gpg", "gpg2"):
        return any(a.startswith(_SECRET_EXPORTS) for a in cmd.argv[1:])
    return (prog in ("pass", "gopass") and operands(cmd.argv[1:])[:1] in (["show"], ["cat"])) or (
        _dumps_environment(cmd)
    )


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


# Web servers of a folder: the option that names it (else their first operand).
_SERVER_ROOTS = {"php": ("-t",), "busybox": ("-h",), "webfsd": ("-r",), "caddy": ("--root",),
                 "serve": (), "http-server": (), "darkhttpd": (), "miniserve": ()}  # fmt: skip


def _served(cmd: SimpleCommand) -> list[str]:
    """The folder a web server started by ``cmd`` serves to the network (``python -m
    http.server -d ~``, ``php -S 0.0.0.0:80 -t ~``, ``npx serve ~``, ``ruby -run -e httpd
    /``), or nothing."""
    prog, args = cmd.program, list(cmd.argv[1:])
    if prog.startswith("python") and args[:2] == ["-m", "http.server"]:
        rest = args[2:]
        return [rest[i + 1] for i, a in enumerate(rest[:-1]) if a in ("-d", "--directory")] + [
            a.partition("=")[2] for a in rest if a.startswith("--directory=")
        ]
    if prog == "ruby" and "httpd" in args and ("-run" in args or "-r" in args):
        after = args[args.index("httpd") + 1 :]
        return [a for a in after if not a.startswith("-")][:1]
    if prog == "busybox" and args[:1] != ["httpd"]:
        return []
    if prog not in _SERVER_ROOTS:
        return []
    named = [args[i + 1] for i, a in enumerate(args[:-1]) if a in _SERVER_ROOTS[prog]]
    if named or _SERVER_ROOTS[prog]:
        return named
    return [a for a in args if not a.startswith("-")][:1]


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
    for cmd in commands:
        if cmd.argv and _reverse(cmd):
            yield Finding(REVERSE_SHELL, evidence(cmd), cmd.text)
    for payload in parsed.script_payloads:
        if _SOCKET_SHELL.search(payload) and _SHELL_HINT.search(payload):
            yield Finding(REVERSE_SHELL, payload)
    readers_of_secrets: bool | None = None  # looked for once a network tool reads a pipe
    dumped: set[str] = set()  # files an environment dump wrote earlier on the line
    for cmd in commands:
        if not cmd.argv:
            continue
        if cmd.redirects and _dumps_environment(cmd):  # env > /tmp/e; curl -T /tmp/e …
            dumped.update(write_targets(cmd))
        # _uploads yields only for these programs or from a redirection.
        uploads = cmd.program in _UPLOADERS or cmd.redirects
        if uploads and any(p in dumped or _sensitive_source(p, place) for p in _uploads(cmd)):
            yield Finding(EXFILTRATION, evidence(cmd), cmd.text)
        # Fed a pipe, or a substitution's output in its words (curl -d "$(env)").
        piped = cmd.program in _NET and (
            cmd.upstream or any("$(" in a or "`" in a for a in cmd.argv[1:])
        )
        if piped and readers_of_secrets is None:
            readers_of_secrets = any(_reads_secrets(c, place) for c in commands)
        if (piped and readers_of_secrets) or _sends_secret_variable(cmd):
            yield Finding(EXFILTRATION, evidence(cmd), cmd.text)
        if any(d.strip("/") == "" or _sensitive_source(d, place) for d in _served(cmd)):
            yield Finding(EXFILTRATION, evidence(cmd), cmd.text)  # a web server of the home
    if redirecting:
        yield Finding(NETWORK_REDIRECT, evidence(redirecting[0]), redirecting[0].text)


def find_network(parsed: ParsedLine, place: Place) -> Finding | None:
    """The first reverse shell, exfiltration or network redirection, or None."""
    return next(each_network(parsed, place), None)


# What a later command runs a downloaded file with (``bash x.sh``, ``python3 i.py``).
_RUNNERS = SHELLS | {"source", ".", "perl", "ruby", "node", "nodejs", "php", "bun", "deno"}
_DOWNLOADERS = frozenset({"curl", "wget", "aria2c", "http", "xh", "fetch", "lwp-download"})
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://[^/\s]+/(?:[^?#\s]*/)?([^/?#\s]+)")


def each_downloaded_run(parsed: ParsedLine) -> Iterator[Finding]:
    """Each command that runs a file a download earlier on the line wrote:
    ``curl -o x.sh URL && bash x.sh``, ``wget URL; chmod +x f; ./f`` (``download-exec``)."""
    fetched: set[str] = set()
    for cmd in parsed.commands + parsed.variant_commands:
        if not cmd.argv:
            continue
        prog = cmd.program
        if prog in _DOWNLOADERS:
            # Its output file as getopt reads it, and the names the URLs give (curl -O, wget).
            fetched.update(p.rpartition("/")[2] for p in write_targets(cmd))
            fetched.update(m.group(1) for a in cmd.argv[1:] if (m := _URL.match(a)))
            continue
        if not fetched:
            continue
        run = cmd.argv[0] if "/" in cmd.argv[0] else None
        if run is None and (prog in _RUNNERS or prog.startswith("python")):
            ops = operands(cmd.argv[1:])
            run = ops[0] if ops else None
        if run is not None and run.rpartition("/")[2] in fetched:
            yield Finding(DOWNLOAD_EXEC, evidence(cmd), cmd.text)
