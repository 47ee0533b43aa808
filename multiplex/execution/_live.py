"""A command's output as it arrives, redacted line by line (docs/execution.md#live-output).

The pipes deliver bytes in any cut; :class:`LiveOutput` decodes each stream
incrementally and hands on only whole lines, redacted (a secret never reaches
the sink in two halves that each escape redaction), plus what is left at the
stream's end. A line longer than ``LINE_CAP`` is handed on in pieces.
"""

from __future__ import annotations

import codecs
import threading
from collections.abc import Callable

__all__ = ["LINE_CAP", "LiveOutput"]

LINE_CAP = 64 * 1024  # characters held back waiting for a newline


class LiveOutput:
    """Feed it ``(stream, bytes)`` (``b""`` ends a stream); it calls ``sink(stream, text)``."""

    def __init__(self, redact: Callable[[str], str], sink: Callable[[str, str], None]) -> None:
        self._redact = redact
        self._sink = sink
        self._pending: dict[str, str] = {}
        self._decoders: dict[str, codecs.IncrementalDecoder] = {}
        self._lock = threading.Lock()  # stdout and stderr are drained by two threads

    def __call__(self, stream: str, chunk: bytes) -> None:
        with self._lock:
            decoder = self._decoders.get(stream)
            if decoder is None:
                decoder = self._decoders[stream] = codecs.getincrementaldecoder("utf-8")("replace")
            text = self._pending.pop(stream, "") + decoder.decode(chunk, final=not chunk)
            if chunk:
                cut = text.rfind("\n") + 1
                if cut == 0 and len(text) > LINE_CAP:
                    cut = len(text)
                text, self._pending[stream] = text[:cut], text[cut:]
        if text:
            self._sink(stream, self._redact(text))
