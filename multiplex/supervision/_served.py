"""The supervisor's served profiles: lookup, views and secrets (docs/multiplexing.md, docs/design.md#the-python-api).

:class:`ServedProfiles` is the half of :class:`~multiplex.supervision.Supervisor`
that knows which homes it serves: a profile by name (with a did-you-mean), the
view a turn binds at the profile's current epoch (rebuilt when a reload changed
its files), the union of every home's secrets, and adopting or retiring a home
(docs/operations.md#live-reconfiguration). The Supervisor's ``__init__`` sets
the state declared here; turns, the gate and the lifecycle stay in
``_supervisor.py``.
"""

from __future__ import annotations

import difflib
import threading
import time
import weakref
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING

from multiplex._errors import RoutingError
from multiplex._metrics import Metrics
from multiplex.approval import Gate
from multiplex.execution.egress import default_hub
from multiplex.profiles import AllowlistStore, Profile, ReloadResult
from multiplex.redaction import KnownValues
from multiplex.scopes import ProfileView, build_view, scope_head
from multiplex.supervision._config import SupervisorConfig
from multiplex.supervision._grant_timers import GrantTimers
from multiplex.supervision._reconfigure import RETIRED
from multiplex.watching import ConfigWatcher

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

__all__ = ["ServedProfiles"]


class ServedProfiles:
    """The homes a supervisor serves and each one's current view (mixed into the Supervisor)."""

    config: SupervisorConfig
    mode: str
    metrics: Metrics
    gate: Gate
    _watcher: ConfigWatcher | None
    _profiles: Mapping[str, Profile]
    _views: dict[str, ProfileView]
    # Each view's scope head (the fields every turn of its epoch shares), built with it.
    _heads: dict[str, tuple[object, ...]]
    strict: bool
    _known_secrets_fn: Callable[[], KnownValues]
    _built_from: dict[str, object]  # the state each view was built from
    _profiles_root: Path | None
    # The last served_homes() answer and the dict and folder it was built from.
    _served_last: tuple[Mapping[str, Profile], Path | None, tuple[tuple[str, Path], ...]] | None
    _secrets_lock: threading.Lock
    _all_secrets: KnownValues | None
    _retired: weakref.WeakSet[Profile]
    _grant_timers: GrantTimers

    @property
    def profiles(self) -> Mapping[str, Profile]:
        """Served profiles by name (including broken ones, with their error)."""
        return MappingProxyType(self._profiles)

    def profile(self, name: str) -> Profile:
        try:
            return self._profiles[name]
        except KeyError:
            close = difflib.get_close_matches(name, list(self._profiles), n=3)
            hint = f" (did you mean {' or '.join(map(repr, close))}?)" if close else ""
            raise RoutingError(f"no profile named {name!r} is served{hint}") from None

    def served_homes(self) -> tuple[tuple[str, Path], ...]:
        """Every served profile's name and home, and (multiplex mode) the profiles folder.

        The gate blocks a command of one profile that touches another's home
        (docs/security.md#another-profiles-home); the folder is listed under the name "".
        """
        # The gate asks on every decision: the tuple is built once per set of homes (a
        # reload serves a new dict), so that it is the same object until they change.
        profiles, root = self._profiles, self._profiles_root
        last = self._served_last
        if last is not None and last[0] is profiles and last[1] is root:
            return last[2]
        homes = tuple((name, p.home) for name, p in profiles.items())
        # One profile of a multiplex.yaml served alone (``multiplex hook -p``, ``mcp -p``,
        # ``exec -p``): the config's other homes are still another profile's.
        alone = self.mode == "standalone" and self.config.source is not None
        if self.mode == "multiplex" or alone:
            if root is None:  # resolved once
                root = self._profiles_root = (
                    self.config.base_dir / self.config.profiles_dir
                ).resolve()
            if alone:
                homes = (*homes, *self._neighbours(set(profiles)))
            homes = (*homes, ("", root))
        self._served_last = (profiles, root, homes)
        return homes

    def _neighbours(self, served: set[str]) -> tuple[tuple[str, Path], ...]:
        """The homes ``multiplex.yaml`` names besides the ones served (none if unreadable)."""
        try:
            found = self.config.found_homes()
        except OSError:
            return ()
        return tuple((name, home) for name, (home, _) in found.items() if name not in served)

    def view(self, name: str) -> ProfileView:
        """The resolved settings of a routable profile at its current epoch."""
        profile = self.profile(name)
        view = self._views.get(name)
        if view is None or not profile.loaded:
            raise RoutingError(f"profile {name!r} is not routable: {profile.error or 'not loaded'}")
        return view

    def allowlist(self, name: str) -> AllowlistStore:
        """That profile's live allowlist store."""
        self.view(name)
        return self._profiles[name].allowlist

    def reload(self, name: str) -> ReloadResult:
        """Re-read one profile's files now (the watcher calls this too)."""
        return self.profile(name).reload()

    def _after_reload(self, profile: Profile, result: ReloadResult) -> None:
        self.metrics.reloads.labels(profile.name, result.result).inc()
        if profile in self._retired:
            return  # removed from multiplex.yaml: not served any more
        if profile.loaded:
            self._grant_timers.watch(profile)  # once per home (docs/allowlist.md#when-a-grant-ends)
            old = self._views.get(profile.name)
            state = profile.state
            if old is not None and self._built_from.get(profile.name) is state:
                return  # a touch or a re-save: nothing to rebuild (thousands at start)
            with self._secrets_lock:
                view = self._views[profile.name] = build_view(profile)
                self._heads[profile.name] = scope_head(
                    view, profile, self.strict, self._known_secrets_fn
                )
                self._built_from[profile.name] = state
                self._all_secrets = None
            if result.mtime and self._revoked(old, self._views[profile.name], result):
                self.metrics.revocation_latency.observe(max(0.0, time.time() - result.mtime))

    @staticmethod
    def _revoked(old: ProfileView | None, new: ProfileView, result: ReloadResult) -> bool:
        removed = bool(result.allowlist and result.allowlist.removed)
        added_deny = old is not None and bool(set(new.approvals.deny) - set(old.approvals.deny))
        return removed or added_deny

    def known_secrets(self) -> KnownValues:
        """Every served profile's known secret values (masked in any output)."""
        union = self._all_secrets  # one read: a reload replaces it whole, under the lock
        if union is not None:
            return union
        with self._secrets_lock:
            if self._all_secrets is None:
                union = KnownValues()
                for view in self._views.values():
                    union = union.union(view.known_secrets)
                self._all_secrets = union
            return self._all_secrets

    # -- adopting and retiring a home (docs/operations.md#live-reconfiguration) --
    def _adopt(self, profile: Profile) -> None:
        profile.on_reload(self._after_reload)
        self._after_reload(profile, profile.reload())
        if self._watcher is not None:
            self._watcher.watch(profile.name, profile.home)

    def _retire(self, profile: Profile) -> None:
        """Drain a removed home: no new turns; its pending approvals end cancelled."""
        self._retired.add(profile)
        self._grant_timers.forget(profile)
        if self._watcher is not None and self._profiles.get(profile.name) is None:
            self._watcher.unwatch(profile.name)
        with self._secrets_lock:
            if self._views.get(profile.name) is not None and profile.name not in self._profiles:
                del self._views[profile.name]
                del self._heads[profile.name]
            self._all_secrets = None
        self.gate.pending(profile).cancel_where(lambda r: True, RETIRED)
        if all(p.home != profile.home for p in self._profiles.values()):
            # docs/execution.md#egress: its namespace's holder and idle listeners end now;
            # a command still running keeps its own listener until it ends.
            default_hub().forget(profile.home)
