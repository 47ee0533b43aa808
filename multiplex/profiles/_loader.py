"""Read and validate one profile's ``config.yaml`` (docs/configuration.md#configyaml-keys).

Reading never writes: a malformed file is reported and left byte-for-byte as is.
"""

from __future__ import annotations

import ast
import hashlib
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from multiplex._errors import ProfileConfigError
from multiplex.profiles._schema import TERMINAL_TIMEOUT_MAX, ProfileSettings, clamp_timeout
from multiplex.profiles._sections import Issue, check_sections
from multiplex.profiles._wording import plain_message
from multiplex.profiles._yamlread import load_yaml_located

__all__ = [
    "LoadedConfig",
    "load_config",
    "missing_config_message",
    "parse_config",
    "read_allowlist",
    "recover_rule_list",
]

log = logging.getLogger("multiplex.profiles")

# Rule lists that older tools wrote as one string (a stringified Python list).
_RULE_LISTS = (("command_allowlist",), ("approvals", "deny"))


@dataclass(frozen=True, slots=True)
class LoadedConfig:
    """A validated config: settings, the warnings it produced and its content digest."""

    settings: ProfileSettings
    warnings: tuple[str, ...]
    digest: str


def recover_rule_list(
    value: Any, *, file: Path | str, key: str
) -> tuple[list[str] | Any, str | None]:
    """Recover a legacy stringified rule list; return (value, warning or None).

    ``"['git status', 'ls *']"`` becomes the list it spells and a single string
    becomes a one-rule list. Anything else is returned unchanged for validation.
    """
    if not isinstance(value, str):
        return value, None
    text = value.strip()
    if text.startswith("["):
        try:
            parsed = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            return value, None  # left for validation to reject with the key path
        if isinstance(parsed, list | tuple) and all(isinstance(x, str) for x in parsed):
            rules = [x for x in parsed if x.strip()]
            return rules, f"{file}: {key}: legacy string form recovered; write it as a YAML list"
        return value, None
    rules = [text] if text else []
    return rules, f"{file}: {key}: a single string was read as a one-rule list"


def parse_config(data: bytes, *, file: Path | str) -> LoadedConfig:
    """Validate config bytes; raise ``ProfileConfigError`` naming file, line and key.

    Fails closed (docs/configuration.md#validation): an unknown key inside a
    section multiplex owns, a top-level key one or two edits away from one, a
    duplicate key, a YAML boolean where text belongs. When several things are
    wrong the first line is reported. Nothing but ``ProfileConfigError`` is raised.
    """
    try:
        return _parse(data, file)
    except ProfileConfigError:
        raise
    except Exception as exc:  # fail closed: a bug here is a profile error, never a crash
        log.exception("unexpected error validating %s", file)
        raise ProfileConfigError(f"cannot be validated ({type(exc).__name__})", file=file) from None


def _parse(data: bytes, file: Path | str) -> LoadedConfig:
    located = load_yaml_located(data, file=file) if data.strip() else None
    raw = located.doc if located is not None else None
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise ProfileConfigError("the top level must be a mapping", file=file, line=1)
    warnings: list[str] = []
    doc, issues = check_sections(raw, located, file, warnings)
    for path in _RULE_LISTS:
        _recover_in(doc, path, file, warnings)
    try:
        settings = ProfileSettings(**doc)
    except ValidationError as exc:
        for err in exc.errors():
            loc = tuple(p for p in err["loc"] if isinstance(p, str | int))
            line = located.line(loc) if located is not None else None
            issues.append(Issue(line, ".".join(str(p) for p in loc) or None, _describe(err)))
    if issues:
        first = min(issues, key=lambda i: (i.line is None, i.line or 0))
        raise ProfileConfigError(first.message, file=file, key=first.key, line=first.line)
    settings = _clamped(settings, file, warnings)
    return LoadedConfig(settings, tuple(warnings), hashlib.sha256(data).hexdigest())


def _clamped(settings: ProfileSettings, file: Path | str, warnings: list[str]) -> ProfileSettings:
    timeout, why = clamp_timeout(settings.approvals.timeout)
    if why is not None:
        warnings.append(f"{file}: approvals.timeout: {why}")
        approvals = settings.approvals.model_copy(update={"timeout": timeout})
        settings = settings.model_copy(update={"approvals": approvals})
    if settings.terminal.timeout > TERMINAL_TIMEOUT_MAX:
        warnings.append(
            f"{file}: terminal.timeout: {settings.terminal.timeout:g} is above the maximum "
            f"{TERMINAL_TIMEOUT_MAX:.0f}; clamped"
        )
        terminal = settings.terminal.model_copy(update={"timeout": TERMINAL_TIMEOUT_MAX})
        settings = settings.model_copy(update={"terminal": terminal})
    return settings


def _recover_in(
    doc: dict[str, Any], path: tuple[str, ...], file: Path | str, warnings: list[str]
) -> None:
    parent: Any = doc
    for part in path[:-1]:
        parent = parent.get(part) if isinstance(parent, dict) else None
    if not isinstance(parent, dict) or path[-1] not in parent:
        return
    value, why = recover_rule_list(parent[path[-1]], file=file, key=".".join(path))
    if why is not None:
        parent[path[-1]] = value
        warnings.append(why)


def _describe(err: Any) -> str:
    kind = err.get("type", "")
    value = err.get("input")
    if kind in ("list_type", "tuple_type"):
        return f"expected a list, got {_type_name(value)}"
    if kind == "dict_type" or kind == "model_type":
        return f"expected a mapping, got {_type_name(value)}"
    if kind in ("string_type",):
        if isinstance(value, bool):
            return "expected a string, got a boolean (YAML reads unquoted yes/no/on/off/true/false as booleans: quote it)"
        return f"expected a string, got {_type_name(value)}"
    return plain_message(err)


def _type_name(value: Any) -> str:
    return {dict: "a mapping", list: "a list", str: "a string", bool: "a boolean"}.get(
        type(value), type(value).__name__
    )


def load_config(path: Path) -> LoadedConfig:
    """Read and validate ``path``; a missing file (or a dangling link) is an error."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise ProfileConfigError(missing_config_message(path), file=path) from None
    except OSError as exc:
        raise ProfileConfigError(f"cannot read: {exc.strerror}", file=path) from None
    return parse_config(data, file=path)


def read_allowlist(path: Path) -> list[str]:
    """The ``command_allowlist`` on disk now (legacy forms recovered)."""
    return list(load_config(path).settings.command_allowlist)


def missing_config_message(path: Path) -> str:
    """Why a home whose ``config.yaml`` cannot be found is not loaded (never the defaults)."""
    if path.is_symlink():
        return "is a link to a file that does not exist; the profile is not loaded"
    return "is missing; the profile is not loaded (run `multiplex profiles init`)"
