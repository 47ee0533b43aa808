"""How the CLI prints: JSON on stdout for ``--json``, one-line errors on stderr."""

from __future__ import annotations

import json
import sys
from typing import Any

__all__ = ["SCHEMA_VERSION", "emit_json"]

# Carried by every JSON object the CLI prints (docs/cli.md#json-outputs); bumped
# when a field changes meaning or goes away, never for an added field.
SCHEMA_VERSION = 1


def emit_json(data: Any) -> None:
    """Print JSON on stdout (plain print: rich would wrap long lines)."""
    sys.stdout.write(json.dumps(data, indent=2, sort_keys=False) + "\n")
