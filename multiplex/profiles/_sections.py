"""Which keys of a ``config.yaml`` multiplex owns, and the checks that fail closed on them.

docs/configuration.md#validation. The owned sections and their keys are read
from the pydantic models in :mod:`multiplex.profiles._schema`, never listed by
hand: a key added to a model (``terminal.sandbox``, a ``code_execution``
section) is accepted at once, and an unknown key inside an owned section is an
error with a "did you mean". A top-level key one or two edits away from an
owned section (``aprovals``) is an error too: that typo would drop the deny
rules. Other top-level keys belong to the agent runtime and are warnings.
"""

from __future__ import annotations

import functools
import types
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from multiplex.profiles._schema import ProfileSettings
from multiplex.profiles._yamlread import Located

__all__ = ["Issue", "check_sections", "edit_distance", "owned_sections"]

_TYPO_DISTANCE = 2


@dataclass(frozen=True, slots=True)
class Issue:
    """One reason a config is refused, with the line it is on."""

    line: int | None
    key: str | None
    message: str


def _model_of(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        for arg in typing.get_args(annotation):
            found = _model_of(arg)
            if found is not None:
                return found
    return None


def _keys(model: type[BaseModel]) -> dict[str, Any]:
    """Accepted keys of a model -> their annotation (aliases included)."""
    keys: dict[str, Any] = {}
    for name, info in model.model_fields.items():
        keys[name] = info.annotation
        if info.alias:
            keys[info.alias] = info.annotation
    return keys


def owned_sections() -> dict[str, type[BaseModel] | None]:
    """Top-level sections of ``config.yaml`` multiplex owns -> their model (None for a list)."""
    return dict(_owned())


# The models never change while the process runs: what they accept is read once
# (each home's check read it again: 10,000 times at start). Read only.
@functools.cache
def _owned() -> dict[str, type[BaseModel] | None]:
    return {name: _model_of(a) for name, a in _keys(ProfileSettings).items()}


class _Key(typing.NamedTuple):
    annotation: Any
    nested: type[BaseModel] | None  # the model of a section inside, if any
    bare_off: bool  # a Literal with "off" (see _accepts_bare_off)


@functools.cache
def _fields(model: type[BaseModel]) -> dict[str, _Key]:
    return {name: _Key(a, _model_of(a), _accepts_bare_off(a)) for name, a in _keys(model).items()}


def edit_distance(a: str, b: str) -> int:
    """Levenshtein distance (insert, delete, substitute)."""
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


def _closest(key: str, known: typing.Iterable[str]) -> str | None:
    scored = sorted((edit_distance(key.lower(), k.lower()), k) for k in known)
    if scored and scored[0][0] <= max(_TYPO_DISTANCE, len(key) // 3):
        return scored[0][1]
    # A shortened key (`redact` for `redact_secrets`).
    longer = sorted(k for k in known if len(key) >= 3 and k.lower().startswith(key.lower()))
    return longer[0] if longer else None


def _accepts_bare_off(annotation: Any) -> bool:
    # A Literal of names that includes "off" (approvals.mode): YAML 1.1 reads a
    # bare `off` as False, the one boolean that means the documented text.
    return typing.get_origin(annotation) is Literal and "off" in typing.get_args(annotation)


def check_sections(
    raw: dict[Any, Any], located: Located | None, file: Path | str, warnings: list[str]
) -> tuple[dict[str, Any], list[Issue]]:
    """The owned part of ``raw`` ready for validation, and every issue found in it."""
    owned = _owned()
    doc: dict[str, Any] = {}
    issues: list[Issue] = []

    def line(path: tuple[str | int, ...]) -> int | None:
        return located.line(path) if located is not None else None

    for key, value in raw.items():
        if not isinstance(key, str) or key not in owned:
            near = _closest(key, owned) if isinstance(key, str) else None
            if near is not None and edit_distance(key.lower(), near.lower()) <= _TYPO_DISTANCE:
                issues.append(Issue(line((key,)), key, f"unknown section (did you mean {near!r}?)"))
            else:
                warnings.append(
                    f"{file}: {key}: not a multiplex section; left to the agent runtime"
                )
            continue
        if value is None:
            continue  # `terminal:` with nothing under it means the defaults
        model = owned[key]
        if model is not None and isinstance(value, dict):
            value = _check_model(model, value, (key,), located, issues)
        doc[key] = value
    return doc, issues


def _check_model(
    model: type[BaseModel],
    value: dict[Any, Any],
    path: tuple[str | int, ...],
    located: Located | None,
    issues: list[Issue],
) -> dict[Any, Any]:
    keys = _fields(model)
    out: dict[Any, Any] = {}
    for sub, item in value.items():
        where = (*path, sub)
        known = keys.get(sub) if isinstance(sub, str) else None
        if known is None:
            near = _closest(sub, keys) if isinstance(sub, str) else None
            hint = f"did you mean {near!r}?" if near else "known keys: " + ", ".join(sorted(keys))
            issues.append(Issue(_line(located, where), _dotted(where), f"unknown key ({hint})"))
            continue
        if item is None and sub != "cwd":
            continue  # `timeout:` with no value means the default
        if isinstance(item, bool) and known.bare_off:
            if located is not None and located.bare_off(where) and item is False:
                item = "off"
            else:
                issues.append(
                    Issue(
                        _line(located, where),
                        _dotted(where),
                        f"a YAML boolean; write one of {', '.join(typing.get_args(known.annotation))}",
                    )
                )
                continue
        if known.nested is not None and isinstance(item, dict):
            item = _check_model(known.nested, item, where, located, issues)
        out[sub] = item
    return out


def _line(located: Located | None, where: tuple[str | int, ...]) -> int | None:
    return located.line(where) if located is not None else None


def _dotted(where: tuple[str | int, ...]) -> str:
    return ".".join(str(p) for p in where)
