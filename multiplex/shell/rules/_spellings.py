"""Other spellings of a verb or its options, for deny rules (docs/allowlist.md#what-a-deny-rule-reaches).

A program's own verb aliases (``helm del`` = ``helm uninstall``, ``gh release new``
= ``gh release create``): :func:`aliased`. git reads a subcommand's options
anywhere before ``--`` (``git reset HEAD~1 --hard``), takes any unique prefix of a long option (``--har``) and has short
spellings of some (``push -f`` = ``--force``); a ``+`` before a refspec forces
that ref (``git push origin +main``) and ``--force-with-lease`` is a force push on a
condition. :func:`git_options_first` spells a git
command with its options first, each in its long name, sorted, then its
operands, so a rule and a command that mean the same compare equal. The tables
hold every long option of the subcommands they name (git 2.47), so a prefix is
unique here only when git finds it unique too. A pure leaf: stdlib and
``shell.parsing._argv``.
"""

from __future__ import annotations

from collections.abc import Sequence

from multiplex.shell.parsing._argv import names, positional

__all__ = ["VERB_ALIASES", "aliased", "aws_s3_removal", "git_options_first"]

Argv = tuple[str, ...]


_LONGS: dict[str, tuple[str, ...]] = {
    "push": names(
        "--all --branches --mirror --tags --follow-tags --atomic --dry-run --porcelain "
        "--delete --prune --verbose --quiet --progress --force --force-with-lease "
        "--force-if-includes --recurse-submodules --thin --no-thin --receive-pack --exec "
        "--set-upstream --push-option --signed --no-signed --no-verify --verify --repo "
        "--ipv4 --ipv6 --no-force-with-lease --no-atomic --no-follow-tags"
    ),
    "reset": names(
        "--hard --soft --mixed --merge --keep --quiet --no-quiet --recurse-submodules "
        "--no-recurse-submodules --intent-to-add --pathspec-from-file --pathspec-file-nul "
        "--patch --refresh --no-refresh"
    ),
    "clean": names("--force --dry-run --quiet --exclude --interactive"),
    "branch": names(
        "--delete --force --move --copy --list --all --remotes --verbose --quiet --track "
        "--no-track --set-upstream-to --unset-upstream --color --no-color --contains "
        "--no-contains --merged --no-merged --column --no-column --sort --points-at "
        "--format --edit-description --create-reflog --show-current --abbrev --no-abbrev "
        "--ignore-case --omit-empty --recurse-submodules"
    ),
}
# Short options that are another option's spelling, per subcommand.
_SHORT: dict[str, dict[str, tuple[str, ...]]] = {
    "push": {"-f": ("--force",), "-d": ("--delete",), "-u": ("--set-upstream",),
             "-n": ("--dry-run",), "-q": ("--quiet",), "-v": ("--verbose",)},
    "reset": {"-q": ("--quiet",), "-p": ("--patch",)},
    "clean": {"-f": ("--force",), "-n": ("--dry-run",), "-q": ("--quiet",)},
    "branch": {"-d": ("--delete",), "-D": ("--delete", "--force"), "-f": ("--force",),
               "-m": ("--move",), "-M": ("--move", "--force")},
}  # fmt: skip


def _long(word: str, longs: Sequence[str]) -> str:
    name, eq, value = word.partition("=")
    if name in longs:
        return word
    found = [o for o in longs if o.startswith(name)]
    return (found[0] + eq + value) if len(found) == 1 else word


def git_options_first(argv: Argv, i: int) -> Argv | None:
    """``argv`` (git, its verb at ``i``) with the verb's options first, long, sorted; None
    when that changes nothing or the verb's options are not known here."""
    verb = argv[i]
    longs = _LONGS.get(verb)
    if longs is None:
        return None
    rest = argv[i + 1 :]
    for word in rest:  # (most commands: no option and no +REF, nothing to move)
        if word[:1] == "-" or word[:1] == "+":
            break
    else:
        return None
    shorts = _SHORT[verb]
    options: list[str] = []
    operands: list[str] = []
    for k, word in enumerate(rest):
        if word == "--":
            operands += rest[k:]
            break
        if word.startswith("--"):
            options.append(_long(word, longs))
            if verb == "push" and options[-1].startswith(("--force-with-lease", "--mirror")):
                options.append("--force")  # a force push, on a condition; a mirror forces all
        elif word.startswith("-") and len(word) > 1 and word != "-":
            for flag in word[1:]:
                options.extend(shorts.get("-" + flag, ("-" + flag,)))
        else:
            if verb == "push" and word.startswith("+") and len(word) > 1:
                options.append("--force")  # +REF forces that ref
                word = word[1:]
            operands.append(word)
    form = (*argv[: i + 1], *sorted(dict.fromkeys(options)), *operands)
    return form if form != argv else None


# Verbs that are another's alias in the program's own command table (helm 3, gh 2).
VERB_ALIASES: dict[str, dict[tuple[str, ...], tuple[str, ...]]] = {
    "helm": {("del",): ("uninstall",), ("delete",): ("uninstall",), ("un",): ("uninstall",),
             ("ls",): ("list",), ("fetch",): ("pull",)},
    "gh": {("release", "new"): ("release", "create"), ("repo", "new"): ("repo", "create"),
           ("pr", "new"): ("pr", "create"), ("issue", "new"): ("issue", "create"),
           ("repo", "rm"): ("repo", "delete"), ("release", "rm"): ("release", "delete")},
}  # fmt: skip


def aliased(argv: Argv, i: int, aliases: dict[tuple[str, ...], tuple[str, ...]]) -> Argv | None:
    """``argv`` (its verb at ``i``) with an aliased verb spelled as the program's own name."""
    for words, meant in aliases.items():
        if argv[i : i + len(words)] == words:
            return (*argv[:i], *meant, *argv[i + len(words) :])
    return None


def _value(words: Sequence[str], name: str) -> str | None:
    """The value of ``--name V`` or ``--name=V`` among ``words``."""
    for j, word in enumerate(words):
        if word == name and j + 1 < len(words):
            return words[j + 1]
        if word.startswith(name + "="):
            return word[len(name) + 1 :]
    return None


def aws_s3_removal(argv: Argv, i: int) -> Argv | None:
    """What ``aws s3api delete-object(s)``, ``aws s3 rb --force``, ``aws s3 sync … s3://B
    --delete`` and ``aws s3 mv s3://…`` remove, as the ``aws s3 rm`` that removes it: ``aws
    s3 rm s3://B/K``, ``aws s3 rm s3://B --recursive``."""
    service, rest = argv[i : i + 2], argv[i + 2 :]
    front = argv[:i]
    if service == ("s3api", "delete-object"):
        bucket, key = _value(rest, "--bucket"), _value(rest, "--key")
        if bucket is not None and key is not None:
            return (*front, "s3", "rm", f"s3://{bucket}/{key}")
    elif service == ("s3api", "delete-objects"):
        bucket = _value(rest, "--bucket")
        if bucket is not None:
            return (*front, "s3", "rm", f"s3://{bucket}", "--recursive")
    elif service == ("s3", "rb") and "--force" in rest:  # every object, then the bucket
        buckets = [w for w in rest if w.startswith("s3://")]
        if buckets:
            return (*front, "s3", "rm", buckets[0], "--recursive")
    elif service == ("s3", "sync") and "--delete" in rest:  # what the source no longer holds
        places = _places(rest)  # SRC DEST: the last two
        if len(places) >= 2 and places[-1].startswith("s3://"):
            return (*front, "s3", "rm", places[-1], "--recursive")
    elif service == ("s3", "mv"):  # the source object goes
        places = _places(rest)
        if len(places) >= 2 and places[-2].startswith("s3://"):
            recursive = ("--recursive",) if "--recursive" in rest else ()
            return (*front, "s3", "rm", places[-2], *recursive)
    return None


# aws's and aws s3's options that take a value (any other is read as a flag; the places
# are the last two words left, SRC and DEST, whatever stands before them).
_AWS_VALUES = frozenset(
    {"--profile", "--region", "--endpoint-url", "--output", "--query", "--color", "--ca-bundle",
     "--cli-read-timeout", "--cli-connect-timeout", "--cli-binary-format", "--exclude",
     "--include", "--acl", "--sse", "--sse-c", "--sse-c-key", "--sse-kms-key-id",
     "--storage-class", "--grants", "--website-redirect", "--content-type", "--cache-control",
     "--content-disposition", "--content-encoding", "--content-language", "--expires",
     "--source-region", "--metadata", "--metadata-directive", "--expected-size", "--page-size",
     "--request-payer", "--checksum-algorithm", "--copy-props", "--sse-c-copy-source",
     "--sse-c-copy-source-key"}
)  # fmt: skip


def _places(rest: Argv) -> list[str]:
    """The paths and s3:// URLs among ``aws s3 sync|mv`` words (``--profile prod`` skipped)."""
    return positional(rest, _AWS_VALUES)
