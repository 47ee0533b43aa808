"""Parse a profile's ``.env`` without touching ``os.environ`` (docs/configuration.md#profile-home)."""

from __future__ import annotations

import re
from pathlib import Path

from multiplex._errors import ProfileConfigError

__all__ = ["parse_dotenv", "read_dotenv"]

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*")
_COMMENT = re.compile(r"\s+#")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\", "$": "$"}
MAX_DOTENV_BYTES = 1024 * 1024


def _unescape_double(value: str) -> str:
    out: list[str] = []
    chars = iter(value)
    for ch in chars:
        if ch == "\\":
            nxt = next(chars, "\\")
            out.append(_ESCAPES.get(nxt, "\\" + nxt))
        else:
            out.append(ch)
    return "".join(out)


def parse_dotenv(text: str, *, file: Path | str = ".env") -> dict[str, str]:
    """Return the variables a ``.env`` text defines.

    Supports ``KEY=value``, ``export KEY=value``, single quotes (literal), double
    quotes (``\\n``-style escapes, may span lines) and ``#`` comments after
    unquoted values. Variables are never expanded: a value is what is written.
    A line that is not an assignment is an error naming the file and line.
    """
    result: dict[str, str] = {}
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        lineno = i + 1
        raw = lines[i].strip()
        i += 1
        if not raw or raw.startswith("#"):
            continue
        if raw.startswith("export "):
            raw = raw[len("export ") :].lstrip()
        name, sep, rest = raw.partition("=")
        name = name.strip()
        if not sep or not _NAME.fullmatch(name):
            # Never the text of the line: it may be the body of a pasted key.
            raise ProfileConfigError(
                "expected KEY=value (a multi-line value must be quoted)", file=file, line=lineno
            )
        rest = rest.strip()
        if rest[:1] in ("'", '"'):
            quote = rest[0]
            body = rest[1:]
            # A double-quoted value may continue over several lines.
            while not _unescaped_quote_positions(body, quote) and i < len(lines):
                body += "\n" + lines[i]
                i += 1
            ends = _unescaped_quote_positions(body, quote)
            if not ends:
                raise ProfileConfigError(
                    f"unterminated {quote} quote", file=file, key=name, line=lineno
                )
            value = body[: ends[0]]
            result[name] = _unescape_double(value) if quote == '"' else value
        else:
            # A comment after an unquoted value (most lines have none: no split).
            result[name] = _COMMENT.split(rest, maxsplit=1)[0].strip() if "#" in rest else rest
    return result


def _unescaped_quote_positions(body: str, quote: str) -> list[int]:
    positions: list[int] = []
    escaped = False
    for idx, ch in enumerate(body):
        if quote == '"' and ch == "\\" and not escaped:
            escaped = True
            continue
        if ch == quote and not escaped:
            positions.append(idx)
        escaped = False
    return positions


def read_dotenv(path: Path) -> dict[str, str]:
    """Read and parse ``path``; a missing file is an empty mapping."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise ProfileConfigError(f"cannot read: {exc.strerror}", file=path) from None
    if len(data) > MAX_DOTENV_BYTES:
        raise ProfileConfigError("file is larger than 1 MiB", file=path)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ProfileConfigError("not valid UTF-8", file=path) from None
    return parse_dotenv(text, file=path)
