"""``multiplex check``: everything a supervisor would load, validated without serving (docs/cli.md#check).

Reads ``multiplex.yaml`` (its keys, routes, ``default_profile``), every home it
serves (``config.yaml``, ``.env``, credential files) and every allowlist and
deny rule, and reports each problem as a :class:`Finding` with file and line.
Pure reading: nothing is written, no watcher starts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from multiplex._errors import ConfigError, RuleSyntaxError
from multiplex.profiles import Profile
from multiplex.profiles._yamlread import MAX_CONFIG_BYTES, line_of, load_yaml_bytes
from multiplex.shell import parse_rule
from multiplex.supervision._config import SupervisorConfig, load_supervisor_config

__all__ = ["CheckReport", "Finding", "check_config"]

_RULE_KEYS: tuple[tuple[str, ...], ...] = (("command_allowlist",), ("approvals", "deny"))


@dataclass(frozen=True, slots=True)
class Finding:
    """One problem: where it is and what is wrong (no secret values).

    Printed in one layout for every kind: ``[profile 'NAME': ]FILE:LINE: KEY: message``.
    """

    message: str
    file: str | None = None
    line: int | None = None
    key: str | None = None
    profile: str | None = None

    def __str__(self) -> str:
        where = self.file or ""
        if where and self.line is not None:
            where += f":{self.line}"
        if self.key:
            where = f"{where}: {self.key}" if where else self.key
        text = f"{where}: {self.message}" if where else self.message
        return f"profile {self.profile!r}: {text}" if self.profile is not None else text

    def as_dict(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "line": self.line,
            "key": self.key,
            "message": self.message,
            "profile": self.profile,
        }


@dataclass(slots=True)
class CheckReport:
    """Errors (a supervisor would refuse or a profile would not load) and warnings."""

    errors: list[Finding] = field(default_factory=list)
    warnings: list[Finding] = field(default_factory=list)
    profiles: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.errors

    def as_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "profiles": list(self.profiles),
            "errors": [f.as_dict() for f in self.errors],
            "warnings": [f.as_dict() for f in self.warnings],
        }


def _from(exc: ConfigError) -> Finding:
    return Finding(exc.reason, exc.file, exc.line, exc.key)


def check_config(path: Path) -> CheckReport:
    """Validate ``path`` and everything it serves."""
    report = CheckReport()
    try:
        config = load_supervisor_config(path)
    except ConfigError as exc:
        report.errors.append(_from(exc))
        return report
    homes = config.homes()
    report.profiles = sorted(homes)
    _check_supervisor(config, path, set(homes), report)
    for name, home in homes.items():
        _check_home(name, home, report)
    return report


def _check_supervisor(
    config: SupervisorConfig, path: Path, served: set[str], report: CheckReport
) -> None:
    data = path.read_bytes()
    for index, route in enumerate(config.routes):
        if route.profile not in served:
            report.errors.append(
                Finding(
                    f"route to profile {route.profile!r}, which is not served",
                    str(path),
                    line_of(data, ("routes", index, "profile")),
                    f"routes.{index}.profile",
                )
            )
    default = config.default_profile
    if default is not None and default not in served:
        finding = Finding(
            f"profile {default!r} is not served",
            str(path),
            line_of(data, ("default_profile",)),
            "default_profile",
        )
        # Implicit "default" that does not exist only means: no default route.
        (report.errors if config.default_is_explicit else report.warnings).append(finding)
    folder = (config.base_dir / config.profiles_dir).resolve()
    if config.profiles is None and not folder.is_dir():
        report.errors.append(
            Finding(
                f"no such folder: {folder}",
                str(path),
                line_of(data, ("profiles_dir",)),
                "profiles_dir",
            )
        )
    elif not served:
        report.warnings.append(Finding("serves no profile home", str(path), None, "profiles_dir"))
    if config.cluster is not None and config.cluster.unauthenticated:
        report.warnings.append(
            Finding(
                f"Redis at {config.cluster.safe_url} is used without credentials"
                " (docs/cluster.md#authentication)",
                str(path),
                line_of(data, ("cluster", "allow_unauthenticated")),
                "cluster.allow_unauthenticated",
            )
        )


def _check_home(name: str, home: Path, report: CheckReport) -> None:
    config_file = home / "config.yaml"
    if not home.is_dir():
        report.errors.append(Finding("home does not exist", str(home), profile=name))
        return
    profile = Profile(name, home)
    result = profile.reload()
    found = len(report.errors)
    _check_rules(name, config_file, report)
    rules = [f.message for f in report.errors[found:]]
    if result.error is not None and not any(m in result.error for m in rules):
        report.errors.insert(found, Finding(result.error, profile=name))  # (a rule's: once)
    elif result.error is None:
        for warning in profile.state.warnings:
            report.warnings.append(Finding(warning, profile=name))


def _check_rules(name: str, config_file: Path, report: CheckReport) -> None:
    # Each rule on its own, with its line: one bad rule must not hide behind another.
    try:
        # A FIFO or a device (config.yaml -> /dev/zero) is never opened: the load said so.
        if not config_file.is_file() or config_file.stat().st_size > MAX_CONFIG_BYTES:
            return
        data = config_file.read_bytes()
        doc = load_yaml_bytes(data, file=config_file) if data.strip() else None
    except (OSError, ConfigError):
        return  # already reported by the profile's own load
    for keys in _RULE_KEYS:
        node: Any = doc
        for key in keys:
            node = node.get(key) if isinstance(node, dict) else None
        if not isinstance(node, list):
            continue
        for index, rule in enumerate(node):
            if isinstance(rule, dict) and keys == ("command_allowlist",):
                rule = rule.get("rule")  # a grant's rule (docs/allowlist.md#grants)
            if not isinstance(rule, str):
                continue  # a non-string entry is a schema error, reported above
            try:
                parse_rule(rule)
            except RuleSyntaxError as exc:
                report.errors.append(
                    Finding(
                        str(exc),
                        str(config_file),
                        line_of(data, (*keys, index)),
                        ".".join((*keys, str(index))),
                        profile=name,
                    )
                )
