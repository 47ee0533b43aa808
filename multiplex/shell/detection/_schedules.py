"""Commands kept to run later by the system or a tool (docs/security.md#named-patterns,
``persistence``): a job scheduled (``systemctl enable``, ``at``, a ``systemd-run`` timer,
``launchctl load``, ``loginctl enable-linger``) or a command a tool stores and runs each
time it needs it (``aws configure set credential_process``, ``kubectl config
set-credentials --exec-command``, ``gh alias set NAME '!CMD'``, a package manager's or
gh's setting naming a program: ``npm config set script-shell``, ``yarn config set
yarnPath``, ``gh config set editor``), or a key that logs in
from then on (``ssh-copy-id``); hooks installed to run by themselves (``pre-commit
install``, ``husky``, ``direnv allow`` of an .envrc beyond the project) and a home's start-up files written by a dotfile
manager (``stow``, ``chezmoi apply``, ``yadm clone``, ``home-manager switch``). A pure leaf: stdlib and
``shell.parsing._argv``.
"""

from __future__ import annotations

from collections.abc import Sequence

from multiplex.shell.parsing._argv import leaves_cwd, operands

__all__ = ["schedules"]


# at/batch options that list, show or remove jobs rather than schedule one.
_AT_QUERIES = frozenset({"-l", "-r", "-d", "-c", "-V"})
_TIMERS = ("--on-active", "--on-boot", "--on-startup", "--on-unit-active", "--on-calendar")


# Package managers' and gh's settings set from their own CLI that name a program they run
# or load later (the files they write are persistence places already: .npmrc,
# .yarnrc.yml, gh's config). A registry or package index set so is not: a corporate
# mirror is ordinary (tests/shell/test_carriers_round4.py).
_CONFIGS = frozenset({"npm", "pnpm", "yarn", "gh"})
_RUNS_LATER = frozenset(
    {"script-shell", "shell", "editor", "pager", "browser", "git", "node-options",
     "init-module", "yarnpath", "yarn-path"}
)  # fmt: skip


# Hooks a tool installs to run later by themselves: git's (at each commit, push or
# checkout).
_INSTALLS_HOOKS = {
    "pre-commit": (["install"], ["install-hooks"], ["init-templatedir"]),
    "husky": (["install"], ["init"], ["add"], ["set"]),
    "lefthook": (["install"], ["add"]),
}  # fmt: skip
# Dotfile managers' verbs that write the home's start-up files from a source.
_DOTFILES = {
    "chezmoi": (["apply"], ["init"], ["update"]),
    "yadm": (["clone"], ["checkout"], ["bootstrap"], ["pull"]),
    "home-manager": (["switch"],),
}  # fmt: skip


def _config_key(args: Sequence[str]) -> str | None:
    """The key of ``PROG config set KEY VALUE``, lower-cased (npm's ``KEY=VALUE`` too), or None."""
    ops = operands(args)
    if ops[:2] != ["config", "set"] or len(ops) < 3:
        return None
    return ops[2].partition("=")[0].lower()


def schedules(prog: str, args: Sequence[str]) -> bool:
    """A job the system runs later by itself: ``systemctl enable``, ``at``/``batch``, a
    ``systemd-run`` timer, ``launchctl load|bootstrap|submit``, ``loginctl enable-linger``
    (the user's services start at boot); or a command a tool stores to run each time it
    needs credentials (``aws configure set credential_process``, ``kubectl config
    set-credentials --exec-command``, ``gh alias set NAME '!CMD'``)."""
    if prog in _CONFIGS and (key := _config_key(args)) is not None:
        return key in _RUNS_LATER
    if prog == "systemctl":  # (link: a unit file from anywhere put where systemd finds it)
        return operands(args)[:1] in (["enable"], ["link"])
    if prog == "ssh-copy-id":  # a key that logs in from then on (here or on another host)
        return True
    if prog == "loginctl":
        return "enable-linger" in operands(args)[:1]
    if prog == "aws":  # also a profile's: profile.NAME.credential_process
        ops = operands(args)
        k = ops.index("configure") + 1 if "configure" in ops else len(ops)
        key = ops[k + 1] if ops[k : k + 1] == ["set"] and k + 1 < len(ops) else ""
        return key.lower().rpartition(".")[2] == "credential_process"
    if prog in ("kubectl", "oc"):
        ops = operands(args)
        return ops[:2] == ["config", "set-credentials"] and any(
            a.startswith("--exec-command") for a in args
        )
    if prog == "gh":  # gh alias set NAME '!CMD' (or --shell): a shell line each later run runs
        ops = operands(args)
        shell = (
            any(a in ("-s", "--shell") for a in args)
            or ops[3:4][:1] == ["!"]
            or (ops[3:4] != [] and ops[3].startswith("!"))
        )
        return ops[:2] == ["alias", "set"] and shell
    if prog == "direnv":  # direnv allow /tmp/evil: an .envrc from beyond the project trusted
        ops = operands(args)
        return ops[:1] in (["allow"], ["permit"], ["grant"]) and any(leaves_cwd(o) for o in ops[1:])
    if prog in _INSTALLS_HOOKS:  # pre-commit install, husky install|init|add
        return operands(args)[:1] in _INSTALLS_HOOKS[prog]
    if prog in _DOTFILES:  # chezmoi apply, yadm clone, home-manager switch: the home rewritten
        return operands(args)[:1] in _DOTFILES[prog]
    if prog == "stow":  # stow -t ~ PKG (or from a folder in the home): links into the home
        return not {"-n", "--no", "--simulate", "-D", "--delete"} & set(args)
    if prog in ("at", "batch"):
        return not _AT_QUERIES & set(args)
    if prog == "systemd-run":
        return any(a.startswith(_TIMERS) for a in args)
    return prog == "launchctl" and operands(args)[:1] in (["load"], ["bootstrap"], ["submit"])
