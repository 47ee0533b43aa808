"""How the CLI prints: JSON on stdout for ``--json``, one-line errors on stderr."""

from __future__ import annotations

import json
import sys
from typing import Any

__all__ = ["SCHEMA_VERSION", "emit_json", "versioned"]

# Carried by every JSON object the CLI prints, and by each row of a printed list
# (docs/cli.md#json-outputs); bumped when a field changes meaning or goes away,
# never for an added field.
SCHEMA_VERSION = 1


def versioned(data: Any) -> Any:
    """``data`` with ``schema_version`` first in an object and in each object of a list."""
    if isinstance(data, dict):
        return {"schema_version": SCHEMA_VERSION, **data}
    if isinstance(data, list):
        return [versioned(row) if isinstance(row, dict) else row for row in data]
    return data


def emit_json(data: Any) -> None:
    """Print JSON on stdout, versioned (plain print: rich would wrap long lines)."""
    sys.stdout.write(json.dumps(versioned(data), indent=2, sort_keys=False) + "\n")
