"""A frozen copy of the redaction modules as of the Hyperscan engine's landing.

Imported only by ``tests/redaction/test_engine.py``: its pure-Python path is the
fixed reference the differential tests compare today's engine (and today's
pure-Python fallback) against, so speeding up code both paths share stays
covered. The modules are verbatim copies with only their import paths changed;
do not edit them to follow changes in ``multiplex.redaction``.
"""

from tests.redaction._reference import _engine
from tests.redaction._reference._known import KnownValues
from tests.redaction._reference._patterns import apply_patterns
from tests.redaction._reference._redactor import Redactor, redact_always

# The reference is the pure-Python path: its own engine switch stays off.
_engine._State.forced_off = True

__all__ = ["KnownValues", "Redactor", "apply_patterns", "redact_always"]
