"""How the CLI prints: JSON on stdout for ``--json``, one-line errors on stderr."""

from __future__ import annotations

import json
import sys
from typing import Any

__all__ = ["emit_json"]


def emit_json(data: Any) -> None:
    """Print JSON on stdout (plain print: rich would wrap long lines)."""
    sys.stdout.write(json.dumps(data, indent=2, sort_keys=False) + "\n")
