"""The supervisor: many profile homes in one process (docs/design.md, docs/configuration.md#supervisor-config-multiplexyaml, docs/multiplexing.md, docs/design.md#the-python-api).

:class:`Supervisor` builds the served profiles' state, routes and binds turns,
watches the homes and closes down; it mixes in :class:`ServedProfiles`
(``_served.py``: lookup, views, secrets) and :class:`GatedExecution`
(``_execution.py``: the gate, commands and code cells).
"""

from __future__ import annotations

import contextlib
import gc
import logging
import threading
import time
import weakref
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Literal

from multiplex._errors import ConfigError
from multiplex._metrics import Metrics
from multiplex.approval import Gate
from multiplex.execution import ProcessTracker, sandbox_of
from multiplex.execution.egress import default_hub
from multiplex.execution.kernels import KernelPool
from multiplex.profiles import Profile
from multiplex.redaction import KnownValues
from multiplex.scopes import (
    ContextKind,
    ProfileScope,
    ProfileView,
    install_strict_hook,
    new_scope,
    peek_scope,
    set_process_scope,
)
from multiplex.supervision._config import SupervisorConfig, config_path_from, load_supervisor_config
from multiplex.supervision._execution import GatedExecution
from multiplex.supervision._grant_timers import GrantTimers
from multiplex.supervision._reconfigure import ConfigReload, reload_supervisor_config
from multiplex.supervision._routing import Router
from multiplex.supervision._served import ServedProfiles
from multiplex.supervision._turn import Turn, draw_turn_id, take_turn_id
from multiplex.watching import SUPERVISOR_KEY, ConfigWatcher

__all__ = ["Supervisor"]

log = logging.getLogger("multiplex.supervisor")
Mode = Literal["multiplex", "standalone"]
# A context named by its text or its member, found without Enum's slow call path.
_KINDS: dict[str, ContextKind] = {kind.value: kind for kind in ContextKind}


@contextlib.contextmanager
def _collector_held() -> Iterator[None]:
    """No automatic cyclic collection while many homes load (docs/operations.md#capacity).

    What a load makes stays alive, and each automatic full collection on the way
    walks all of it again: about half the time of loading 10,000 homes. After
    the load, what it made is moved to the oldest generation in one step
    (freeze, unfreeze: no object is visited), where it would have ended anyway.
    """
    if not gc.isenabled():
        yield  # the application holds it off itself
        return
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        gc.unfreeze()
        gc.enable()


class Supervisor(ServedProfiles, GatedExecution):
    """Hosts profile homes, routes turns to them and binds each turn's scope.

    Build one with :meth:`from_config` (multiplex mode) or :meth:`standalone`
    (one profile, bound for the whole process). A profile whose config is broken
    is still listed, with its error, but is not routable until fixed.
    """

    def __init__(
        self,
        profiles: Mapping[str, Profile],
        *,
        config: SupervisorConfig | None = None,
        mode: Mode = "multiplex",
        strict: bool = False,
        export_metrics: bool = True,
    ) -> None:
        self.config = config or SupervisorConfig()
        self.mode: Mode = mode
        self.strict = strict
        # False: nothing will scrape /metrics (a one-shot CLI command); nothing is counted.
        self.metrics = Metrics(exported=export_metrics)
        self._grant_timers = GrantTimers(self.metrics)
        self._profiles = dict(profiles)
        self._views: dict[str, ProfileView] = {}
        self._heads: dict[str, tuple[object, ...]] = {}
        self._built_from: dict[str, object] = {}  # the state each view was built from
        self._profiles_root: Path | None = None
        self._served_last = None
        self._secrets_lock = threading.Lock()
        self._all_secrets: KnownValues | None = None
        self._turn_end_hooks: list[Callable[[ProfileScope], None]] = []
        self._close_hooks: list[Callable[[], None]] = []
        self._watcher: ConfigWatcher | None = None
        self._reconfig_lock = threading.Lock()
        self._profiles_hooks: list[Callable[[list[Profile], list[Profile]], None]] = []
        self._config_hooks: list[Callable[[ConfigReload], None]] = []
        self.config_error: str | None = None  # multiplex.yaml's last error, if it is broken
        self.boot_config = self.config  # what RESTART_ONLY keys are compared with
        self.restart_required: tuple[str, ...] = ()  # changed keys waiting for a restart
        self._retired: weakref.WeakSet[Profile] = weakref.WeakSet()
        self.started_at = time.time()
        self.processes = ProcessTracker()
        self._known_secrets_fn = self.known_secrets  # one bound method, not one per turn
        self.gate = Gate(
            metrics=self.metrics,
            current_view=self.view,
            known_secrets=self.known_secrets,
            served_homes=self.served_homes,
        )
        # docs/approvals.md#what-a-prompt-shows: a prompt names the sandbox it would run in.
        self.gate.sandbox_of = lambda backend, setting: sandbox_of(backend, setting)[0]
        # A turn's end withdraws its waits; none can exist before the first pending
        # table, so a process that never asked ends its turns without the call.
        self.gate.when_waiting(lambda: self._turn_end_hooks.append(self.gate.cancel_turn))
        self.kernels = KernelPool(
            metrics=self.metrics,
            dispatch=self._kernel_command,
            max_kernels=self.config.code_execution.max_kernels,
            hidden=lambda: self.hidden_paths,
        )
        for profile in self._profiles.values():
            profile.on_reload(self._after_reload)
            profile.reload()  # the listener above builds its view
        self.router = Router(self.config.routes, self._default_profile())
        self._check_routes()
        if strict:
            install_strict_hook()

    # -- construction ----------------------------------------------------------
    @classmethod
    def from_config(
        cls, path: str | Path | None = None, *, strict: bool = False, export_metrics: bool = True
    ) -> Supervisor:
        """Multiplex mode from ``multiplex.yaml`` (``--config``/``MULTIPLEX_CONFIG``)."""
        config = load_supervisor_config(config_path_from(path))
        with _collector_held():
            profiles = {
                name: Profile(name, home, resolved=resolved)
                for name, (home, resolved) in config.found_homes().items()
            }
            return cls(
                profiles,
                config=config,
                mode="multiplex",
                strict=strict,
                export_metrics=export_metrics,
            )

    @classmethod
    def standalone(
        cls,
        home: str | Path,
        *,
        name: str | None = None,
        config: SupervisorConfig | None = None,
        strict: bool = False,
        context: str = "interactive",
        export_metrics: bool = True,
    ) -> Supervisor:
        """Serve one profile with its scope bound for the whole process (docs/configuration.md#supervisor-config-multiplexyaml)."""
        path = Path(home).resolve()
        profile = Profile(name or path.name, path)
        base = config or SupervisorConfig()
        config = base.model_copy(update={"routes": (), "default_profile": profile.name})
        sup = cls(
            {profile.name: profile},
            config=config,
            mode="standalone",
            strict=strict,
            export_metrics=export_metrics,
        )
        if profile.loaded:
            set_process_scope(sup._scope_for(profile.name, "standalone", context, None))
        return sup

    def _default_profile(self) -> str | None:
        default = self.config.default_profile
        if default is None or default in self._profiles:
            return default
        if self.config.default_is_explicit:
            raise ConfigError(
                f"profile {default!r} is not served", file=self.config.source, key="default_profile"
            )
        return None

    def _check_routes(self) -> None:
        # docs/configuration.md#supervisor-config-multiplexyaml: a route to an unserved profile is an error at load, never a
        # silent fallback to the default profile.
        for index, route in enumerate(self.config.routes):
            if route.profile not in self._profiles:
                raise ConfigError(
                    f"route to profile {route.profile!r}, which is not served",
                    file=self.config.source,
                    key=f"routes.{index}.profile",
                )

    # -- routing and turns -----------------------------------------------------
    def route(
        self,
        platform: str | None = None,
        user_id: str | int | None = None,
        chat_id: str | int | None = None,
        thread_id: str | int | None = None,
        *,
        fallback: bool = True,
    ) -> str:
        """The profile a turn from this origin goes to (most specific route wins);
        with ``fallback`` False no match is a ``RoutingError``, never ``default_profile``."""
        return self.router.route(platform, user_id, chat_id, thread_id, fallback=fallback)

    def turn(
        self,
        profile: str | None = None,
        session: str = "default",
        context: str | ContextKind = ContextKind.API,
        *,
        parent: ProfileScope | None = None,
    ) -> Turn:
        """Bind a turn's scope for a ``with`` / ``async with`` block.

        ``profile=None`` goes to ``default_profile`` (refused when it is null).
        Inside another turn, the new one is a delegated child of it.
        """
        name = profile if profile is not None else self.router.route()
        kind = _KINDS.get(context) or ContextKind(context)
        return Turn(self, name, session, kind, parent)

    def _scope_for(
        self, name: str, session: str, context: str | ContextKind, parent: ProfileScope | None
    ) -> ProfileScope:
        head = self._heads.get(name)
        if head is None:
            self.view(name)  # raises the right RoutingError
            head = self._heads[name]
        if context.__class__ is not ContextKind:
            context = _KINDS.get(context) or ContextKind(context)
        try:
            turn_id = take_turn_id()  # random: a global counter would leak other profiles' activity
        except IndexError:
            turn_id = draw_turn_id()
        # One tuple concatenation (unpacking builds a list first).
        return new_scope(
            head  # noqa: RUF005
            + (
                session,
                turn_id,
                context,
                parent if parent is not None else peek_scope(),
            )
        )

    def on_turn_end(self, hook: Callable[[ProfileScope], None]) -> None:
        """Call ``hook(scope)`` whenever a turn ends (cancels its pending waits)."""
        self._turn_end_hooks.append(hook)

    def _turn_ended(self, scope: ProfileScope) -> None:
        # What a turn's end calls (Turn.__exit__ walks the same list itself).
        for hook in self._turn_end_hooks:
            hook(scope)

    # -- lifecycle -------------------------------------------------------------
    def start(self) -> Supervisor:
        """Start watching every home's files (docs/configuration.md#supervisor-config-multiplexyaml ``watch``)."""
        if self._watcher is None:
            watch = self.config.watch
            watcher = ConfigWatcher(
                self._on_file_change, mode=watch.mode, debounce_ms=watch.debounce_ms
            )
            watcher.watch_many({name: p.home for name, p in self._profiles.items()})
            if self.mode == "multiplex" and self.config.source is not None:
                listed = self.config.profiles is not None  # an explicit list: no folder scan
                folder = None if listed else self.config.base_dir / self.config.profiles_dir
                watcher.watch_supervisor(self.config.source, folder)
            watcher.start()
            self._watcher = watcher
            # An edit made between the initial load and the watcher's start
            # produced no event: one pass catches it (unchanged files are no-ops).
            for profile in self._profiles.values():
                profile.reload()
        return self

    @property
    def watcher(self) -> ConfigWatcher | None:
        return self._watcher

    def _on_file_change(self, name: str) -> None:
        if name == SUPERVISOR_KEY:
            waiting = bool(self.reload_config().waiting)
        else:
            profile = self._profiles.get(name)
            waiting = profile is not None and profile.reload().result == "waiting"
        watcher = self._watcher
        if waiting and watcher is not None:
            watcher.again(name)  # a file still being written: read it once it is whole

    # -- live reconfiguration (docs/operations.md#live-reconfiguration) ----------
    def reload_config(self) -> ConfigReload:
        """Re-read ``multiplex.yaml``: serve new homes, drain and retire removed ones,
        replace routes and ``default_profile`` at once. An invalid file changes
        nothing and is kept in :attr:`config_error`."""
        result = reload_supervisor_config(self)
        if not result.waiting:  # a save still being written is read again: no outcome yet
            for hook in list(self._config_hooks):
                try:
                    hook(result)
                except Exception:  # a listener must not undo a reload that is done
                    log.exception("config-reload hook failed")
        return result

    def on_config_reload(self, hook: Callable[[ConfigReload], None]) -> None:
        """Call ``hook(result)`` after each reload of ``multiplex.yaml`` that applied it or
        refused it (:attr:`config_error` says why), from the thread that reloaded."""
        self._config_hooks.append(hook)

    def on_profiles_changed(self, hook: Callable[[list[Profile], list[Profile]], None]) -> None:
        """Call ``hook(added, removed)`` after a reload of ``multiplex.yaml`` changed the homes."""
        self._profiles_hooks.append(hook)

    def _serve(
        self, profiles: dict[str, Profile], config: SupervisorConfig, router: Router
    ) -> None:
        self._profiles = profiles  # a new dict: readers of the old one are undisturbed
        self.config = config
        self.router = router
        self._profiles_root = None
        # The limits that apply live (docs/operations.md#live-reconfiguration).
        self.kernels.max_kernels = config.code_execution.max_kernels
        if self._watcher is not None:
            self._watcher.set_debounce(config.watch.debounce_ms)

    # -- closing ---------------------------------------------------------------
    def on_close(self, hook: Callable[[], None]) -> None:
        self._close_hooks.append(hook)

    def close(self) -> None:
        """Stop the watcher, close hooks and any command still running; idempotent."""
        for hook in reversed(self._close_hooks):
            try:
                hook()
            except Exception:  # one failing hook must not skip the others
                log.exception("close hook failed")
        self._close_hooks.clear()
        if self._watcher is not None:
            self._watcher.stop()
            self._watcher = None
        self.kernels.close()
        self.kill_running()
        hub = default_hub()  # docs/execution.md#egress: the homes' namespaces end with it
        for profile in self._profiles.values():
            hub.forget(profile.home)

    def __enter__(self) -> Supervisor:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Supervisor(mode={self.mode!r}, profiles={sorted(self._profiles)!r})"
