"""The validated shape of a profile's ``config.yaml`` (docs/configuration.md#configyaml-keys).

One ``ProfileSettings`` instance per home, built only from that home's file: the
process environment never feeds it (its ``__init__`` validates only the values
passed in).
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PlainValidator,
    StrictBool,
    StrictStr,
    field_validator,
)
from pydantic_settings import BaseSettings, SettingsConfigDict

from multiplex._errors import RuleSyntaxError
from multiplex.profiles._egress_patterns import parse_egress_pattern
from multiplex.profiles.allowlist._grants import GrantText, grant_from_mapping
from multiplex.shell.rules._rules import parse_rule

__all__ = [
    "APPROVAL_TIMEOUT_MAX",
    "APPROVAL_TIMEOUT_MIN",
    "TERMINAL_TIMEOUT_MAX",
    "ApprovalSettings",
    "Backend",
    "CodeExecutionSettings",
    "EgressSettings",
    "ProfileSettings",
    "SecuritySettings",
    "TerminalSettings",
    "clamp_timeout",
]

Backend = Literal["local", "docker", "ssh", "singularity", "modal", "daytona"]
APPROVAL_TIMEOUT_MIN = 1.0
APPROVAL_TIMEOUT_MAX = 31_536_000.0
TERMINAL_TIMEOUT_MAX = 31_536_000.0  # one year; larger values are clamped with a warning
DEFAULT_PROTECTED = ("AGENTS.md", "SOUL.md", ".env", "config.yaml")


class _Section(BaseModel):
    # docs/configuration.md#validation: an unknown key inside a section is an error
    # (the loader reports it with a "did you mean" before the model sees it).
    model_config = ConfigDict(frozen=True, extra="forbid")


class EgressSettings(_Section):
    """``terminal.egress:`` — where a command with ``network: on`` may connect (docs/execution.md#egress)."""

    allow: tuple[StrictStr, ...] = ()
    deny: tuple[StrictStr, ...] = ()

    @field_validator("allow", "deny")
    @classmethod
    def _patterns(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for item in value:
            parse_egress_pattern(item)
        return value


class TerminalSettings(_Section):
    """``terminal:`` — where and how a profile's commands run."""

    backend: Backend = "local"
    cwd: StrictStr | None = None
    env: dict[StrictStr, StrictStr] = Field(default_factory=dict)
    env_passthrough: tuple[StrictStr, ...] = ()
    credential_files: tuple[StrictStr, ...] = ()
    host_mounts: tuple[StrictStr, ...] = ()
    timeout: float = Field(default=180.0, gt=0, allow_inf_nan=False)
    # docs/execution.md#the-sandbox: local commands in bubblewrap.
    sandbox: Literal["auto", "bwrap", "none"] = "auto"
    # docs/execution.md#egress: on = own namespace, out only through the egress
    # proxy; off = loopback only; host = the host's network (a warning at load).
    network: Literal["on", "off", "host"] = "on"
    # A section left out is one shared instance (frozen, holding nothing mutable):
    # 10,000 homes made one each.
    egress: EgressSettings = EgressSettings()
    writable_paths: tuple[StrictStr, ...] = ()
    read_paths: tuple[StrictStr, ...] = ()
    # docs/execution.md#containers
    container_cli: Literal["auto", "docker", "podman"] = "auto"
    image: StrictStr | None = None
    memory: StrictStr | None = Field(default=None, pattern=r"^[0-9]+[bkmgBKMG]?$")
    cpus: float | None = Field(default=None, gt=0, le=1024, allow_inf_nan=False)
    # docs/execution.md#ssh
    host: StrictStr | None = None
    port: int = Field(default=22, ge=1, le=65535)
    user: StrictStr | None = None
    identity_file: StrictStr | None = None
    known_hosts: StrictStr | None = None

    @field_validator("network", mode="before")
    @classmethod
    def _bare_off(cls, value: Any) -> Any:
        # YAML 1.1 reads a bare `off` as False (the section checks refuse a bare `on`).
        return "off" if value is False else value

    @field_validator("cpus", mode="before")
    @classmethod
    def _cpus_number(cls, value: Any) -> Any:
        if isinstance(value, bool):
            raise ValueError("must be a number of CPUs, e.g. 1 or 0.5")
        return value

    @field_validator("read_paths")
    @classmethod
    def _absolute(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for item in value:
            if not item.startswith("/"):
                raise ValueError(f"{item!r} must be an absolute path")
            if ".." in item.split("/"):
                raise ValueError(f"{item!r} must not contain '..'")
        return value

    @field_validator("identity_file", "known_hosts")
    @classmethod
    def _file_in_home(cls, value: str | None) -> str | None:
        # A file of the home, never a path elsewhere on the host.
        if value is None:
            return value
        if not value or value.startswith(("/", "~")):
            raise ValueError(f"{value!r} must be a path relative to the profile home")
        if ".." in value.replace("\\", "/").split("/"):
            raise ValueError(f"{value!r} must not contain '..'")
        return value

    @field_validator("env", mode="before")
    @classmethod
    def _scalars_to_text(cls, value: Any) -> Any:
        # `PORT: 8080` is a number in YAML; a command env only holds text.
        if isinstance(value, dict):
            return {
                k: (str(v) if isinstance(v, int | float) and not isinstance(v, bool) else v)
                for k, v in value.items()
            }
        return value

    @field_validator("credential_files")
    @classmethod
    def _relative_inside_home(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        # docs/configuration.md#configyaml-keys: paths relative to the home; no absolute paths, no "..".
        for item in value:
            if not item or item.startswith(("/", "~")):
                raise ValueError(f"{item!r} must be a path relative to the profile home")
            if ".." in item.replace("\\", "/").split("/"):
                raise ValueError(f"{item!r} must not contain '..'")
        return value


class ApprovalSettings(_Section):
    """``approvals:`` — how the gate decides for this profile."""

    mode: Literal["manual", "strict", "smart", "off"] = "manual"
    deny: tuple[StrictStr, ...] = ()
    timeout: float = 300.0
    unattended: Literal["deny", "approve"] = "deny"
    protected_files: tuple[StrictStr, ...] = DEFAULT_PROTECTED
    yolo: StrictBool = False
    # docs/approvals.md#who-answered: false = this profile's own gateway token cannot
    # answer its approvals; the admin token or the terminal must.
    self_approve: StrictBool = True

    @field_validator("deny")
    @classmethod
    def _rules(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        # A deny rule that does not parse made every decision of the profile fail while
        # the profile still read "ok": the file is invalid instead (the last good stays).
        for rule in value:
            try:
                parse_rule(rule)
            except RuleSyntaxError as exc:
                raise ValueError(str(exc)) from None
        return value

    @field_validator("timeout", mode="before")
    @classmethod
    def _number(cls, value: Any) -> Any:
        # YAML 1.1 reads `1e18` (no dot) as text; it is still a number of seconds.
        if isinstance(value, str):
            try:
                return float(value.strip())
            except ValueError:
                pass
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError("must be a number of seconds")
        return value


class SecuritySettings(_Section):
    """``security:``."""

    redact_secrets: StrictBool = True


class CodeExecutionSettings(_Section):
    """``code_execution:`` — the profile's session kernels (docs/kernels.md#configuration)."""

    kernel_idle_timeout: float = Field(default=1800.0, gt=0, allow_inf_nan=False)
    max_session_kernels: int = Field(default=4, ge=1, le=1000)
    timeout: float = Field(default=300.0, gt=0, allow_inf_nan=False)
    max_tool_calls: int = Field(default=50, ge=0, le=100_000)


def _allowlist_entry(value: Any) -> str:
    """A ``command_allowlist`` entry: a rule text, or a grant mapping (docs/allowlist.md#grants)."""
    if type(value) is str or isinstance(value, GrantText):
        return value
    if isinstance(value, dict):
        return grant_from_mapping(value)
    if isinstance(value, bool):
        raise ValueError(
            "expected a string, got a boolean (YAML reads unquoted yes/no/on/off/true/false"
            " as booleans: quote it)"
        )
    kind = {list: "a list"}.get(type(value), type(value).__name__)
    raise ValueError(f"expected a string (a rule) or a mapping (a grant), got {kind}")


AllowlistEntry = Annotated[str, PlainValidator(_allowlist_entry)]


class ProfileSettings(BaseSettings):
    """Everything a profile's ``config.yaml`` can say, with the documented defaults (docs/configuration.md)."""

    model_config = SettingsConfigDict(frozen=True, extra="ignore")

    terminal: TerminalSettings = Field(default_factory=TerminalSettings)
    command_allowlist: tuple[AllowlistEntry, ...] = ()
    approvals: ApprovalSettings = ApprovalSettings()  # shared, as egress above
    security: SecuritySettings = SecuritySettings()
    code_execution: CodeExecutionSettings = CodeExecutionSettings()

    def __init__(self, **values: Any) -> None:
        # docs/configuration.md#configyaml-keys: built from the values passed in (the home's
        # file) and nothing else; process environment variables never override a profile.
        # BaseModel's init validates exactly those, without building pydantic-settings'
        # sources, which read all of os.environ once per profile (a fifth of loading 10,000 homes).
        BaseModel.__init__(self, **values)


def clamp_timeout(value: float) -> tuple[float, str | None]:
    """Clamp an approval timeout into its range; return the value and a warning."""
    if math.isnan(value):
        return 300.0, "is not a number; using the default 300"
    if value < APPROVAL_TIMEOUT_MIN:
        return (
            APPROVAL_TIMEOUT_MIN,
            f"{value:g} is below the minimum {APPROVAL_TIMEOUT_MIN:.0f}; clamped",
        )
    if value > APPROVAL_TIMEOUT_MAX:
        return (
            APPROVAL_TIMEOUT_MAX,
            f"{value:g} is above the maximum {APPROVAL_TIMEOUT_MAX:.0f}; clamped",
        )
    return value, None
