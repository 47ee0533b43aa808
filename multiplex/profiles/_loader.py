"""Read and validate one profile's ``config.yaml`` (docs/configuration.md#configyaml-keys).

Reading never writes: a malformed file is reported and left byte-for-byte as is.
"""

from __future__ import annotations

import ast
import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from multiplex._errors import ProfileConfigError
from multiplex.profiles._schema import ProfileSettings, clamp_timeout
from multiplex.profiles._yamlread import line_of, load_yaml_bytes

__all__ = ["LoadedConfig", "load_config", "parse_config", "read_allowlist", "recover_rule_list"]

_SECTIONS = {
    "terminal": {
        "backend",
        "cwd",
        "env",
        "env_passthrough",
        "credential_files",
        "host_mounts",
        "timeout",
    },
    "approvals": {"mode", "deny", "timeout", "unattended", "protected_files", "yolo"},
    "security": {"redact_secrets"},
    "code_execution": {"kernel_idle_timeout", "max_session_kernels", "timeout", "max_tool_calls"},
    "command_allowlist": None,
}
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
    """Validate config bytes; raise ``ProfileConfigError`` naming file, key and line."""
    raw = load_yaml_bytes(data, file=file) if data.strip() else None
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise ProfileConfigError("the top level must be a mapping", file=file, line=1)
    warnings: list[str] = []
    doc: dict[str, Any] = {}
    for key, value in raw.items():
        if not isinstance(key, str) or key not in _SECTIONS:
            warnings.append(f"{file}: {key}: unknown key ignored")
            continue
        if value is None:
            continue  # `terminal:` with nothing under it means the defaults
        known = _SECTIONS[key]
        if known is not None and isinstance(value, dict):
            value = {k: v for k, v in value.items() if v is not None or k == "cwd"}
            for sub in value:
                if sub not in known:
                    warnings.append(f"{file}: {key}.{sub}: unknown key ignored")
        doc[key] = value
    for path in _RULE_LISTS:
        _recover_in(doc, path, file, warnings)
    try:
        settings = ProfileSettings(**doc)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = tuple(p for p in err["loc"] if isinstance(p, str | int))
        key = ".".join(str(p) for p in loc) or None
        raise ProfileConfigError(
            _describe(err), file=file, key=key, line=line_of(data, loc)
        ) from None
    timeout, why = clamp_timeout(settings.approvals.timeout)
    if why is not None:
        warnings.append(f"{file}: approvals.timeout: {why}")
        approvals = settings.approvals.model_copy(update={"timeout": timeout})
        settings = settings.model_copy(update={"approvals": approvals})
    return LoadedConfig(settings, tuple(warnings), hashlib.sha256(data).hexdigest())


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
        return f"expected a string, got {_type_name(value)}"
    if kind == "literal_error":
        expected = err.get("ctx", {}).get("expected", "")
        return f"must be one of {expected}"
    message = str(err.get("msg", "invalid value"))
    return message.removeprefix("Value error, ")


def _type_name(value: Any) -> str:
    return {dict: "a mapping", list: "a list", str: "a string", bool: "a boolean"}.get(
        type(value), type(value).__name__
    )


def load_config(path: Path) -> LoadedConfig:
    """Read and validate ``path``; a missing file gives the defaults."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        data = b""
    except OSError as exc:
        raise ProfileConfigError(f"cannot read: {exc.strerror}", file=path) from None
    return parse_config(data, file=path)


def read_allowlist(path: Path) -> list[str]:
    """The ``command_allowlist`` on disk now (legacy forms recovered)."""
    return list(load_config(path).settings.command_allowlist)
