"""npm's own command names, aliases and abbreviations, for deny rules by meaning
(docs/allowlist.md#what-a-deny-rule-reaches).

npm 10 (``lib/utils/cmd-list.js``) accepts every unique prefix of its command names
and aliases (its ``abbrev``), then follows aliases: ``npm pub`` is ``npm publish``,
``npm rum`` is ``npm run-script``. A pure leaf: stdlib and ``shell.parsing._argv``.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from multiplex.shell.parsing._argv import names

__all__ = ["npm_verb", "yarn_in_workspaces"]

Argv = tuple[str, ...]


_NPM_COMMANDS = names(
    "access adduser audit bugs cache ci completion config dedupe deprecate diff dist-tag "
    "docs doctor edit exec explain explore find-dupes fund get help help-search hook init "
    "install install-ci-test install-test link ll login logout ls org outdated owner pack "
    "ping pkg prefix profile prune publish query rebuild repo restart root run-script "
    "sbom search set shrinkwrap star stars start stop team test token uninstall unpublish "
    "unstar update version view whoami"
)
_NPM_ALIASES = {
    **dict.fromkeys(
        ["i", "in", "ins", "inst", "insta", "instal", "isnt", "isnta", "isntal", "isntall",
         "add"], "install"
    ),
    **dict.fromkeys(["un", "unlink", "remove", "rm", "r"], "uninstall"),
    **dict.fromkeys(["run", "rum", "urn"], "run-script"),
    **dict.fromkeys(["t", "tst"], "test"),
    **dict.fromkeys(["up", "upgrade", "udpate"], "update"),
    **dict.fromkeys(["info", "show", "v"], "view"),
    **dict.fromkeys(["find", "s", "se"], "search"),
    **dict.fromkeys(
        ["ic", "isntall-clean", "install-clean", "clean-install"], "ci"
    ),
    **dict.fromkeys(["cit", "clean-install-test", "sit"], "install-ci-test"),
    **dict.fromkeys(["list", "la"], "ls"),
    **dict.fromkeys(["create", "innit"], "init"),
    "x": "exec", "why": "explain", "it": "install-test", "rb": "rebuild", "ddp": "dedupe",
    "c": "config", "author": "owner", "home": "docs", "issues": "bugs", "ln": "link",
    "dist-tags": "dist-tag", "hlep": "help", "verison": "version", "ogr": "org",
    "add-user": "adduser",
}  # fmt: skip


def _abbrev(words: Sequence[str]) -> dict[str, str]:
    """Every unique prefix of each word, and each word itself (npm's ``abbrev``)."""
    counts = Counter(word[:end] for word in words for end in range(1, len(word)))
    table = {w: w for w in words}
    for word in words:
        for end in range(1, len(word)):
            if counts[word[:end]] == 1:
                table.setdefault(word[:end], word)
    return table


_NPM_ABBREV = _abbrev(sorted(set(_NPM_COMMANDS) | set(_NPM_ALIASES)))
_CAMEL = re.compile(r"[A-Z]")


def npm_verb(argv: Argv, i: int) -> Argv | None:
    word = argv[i]
    if _CAMEL.search(word):  # npm reads runScript as run-script
        word = _CAMEL.sub(lambda m: "-" + m.group(0).lower(), word)
    verb = _NPM_ABBREV.get(word)
    while verb in _NPM_ALIASES:
        verb = _NPM_ALIASES[verb]
    return None if verb is None or verb == argv[i] else (*argv[:i], verb, *argv[i + 1 :])


def yarn_in_workspaces(argv: Argv) -> Argv | None:
    """``yarn workspace NAME CMD`` and ``yarn workspaces foreach [options] CMD``: the ``yarn
    CMD`` each workspace runs (``yarn workspaces foreach -A npm publish`` publishes)."""
    if argv[1:2] == ("workspace",):
        k = 3
    elif argv[1:3] == ("workspaces", "foreach"):
        k = 3
        while k < len(argv) and argv[k].startswith("-"):
            k += 2 if argv[k] in ("--from", "--include", "--exclude", "--jobs", "-j") else 1
    else:
        return None
    return ("yarn", *argv[k:]) if argv[k:] else None
