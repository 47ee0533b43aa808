"""Kernels as a per-profile surface of the isolation audit (docs/audit.md, docs/kernels.md#isolation)."""

from __future__ import annotations

from multiplex.execution.kernels._slots import KERNELS_KEY, KernelTable
from multiplex.scopes import ProfileScope, register_surface

__all__: list[str] = []


def _kernels(scope: ProfileScope) -> KernelTable | None:
    found = scope.profile.get_resource(KERNELS_KEY)
    return found if isinstance(found, KernelTable) else None


def _render(table: KernelTable | None) -> list[str]:
    return [] if table is None else table.labels()


register_surface(
    "kernels",
    _kernels,
    render=_render,
    description="session kernels (owners with a live kernel)",
    owns=(KERNELS_KEY,),
)
