"""The one exception tree of multiplex.

::

    MultiplexError(Exception)
    ├── ConfigError                       a config file or key is wrong (exit code 2)
    │   └── ProfileConfigError            ... inside one profile home
    ├── RoutingError(LookupError)         no such profile, no route, or a profile not routable
    ├── UnscopedAccessError(LookupError)  a per-profile surface reached outside a turn
    ├── IsolationViolation                a turn wrote os.environ / changed the process cwd
    └── RuleSyntaxError(ValueError)       an allowlist or deny rule does not parse

Callers catch ``MultiplexError``; each subclass also refines the builtin a caller
already knows where one fits. Messages are one line, name the file and key, and
never contain a secret value.
"""

from __future__ import annotations

from pathlib import Path

__all__ = [
    "ConfigError",
    "IsolationViolation",
    "MultiplexError",
    "ProfileConfigError",
    "RoutingError",
    "RuleSyntaxError",
    "UnscopedAccessError",
]


class MultiplexError(Exception):
    """Base of every error multiplex raises on purpose."""


class ConfigError(MultiplexError):
    """A configuration file is unreadable or a key in it is invalid.

    ``file`` and ``key`` (a dotted path such as ``approvals.timeout``) are kept so
    callers can show or compare them; ``str(err)`` is a one-line message naming both.
    """

    def __init__(
        self,
        message: str,
        *,
        file: str | Path | None = None,
        key: str | None = None,
        line: int | None = None,
    ) -> None:
        self.file = str(file) if file is not None else None
        self.key = key
        self.line = line
        self.reason = message
        where = self.file or ""
        if line is not None and where:
            where += f":{line}"
        if key:
            where = f"{where}: {key}" if where else key
        super().__init__(f"{where}: {message}" if where else message)


class ProfileConfigError(ConfigError):
    """A profile home's ``config.yaml`` or ``.env`` is malformed."""


class RoutingError(MultiplexError, LookupError):
    """A turn names no served profile, matches no route, or its profile is broken."""


class UnscopedAccessError(MultiplexError, LookupError):
    """A per-profile surface was reached with no turn bound (multiplex mode)."""


class IsolationViolation(MultiplexError):
    """A scoped turn tried to change process-wide state (environment or cwd)."""


class RuleSyntaxError(MultiplexError, ValueError):
    """A command rule string cannot be parsed."""
