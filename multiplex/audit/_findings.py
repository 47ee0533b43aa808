"""What the audit reports: surface rows, leaks, and the whole report (docs/audit.md, docs/cli.md)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["AuditReport", "Leak", "LeakKind", "Side", "SurfaceRow"]

LeakKind = Literal[
    "surface",  # a foreign canary in a rendered surface value
    "env",  # ... in the profile's command environment
    "cwd",  # ... in the cwd its command printed
    "output",  # ... in its command output
    "credentials",  # ... in its $CREDENTIALS_DIRECTORY listing or mount plan
    "decisions_log",  # ... in <home>/logs/decisions.jsonl
    "cache",  # ... in its caches (in memory or <home>/cache/)
    "gate",  # another profile's canary rule approves a command in this profile
    "kernel",  # ... in its session kernel's variables, env, cwd or credentials
    "isolation",  # a turn wrote os.environ or changed the process cwd (strict mode)
    "unstable",  # concurrent turns of one profile saw different values
    "sandbox",  # inside the OS sandbox: a foreign canary readable, or a stray write succeeded
    "error",  # the audit could not check something (a probe failed, ...)
]
Side = Literal["multiplexed", "standalone"]


@dataclass(frozen=True, slots=True)
class SurfaceRow:
    """One surface of one profile, as a multiplexed turn and a standalone process see it.

    Values are rendered (JSON-able) and masked: secrets never appear.
    """

    surface: str
    profile: str
    multiplexed: Any
    standalone: Any
    match: bool

    def as_dict(self) -> dict[str, Any]:
        return {
            "surface": self.surface,
            "profile": self.profile,
            "multiplexed": self.multiplexed,
            "standalone": self.standalone,
            "match": self.match,
        }


@dataclass(frozen=True, slots=True)
class Leak:
    """Something of one profile seen where it must not be.

    ``profile`` is where it was seen, ``source`` whose canary it was (if any),
    ``surface`` the place (a surface name, ``os.environ``, ``cwd``,
    ``command env``, ``decisions.jsonl``, ...), ``location`` the file:line of
    the offending code when known. ``detail`` names canaries by label, never by
    value.
    """

    kind: LeakKind
    profile: str
    surface: str
    detail: str
    source: str | None = None
    side: Side = "multiplexed"
    location: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "profile": self.profile,
            "surface": self.surface,
            "detail": self.detail,
            "source": self.source,
            "side": self.side,
            "location": self.location,
        }


@dataclass(frozen=True, slots=True)
class AuditReport:
    """The verdict of one audit run: ``ok`` only with no divergence and no leak."""

    rows: tuple[SurfaceRow, ...]
    leaks: tuple[Leak, ...]
    profiles: tuple[str, ...]
    surfaces: tuple[str, ...]
    skipped: Mapping[str, str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    timings: Mapping[str, float] = field(default_factory=dict)
    turns: int = 0

    @property
    def divergences(self) -> tuple[SurfaceRow, ...]:
        return tuple(r for r in self.rows if not r.match)

    @property
    def ok(self) -> bool:
        """No divergence, no leak, and every profile audited (a broken one was not)."""
        return not self.leaks and not self.divergences and not self.skipped

    @property
    def skipped_checks(self) -> tuple[str, ...]:
        """The notes that say a check did not run (its result is unknown, not passed)."""
        return tuple(n for n in self.notes if "skipped" in n or "not run" in n)

    @property
    def exit_code(self) -> int:
        """docs/cli.md: 1 on any divergence or leak or a profile not audited, else 0."""
        return 0 if self.ok else 1

    @property
    def verdict(self) -> str:
        """One line a human reads first."""
        cells = f"{len(self.surfaces)} surfaces x {len(self.profiles)} profiles"
        if self.ok:
            return f"AUDIT PASSED: {cells} match standalone; no cross-profile leak"
        if not self.leaks and not self.divergences:
            return (
                f"AUDIT INCOMPLETE: {len(self.skipped)} profile(s) could not be audited "
                f"(broken config); {cells} match standalone"
            )
        return (
            f"AUDIT FAILED: {len(self.divergences)} divergence(s) and {len(self.leaks)} leak(s) "
            f"over {cells}"
        )

    def as_dict(self) -> dict[str, Any]:
        """The ``audit --json`` document (docs/cli.md)."""
        return {
            "schema_version": 1,
            "ok": self.ok,
            "surfaces": [r.as_dict() for r in self.rows],
            "leaks": [leak.as_dict() for leak in self.leaks],
            "notes": list(self.notes),
            "skipped": list(self.skipped_checks),
            "broken_profiles": [{"name": n, "error": e} for n, e in self.skipped.items()],
        }
