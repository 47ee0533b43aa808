"""The supervisor: serves many profile homes, routes turns, binds scopes.

``_config`` reads ``multiplex.yaml``; ``_routing`` picks a profile for a turn;
``_turn`` binds and restores a scope; ``_supervisor`` ties profiles, the gate,
the watcher and execution together; ``_served`` looks up the served profiles
and keeps their views and secrets; ``_describe`` renders a profile's effective
settings (secrets masked) for the CLI and the API; ``_hooks`` answers an agent's
own pre-tool hook (docs/agents.md); ``_policy_diff`` replays a profile's
recorded decisions against a proposed config.yaml. See docs/design.md.
"""

from multiplex.supervision._check import CheckReport, check_config
from multiplex.supervision._config import (
    CONFIG_ENV,
    REDIS_URL_ENV,
    ClusterConfig,
    GatewayConfig,
    ProfileEntry,
    RouteSpec,
    SupervisorConfig,
    WatchConfig,
    config_path_from,
    load_supervisor_config,
)
from multiplex.supervision._describe import describe_profile, profile_row
from multiplex.supervision._hooks import MAX_HOOK_INPUT, HookAgent, HookAnswer, answer_hook
from multiplex.supervision._policy_diff import PolicyChange, policy_diff
from multiplex.supervision._reconfigure import ConfigReload
from multiplex.supervision._routing import Router
from multiplex.supervision._supervisor import Supervisor
from multiplex.supervision._turn import ParkedRun, Turn

__all__ = [
    "CONFIG_ENV",
    "MAX_HOOK_INPUT",
    "REDIS_URL_ENV",
    "CheckReport",
    "ClusterConfig",
    "ConfigReload",
    "GatewayConfig",
    "HookAgent",
    "HookAnswer",
    "ParkedRun",
    "PolicyChange",
    "ProfileEntry",
    "RouteSpec",
    "Router",
    "Supervisor",
    "SupervisorConfig",
    "Turn",
    "WatchConfig",
    "answer_hook",
    "check_config",
    "config_path_from",
    "describe_profile",
    "load_supervisor_config",
    "policy_diff",
    "profile_row",
]
