"""What git runs that its line does not show as a command (docs/security.md#code-carriers).

``git_step`` reads the settings given with ``-c`` (``alias.x=!…``, ``core.pager``,
``core.sshCommand`` …), the options of each subcommand that name a program
(``rebase --exec``, ``fetch --upload-pack``, ``difftool --extcmd`` …, abbreviated
as git's option parser accepts them), ``ext::`` remotes, ``submodule foreach``,
``bisect run`` and ``filter-branch``'s filters; ``git_config_write`` the key and value
``git config`` writes; ``git_config_payload`` the command a setting makes git run.
A subcommand that is none of git's own is a user's alias (``git up`` for ``pull``):
its options that could name a program in any of the subcommands are read as if.
A pure leaf.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from multiplex.shell.parsing._argv import NextStep, opts
from multiplex.shell.parsing._getopt import read_options, table

__all__ = [
    "GIT_COMMANDS",
    "GIT_GLOBAL_VALUE",
    "OFF_WORDS",
    "git_config_payload",
    "git_config_write",
    "git_step",
]

# git's own subcommands (git --list-cmds=main, and the usual add-ons): any other is an alias.
GIT_COMMANDS = opts(
    """add am annotate apply archive bisect blame branch bugreport bundle cat-file check-attr
    check-ignore check-mailmap check-ref-format checkout checkout-index cherry cherry-pick
    citool clean clone column commit commit-graph commit-tree config count-objects credential
    credential-cache credential-store daemon describe diagnose diff diff-files diff-index
    diff-tree difftool fast-export fast-import fetch fetch-pack filter-branch filter-repo
    fmt-merge-msg for-each-ref for-each-repo format-patch fsck fsck-objects gc
    get-tar-commit-id grep gui hash-object help hook http-backend http-fetch http-push
    imap-send index-pack init init-db instaweb interpret-trailers lfs log ls-files ls-remote
    ls-tree mailinfo mailsplit maintenance merge merge-base merge-file merge-index
    merge-one-file merge-tree mergetool mktag mktree multi-pack-index mv name-rev notes
    p4 pack-objects pack-redundant pack-refs patch-id prune prune-packed pull push
    quiltimport range-diff read-tree rebase receive-pack reflog remote repack replace replay
    request-pull rerere reset restore rev-list rev-parse revert rm send-email send-pack shell
    shortlog show show-branch show-index show-ref sparse-checkout stage stash status
    stripspace submodule subtree svn switch symbolic-ref tag unpack-file unpack-objects
    update-index update-ref update-server-info upload-archive upload-pack var verify-commit
    verify-pack verify-tag version whatchanged worktree write-tree"""
)

# git configuration keys whose value is a command git runs (docs/security.md#code-carriers).
_GIT_COMMAND_KEY = re.compile(
    r"^(?:alias\..+|core\.(?:pager|sshcommand|editor|fsmonitor|askpass|hookspath|gitproxy)"
    r"|sequence\.editor|diff\.external|diff\..+\.(?:command|textconv)|pager\..+"
    r"|credential(?:\..+)?\.helper|gpg(?:\..+)?\.program|filter\..+\.(?:clean|smudge|process)"
    r"|merge\..+\.driver|remote\..+\.(?:uploadpack|receivepack|proxy)"
    r"|uploadpack\.packobjectshook|(?:difftool|mergetool)\..+\.cmd|web\.browser|man\..+\.cmd"
    r"|include\.path|includeif\..+\.path|core\.hookspath|instaweb\.(?:httpd|browser)"
    r"|sendemail\.(?:smtpserver|sendmailcmd|tocmd|cccmd|headercmd)"
    r"|core\.alternaterefscommand|submodule\..+\.update|trailer\..+\.(?:command|cmd)"
    r"|hook\..+\.command|init\.templatedir|gpg\.ssh\.defaultkeycommand|browser\..+\.(?:cmd|path)"
    r"|remote\..+\.vcs|interactive\.difffilter)$",
    re.IGNORECASE,
)


# git's own options before the subcommand that take a value (git -C DIR, -c KEY=VALUE).
GIT_GLOBAL_VALUE = opts("-C -c --git-dir --work-tree --namespace --exec-path --config-env")


def git_config_payload(key: str, value: str) -> str | None:
    """The command a ``git -c key=value`` setting makes git run, or None ("" when it lets git
    run commands it names elsewhere: ``protocol.ext.allow=always``)."""
    ext = _EXT_REWRITE.match(key.strip())
    if ext is not None:  # url.ext::sh -c CMD.insteadOf=https://: every https remote runs CMD
        return ext.group(1)
    if _EXT_ALLOWED.match(key.strip()):
        key, value = key.strip().lower(), value.strip().lower()  # safe.directory '*', a proxy
        lets = key.endswith("proxy") or value in OFF_WORDS or f"{key}={value}" == "safe.directory=*"
        return "" if lets or value in ("always", "user") else None
    if not _GIT_COMMAND_KEY.match(key.strip()):
        return None
    if _BANG_ONLY.match(key.strip()) and not value.startswith("!"):
        return None  # submodule.x.update=checkout: one of git's own ways, no command
    return value[1:] if value.startswith("!") else value


_EXT_REWRITE = re.compile(r"^url\.ext::(.+)\.(?:push)?insteadof$", re.IGNORECASE | re.DOTALL)
# Run ext:: URLs' commands; others' repositories' (safe.directory '*'); reroute (proxy, sslVerify).
_EXT_ALLOWED = re.compile(
    r"^(?:protocol\.(?:ext\.)?allow|safe\.directory|https?(?:\..+)?\.(?:proxy|sslverify))$", re.I
)
OFF_WORDS = frozenset({"false", "no", "off", "0"})  # a setting turned off (git, npm, yarn)
# Keys whose value is a command only when it starts with "!" (else a built-in mode).
_BANG_ONLY = re.compile(r"^submodule\..+\.update$", re.IGNORECASE)

_GIT_CONFIG = table(
    "file= blob= type= default= comment= value= global system local worktree add replace-all "
    "unset unset-all get get-all get-regexp get-urlmatch get-color get-colorbool list edit "
    "rename-section remove-section null name-only show-origin show-scope includes no-includes "
    "bool int bool-or-int path expiry-date fixed-value all append regexp=? url=",
    "f= t= l e z",
)
_GIT_CONFIG_READS = (
    "--get", "--get-all", "--get-regexp", "--get-urlmatch", "--get-color", "--get-colorbool",
    "--list", "-l", "--unset", "--unset-all", "--rename-section", "--remove-section",
)  # fmt: skip
_GIT_CONFIG_VERBS = frozenset({"get", "list", "unset", "rename-section", "remove-section", "edit"})


_GIT_RUNS = {
    "rebase": table("exec= onto= strategy= strategy-option= root interactive", "x= s= X= i"),
    "grep": table(
        "open-files-in-pager=? max-depth= context= after-context= before-context=",
        "O=? e= f= A= B= C= m=",
    ),
    "difftool": table("extcmd= tool-cmd= tool= gui", "x= t= g"),
    "mergetool": table("tool-cmd= tool=", "t="),
    "instaweb": table("httpd= browser= port= module-path= local start stop restart", "d= b= p= l"),
    "send-email": table(
        "sendmail-cmd= to-cmd= cc-cmd= header-cmd= smtp-server= smtp-server-port= from= to= "
        "cc= bcc= subject= annotate compose dry-run quiet",
    ),
    # The program run for the other end of a local (or ssh) remote: git runs it by a shell.
    "clone": table(
        "upload-pack= origin= branch= depth= reference= template= separate-git-dir= config= "
        "jobs= filter= server-option= bare mirror recursive quiet",
        "u= o= b= c= j= q",
    ),
    "fetch": table("upload-pack= depth= jobs= refmap= server-option= all prune", "j= o="),
    "pull": table("upload-pack= depth= jobs= strategy= rebase=? server-option=", "j= s= X= o="),
    "ls-remote": table("upload-pack= exec= sort= server-option= heads tags refs", "o="),
    "archive": table("exec= remote= output= prefix= format= add-file=", "o="),
    "push": table("receive-pack= exec= repo= push-option= force-with-lease=? set-upstream", "o="),
    "init": table(
        "template= separate-git-dir= initial-branch= object-format= shared=? bare quiet", "b= q"
    ),
    "fetch-pack": table("upload-pack= exec= depth=", ""),
    "send-pack": table("receive-pack= exec=", ""),
    # The program a daemon runs before serving each client (git daemon --access-hook=PROG).
    "daemon": table(
        "access-hook= base-path= interpolated-path= listen= port= user= group= pid-file= "
        "timeout= init-timeout= max-connections= enable= disable= allow-override= "
        "forbid-override= log-destination= verbose syslog inetd export-all detach reuseaddr "
        "strict-paths user-path=?",
        "",
    ),
}
_GIT_RUN_OPTS = ("-x", "--exec", "--open-files-in-pager", "-O", "--extcmd", "--tool-cmd",
                 "--httpd", "-d", "--browser", "-b", "--sendmail-cmd", "--to-cmd", "--cc-cmd",
                 "--header-cmd", "-u", "--upload-pack", "--receive-pack", "--access-hook",
                 # clone's and init's template folder: its hooks run at once (init.templateDir)
                 "--template")  # fmt: skip
_LONG_RUN_OPTS = tuple(o for o in _GIT_RUN_OPTS if o.startswith("--"))


def git_config_write(rest: Sequence[str]) -> tuple[str, str] | None:
    """The ``(key, value)`` that ``git config REST`` writes, or None for a read.

    Options are read as git reads them: ``-f FILE``/``--file=FILE`` take a value (so
    the key is the next word), ``set`` is the verb of the newer syntax, ``--add`` and
    ``--replace-all`` write too.
    """
    parsed = read_options(rest, _GIT_CONFIG)
    if parsed.has(*_GIT_CONFIG_READS):
        return None
    ops = list(parsed.operands)
    if ops[:1] == ["set"]:
        ops = ops[1:]
    elif ops and ops[0] in _GIT_CONFIG_VERBS:
        return None
    return (ops[0], ops[1]) if len(ops) >= 2 else None


def _alias_runs(rest: Sequence[str]) -> list[str]:
    """The values of ``rest``'s long options that are, or abbreviate (three letters at
    least), an option naming a program in one of git's subcommands: what an alias of
    that subcommand would run. Short options are not read (``-u`` is ``add``'s too)."""
    found: list[str] = []
    for j, arg in enumerate(rest):
        if arg == "--":
            break
        name, eq, value = arg.partition("=")
        if len(name) < 5 or not name.startswith("--"):
            continue
        if any(o.startswith(name) for o in _LONG_RUN_OPTS):
            value = value if eq else (rest[j + 1] if j + 1 < len(rest) else "")
            found.extend([value] if value else [])
    return found


def git_step(args: Sequence[str]) -> NextStep:
    """What ``git ARGS`` runs besides git itself: shell payloads and scripts."""
    payloads: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "-c" and i + 1 < len(args):
            key, _, value = args[i + 1].partition("=")
            found = git_config_payload(key, value)
            payloads.extend([found] if found else [])
        elif arg.startswith("--exec-path=") and arg[12:]:  # git-* programs from that folder
            payloads.append(arg[12:])
        elif arg == "--exec-path" and i + 2 < len(args):  # (alone, it prints the folder)
            payloads.append(args[i + 1])
        if arg in GIT_GLOBAL_VALUE:
            i += 2
            continue
        if not arg.startswith("-"):
            break
        i += 1
    sub, rest = (args[i].lower(), list(args[i + 1 :])) if i < len(args) else ("", [])
    # An ext:: remote runs its command (clone 'ext::CMD', archive --remote=ext::CMD).
    for word in rest:
        url = word.partition("=")[2] if word.startswith("--") else word
        if url[:5].lower() == "ext::":
            payloads.append(url[5:].replace("%S", "git-upload-pack").replace("%s", "upload-pack"))
    if sub in _GIT_RUNS:  # rebase --exe=…, grep --open-files=…: abbreviations count
        options = read_options(rest, _GIT_RUNS[sub])
        payloads.extend(v for v in options.values(*_GIT_RUN_OPTS) if v)
        for setting in options.values("-c", "--config") if sub == "clone" else ():
            key, _, value = setting.partition("=")  # clone -c core.fsmonitor=CMD: as git -c
            found = git_config_payload(key, value)
            payloads.extend([found] if found else [])
        # send-email --smtp-server=/path runs that program as sendmail; a host name does not
        servers = options.values("--smtp-server") if sub == "send-email" else []
        payloads.extend(v for v in servers if v.startswith(("/", ".", "~", "$")))
    elif sub and sub not in GIT_COMMANDS:  # a user's alias: git up --upload-pack=CMD
        payloads.extend(_alias_runs(rest))
    elif sub == "submodule" and rest[:1] == ["foreach"]:
        ops = [a for a in rest[1:] if not a.startswith("-")]
        payloads.extend([" ".join(ops)] if ops else [])
    elif sub == "bisect" and rest[:1] == ["run"] and len(rest) > 1:
        return NextStep(inner=tuple(rest[1:]), shell_payloads=tuple(payloads))
    elif sub == "config":
        written = git_config_write(rest)
        found = git_config_payload(*written) if written else None
        payloads.extend([found] if found else [])
    elif sub == "filter-branch":
        payloads.extend(
            rest[j + 1] for j, a in enumerate(rest[:-1]) if a.endswith("-filter") and a != "--"
        )
    elif sub == "filter-repo":  # --commit-callback CODE …: Python it runs, scanned as code
        code = [rest[j + 1] for j, a in enumerate(rest[:-1]) if a.endswith("-callback")]
        code += [a.partition("=")[2] for a in rest if a.partition("=")[0].endswith("-callback")]
        return NextStep(shell_payloads=tuple(payloads), scripts=tuple(code))
    return NextStep(shell_payloads=tuple(payloads))
