"""git commands that rewrite or discard history or uncommitted work (``git-history-rewrite``,
docs/security.md#named-patterns): force and mirror pushes, deleted branches and refs,
``reset --hard``, ``clean -f``, filters, expired reflogs, and the working tree restored
over (``checkout .``, ``restore .``, ``checkout-index -a -f``) or stashes dropped. A
pure leaf: the catalogue and the argv readers.
"""

from __future__ import annotations

from collections.abc import Sequence

from multiplex.shell.detection._catalogue import GIT_HISTORY, Pattern
from multiplex.shell.parsing._argv import git_subcommand, has_long, operands, short_flags

__all__ = ["git_check"]

_PUSHES_OVER = ("force", "force-with-lease", "force-if-includes", "mirror", "delete", "prune")


def git_check(args: Sequence[str]) -> Pattern | None:
    """``git-history-rewrite`` for a git command that rewrites or discards history or work."""
    sub, rest = git_subcommand(args)
    flags = short_flags(rest)
    if sub == "push":
        forced = "f" in flags or "d" in flags
        if forced or has_long(rest, *_PUSHES_OVER):
            return GIT_HISTORY
        if any(op.startswith(("+", ":")) for op in operands(rest)[1:]):
            return GIT_HISTORY
    elif (
        (sub == "reset" and has_long(rest, "hard"))
        or sub in ("filter-branch", "filter-repo")
        or (sub == "clean" and "f" in flags)
        or (sub == "clean" and has_long(rest, "force"))
        or (sub == "branch" and ("D" in flags or ("d" in flags and has_long(rest, "force"))))
        or (sub == "reflog" and operands(rest)[:1] in (["expire"], ["delete"]))
        or (sub == "update-ref" and ("d" in flags or _moved_back(operands(rest))))
        or (sub == "replace" and (len(operands(rest)) >= 2 or has_long(rest, "graft")))
        or (sub in ("checkout", "switch") and _forced(rest, flags))  # uncommitted work dropped
        or (sub == "worktree" and operands(rest)[:1] == ["remove"] and _forced(rest, flags))
        or (sub in ("checkout", "restore") and _whole_tree(sub, rest) and _worktree(rest))
        or (sub == "checkout-index" and _over_every_file(rest, flags))
        or (sub == "stash" and operands(rest)[:1] in (["drop"], ["clear"]))  # stashed work gone
    ):
        return GIT_HISTORY
    return None


def _whole_tree(sub: str, rest: Sequence[str]) -> bool:
    """``git checkout .``, ``git checkout HEAD -- .``, ``git restore ./`` or ``:/`` (also
    ``restore -s REV .``, ``-Ws REV .``): every file of the tree."""
    if "--" in rest:
        paths = list(rest[list(rest).index("--") + 1 :])
    else:
        paths = operands(rest)
        valued = any(
            a in ("-s", "--source") or (a[:1] == "-" != a[1:2] and a.endswith("s")) for a in rest
        )
        if sub == "restore" and paths and valued:
            paths = paths[1:]  # the revision --source names
        elif sub == "checkout" and len(paths) == 2:
            paths = paths[1:]  # git checkout REV .
    return [p.rstrip("/") or p for p in paths] in (
        [
            ".",
        ],
        [":"],
        [":/"],
    )


def _moved_back(ops: Sequence[str]) -> bool:
    """``git update-ref refs/heads/main HEAD~10``: a ref set to an ancestor (``~``, ``^``,
    ``@{…}``), the commits after it dropped (a ref made at ``HEAD`` is not)."""
    return len(ops) >= 2 and any(c in ops[1] for c in "~^@")


def _forced(rest: Sequence[str], flags: str) -> bool:
    """``-f``, ``--force`` or switch's ``--discard-changes``: local changes thrown away."""
    return "f" in flags or has_long(rest, "force") or has_long(rest, "discard-changes")


def _over_every_file(rest: Sequence[str], flags: str) -> bool:
    """``git checkout-index -a -f`` (also ``--all --force``), not into ``--prefix=DIR/``."""
    every = "a" in flags or has_long(rest, "all")
    forced = "f" in flags or has_long(rest, "force")
    return every and forced and not any(a.startswith("--prefix") for a in rest)


def _worktree(rest: Sequence[str]) -> bool:
    """``git restore .`` rewrites the working tree unless only the index (``--staged``)."""
    staged = "S" in short_flags(rest) or has_long(rest, "staged")
    return not staged or "W" in short_flags(rest) or has_long(rest, "worktree")
