"""PEM private-key blocks found without stepping the regex through their bodies.

The ``private-key`` shape's regex reads a block's body one character at a time
(any character but the start of a run of five dashes, up to 64 KiB), which
Python's regex engine does at about 60 MB/s: the rest of layer 2 runs several
times faster. :func:`private_key_spans` finds the same matches with the regex
for the header and the end line only, and a substring search for the body's
end.
"""

from __future__ import annotations

import re

__all__ = ["BODY", "END", "HEAD", "private_key_spans"]

HEAD = r"-----BEGIN[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----"
# Every character up to the first "-----", at most BODY_MAX of them. Greedy, not
# possessive: what follows (an optional end line) never needs the body to give back,
# so the matches are the same, and CPython before 3.11.3 (Debian 12's 3.11.2) got a
# possessive repeat of this group wrong: it found no match where there is one.
_BODY_MAX = 65536
BODY = rf"(?:[^-]|-(?!----)){{0,{_BODY_MAX}}}"
END = r"-----END[ A-Z0-9]{0,40}-----"

_LEAD = "-----BEGIN"
_HEAD = re.compile(HEAD)
_END = re.compile(END)


def private_key_spans(text: str) -> list[tuple[int, int]]:
    """The spans of ``HEAD + BODY + (?:END)?``'s matches in ``text``, as ``finditer`` gives them."""
    spans: list[tuple[int, int]] = []
    find = text.find
    at = find(_LEAD)
    while at >= 0:
        head = _HEAD.match(text, at)
        if head is None:
            at = find(_LEAD, at + 1)
            continue
        body = head.end()
        # The body stops before a "-----" starting at most _BODY_MAX characters
        # on (one starting there stops it as the bound does), or at the end.
        stop = find("-----", body, body + _BODY_MAX + 5)
        if stop < 0:
            stop = min(body + _BODY_MAX, len(text))
        end_line = _END.match(text, stop)
        end = end_line.end() if end_line is not None else stop
        spans.append((at, end))
        at = find(_LEAD, end)
    return spans
