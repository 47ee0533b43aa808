"""``GET /v1/kernels``: the live session kernels a token may see (docs/kernels.md#over-http)."""

from __future__ import annotations

import asyncio

from fastapi import APIRouter

from multiplex.gateway._auth import Caller
from multiplex.gateway._http import ERRORS, GatewayDep
from multiplex.gateway._models import KernelOut

__all__ = ["router"]

router = APIRouter()


@router.get("/v1/kernels", response_model=list[KernelOut], responses=ERRORS)
async def list_kernels(caller: Caller, gw: GatewayDep) -> list[dict[str, object]]:
    """Live kernels of the profiles this token sees: owner, pid, started, last used, memory."""
    # Memory is read from /proc for each kernel's process tree: off the event loop.
    return await asyncio.to_thread(gw.sup.kernels.kernels, caller.sees)
