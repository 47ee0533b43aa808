"""Allow rules with conditions: an expiry, a number of uses, files they are bound to (docs/allowlist.md#grants).

An entry of ``command_allowlist`` is a plain rule text (as always) or a mapping

    - {rule: 'npm run *', expires: '2026-12-31T00:00:00Z', uses: 5, bind: {build.py: 'sha256:…'}}

Inside the store every entry stays a ``str`` so the writers of
:mod:`multiplex.profiles.allowlist._roundtrip` keep working on lists of texts: a mapping
entry is a :class:`GrantText`, a ``str`` whose value is its canonical one-line
flow mapping and which carries the parsed conditions. A ``GrantText`` never
equals a plain string, so a plain rule and a mapping with the same rule are two
entries.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from typing import Any

__all__ = [
    "GrantText",
    "entry_rule",
    "grant_from_mapping",
    "make_grant",
    "parse_expiry",
]

_KEYS = ("rule", "expires", "uses", "bind")
_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")
_DURATION = re.compile(r"([0-9]+)([smhdw])")  # ASCII digits only
_UNIT = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


class GrantText(str):
    """A mapping entry: its text is its canonical flow mapping; its conditions are attributes."""

    rule: str
    expires: dt.datetime | None
    uses: int | None
    bind: tuple[tuple[str, str], ...]

    def __new__(
        cls,
        rule: str,
        *,
        expires: dt.datetime | None = None,
        uses: int | None = None,
        bind: tuple[tuple[str, str], ...] = (),
    ) -> GrantText:
        if expires is not None:  # written to the second, so it reads back equal
            expires = expires.astimezone(dt.UTC).replace(microsecond=0)
        self = super().__new__(cls, _render(rule, expires, uses, bind))
        self.rule, self.expires, self.uses, self.bind = rule, expires, uses, bind
        return self

    def __eq__(self, other: object) -> bool:
        return type(other) is GrantText and str.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    __hash__ = str.__hash__

    def __reduce__(self) -> Any:
        return (_restore, (self.rule, self.expires, self.uses, self.bind))

    def as_data(self) -> dict[str, Any]:
        """The mapping as YAML reads it back (the writers verify against this)."""
        data: dict[str, Any] = {"rule": self.rule}
        if self.expires is not None:
            data["expires"] = _iso(self.expires)
        if self.uses is not None:
            data["uses"] = self.uses
        if self.bind:
            data["bind"] = dict(self.bind)
        return data

    def data_expires(self) -> str | None:
        """The expiry as written to the file (``2026-12-31T00:00:00Z``), or None."""
        return _iso(self.expires) if self.expires is not None else None

    def with_uses(self, uses: int) -> GrantText:
        """The same grant with ``uses`` left."""
        return GrantText(self.rule, expires=self.expires, uses=uses, bind=self.bind)

    def same_grant(self, other: str) -> bool:
        """``other`` is this grant, whatever its uses left (a use consumed elsewhere)."""
        return (
            isinstance(other, GrantText)
            and (other.rule, other.expires, other.bind) == (self.rule, self.expires, self.bind)
            and (other.uses is None) == (self.uses is None)
        )


def _restore(
    rule: str, expires: dt.datetime | None, uses: int | None, bind: tuple[tuple[str, str], ...]
) -> GrantText:
    return GrantText(rule, expires=expires, uses=uses, bind=bind)


def entry_rule(entry: str) -> str:
    """The rule text of an entry (a plain text is its own rule)."""
    return entry.rule if isinstance(entry, GrantText) else entry


def _iso(moment: dt.datetime) -> str:
    return moment.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _quoted(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _render(
    rule: str, expires: dt.datetime | None, uses: int | None, bind: tuple[tuple[str, str], ...]
) -> str:
    parts = [f"rule: {_quoted(rule)}"]
    if expires is not None:
        parts.append(f"expires: '{_iso(expires)}'")
    if uses is not None:
        parts.append(f"uses: {uses}")
    if bind:
        files = ", ".join(f"{_quoted(path)}: '{digest}'" for path, digest in bind)
        parts.append(f"bind: {{{files}}}")
    return "{" + ", ".join(parts) + "}"


def parse_expiry(
    value: object, *, now: dt.datetime | None = None, relative: bool = True
) -> dt.datetime:
    """An expiry as written: ``8h``/``30m``/``2d``/``1w`` from now, a date (its 00:00 UTC) or a time.

    A time without a zone is UTC. ``relative=False`` (what ``config.yaml`` holds) refuses a
    duration: read at each load, it would start anew at every reload and never end. Raises
    ``ValueError`` with a one-line reason.
    """
    if isinstance(value, dt.datetime):
        moment = value if value.tzinfo is not None else value.replace(tzinfo=dt.UTC)
        return _representable(moment, value)
    if isinstance(value, dt.date):
        return dt.datetime(value.year, value.month, value.day, tzinfo=dt.UTC)
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"expires: expected a duration (8h) or a date/time, got {value!r}")
    text = value.strip()
    duration = _DURATION.fullmatch(text)
    if duration is not None:
        if not relative:
            raise ValueError(
                f"expires: {text!r} is a duration; config.yaml holds a date or time (a duration"
                " would start anew at each load): write it as allowlist add --expires does"
            )
        start = now or dt.datetime.now(dt.UTC)
        try:
            return start + dt.timedelta(seconds=int(duration[1]) * _UNIT[duration[2]])
        except OverflowError:
            raise ValueError(f"expires: {text!r} is too far away") from None
    try:
        moment = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(
            f"expires: {text!r} is neither a duration (8h, 30m, 2d, 1w) nor an ISO date/time"
        ) from None
    return _representable(
        moment if moment.tzinfo is not None else moment.replace(tzinfo=dt.UTC), text
    )


def _representable(moment: dt.datetime, written: object) -> dt.datetime:
    """``moment``, if it can be compared and written in UTC (not past year 9999 there)."""
    try:
        moment.astimezone(dt.UTC).timestamp()
    except (OverflowError, ValueError, OSError):
        raise ValueError(f"expires: {written!r} is too far away") from None
    return moment


def grant_from_mapping(data: Mapping[Any, Any]) -> GrantText:
    """The grant a mapping entry spells; ``ValueError`` naming the key for a malformed one."""
    unknown = [str(k) for k in data if k not in _KEYS]
    if unknown:
        raise ValueError(f"unknown key {unknown[0]!r} (expected rule, expires, uses, bind)")
    rule = data.get("rule")
    if not isinstance(rule, str) or not rule.strip():
        raise ValueError("rule: expected the rule's text")
    # A key given empty (``uses:``, ``bind: []``) is a condition that says nothing: the
    # file is invalid, never a grant with no condition (fail closed).
    expires = parse_expiry(data["expires"], relative=False) if "expires" in data else None
    uses = data.get("uses")
    if "uses" in data and (type(uses) is not int or uses < 0):
        raise ValueError(f"uses: expected a whole number >= 0, got {uses!r}")
    bind = data.get("bind", {})
    if not isinstance(bind, Mapping) or ("bind" in data and not bind):
        raise ValueError("bind: expected a mapping of file: sha256:<hex>")
    pairs: list[tuple[str, str]] = []
    for path, digest in bind.items():
        if not isinstance(path, str) or not path.strip():
            raise ValueError(f"bind: {path!r} is not a file name")
        if not isinstance(digest, str) or not _DIGEST.fullmatch(digest):
            raise ValueError(f"bind: {path}: expected sha256:<64 hex digits>")
        pairs.append((path, digest))
    return GrantText(rule.strip(), expires=expires, uses=uses, bind=tuple(pairs))


def make_grant(
    rule: str,
    *,
    expires: dt.datetime | None = None,
    uses: int | None = None,
    bind: Mapping[str, str] | None = None,
) -> str:
    """The entry to write: a plain text when there is no condition, else a :class:`GrantText`."""
    if expires is None and uses is None and not bind:
        return rule
    return GrantText(rule, expires=expires, uses=uses, bind=tuple((bind or {}).items()))
