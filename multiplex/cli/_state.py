"""What the global options select: the config file, standalone mode, the gateway to talk to."""

from __future__ import annotations

import difflib
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

__all__ = ["CliState", "did_you_mean", "state_of"]


def did_you_mean(word: str, choices: list[str] | tuple[str, ...]) -> str:
    """`` (did you mean 'x'?)`` for the closest of ``choices``, or ``""``."""
    close = difflib.get_close_matches(word, list(choices), n=3, cutoff=0.6)
    if not close:
        return ""
    return " (did you mean " + " or ".join(repr(c) for c in close) + "?)"


@dataclass(slots=True)
class CliState:
    """The global options as given on the command line (before or after the subcommand)."""

    config_option: str | None = None
    profile: str | None = None
    url: str | None = None
    token: str | None = None

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
        raise RoutingError(
            f"no profile named {name!r} is served by {self.config_path}"
            + did_you_mean(name, list(homes))
        )

    def supervisor(self, profile: str | None = None, *, context: str = "interactive") -> Supervisor:
        """Standalone for ``-p NAME`` (global or the command's own), else multiplex mode.

        Only ``up`` (context ``gateway``) serves ``/metrics``; any other command's
        supervisor counts nothing and starts faster for it.
        """
        name = profile or self.profile
        exported = context == "gateway"
        if name is not None:
            config = self.config()
            return Supervisor.standalone(
                self.home_of(name),
                name=Path(name).name,
                config=config,
                context=context,
                export_metrics=exported,
            )
        return Supervisor.from_config(self.config_path, export_metrics=exported)


def state_of(ctx: typer.Context) -> CliState:
    """The global options of this invocation (set by the root callback)."""
    root = ctx.find_root()
    if not isinstance(root.obj, CliState):
        root.obj = CliState()
    return root.obj
