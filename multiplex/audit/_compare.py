"""Compare the two sides per surface x profile, and mask values for display (docs/audit.md).

Equality is on the raw rendered values (a standalone probe sends a digest of
each raw value, never the value itself); what is shown is masked with every
served profile's known secrets and the audit-grade shapes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from multiplex.audit._findings import SurfaceRow
from multiplex.audit._render import canonical
from multiplex.redaction import KnownValues, redact_always

__all__ = ["MISSING", "Masker", "compare", "digest", "masker"]

MISSING = {"missing": "surface not resolved on this side"}
Masker = Callable[[Any], Any]


def digest(value: Any) -> str:
    """The digest of a rendered value's canonical form (what probes send for equality)."""
    return hashlib.sha256(canonical(value).encode("utf-8")).hexdigest()


def masker(known: KnownValues, aliases: Mapping[str, str] | None = None) -> Masker:
    """A function masking every string inside a JSON-able value.

    ``aliases`` shortens long prefixes for display (the sandbox root becomes
    ``<sandbox>``); it is applied after masking.
    """
    pairs = tuple((aliases or {}).items())

    def text(value: str) -> str:
        value = redact_always(value, known)
        for long, short in pairs:
            value = value.replace(long, short)
        return value

    def mask(value: Any) -> Any:
        if isinstance(value, str):
            return text(value)
        if isinstance(value, list):
            return [mask(v) for v in value]
        if isinstance(value, dict):
            return {text(str(k)): mask(v) for k, v in value.items()}
        return value

    return mask


def compare(
    surfaces: Sequence[str],
    profiles: Sequence[str],
    multiplexed: Mapping[str, Mapping[str, Any]],
    standalone: Mapping[str, Mapping[str, Any]],
    standalone_digests: Mapping[str, Mapping[str, str]],
    mask: Masker,
) -> list[SurfaceRow]:
    """One row per surface x profile; a side that lacks a surface never matches."""
    rows: list[SurfaceRow] = []
    for surface in surfaces:
        for profile in profiles:
            mine = multiplexed.get(profile, {})
            theirs = standalone.get(profile, {})
            digests = standalone_digests.get(profile, {})
            have_m, have_s = surface in mine, surface in digests
            match = have_m and have_s and digest(mine[surface]) == digests[surface]
            rows.append(
                SurfaceRow(
                    surface,
                    profile,
                    mask(mine[surface]) if have_m else MISSING,
                    mask(theirs.get(surface)) if have_s else theirs.get(surface, MISSING),
                    match,
                )
            )
    return rows
