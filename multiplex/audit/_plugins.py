"""Extra surfaces for the audit: ``MULTIPLEX_AUDIT_PLUGINS`` (a test and extension hook).

``MULTIPLEX_AUDIT_PLUGINS=module:function[,module:function...]`` names
functions that register surfaces (``register_surface``). The audit calls them
in its own process before resolving, and every standalone probe inherits the
variable and calls them too, so both sides resolve the same registry. The
functions are called on every audit run and must be idempotent (registering
a name again replaces it).
"""

from __future__ import annotations

import importlib
import os

from multiplex._errors import ConfigError

__all__ = ["PLUGINS_ENV", "load_plugins"]

PLUGINS_ENV = "MULTIPLEX_AUDIT_PLUGINS"


def load_plugins(spec: str | None = None) -> tuple[str, ...]:
    """Import and call every ``module:function`` in ``spec`` (default: the variable)."""
    spec = os.environ.get(PLUGINS_ENV, "") if spec is None else spec
    loaded: list[str] = []
    for item in (part.strip() for part in spec.split(",")):
        if not item:
            continue
        module_name, sep, function_name = item.partition(":")
        if not sep or not module_name or not function_name:
            raise ConfigError(f"{PLUGINS_ENV}: {item!r} is not module:function")
        try:
            function = getattr(importlib.import_module(module_name), function_name)
        except (ImportError, AttributeError) as exc:
            raise ConfigError(f"{PLUGINS_ENV}: cannot load {item!r}: {exc}") from None
        function()
        loaded.append(item)
    return tuple(loaded)
