"""A validation error in the operator's words, not pydantic's (docs/configuration.md#validation).

Every config error names the file, line and key; this says what is wrong with
the value there ("must be a number, got a string"), never "Input should be a
valid number" or "Value error, …". No value is repeated (it may be a secret).
"""

from __future__ import annotations

from typing import Any

__all__ = ["plain_message"]

_BOUNDS = {"ge": "at least", "gt": "more than", "le": "at most", "lt": "less than"}


def _type_name(value: Any) -> str:
    return {dict: "a mapping", list: "a list", str: "a string", bool: "a boolean"}.get(
        type(value), "nothing" if value is None else f"a {type(value).__name__}"
    )


def plain_message(err: Any) -> str:
    """The message for one entry of ``ValidationError.errors()``."""
    kind = str(err.get("type", ""))
    value = err.get("input")
    ctx = err.get("ctx") or {}
    got = _type_name(value)
    if kind in ("float_parsing", "float_type", "decimal_parsing", "decimal_type"):
        return f"must be a number, got {got}"
    if kind in ("int_parsing", "int_type", "int_from_float"):
        return f"must be a whole number, got {got}"
    if kind in ("bool_parsing", "bool_type"):
        return f"must be true or false, got {got}"
    if kind in ("string_type",):
        return f"expected a string, got {got}"
    if kind in ("list_type", "tuple_type", "set_type"):
        return f"expected a list, got {got}"
    if kind in ("dict_type", "model_type", "model_attributes_type"):
        return f"expected a mapping, got {got}"
    if kind in ("literal_error", "enum"):
        return f"must be one of {ctx.get('expected', '')}"
    if kind in ("greater_than_equal", "greater_than", "less_than_equal", "less_than"):
        bound = next((f"{_BOUNDS[k]} {v}" for k, v in ctx.items() if k in _BOUNDS), "in range")
        return f"must be {bound}"
    if kind == "missing":
        return "is required"
    if kind == "extra_forbidden":
        return "unknown key"
    if kind in ("too_short", "string_too_short"):
        return f"too short (at least {ctx.get('min_length')})"
    if kind in ("too_long", "string_too_long"):
        return f"too long (at most {ctx.get('max_length')})"
    message = str(err.get("msg", "invalid value")).removeprefix("Value error, ")
    return message.replace("Input should be", "must be")
