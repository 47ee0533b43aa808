"""The multiplexed side: every profile's surfaces from concurrent turns (docs/audit.md (a)).

The turns of ALL profiles run at once, half on worker threads (a
``ScopedExecutor``) and half as asyncio tasks, over several rounds dispatched
in a shuffled order so profiles interleave. Each turn resolves every
registered surface, yielding between surfaces. A profile's renders must be
identical across all of its turns; a surface that differs between turns is
reported as unstable (another profile's state bled into it).
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from multiplex.audit._render import Violation, canonical, render_surface, render_surfaces
from multiplex.scopes import SURFACES, ScopedExecutor
from multiplex.supervision import Supervisor

__all__ = ["MultiplexedRenders", "resolve_concurrently"]


@dataclass(slots=True)
class MultiplexedRenders:
    """What the concurrent turns saw, per profile and surface."""

    values: dict[str, dict[str, Any]] = field(default_factory=dict)
    # (profile, surface) -> distinct canonical renders, when more than one
    unstable: dict[tuple[str, str], list[Any]] = field(default_factory=dict)
    violations: list[Violation] = field(default_factory=list)
    turns: int = 0


_Result = tuple[str, dict[str, Any], list[Violation]]


def _thread_turn(sup: Supervisor, name: str, session: str) -> _Result:
    with sup.turn(name, session=session, context="api") as scope:
        values, violations = render_surfaces(scope, yield_between=True)
    return name, values, violations


async def _task_turn(sup: Supervisor, name: str, session: str) -> _Result:
    async with sup.turn(name, session=session, context="api") as scope:
        values: dict[str, Any] = {}
        violations: list[Violation] = []
        # Render surface by surface, yielding to the loop in between so other
        # tasks' turns interleave with this one.
        for surface in SURFACES:
            values[surface.name], violation = render_surface(surface, scope)
            if violation is not None:
                violations.append(violation)
            await asyncio.sleep(0)
    return name, values, violations


async def _all_turns(
    sup: Supervisor, names: Sequence[str], rounds: int, per_round: int, workers: int, seed: int
) -> list[_Result]:
    plan = [
        (i, name, r, j)
        for r in range(rounds)
        for i, name in enumerate(names)
        for j in range(per_round)
    ]
    random.Random(seed).shuffle(plan)
    with ScopedExecutor(max_workers=workers) as executor:
        pending: list[asyncio.Future[_Result]] = []
        for i, name, r, j in plan:
            session = f"audit-r{r}-t{j}"
            if (i + j + r) % 2 == 0:
                pending.append(
                    asyncio.wrap_future(executor.submit(_thread_turn, sup, name, session))
                )
            else:
                pending.append(asyncio.ensure_future(_task_turn(sup, name, session)))
        return list(await asyncio.gather(*pending))


def resolve_concurrently(
    sup: Supervisor,
    names: Sequence[str],
    *,
    rounds: int = 3,
    per_round: int = 2,
    workers: int = 8,
    seed: int = 0,
) -> MultiplexedRenders:
    """Resolve every surface of every profile in ``names`` from concurrent turns.

    Each profile gets ``rounds * per_round`` turns (at least two, so that both
    a thread and a task turn exist for it).
    """
    per_round = max(per_round, 2)
    results = asyncio.run(_all_turns(sup, names, max(rounds, 1), per_round, workers, seed))
    out = MultiplexedRenders(turns=len(results))
    seen: dict[tuple[str, str], dict[str, Any]] = {}
    found: dict[tuple[str, str, str, str], Violation] = {}
    for name, values, violations in results:
        for v in violations:
            found.setdefault((v.profile, v.surface, v.target, v.location), v)
        first = out.values.setdefault(name, values)
        for surface, value in values.items():
            distinct = seen.setdefault(
                (name, surface), {canonical(first.get(surface)): first.get(surface)}
            )
            distinct.setdefault(canonical(value), value)
    out.violations = list(found.values())
    for key, distinct in seen.items():
        if len(distinct) > 1:
            out.unstable[key] = list(distinct.values())
    return out
