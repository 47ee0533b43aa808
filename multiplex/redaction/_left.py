"""Names an assignment leaves, passed over where a name fragment is searched for.

A log repeats a few names whose values are never masked (``"session_len":12``),
and each of their fragments costs the engine's loop a Hyperscan report and a
check. A fragment with such names found (in lower case, in ASCII text) is
searched for by the regex engine instead, with the names it leaves excluded
where their value holds no letter: the search reads the text in C and reports
only the other places.

Passing such a place over gives the reference's output: its name's values are
left, and nothing the assignment shape looks for can start inside its match
(the name holds no other fragment, the rest of the match no letter), so the
places after it are tried as they would have been.
"""

from __future__ import annotations

import re

from multiplex.redaction._patterns import _FRAGMENTS

__all__ = ["cased", "learn", "split_starts", "starts_without_left"]

# The suffixes (what follows the fragment) of the names found to be left, by
# fragment; at most _MAX each (each new one compiles the fragment's search again).
_SUFFIXES: dict[str, frozenset[str]] = {}
_MAX = 8
_SEARCHES: dict[str, tuple[frozenset[str], re.Pattern[str]]] = {}

# What may follow a left name for its place to be passed over: the assignment
# regex's separator, then a bare value of no letter (the regex's own classes;
# its scheme words and quoted values start with a letter or a quote).
_VALUE_WITHOUT_LETTERS = (
    r"""["']?[ \t]{0,8}+(?:=>|:=|[:=])(?!=)[ \t]{0,8}+"""
    r"""[^\sA-Za-z"'`,;&<>|]{1,1024}+(?![^\s"'`,;&<>|])"""
)
_NAME_CHAR = r"[\w.-]"


def learn(name: str) -> None:
    """Note ``name`` (ASCII, found where its fragment starts, shorter than 48) as left."""
    for fragment in _FRAGMENTS:
        if name.startswith(fragment):
            known = _SUFFIXES.get(fragment, frozenset())
            suffix = name[len(fragment) :]
            lower = name.lower()
            # Another fragment inside it would be a place of its own.
            if (
                suffix not in known
                and len(known) < _MAX
                and sum(lower.count(f) for f in _FRAGMENTS) == 1
            ):
                _SUFFIXES[fragment] = known | {suffix}
            return


def _search(fragment: str, suffixes: frozenset[str]) -> re.Pattern[str]:
    found = _SEARCHES.get(fragment)
    if found is not None and found[0] == suffixes:
        return found[1]
    names = "|".join(map(re.escape, sorted(suffixes)))
    lead = re.escape(fragment)
    search = re.compile(
        # (A name character after a suffix cannot start the separator: the name ends there.)
        f"{lead}(?!(?<!{_NAME_CHAR}{lead})(?:{names}){_VALUE_WITHOUT_LETTERS})"
    )
    _SEARCHES[fragment] = (suffixes, search)  # benign race: both build the same
    return search


def starts_without_left(text: str, fragment: str) -> list[int] | None:
    """Where ``fragment`` occurs in ``text`` (ASCII) in lower case, but for the left
    names' places; None if it has no left name found.

    The places where it has a capital in it are the caller's to find (``cased``).
    """
    suffixes = _SUFFIXES.get(fragment)
    if not suffixes:
        return None
    return [m.start() for m in _search(fragment, suffixes).finditer(text)]


def split_starts(text: str, live: list[str]) -> tuple[list[int], tuple[str, ...], list[str]]:
    """The fragments of ``live`` with left names found: their lower-case places in
    ASCII ``text`` (but for the left names'), the fragments, and the others.

    The places of those fragments with a capital in them are still to be found
    (``cased``); so are all of the others.
    """
    found: list[int] = []
    left: list[str] = []
    rest: list[str] = []
    for fragment in live:
        places = starts_without_left(text, fragment)
        if places is None:
            rest.append(fragment)
        else:
            found += places
            left.append(fragment)
    return found, tuple(left), rest


def cased(fragment: str) -> bytes:
    """A Hyperscan expression for ``fragment`` (lower-case letters) with a capital in it."""
    assert fragment.isascii() and fragment.isalpha() and fragment.islower()
    variants = []
    for k, ch in enumerate(fragment):
        rest = "".join(f"[{c}{c.upper()}]" for c in fragment[k + 1 :])
        variants.append(f"{fragment[:k]}{ch.upper()}{rest}")
    return "|".join(variants).encode("ascii")
