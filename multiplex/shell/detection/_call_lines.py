"""The command lines inline code builds for a call that starts a program
(docs/security.md#code-carriers, "inline code").

``os.system('rm -rf /')`` hands a shell a string literal the checks read as a line. Code
can also give the program and its arguments apart (``spawnSync('rm', ['-rf', '/'])``,
``exec("rm", "-rf", "/")``, ``System.cmd("rm", ["-rf", "/"])``, ``new
Deno.Command("rm", {args: ["-rf", "/"]})``, ``(run-program "/bin/rm" (list "-rf"
"/"))``), glue the line from pieces (``'r' + 'm -rf /'``), decode it (``b64decode('…')``)
or hand it to code run again (``exec('os.system("rm -rf /")')``). Each such call's
literals joined make the line it runs, checked as any other: hardline inside any
language. Bounded: at most 32 calls a payload, 400 characters of arguments each, one
level of nested code. A pure leaf: stdlib and the literal reader.
"""

from __future__ import annotations

import base64
import binascii
import re

from multiplex.shell.detection.paths._writes import code_literals

__all__ = ["call_lines"]

# A call that starts a program, in each language's spelling; its arguments follow.
_CALL = re.compile(
    r"(?:system|exec\w{0,8}|spawn\w{0,8}|popen|Popen|check_output|check_call|\brun\b|\bcall\b"
    r"|\bcmd|Command|run-program|proc_open|shell_exec|passthru|os:cmd|Process\.start)"
)
# Two literals glued by an operator: 'r' + 'm -rf /' (+, perl's and php's ., lua's ..).
_GLUED = re.compile(r"""(['"])\s{0,8}(?:\+|\.\.?|<>)\s{0,8}\1""")
_BASE64 = re.compile(r"^[A-Za-z0-9+/]{8,}={0,2}$")
_DECODERS = ("b64decode", "atob", "base64", "decode64", "Base64")
_MAX_CALLS = 32
_REACH = 400


def _arguments(payload: str, start: int) -> str:
    """The text of a call's arguments from ``start``: up to its closing parenthesis (or
    the end of the statement), at most ``_REACH`` characters."""
    depth = 0
    end = min(len(payload), start + _REACH)
    for k in range(start, end):
        ch = payload[k]
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth < 0:
                return payload[start:k]
        elif depth == 0 and ch in ";\n":
            return payload[start:k]
    return payload[start:end]


def _decoded(literal: str) -> str | None:
    if not _BASE64.match(literal):
        return None
    try:
        text = base64.b64decode(literal, validate=True).decode("ascii")
    except (binascii.Error, ValueError):
        return None
    return text if text.isprintable() else None


def call_lines(payload: str, nested: bool = True) -> list[str]:
    """The lines the calls of ``payload`` that start a program build from their literals."""
    code = _GLUED.sub("", payload) if "+" in payload or "." in payload else payload
    lines: list[str] = []
    for count, match in enumerate(_CALL.finditer(code)):
        if count == _MAX_CALLS:
            break
        words = code_literals(_arguments(code, match.end()))
        if len(words) > 1:
            lines.append(" ".join(words))
    literals = code_literals(code)
    if code is not payload:
        lines += literals  # 'r' + 'm -rf /' glued: now one literal
    if any(d in payload for d in _DECODERS):
        lines += [text for text in map(_decoded, literals) if text]
    if nested:  # exec('import os; os.system("rm -rf /")'): code in a literal, run again
        for literal in literals:
            if _CALL.search(literal) and ("'" in literal or '"' in literal):
                inner = literal.replace('\\"', '"').replace("\\'", "'")
                lines += code_literals(inner) + call_lines(inner, nested=False)
    return lines
