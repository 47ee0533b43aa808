"""Ids given on the command line: the whole id or any unique prefix of it (docs/cli.md#ids)."""

from __future__ import annotations

from collections.abc import Iterable

from multiplex._errors import MultiplexError

__all__ = ["AmbiguousId", "by_prefix"]

_LISTED = 10  # candidates named in the error; the rest are counted


class AmbiguousId(MultiplexError, LookupError):
    """A prefix that starts more than one id; the message lists them."""


def by_prefix(given: str, ids: Iterable[str], what: str) -> str | None:
    """The id ``given`` names: itself, or the only one of ``ids`` it starts; None if none.

    Raises :class:`AmbiguousId` naming the candidates when several start with it.
    """
    known = list(dict.fromkeys(ids))
    if given in known:
        return given
    matches = [i for i in known if i.startswith(given)] if given else []
    if len(matches) == 1:
        return matches[0]
    if matches:
        more = len(matches) - _LISTED
        listed = ", ".join(matches[:_LISTED]) + (f" and {more} more" if more > 0 else "")
        raise AmbiguousId(f"{what} {given!r} is ambiguous: it starts {listed}")
    return None
