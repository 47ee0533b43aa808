"""Route a turn to a profile: most specific route wins (docs/configuration.md#supervisor-config-multiplexyaml)."""

from __future__ import annotations

from collections.abc import Iterable

from multiplex._errors import RoutingError
from multiplex.supervision._config import RouteSpec

__all__ = ["Router"]


class Router:
    """Immutable routing table over the served profiles."""

    def __init__(self, routes: Iterable[RouteSpec], default: str | None) -> None:
        # Stable sort: most specific first, file order among equals.
        self._routes = tuple(sorted(routes, key=lambda r: r.specificity, reverse=True))
        self.default = default

    @property
    def routes(self) -> tuple[RouteSpec, ...]:
        return self._routes

    def route(
        self,
        platform: str | None = None,
        user_id: str | int | None = None,
        chat_id: str | int | None = None,
        thread_id: str | int | None = None,
        *,
        fallback: bool = True,
    ) -> str:
        """The profile for a turn; raises ``RoutingError`` when nothing matches.

        No route matching goes to the default profile, unless ``fallback`` is
        False: a run over HTTP that names a ``route`` asks for that origin's
        profile, and none is a 404, never the default (docs/gateway.md#runs).
        """
        given = {
            "platform": platform,
            "user_id": None if user_id is None else str(user_id),
            "chat_id": None if chat_id is None else str(chat_id),
            "thread_id": None if thread_id is None else str(thread_id),
        }
        for route in self._routes:
            if all(
                getattr(route, field) is None or getattr(route, field) == value
                for field, value in given.items()
            ):
                return route.profile
        if not fallback:
            raise RoutingError("no route matches this origin (default_profile is not used for it)")
        if self.default is None:
            raise RoutingError("no route matches and default_profile is null: turn refused")
        return self.default
