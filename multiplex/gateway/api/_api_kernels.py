"""``/v1/kernels``: the live session kernels a token may see, and ending one (docs/kernels.md#over-http)."""

from __future__ import annotations

import asyncio

from fastapi import APIRouter

from multiplex.gateway.api._models import KernelOut, KernelsEnded
from multiplex.gateway.http._auth import Caller
from multiplex.gateway.http._http import ERRORS, GatewayDep, no_profile

__all__ = ["router"]

router = APIRouter()


@router.get("/v1/kernels", response_model=list[KernelOut], responses=ERRORS)
async def list_kernels(caller: Caller, gw: GatewayDep) -> list[dict[str, object]]:
    """Live kernels of the profiles this token sees: owner, pid, started, last used, memory."""
    # Memory is read from /proc for each kernel's process tree: off the event loop.
    return await asyncio.to_thread(gw.sup.kernels.kernels, caller.sees)


@router.post("/v1/kernels/{profile}/{session}/reset", response_model=KernelsEnded, responses=ERRORS)
async def reset_kernels(
    profile: str, session: str, caller: Caller, gw: GatewayDep
) -> dict[str, int]:
    """End the session's kernels (and its delegated turns'): the next cell starts fresh.

    Unlike a session reset, the session's grants and pending approvals stay.
    """
    if not caller.sees(profile) or profile not in gw.sup.profiles:
        raise no_profile(caller, profile)
    ended = await asyncio.to_thread(gw.sup.kernels.dispose_session, profile, session, "reset")
    return {"ended": ended}
