"""``POST /v1/policy/diff``: a proposed config.yaml against a profile's recorded decisions (docs/allowlist.md#policy-diff).

The same replay as ``multiplex policy diff``: the body carries the proposed
file's text (the caller's file is not on the gateway's machine), which is
written to a private temporary folder for the replay and removed after it. A
proposed file that does not load answers 422 with the one-line error, naming
the key in ``proposed`` (409 when the profile's own file does not load now);
nothing is written to the profile and nothing runs.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path
from typing import Any

from fastapi import APIRouter, HTTPException

from multiplex._errors import ConfigError
from multiplex.approval import DecisionFilter, read_decisions
from multiplex.gateway.api._models import PolicyDiffIn, PolicyDiffOut
from multiplex.gateway.http._auth import Caller
from multiplex.gateway.http._http import ERRORS, GatewayDep, no_profile
from multiplex.supervision import SupervisorConfig, policy_diff

__all__ = ["router"]

router = APIRouter()

_ANSWERS: dict[int | str, dict[str, Any]] = {
    **ERRORS,
    409: {"description": "The profile's own config.yaml does not load now."},
    422: {"description": "The body, or the proposed config.yaml, does not validate."},
}


def _replay(name: str, home: Path, body: PolicyDiffIn, config: SupervisorConfig) -> dict[str, Any]:
    try:
        rows = read_decisions(
            {name: home}, keep=DecisionFilter(since=body.since), limit=sys.maxsize
        )
    except OSError as exc:  # never replayed as an empty history
        raise HTTPException(
            500, f"cannot read logs/decisions.jsonl: {exc.strerror or exc}"
        ) from None
    with tempfile.TemporaryDirectory(prefix="multiplex-policy-") as folder:
        proposed = Path(folder) / "config.yaml"
        proposed.write_text(body.proposed, encoding="utf-8")
        try:
            changes = policy_diff(name, home, proposed, rows, config)
        except ConfigError as exc:
            if str(proposed) not in str(exc):  # the home's own config.yaml does not load now
                raise HTTPException(409, str(exc)) from None
            raise HTTPException(422, str(exc).replace(str(proposed), "proposed")) from None
    return {"changes": [change.as_dict() for change in changes], "records": len(rows)}


@router.post("/v1/policy/diff", response_model=PolicyDiffOut, responses=_ANSWERS)
async def diff_policy(body: PolicyDiffIn, caller: Caller, gw: GatewayDep) -> dict[str, Any]:
    """Every recorded command of ``profile`` whose verdict the proposed config.yaml would change.

    ``since`` (epoch seconds) keeps only the records at or after it; ``records``
    is how many were replayed. Commands are the records' own, redacted as they are.
    """
    profile = gw.sup.profiles.get(body.profile)
    if profile is None or not caller.sees(body.profile):
        raise no_profile(caller, body.profile)
    return await asyncio.to_thread(_replay, body.profile, profile.home, body, gw.sup.config)
