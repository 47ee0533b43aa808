"""What the global options select: the config file and, in standalone mode, one profile."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import typer

from multiplex._errors import RoutingError
from multiplex.supervision import (
    Supervisor,
    SupervisorConfig,
    config_path_from,
    load_supervisor_config,
)

__all__ = ["CliState", "state_of"]


@dataclass(slots=True)
class CliState:
    """Global ``--config`` and ``-p`` as given on the command line."""

    config_option: str | None = None
    profile: str | None = None

    @property
    def config_path(self) -> Path:
        return config_path_from(self.config_option)

    def config(self) -> SupervisorConfig:
        # Standalone mode (-p) and single-profile commands work without a
        # multiplex.yaml as long as the default one is simply absent.
        explicit = self.config_option is not None
        return load_supervisor_config(self.config_path, missing_ok=not explicit)

    def home_of(self, name: str) -> Path:
        """The home of profile ``name`` in the config, or ``name`` itself as a path."""
        homes = self.config().homes()
        if name in homes:
            return homes[name]
        path = Path(name)
        if "/" in name and (path / "config.yaml").exists():
            return path.resolve()
        raise RoutingError(f"no profile named {name!r} is served by {self.config_path}")

    def supervisor(self, profile: str | None = None, *, context: str = "interactive") -> Supervisor:
        """Standalone for ``-p NAME`` (global or the command's own), else multiplex mode."""
        name = profile or self.profile
        if name is not None:
            config = self.config()
            return Supervisor.standalone(
                self.home_of(name), name=Path(name).name, config=config, context=context
            )
        return Supervisor.from_config(self.config_path)


def state_of(ctx: typer.Context) -> CliState:
    """The global options of this invocation (set by the root callback)."""
    obj = ctx.find_root().obj
    assert isinstance(obj, CliState)
    return obj
