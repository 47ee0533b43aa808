"""multiplex: many AI agent profile homes in one process, isolated per turn.

Import from here; submodules are private. See ``docs/`` for the guide.
"""

from multiplex._errors import (
    ConfigError,
    IsolationViolation,
    MultiplexError,
    ProfileConfigError,
    RoutingError,
    RuleSyntaxError,
    UnscopedAccessError,
)
from multiplex.approval import CallbackPrompter, TerminalPrompter
from multiplex.approval._decision import DecidedBy, Decision, Outcome, Verdict
from multiplex.profiles import AllowlistStore, Profile
from multiplex.scopes import (
    ContextKind,
    ProfileScope,
    ScopedExecutor,
    current_scope,
    register_surface,
    run_in_scope,
)
from multiplex.supervision import Supervisor

__all__ = [
    "AllowlistStore",
    "CallbackPrompter",
    "ConfigError",
    "ContextKind",
    "DecidedBy",
    "Decision",
    "IsolationViolation",
    "MultiplexError",
    "Outcome",
    "Profile",
    "ProfileConfigError",
    "ProfileScope",
    "RoutingError",
    "RuleSyntaxError",
    "ScopedExecutor",
    "Supervisor",
    "TerminalPrompter",
    "UnscopedAccessError",
    "Verdict",
    "current_scope",
    "register_surface",
    "run_in_scope",
]

__version__ = "0.1.0"
