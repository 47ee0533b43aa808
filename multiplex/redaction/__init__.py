"""Secret redaction (``docs/redaction.md``): known values (layer 1) and secret shapes (layer 2).

A leaf: imports only the standard library and, when it loads, the ``hyperscan``
engine (without it redaction runs in pure Python).
"""

from multiplex.redaction._command import redact_command
from multiplex.redaction._known import KnownValues, encoded_forms, looks_secret_name
from multiplex.redaction._prefilter import redact_patterns
from multiplex.redaction._redactor import Redactor, redact_always

__all__ = [
    "KnownValues",
    "Redactor",
    "encoded_forms",
    "looks_secret_name",
    "redact_always",
    "redact_command",
    "redact_patterns",
]
