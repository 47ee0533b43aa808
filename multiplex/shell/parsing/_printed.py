"""What a pipeline stage writes to stdout, when the line shows it (docs/approvals.md#parsing).

``echo``/``printf`` print their words; ``cat``/``tee`` with no file pass on what they
are fed; decoders (``base64 -d``, ``xxd -r``, ``rev``) print what their input decodes
to; ``realpath``/``readlink -f`` print the path they are given, resolved, and
``eval echo`` the words echo would (so ``rm -rf $(realpath ~)`` is judged as
``rm -rf ~``). A pure leaf: stdlib and its fellow leaves.
"""

from __future__ import annotations

import base64
import binascii
import re

from multiplex.shell.parsing._argv import program_name
from multiplex.shell.parsing._variants import decode_ansi_c

__all__ = ["stdin_text_after"]

# Programs that print the path they are given (canonical): as far as the gate can tell, that path.
_PATH_PRINTERS = frozenset({"realpath", "readlink", "grealpath", "greadlink"})


def stdin_text_after(argv: tuple[str, ...], stdin: str | None) -> str | None:
    """Text a pipeline stage writes to stdout, when it is knowable from the line."""
    if not argv:
        return None
    prog = program_name(argv[0])
    args = list(argv[1:])
    if prog == "echo":
        flags = []
        while args and re.fullmatch(r"-[neE]+", args[0]):
            flags.append(args.pop(0))
        text = " ".join(args)
        return decode_ansi_c(text) if any("e" in f for f in flags) else text
    if prog == "printf":
        if not args:
            return None
        if len(args) > 1 and "%" in args[0]:
            return " ".join(args[1:])
        return decode_ansi_c(args[0])
    ops = [a for a in args if not a.startswith("-")]
    if prog in _PATH_PRINTERS and len(ops) == 1:  # $(realpath ~): that path, resolved
        return ops[0]
    if prog == "eval" and args[:1] == ["echo"]:  # $(eval echo ~): echo's words, expanded
        return " ".join(args[1:])
    if stdin is None:
        return None
    if prog in ("cat", "tee") and not [a for a in args if not a.startswith("-")]:
        return stdin
    try:
        if prog == "base64" and any(a in ("-d", "--decode", "-D") for a in args):
            return base64.b64decode("".join(stdin.split())).decode("utf-8", "replace")
        if prog == "xxd" and any("r" in a for a in args if a.startswith("-")):
            return bytes.fromhex("".join(stdin.split())).decode("utf-8", "replace")
    except (binascii.Error, ValueError):
        return None
    if prog == "rev":
        return "\n".join(line[::-1] for line in stdin.splitlines())
    return None
