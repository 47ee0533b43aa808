"""Settings a command writes that change what later commands run (docs/security.md#named-patterns).

``persistence`` without a file the line names: git configuration of a command key
(``git config core.pager CMD``, ``alias.x '!CMD'``, ``http.proxy``, a ``core.worktree``
beyond the project) and a package index's TLS checks turned off (``npm config set
strict-ssl false``, ``pip config set global.trusted-host HOST``): every later install,
an allowlisted one among them, then takes code from whoever answers on the path. A
mirror named as the index (``npm config set registry URL``) is ordinary and is not
one. A pure leaf: stdlib and the parsing leaves.
"""

from __future__ import annotations

from collections.abc import Sequence

from multiplex.shell.detection._command_checks import git_subcommand
from multiplex.shell.parsing._argv import leaves_cwd
from multiplex.shell.parsing._parsed import SimpleCommand
from multiplex.shell.parsing.runs._git import OFF_WORDS, git_config_payload, git_config_write

__all__ = ["settings_persist"]

_NPM_LIKE = frozenset({"npm", "pnpm", "yarn", "bun"})
_PIP_KEYS = ("trusted-host",)  # served over plain HTTP, or any certificate taken


def settings_persist(cmd: SimpleCommand) -> bool:
    """Whether ``cmd`` writes a setting that makes later commands run other code."""
    if not cmd.argv:
        return False
    prog, args = cmd.program, list(cmd.argv[1:])
    if prog == "git":
        return _git_config_persists(args)
    if prog in _NPM_LIKE:
        return _npm_tls_off(args)
    if prog.startswith(("pip", "python", "pypy")):
        return _pip_tls_off(prog, args)
    return False


def _git_config_persists(args: Sequence[str]) -> bool:
    sub, rest = git_subcommand(args)
    written = git_config_write(rest) if sub == "config" else None
    if written is None:
        return False
    key, value = written
    # core.worktree elsewhere: every later git checkout or clean works on that tree
    return git_config_payload(key, value) is not None or (
        key.strip().lower() == "core.worktree" and leaves_cwd(value)
    )


def _set_pairs(words: Sequence[str]) -> list[tuple[str, str]]:
    """``KEY VALUE`` or ``KEY=VALUE …`` after ``config set``/``set``, keys in lower case."""
    if len(words) == 2 and "=" not in words[0]:
        return [(words[0].lower(), words[1])]
    return [(k.lower(), v) for k, _, v in (w.partition("=") for w in words)]


def _npm_tls_off(args: Sequence[str]) -> bool:
    words = [a for a in args if not a.startswith("-")]
    if words[:2] == ["config", "set"]:
        pairs = _set_pairs(words[2:])
    elif words[:1] == ["set"]:
        pairs = _set_pairs(words[1:])
    else:
        return False
    return any(
        key.endswith("unsafehttpwhitelist")
        or (key in ("strict-ssl", "enablestrictssl") and value.lower() in OFF_WORDS)
        for key, value in pairs
    )


def _pip_tls_off(prog: str, args: list[str]) -> bool:
    if not prog.startswith("pip"):  # python -m pip …
        if "-m" not in args or args[args.index("-m") + 1 : args.index("-m") + 2] != ["pip"]:
            return False
        args = args[args.index("-m") + 2 :]
    words = [a for a in args if not a.startswith("-")]
    if words[:2] != ["config", "set"]:
        return False
    return any(key.endswith(_PIP_KEYS) for key, _ in _set_pairs(words[2:]))
