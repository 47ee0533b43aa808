"""Kernels as a per-profile surface of the isolation audit (docs/audit.md, docs/kernels.md#isolation)."""

from __future__ import annotations

from multiplex.execution.kernels._slots import KERNELS_KEY, KernelTable
from multiplex.scopes import register_surface, resource_of

__all__: list[str] = []


def _render(table: KernelTable | None) -> list[str]:
    return [] if table is None else table.labels()


register_surface(
    "kernels",
    resource_of(KERNELS_KEY),
    render=_render,
    description="session kernels (owners with a live kernel)",
    owns=(KERNELS_KEY,),
)
