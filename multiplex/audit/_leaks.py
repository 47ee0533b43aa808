"""Canary leak checks for one profile (docs/audit.md: no canary of A anywhere in B).

Run on both sides: in the multiplexed process for every profile, and in each
standalone probe for its own profile. For profile B they look for every OTHER
profile's canaries in B's rendered surfaces, B's command environment, the
output of a real command B runs in a ``cron`` turn (its env, its cwd and its
``$CREDENTIALS_DIRECTORY`` listing), B's credential mount plan, B's
``logs/decisions.jsonl``, B's caches, and B's gate verdicts (another
profile's canary rule must never approve a command in B).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from multiplex.audit._canaries import LEAK_COMMAND, MARK_VAR, TOKEN_VAR, Canaries
from multiplex.audit._findings import Leak, LeakKind, Side
from multiplex.audit._render import canonical
from multiplex.supervision import Supervisor

__all__ = ["LeakCheck", "check_profile"]

_MAX_FILE = 64 * 1024
_MAX_FILES = 500
SESSION = "audit-leaks"


@dataclass(slots=True)
class LeakCheck:
    """Leaks found for one profile and notes on checks that could not run."""

    leaks: list[Leak] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


class _Scanner:
    def __init__(self, name: str, foreign: Mapping[str, Canaries], side: Side) -> None:
        self.name = name
        self.foreign = foreign
        self.side: Side = side
        self.found = LeakCheck()

    def scan(self, kind: LeakKind, surface: str, text: str) -> None:
        for owner, canary in self.foreign.items():
            labels = canary.found_in(text)
            if labels:
                self.leak(
                    kind,
                    surface,
                    f"{', '.join(labels)} of profile {owner!r} seen in {surface}",
                    owner,
                )

    def leak(self, kind: LeakKind, surface: str, detail: str, source: str | None) -> None:
        self.found.leaks.append(Leak(kind, self.name, surface, detail, source, self.side))


def check_profile(
    sup: Supervisor,
    name: str,
    rendered: Mapping[str, Any],
    canaries: Mapping[str, Canaries],
    *,
    side: Side = "multiplexed",
) -> LeakCheck:
    """Every leak check for profile ``name`` against the other profiles' canaries."""
    scanner = _Scanner(name, {o: c for o, c in canaries.items() if o != name}, side)
    for surface, value in rendered.items():
        scanner.scan("surface", surface, canonical(value))
    with sup.turn(name, session=SESSION, context="cron") as scope:
        env = dict(scope.env)
        home = scope.home
        resources = scope.profile.resources()
    scanner.scan("env", "command env", canonical(env))
    own = canaries.get(name)
    if own is not None and env.get(TOKEN_VAR) != own.token:
        scanner.found.notes.append(f"{name}: its own {TOKEN_VAR} is not in its command env")
    _check_command(sup, scanner, own)
    _check_files(scanner, home / "logs" / "decisions.jsonl", "decisions_log", "decisions.jsonl")
    for key, resource in resources.items():
        # Every per-profile resource (caches, sessions, pending approvals, ...),
        # described generically so a new kind of resource is covered too.
        scanner.scan("cache", f"per-profile resource {key!r}", _describe(resource))
    _check_tree(scanner, home / "cache")
    _check_gate(sup, scanner)
    return scanner.found


def _describe(obj: object, depth: int = 0) -> str:
    """The text of an object's contents: mappings, sequences and attributes, a few levels deep."""
    if depth > 4 or isinstance(obj, str | bytes | int | float | bool | type(None)):
        return repr(obj)
    parts = [repr(obj)]
    try:
        if isinstance(obj, Mapping):
            items: Iterable[object] = [x for kv in list(obj.items())[:_MAX_FILES] for x in kv]
        elif isinstance(obj, list | tuple | set | frozenset):
            items = list(obj)[:_MAX_FILES]
        else:
            items = list(getattr(obj, "__dict__", {}).values())
            items += [
                getattr(obj, n, None)
                for n in getattr(type(obj), "__slots__", ())
                if isinstance(n, str)
            ]
    except Exception:  # a resource that cannot be walked is described by its repr
        return parts[0]
    parts.extend(_describe(item, depth + 1) for item in items)
    return "\n".join(parts)


def _check_command(sup: Supervisor, scanner: _Scanner, own: Canaries | None) -> None:
    result = sup.run(LEAK_COMMAND, profile=scanner.name, session=SESSION, context="cron")
    scanner.scan("credentials", "credential mount plan", canonical(list(result.mounts)))
    if result.exit_code is None:
        why = result.stderr.strip() or f"{result.decision.outcome.value}: {result.decision.cause}"
        scanner.found.notes.append(
            f"{scanner.name}: leak command not run ({why}); output checks skipped"
        )
        return
    out = result.stdout
    env_part, _, rest = out.partition("@@cwd\n")
    cwd_part, _, cred_part = rest.partition("@@credentials\n")
    scanner.scan("output", "command output", env_part + result.stderr)
    scanner.scan("cwd", "command cwd", cwd_part)
    scanner.scan("credentials", "$CREDENTIALS_DIRECTORY listing", cred_part)
    if own is not None and MARK_VAR in (sup.view(scanner.name).env) and own.mark not in env_part:
        scanner.found.notes.append(
            f"{scanner.name}: its own {MARK_VAR} is not in its command output"
        )


def _check_files(scanner: _Scanner, path: Path, kind: LeakKind, label: str) -> None:
    try:
        with path.open("rb") as handle:
            text = handle.read(16 * _MAX_FILE).decode("utf-8", "replace")
    except OSError:
        return
    scanner.scan(kind, label, text)


def _check_tree(scanner: _Scanner, root: Path) -> None:
    if not root.is_dir():
        return
    for count, path in enumerate(sorted(root.rglob("*"))):
        if count >= _MAX_FILES:
            break
        rel = str(path.relative_to(root))
        scanner.scan("cache", f"cache/{rel} (name)", rel)
        if path.is_file() and not path.is_symlink():
            _check_files(scanner, path, "cache", f"cache/{rel}")


def _check_gate(sup: Supervisor, scanner: _Scanner) -> None:
    store = sup.allowlist(scanner.name)
    for owner, canary in scanner.foreign.items():
        verdict = sup.test(scanner.name, canary.command, context="cron", session=SESSION)
        if verdict.rule and canary.program in verdict.rule:
            scanner.leak(
                "gate",
                "gate verdict",
                f"the canary allowlist rule of profile {owner!r} approved a command here "
                f"(outcome {verdict.outcome}, decided by {verdict.decided_by})",
                owner,
            )
        matched = store.match([canary.program, "x"])
        if matched and canary.program in matched:
            scanner.leak(
                "gate",
                "allowlist",
                f"the allowlist store matches the canary rule of profile {owner!r}",
                owner,
            )
