"""Lines no check can find anything in, told apart before the checks run (docs/security.md#inert-lines).

Most lines an agent sends are ``git status``, ``ls -la src``, ``cat src/main.py |
head -50``, ``make build && make test``: each check family of the gate would look
at every command of such a line and find nothing, and together they cost most of
a decision. :func:`inert` proves that from a table made once, in a few
microseconds, so the gate can skip them. It holds only when ALL of these hold:

- the line was read as plain words (``shell.parsing._plain``: no expansion,
  substitution, glob, redirection, assignment, here-document or control flow;
  ``ParsedLine.plain``) and nothing else was found in it (no fork bomb, no payload
  but awk's printing of fields);
- every command is a program of the everyday table
  (``shell.parsing.runs._everyday``) run directly (no wrapper), with only the
  subcommands and options its entry lists and operands of the shapes it allows;
  a program that reads standard input from another stage only where its entry
  says it may (a filter, never an interpreter);
- every operand is a relative path below the turn's folder (no ``..``, no part
  that starts with a dot, no ``/`` at its start), or a plain name or number;
- no word holds what any family's own first test looks for: a secret store's
  key (with the folder it is read in), a persistence place, a sensitive file's
  name, a metadata service's name, destructive SQL, a protected file of the
  profile;
- the turn's folder lies below one of the profile's own homes, in no part
  starting with a dot, and holds no other profile's home or profiles folder.

Anything else goes through every check, as before. ``tests/shell/test_inert.py``
checks, over every line of the gate's tests and generated lines of the table's
programs with hostile words, that no line :func:`inert` admits is one where any
check finds something. A pure leaf: stdlib and the detection leaves it imports.
"""

from __future__ import annotations

import functools
import posixpath

from multiplex._literals import LiteralSearch
from multiplex.shell.detection._scripts import SQL_ANY_WORDS, sql_text
from multiplex.shell.detection.network._metadata import METADATA_WORDS, metadata_text
from multiplex.shell.detection.paths._protected import protected_globs
from multiplex.shell.detection.paths._secret_paths import (
    MAY_SECRET_WORDS,
    PERSISTENCE_KEYS,
    STARTUP,
    is_persistence_path,
    may_be_secret,
    persistence_key,
    secret_by_folder,
)
from multiplex.shell.detection.paths._targets import Place
from multiplex.shell.detection.paths._writes import SENSITIVE_NAMES
from multiplex.shell.parsing._parsed import ParsedLine
from multiplex.shell.parsing.runs._everyday import FILTERS, everyday_words, prints_fields

__all__ = ["inert"]


def inert(parsed: ParsedLine, place: Place, protected: tuple[str, ...]) -> bool:
    """Whether no check of steps 2 and 5-7 can find anything in ``parsed`` at ``place``."""
    if not parsed.plain or parsed.error is not None or parsed.over_limit is not None:
        return False
    if parsed.fork_bombs or parsed.variant_commands:
        return False
    # Code the checks read as a script: only awk printing fields, in which none finds anything.
    if parsed.script_payloads and not all(map(prints_fields, parsed.script_payloads)):
        return False
    rel = _neutral(place)
    if rel is None:
        return False
    words: list[str] = []
    for cmd in parsed.commands:
        if cmd.wrapped_by or cmd.assignments or cmd.redirects:
            return False
        if cmd.upstream and cmd.program not in FILTERS:
            return False
        found = everyday_words(cmd)
        if found is None:
            return False
        words += found
    if not words:
        return True
    joined = "\n".join(words)  # (no key holds a newline: a match lies inside one word)
    # Each word where it is read: a key may take in the folder's own name (~/x/bin/…).
    at = rel + "/"
    # One scan for the families' first word tests: what it misses, each of them misses. It
    # reads the folder without its "~" (_neutral's "~/…"): of their words only one of
    # MAY_SECRET_WORDS holds a "~", and that is asked of the words themselves.
    keyed = _FIRST_WORDS.search(at[1:] + ("\n" + at[1:]).join(words))
    if keyed and (may_be_secret(joined, place) or sql_text(joined) or metadata_text(joined)):
        return False
    if not keyed and secret_by_folder(joined, place):
        return False
    match = protected_globs(protected).match if protected else None
    for word in words:
        bare = word[2:] if word[:2] == "./" else word
        if bare[-1:] == "/":
            bare = bare.rstrip("/") or bare
        name = bare[bare.rfind("/") + 1 :]
        # A relative path with no part starting with a dot is sensitive, or a start-up
        # file, by its last part alone (docs/security.md#inert-lines).
        if name in _NAMED:
            return False
        if match is not None and (match(name) or match(bare) or (word is not bare and match(word))):
            return False
    if not keyed or not persistence_key(at + ("\n" + at).join(words)):
        return True
    return not any(is_persistence_path(at + word) for word in words)


_NAMED = SENSITIVE_NAMES | STARTUP
# Every word some family's first test looks for in the words (placed in the folder): a
# secret key or a character that may expand to one, SQL's and the metadata service's words
# in any case (str.lower() makes an ASCII letter of no other character but "i" and "k",
# which none holds), a persistence key. A word holds no newline: a key found in the words
# joined lies inside one word, found there too where they are placed.
_FIRST_WORDS = LiteralSearch(
    (*MAY_SECRET_WORDS, *PERSISTENCE_KEYS), caseless=(*SQL_ANY_WORDS, *METADATA_WORDS)
)


@functools.lru_cache(maxsize=64)
def _neutral(place: Place) -> str | None:
    """The turn's folder in ``~/…`` form when it is one :func:`inert` may judge at, else None."""
    cwd = place.cwd
    if not cwd or not cwd.startswith("/"):
        return None
    norm = posixpath.normpath(cwd)
    # (A home of "/" would make every folder one below a home: not a place to judge at.)
    below = [h for h in place.normal_homes if h != "/" and norm.startswith(h + "/")]
    if not below:
        return None
    rel = norm[len(max(below, key=len)) :]
    if "/." in rel or persistence_key(f"~{rel}/"):
        return None
    # No other home at, above or below it; no profiles folder at or below it.
    for other in map(posixpath.normpath, place.others):
        if norm == other or norm.startswith(other + "/") or other.startswith(norm + "/"):
            return None
    for folder in map(posixpath.normpath, place.profiles_dirs):
        if norm == folder or folder.startswith(norm + "/"):
            return None
    return "~" + rel
