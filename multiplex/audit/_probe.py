"""The standalone probe: what ``multiplex -p NAME audit --probe --json`` prints (docs/audit.md (b)).

It runs in a process serving ONE profile (standalone mode, the reference of
docs/configuration.md#supervisor-config-multiplexyaml), resolves every registered surface from the process-wide scope, and
runs the canary checks of its own side. It prints each surface's value
masked, plus the digest of the raw value that the audit compares: a probe
never prints a secret.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from multiplex.audit._canaries import CANARY_MANIFEST_ENV, read_manifest
from multiplex.audit._compare import digest, masker
from multiplex.audit._leaks import LeakCheck, check_profile
from multiplex.audit._plugins import load_plugins
from multiplex.audit._render import render_surfaces
from multiplex.scopes import current_scope
from multiplex.supervision import Supervisor

__all__ = ["PROBE_VERSION", "probe"]

PROBE_VERSION = 1


def probe(sup: Supervisor, name: str) -> dict[str, Any]:
    """The probe document for standalone profile ``name``.

    ``{"probe": 1, "profile", "pid", "cwd", "surfaces": {surface: masked value},
    "digests": {surface: sha256 of the raw value}, "leaks": [...], "notes": [...]}``.
    Surfaces are rendered BEFORE the canary checks run, as on the multiplexed
    side. The canary checks run only when the audit launched the probe on its
    sandbox (``MULTIPLEX_AUDIT_CANARIES`` names the canary manifest).
    """
    load_plugins()
    scope = current_scope()
    values, _ = render_surfaces(scope)
    manifest = os.environ.get(CANARY_MANIFEST_ENV)
    if manifest:
        check = check_profile(sup, name, values, read_manifest(Path(manifest)), side="standalone")
    else:
        # Run by hand on a real home: the leak checks run a command and append
        # to its decisions log, which only the audit's sandbox copy may get.
        check = LeakCheck(notes=[f"{CANARY_MANIFEST_ENV} not set: canary checks skipped"])
    mask = masker(sup.known_secrets())
    return {
        "probe": PROBE_VERSION,
        "profile": name,
        "pid": os.getpid(),
        "cwd": os.getcwd(),
        "surfaces": {k: mask(v) for k, v in values.items()},
        "digests": {k: digest(v) for k, v in values.items()},
        "leaks": [leak.as_dict() for leak in check.leaks],
        "notes": check.notes,
    }
