"""Live reconfiguration: ``multiplex.yaml`` re-read while serving (docs/operations.md#live-reconfiguration).

New homes are served, removed ones drained and retired, routes and
``default_profile`` replaced in one step; an invalid file keeps the last good
config and the error is kept in ``Supervisor.config_error``. The watcher calls
this when ``multiplex.yaml`` or the profiles folder changes; ``SIGHUP`` and
``POST /v1/admin/reload`` call it on demand.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from multiplex._errors import ConfigError
from multiplex.profiles import Profile, holds_no_document
from multiplex.profiles._settled import BeingWritten, being_written, read_settled
from multiplex.supervision._config import (
    ConfigBeingWritten,
    SupervisorConfig,
    load_supervisor_config,
)
from multiplex.supervision._routing import Router

if TYPE_CHECKING:
    from multiplex.supervision._supervisor import Supervisor

__all__ = ["RESTART_ONLY", "RETIRED", "ConfigReload", "reload_supervisor_config"]

log = logging.getLogger("multiplex.supervisor")
RETIRED = "profile removed from multiplex.yaml"


@dataclass(frozen=True, slots=True)
class ConfigReload:
    """What one reload of ``multiplex.yaml`` did (nothing at all when ``ok`` is False)."""

    ok: bool
    error: str | None
    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    profiles: int = 0
    # Keys whose new value waits for a restart; the running value stays (RESTART_ONLY).
    restart_required: tuple[str, ...] = ()
    # Files being written when read (multiplex.yaml, a new home's config.yaml): left
    # until whole, and read again then (docs/configuration.md#validation).
    waiting: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "error": self.error,
            "added": list(self.added),
            "removed": list(self.removed),
            "profiles": self.profiles,
            "restart_required": list(self.restart_required),
            "waiting": list(self.waiting),
        }


# docs/operations.md#live-reconfiguration: what a running process cannot change
# in place (a bound socket, the watcher's backend, the Redis a node has joined).
# A reload keeps the running value of each, logs it, and reports it until a restart.
RESTART_ONLY = ("gateway.host", "gateway.port", "watch.mode", "cluster")


def _value(config: SupervisorConfig, key: str) -> Any:
    node: Any = config
    for part in key.split("."):
        node = getattr(node, part)
    return node.model_dump() if hasattr(node, "model_dump") else node


def _keep_running(config: SupervisorConfig, running: SupervisorConfig) -> SupervisorConfig:
    """``config`` with the running value of every RESTART_ONLY key."""
    return config.model_copy(
        update={
            "gateway": config.gateway.model_copy(
                update={"host": running.gateway.host, "port": running.gateway.port}
            ),
            "watch": config.watch.model_copy(update={"mode": running.watch.mode}),
            "cluster": running.cluster,
        }
    )


def _validate(config: SupervisorConfig, served: set[str]) -> None:
    """The checks a fresh supervisor makes: routes and default_profile name served profiles."""
    for index, route in enumerate(config.routes):
        if route.profile not in served:
            raise ConfigError(
                f"route to profile {route.profile!r}, which is not served",
                file=config.source,
                key=f"routes.{index}.profile",
            )
    default = config.default_profile
    if default is not None and default not in served and config.default_is_explicit:
        raise ConfigError(
            f"profile {default!r} is not served", file=config.source, key="default_profile"
        )


def _whole(sup: Supervisor, homes: dict[str, Path]) -> tuple[dict[str, Path], tuple[str, ...]]:
    """``homes`` without a new one whose ``config.yaml`` is still being written, and
    those files: such a home is served once its writer is done
    (docs/configuration.md#validation)."""
    watcher = sup.watcher
    whole: dict[str, Path] = {}
    waiting: list[str] = []
    for name, home in homes.items():
        config = home / "config.yaml"
        if name in sup.profiles:
            whole[name] = home
        elif being_written(config) if watcher is None else watcher.being_written(config):
            waiting.append(str(config))
        else:
            whole[name] = home
    return whole, tuple(waiting)


def reload_supervisor_config(sup: Supervisor) -> ConfigReload:
    """Apply the current ``multiplex.yaml`` to ``sup`` all at once, or not at all."""
    source = sup.config.source
    if sup.mode != "multiplex" or source is None:
        return ConfigReload(True, None, profiles=len(sup.profiles))
    with sup._reconfig_lock:
        try:
            if _unreadable_or(Path(source), holds_no_document):
                # docs/configuration.md#validation: a save caught between its truncation and
                # its write would drop every profile: the running config stays.
                raise ConfigError(
                    "is empty (a save still being written?); the running config stays",
                    file=source,
                )
            config = load_supervisor_config(Path(source))
            homes, unwritten = _whole(sup, config.homes())
            _validate(config, set(homes))
        except (BeingWritten, ConfigBeingWritten) as exc:
            log.debug("%s", exc)
            return ConfigReload(False, None, profiles=len(sup.profiles), waiting=(str(source),))
        except ConfigError as exc:
            sup.config_error = str(exc)
            log.warning("multiplex.yaml not applied, the last good config stays: %s", exc)
            return ConfigReload(False, str(exc), profiles=len(sup.profiles))
        running = sup.config
        waiting = tuple(k for k in RESTART_ONLY if _value(config, k) != _value(sup.boot_config, k))
        config = _keep_running(config, running)
        current = dict(sup.profiles)
        removed = [
            p for n, p in current.items() if n not in homes or homes[n] != Path(p.home).resolve()
        ]
        kept = {n: p for n, p in current.items() if p not in removed}
        added = [Profile(n, h) for n, h in homes.items() if n not in kept]
        served = dict(kept)
        for profile in added:
            served[profile.name] = profile
        ordered = {n: served[n] for n in homes}  # multiplex.yaml's order
        default = config.default_profile if config.default_profile in ordered else None
        for profile in added:
            sup._adopt(profile)
        # One swap each: a turn routed now sees the old table or the new, never a mix.
        sup._serve(ordered, config, Router(config.routes, default))
        sup.restart_required = waiting
        for profile in removed:
            sup._retire(profile)
        sup.config_error = None
        result = ConfigReload(
            True,
            None,
            tuple(p.name for p in added),
            tuple(p.name for p in removed),
            len(ordered),
            waiting,
            unwritten,
        )
    for key in waiting:  # said on every reload until the restart, never applied silently
        log.warning(
            "multiplex.yaml: %s changed; it takes effect at the next restart (the running value stays)",
            key,
        )
    if added or removed:
        log.info(
            "multiplex.yaml applied: %d profiles, added %s, removed %s",
            len(ordered),
            [p.name for p in added],
            [p.name for p in removed],
        )
    for hook in list(sup._profiles_hooks):
        try:
            hook(added, removed)
        except Exception:  # a listener must not undo a reload that is done
            log.exception("profiles-changed hook failed")
    return result


def _unreadable_or(path: Path, test: Callable[[bytes], bool]) -> bool:
    """``test`` of the file's bytes; False when it cannot be read (the loader says why)."""
    try:
        return test(read_settled(path)[0])
    except BeingWritten:
        raise
    except OSError:
        return False
