"""The supervisor config file, ``multiplex.yaml`` (docs/configuration.md#supervisor-config-multiplexyaml)."""

from __future__ import annotations

import difflib
import logging
import os
import resource
import socket
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
)

from multiplex._errors import ConfigError
from multiplex.profiles._settled import BeingWritten, read_settled
from multiplex.profiles._wording import plain_message
from multiplex.profiles._yamlread import line_of, load_yaml_bytes
from multiplex.supervision._homes import homes_in, name_problem
from multiplex.supervision._redis_url import masked_redis_url, redis_url_authenticates

__all__ = [
    "CONFIG_ENV",
    "REDIS_URL_ENV",
    "RESERVED_DESCRIPTORS",
    "ClusterConfig",
    "CodeExecutionConfig",
    "ConfigBeingWritten",
    "GatewayConfig",
    "ProfileEntry",
    "RouteSpec",
    "SupervisorConfig",
    "WatchConfig",
    "config_path_from",
    "default_max_connections",
    "descriptor_limit",
    "load_supervisor_config",
    "masked_redis_url",
    "redis_url_authenticates",
]

log = logging.getLogger("multiplex.supervision")

CONFIG_ENV = "MULTIPLEX_CONFIG"
REDIS_URL_ENV = "MULTIPLEX_REDIS_URL"
_REDIS_SCHEMES = ("redis://", "rediss://", "unix://")
_ROUTE_FIELDS = ("platform", "user_id", "chat_id", "thread_id")


def _ids_as_text(value: Any) -> Any:
    # chat_id: 123 and chat_id: "123" name the same chat.
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return value


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class RouteSpec(_Model):
    """One route: every field given must match the turn's."""

    profile: str
    platform: str | None = None
    user_id: str | None = None
    chat_id: str | None = None
    thread_id: str | None = None

    _coerce = field_validator(*_ROUTE_FIELDS, mode="before")(_ids_as_text)

    @property
    def specificity(self) -> tuple[bool, bool, bool, bool]:
        """thread_id > chat_id > user_id > platform (docs/configuration.md#supervisor-config-multiplexyaml)."""
        return (
            self.thread_id is not None,
            self.chat_id is not None,
            self.user_id is not None,
            self.platform is not None,
        )


class ProfileEntry(_Model):
    """An explicitly listed profile: a name in profiles_dir, or a name and a home."""

    name: str
    home: str


# docs/operations.md#connections-and-streams: descriptors the gateway's connections never take.
RESERVED_DESCRIPTORS = 256


def descriptor_limit() -> int:
    """This process's soft ``RLIMIT_NOFILE``: how many descriptors it may hold open."""
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    return 1 << 20 if soft == resource.RLIM_INFINITY else soft


def default_max_connections() -> int:
    """Half the descriptor limit (at least ``RESERVED_DESCRIPTORS`` kept): the rest is for runs."""
    limit = descriptor_limit()
    return max(1, limit - max(RESERVED_DESCRIPTORS, limit // 2))


def _share(total: int | None) -> int:
    # One client address, or one profile's event streams: a quarter of every connection.
    return max(1, (total if total is not None else default_max_connections()) // 4)


class GatewayConfig(_Model):
    """``gateway:`` in ``multiplex.yaml`` (docs/configuration.md#supervisor-config-multiplexyaml)."""

    host: str = "127.0.0.1"
    port: int = Field(default=8765, ge=0, le=65535)
    # docs/gateway.md#limits: runs running or parked per profile; beyond it 429.
    max_runs_per_profile: int = Field(default=32, ge=1, le=100_000)
    # docs/gateway.md#limits: a larger request body answers 413 unread.
    max_request_bytes: int = Field(default=1024 * 1024, ge=1024, le=1024 * 1024 * 1024)
    # docs/operations.md#connections-and-streams: the bounds that keep descriptors for runs.
    header_timeout_s: float = Field(default=10.0, gt=0, le=3600)
    # A request head larger than this answers 431 and the connection is closed.
    max_head_bytes: int = Field(default=64 * 1024, ge=1024, le=1024 * 1024)
    # From the end of a head to the end of its body; then the connection is closed.
    body_timeout_s: float = Field(default=30.0, gt=0, le=3600)
    max_connections: int = Field(default_factory=default_max_connections, ge=1)
    max_connections_per_client: int = Field(
        default_factory=lambda data: _share(data.get("max_connections")), ge=1
    )
    max_listeners_per_profile: int = Field(
        default_factory=lambda data: _share(data.get("max_connections")), ge=1
    )
    # docs/operations.md#finished-output: finished runs' stdout/stderr held in memory, per node.
    retained_output_bytes: int = Field(
        default=64 * 1024 * 1024, ge=64 * 1024, le=64 * 1024 * 1024 * 1024
    )

    @field_validator("max_connections")
    @classmethod
    def _below_descriptors(cls, value: int) -> int:
        most = descriptor_limit() - RESERVED_DESCRIPTORS
        if value > most:
            raise ValueError(
                f"{value} leaves fewer than {RESERVED_DESCRIPTORS} of the process's "
                f"{descriptor_limit()} file descriptors (RLIMIT_NOFILE) for runs: "
                f"at most {max(most, 0)}, or raise the limit (ulimit -n)"
            )
        return value

    @field_validator("max_connections_per_client", "max_listeners_per_profile")
    @classmethod
    def _within_connections(cls, value: int, info: ValidationInfo) -> int:
        total = info.data.get("max_connections")
        if total is not None and value > total:
            raise ValueError(f"{value} is more than gateway.max_connections ({total})")
        return value


class WatchConfig(_Model):
    mode: Literal["auto", "inotify", "polling", "off"] = "auto"
    debounce_ms: int = Field(default=50, ge=0, le=60_000)

    @field_validator("mode", mode="before")
    @classmethod
    def _bare_off(cls, value: Any) -> Any:
        return "off" if value is False else value


def _default_node_id() -> str:
    return f"{socket.gethostname()}-{os.getpid()}"


class ClusterConfig(_Model):
    """``cluster:``: the Redis that several nodes share (docs/cluster.md#configuration).

    A ``redis://`` or ``rediss://`` URL must carry credentials (a password, or an
    ACL user and password) unless ``allow_unauthenticated`` says otherwise
    (docs/cluster.md#authentication); a ``unix://`` socket is guarded by its
    file mode. :attr:`safe_url` is the URL with any password masked.
    """

    # Before redis_url: its validator reads this field.
    allow_unauthenticated: bool = False
    redis_url: str
    node_id: str = Field(default_factory=_default_node_id, min_length=1, max_length=200)
    run_ttl: float = Field(default=86_400.0, gt=0)
    node_timeout: float = Field(default=15.0, ge=0.5, le=3600)

    @field_validator("redis_url")
    @classmethod
    def _redis_url(cls, value: str, info: ValidationInfo) -> str:
        # The URL may carry a password: the message never repeats it.
        if not value.startswith(_REDIS_SCHEMES):
            raise ValueError("must start with redis://, rediss:// or unix://")
        if not info.data.get("allow_unauthenticated", False) and not redis_url_authenticates(value):
            raise ValueError(
                f"{masked_redis_url(value)} has no credentials; put a password in the URL"
                " (redis://:PASSWORD@host:6379/0, or redis://USER:PASSWORD@host:6379/0 for an"
                " ACL user: docs/cluster.md#authentication) or set"
                " cluster.allow_unauthenticated: true"
            )
        return value

    @field_validator("node_id")
    @classmethod
    def _node_id(cls, value: str) -> str:
        if any(c.isspace() or c in ":*?[]" for c in value):
            raise ValueError("may not contain spaces or any of : * ? [ ]")
        return value

    @property
    def safe_url(self) -> str:
        """``redis_url`` with its password masked, for messages and logs."""
        return masked_redis_url(self.redis_url)

    @property
    def unauthenticated(self) -> bool:
        """Whether this node talks to a Redis over the network without credentials."""
        return not redis_url_authenticates(self.redis_url)


class CodeExecutionConfig(_Model):
    """``code_execution:`` of ``multiplex.yaml``: limits across every profile (docs/kernels.md#configuration)."""

    max_kernels: int = Field(default=16, ge=1, le=10_000)


class SupervisorConfig(_Model):
    """A validated ``multiplex.yaml``; relative paths are against its directory."""

    profiles_dir: str = "profiles"
    profiles: tuple[str | ProfileEntry, ...] | None = None
    default_profile: str | None = "default"
    routes: tuple[RouteSpec, ...] = ()
    gateway: GatewayConfig = Field(default_factory=GatewayConfig)
    watch: WatchConfig = Field(default_factory=WatchConfig)
    code_execution: CodeExecutionConfig = Field(default_factory=CodeExecutionConfig)
    cluster: ClusterConfig | None = None
    source: Path | None = None

    @field_validator("profiles")
    @classmethod
    def _names(
        cls, profiles: tuple[str | ProfileEntry, ...] | None
    ) -> tuple[str | ProfileEntry, ...] | None:
        """Each listed profile's name is a valid one, and no name is listed twice (the
        last would silently win: another home served under a profile's name)."""
        seen: set[str] = set()
        for entry in profiles or ():
            if isinstance(entry, ProfileEntry):
                name = entry.name
            else:
                name = os.path.basename(entry.rstrip("/")) if "/" in entry else entry
            problem = name_problem(name)
            if problem is not None:
                raise ValueError(problem)
            if name in seen:
                raise ValueError(f"the profile {name!r} is listed twice")
            seen.add(name)
        return profiles

    @property
    def base_dir(self) -> Path:
        return self.source.parent if self.source is not None else Path.cwd()

    @property
    def default_is_explicit(self) -> bool:
        return "default_profile" in self.model_fields_set

    def homes(self) -> dict[str, Path]:
        """Every profile home this config serves, by name, in a stable order."""
        return {name: home for name, (home, _resolved) in self.found_homes().items()}

    def found_homes(self) -> dict[str, tuple[Path, bool]]:
        """:meth:`homes`, each with whether its path is known resolved already
        (a real folder in the resolved ``profiles_dir``: no link to follow)."""
        root = (self.base_dir / self.profiles_dir).resolve()
        if self.profiles is None:
            return homes_in(root)
        homes: dict[str, tuple[Path, bool]] = {}
        for entry in self.profiles:
            if isinstance(entry, ProfileEntry):
                homes[entry.name] = (
                    (self.base_dir / os.path.expanduser(entry.home)).resolve(),
                    True,
                )
            elif "/" in entry:
                path = (self.base_dir / os.path.expanduser(entry)).resolve()
                homes[path.name] = (path, True)
            else:
                homes[entry] = (root / entry, False)
        shared: dict[Path, str] = {}
        for name, (home, _) in homes.items():
            other = shared.setdefault(home.resolve(), name)
            if other != name:  # one home, two profiles: no isolation between them
                raise ConfigError(
                    f"{other!r} and {name!r} share the home {home}",
                    file=self.source,
                    key="profiles",
                )
        return homes


def _did_you_mean(loc: tuple[str | int, ...]) -> str:
    """`` (did you mean 'x'?)`` for a mistyped key of ``multiplex.yaml``."""
    models: dict[tuple[str, ...], type[BaseModel]] = {
        (): SupervisorConfig,
        ("gateway",): GatewayConfig,
        ("watch",): WatchConfig,
        ("cluster",): ClusterConfig,
    }
    parent = tuple(str(p) for p in loc[:-1])
    if parent[:1] == ("routes",) and len(parent) == 2:
        model: type[BaseModel] | None = RouteSpec
    else:
        model = models.get(parent)
    if model is None or not loc:
        return ""
    close = difflib.get_close_matches(
        str(loc[-1]), [f for f in model.model_fields if f != "source"], n=1
    )
    return f" (did you mean {close[0]!r}?)" if close else ""


def config_path_from(option: str | Path | None) -> Path:
    """``--config`` wins, then ``MULTIPLEX_CONFIG``, then ``./multiplex.yaml``."""
    if option:
        return Path(option)
    return Path(os.environ.get(CONFIG_ENV) or "multiplex.yaml")


class ConfigBeingWritten(ConfigError):
    """The file is open for writing by some process (a save not done yet)."""


def load_supervisor_config(path: Path, *, missing_ok: bool = False) -> SupervisorConfig:
    """Read and validate a supervisor config; ``ConfigError`` names file, key and line."""
    try:
        data = read_settled(path)[0]
    except FileNotFoundError:
        if not missing_ok:
            raise ConfigError("file not found", file=path) from None
        data = b""
    except BeingWritten as exc:
        # docs/configuration.md#validation: never read half written; a reload reads it
        # again once its writer is done.
        raise ConfigBeingWritten(str(exc.strerror), file=path) from None
    except OSError as exc:
        raise ConfigError(f"cannot read: {exc.strerror}", file=path) from None
    try:
        raw = load_yaml_bytes(data, file=path) if data.strip() else {}
    except ConfigError as exc:
        raise ConfigError(exc.reason, file=path, line=exc.line) from None
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise ConfigError("the top level must be a mapping", file=path, line=1)
    odd = next((k for k in raw if not isinstance(k, str)), None)
    if odd is not None:
        raise ConfigError(f"unknown key {odd!r}: keys are names", file=path)
    doc = {
        k: v
        for k, v in raw.items()
        if not (v is None and k != "default_profile" and k != "profiles")
    }
    env_url = os.environ.get(REDIS_URL_ENV)
    if env_url:  # the file's cluster.redis_url wins; the variable fills it in
        cluster = doc.get("cluster")
        if cluster is None:
            doc["cluster"] = {"redis_url": env_url}
        elif isinstance(cluster, dict) and "redis_url" not in cluster:
            doc["cluster"] = {**cluster, "redis_url": env_url}
    try:
        config = SupervisorConfig(**doc, source=path.resolve())
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = tuple(p for p in err["loc"] if isinstance(p, str | int))
        key = ".".join(str(p) for p in loc) or None
        message = plain_message(err)
        if err.get("type") == "extra_forbidden":
            message = "unknown key" + _did_you_mean(loc)
        raise ConfigError(message, file=path, key=key, line=line_of(data, loc)) from None
    if config.cluster is not None and config.cluster.unauthenticated:
        log.warning(
            "%s: cluster.allow_unauthenticated: Redis at %s is used without credentials;"
            " whoever reaches it can read and forge runs, approvals and grants"
            " (docs/cluster.md#authentication)",
            path,
            config.cluster.safe_url,
        )
    return config
