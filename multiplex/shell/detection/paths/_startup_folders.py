"""Folders of the home that hold start-up places (docs/security.md, ``persistence``).

An archive extracted, a tree copied or a repository cloned into one of these
may put a file at any place below it: ``~/.config/autostart/x.desktop``,
``~/.config/systemd/user/x.service``, ``~/.config/fish/conf.d/x.fish``,
``~/.local/bin/git`` (ahead of the real one on PATH), ``~/Library/LaunchAgents``. Such a
write counts as a write of each of them, as one into the home itself does; so does a
tree written into the folder a command runs in, where a ``cd`` or git's ``-C`` took it
(``cd ~ && tar -xf x.tar``, ``git -C ~ clone URL``) or where the turn runs. A pure leaf: stdlib and the paths leaves.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterator

from multiplex.shell.detection.paths._secret_paths import (
    is_home_root,
    is_persistence_path,
    resolved,
)
from multiplex.shell.detection.paths._targets import Place, placed
from multiplex.shell.detection.paths._trees import clones, extracts_here, git_folder
from multiplex.shell.detection.paths._writes import unpacks, write_targets
from multiplex.shell.parsing._parsed import ParsedLine, SimpleCommand

__all__ = ["holds_startup", "is_startup_root", "startup_writes_where_run", "writes_a_tree"]

_FOLDERS = frozenset(
    {"~/.config", "~/.local", "~/.local/share", "~/.local/bin", "~/.config/systemd",
     "~/.config/systemd/user", "~/.config/fish", "~/.config/environment.d", "~/Library",
     "~/Library/LaunchAgents", "~/.kde", "~/.kde4", "~/.ssh", "~/bin"}
)  # fmt: skip


def holds_startup(path: str) -> bool:
    """``path`` (``~/…`` form) is a folder whose subtree holds start-up places."""
    if not path.startswith("~/"):
        return False
    norm = posixpath.normpath(path)
    return norm in _FOLDERS or norm.removesuffix("/*") in _FOLDERS


def is_startup_root(path: str) -> bool:
    """The home, ``/``, or a folder of the home that holds start-up places (``~/.config``)."""
    return is_home_root(path) or path.strip("/") == "" or holds_startup(path)


def writes_a_tree(cmd: SimpleCommand) -> bool:
    """An archive extracted, a tree copied, a repository cloned: files the line does not name."""
    args = cmd.argv[1:]
    return unpacks(cmd) or clones(cmd.program, args) or extracts_here(cmd.program, args)


def startup_writes_where_run(parsed: ParsedLine, place: Place) -> Iterator[SimpleCommand]:
    """Each command that writes a start-up place judged from the folder it runs in, where a
    ``cd`` or git's ``-C`` took it: a file named from there (``cd ~/.config/autostart &&
    cp x x.desktop``, ``cd .git/hooks && cp x pre-commit``; from the turn's own folder the
    write checks judge those), or a tree written into a start-up root there, into the folder
    itself, none other named (``cd ~ && tar -xf x.tar``, ``tar -xf x.tar`` in a turn whose
    folder is the home), or into a folder named from there (``cd ~ && cp -r x/. .``)."""
    for cmd, here in placed(parsed, place):
        tree = bool(cmd.argv) and writes_a_tree(cmd)
        if here is place and not tree:
            continue
        folders = ["."] if tree and extracts_here(cmd.program, cmd.argv[1:]) else []
        base = git_folder(cmd.argv[1:]) if tree and cmd.program == "git" else None
        if here is not place or base is not None:  # git -C DIR clone URL
            folders += write_targets(cmd)
        if base is not None:
            folders = [posixpath.join(base, folder) for folder in folders]
        paths = [path for folder in folders for path in resolved(folder, here)]
        if any((tree and is_startup_root(path)) or is_persistence_path(path) for path in paths):
            yield cmd
