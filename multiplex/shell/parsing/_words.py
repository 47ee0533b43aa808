"""tree-sitter bash nodes turned into the words and redirections a program receives.

Helpers of ``shell.parsing._parse`` (docs/approvals.md#parsing): quotes and escapes removed, ``$'…'``
decoded, expansions kept literally (``"$HOME"`` stays ``$HOME``). A pure leaf.
"""

from __future__ import annotations

from tree_sitter import Node

from multiplex.shell.parsing._variants import decode_ansi_c

__all__ = [
    "describe_error",
    "flatten",
    "head",
    "may_substitute",
    "redirect_parts",
    "stages",
    "text",
    "word",
]


def describe_error(root: Node, src: bytes, where: str) -> str:
    stack = [root]
    while stack:
        node = stack.pop()
        if node.is_missing:
            return f"syntax error in {where}: missing {node.type!r} at byte {node.start_byte}"
        if node.is_error:
            snippet = text(node, src)[:40]
            return f"syntax error in {where} at byte {node.start_byte}: {snippet!r}"
        stack.extend(reversed([c for c in node.children if c.has_error or c.is_missing]))
    return f"syntax error in {where}"


def flatten(node: Node, kind: str) -> list[Node]:
    """Children of a left-nested ``list``/``pipeline`` chain, in order, iteratively."""
    out: list[Node] = []
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type == kind:
            stack.extend(reversed(current.named_children))
        elif current.type != "comment":
            out.append(current)
    return out


def stages(node: Node) -> list[Node]:
    return flatten(node, "pipeline")


def head(stage: Node, src: bytes) -> tuple[tuple[str, ...], str | None]:
    """A pipeline stage's argv and here-document/here-string text (stdin tracking)."""
    redirects: list[Node] = []
    if stage.type == "redirected_statement":
        redirects.extend(stage.children_by_field_name("redirect"))
        body = stage.child_by_field_name("body")
        if body is None:
            return (), None
        stage = body
    if stage.type != "command":
        return (), None
    argv: list[str] = []
    for child in stage.named_children:
        if child.type == "command_name":
            argv.append(word(child.named_children[0], src))
        elif child.type.endswith("_redirect"):
            redirects.append(child)
        elif child.type not in ("variable_assignment", "comment"):
            argv.append(word(child, src))
    for node in redirects:
        if node.type in ("heredoc_redirect", "herestring_redirect"):
            return tuple(argv), redirect_parts(node, src, [])[1]
    return tuple(argv), None


def redirect_parts(node: Node, src: bytes, spill: list[str]) -> tuple[str, str]:
    """(op, target) of a redirect node; words the grammar wrongly folds into it go to ``spill``.

    ``2>&1`` gives ("2>", "&1"); a here-document gives ("<<", its text).
    """
    kind = node.type
    if kind == "heredoc_redirect":
        op = "<<"
        body = ""
        for child in node.children:
            if child.type in ("<<", "<<-"):
                op = child.type
            elif child.type == "heredoc_body":
                body = text(child, src)
        return (op, body)
    if kind == "herestring_redirect":
        words = node.named_children
        return ("<<<", word(words[0], src) if words else "")
    fd = ""
    op = ""
    target: str | None = None
    for child in node.children:
        if child.type == "file_descriptor":
            fd = text(child, src)
        elif not child.is_named:
            op = child.type
        elif target is None:
            target = word(child, src)
        else:
            # "rm 2>/dev/null -rf /": the grammar hangs "-rf /" on the redirect.
            spill.append(word(child, src))
    target = target or ""
    if op in (">&", "<&") and (target.isdigit() or target == "-"):
        return (fd + op[0], "&" + target)
    return (fd + op, target)


def text(node: Node, src: bytes) -> str:
    return src[node.start_byte : node.end_byte].decode("utf-8", "replace")


def may_substitute(node: Node, src: bytes) -> bool:
    raw = src[node.start_byte : node.end_byte]
    return b"$(" in raw or b"`" in raw or b"<(" in raw or b">(" in raw


def word(node: Node, src: bytes) -> str:
    """The value a program receives for one word: quotes/escapes removed, ``$x`` kept."""
    kind = node.type
    if kind == "word":
        return _unescape(text(node, src))
    if kind == "raw_string":
        return text(node, src)[1:-1]
    if kind == "ansi_c_string":
        return decode_ansi_c(text(node, src)[2:-1])
    if kind in ("string", "translated_string"):
        return _double_quoted(node, src)
    if kind == "concatenation":
        parts: list[str] = []
        pos = node.start_byte
        for child in node.children:
            if child.start_byte > pos:  # a "$" of $"…" or a gap the grammar left
                parts.append(src[pos : child.start_byte].decode("utf-8", "replace"))
            parts.append(word(child, src))
            pos = child.end_byte
        return "".join(parts)
    return text(node, src)


def _double_quoted(node: Node, src: bytes) -> str:
    start, end = node.start_byte, node.end_byte
    raw = src[start:end]
    # Skip the opening quote (and the "$" of $"…"), stop before the closing one.
    start += raw.index(b'"') + 1 if b'"' in raw else 0
    end -= 1 if raw.endswith(b'"') and end - 1 >= start else 0
    parts: list[str] = []
    pos = start
    for child in node.named_children:
        if child.type == "string_content":
            continue
        if child.start_byte > pos:
            parts.append(_dq_unescape(src[pos : child.start_byte].decode("utf-8", "replace")))
        parts.append(text(child, src))
        pos = child.end_byte
    if end > pos:
        parts.append(_dq_unescape(src[pos:end].decode("utf-8", "replace")))
    return "".join(parts)


def _unescape(text: str) -> str:
    if "\\" not in text:
        return text
    out: list[str] = []
    chars = iter(text)
    for ch in chars:
        if ch == "\\":
            nxt = next(chars, "")
            if nxt != "\n":
                out.append(nxt)
        else:
            out.append(ch)
    return "".join(out)


def _dq_unescape(text: str) -> str:
    if "\\" not in text:
        return text
    out: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text) and text[i + 1] in '$`"\\\n':
            if text[i + 1] != "\n":
                out.append(text[i + 1])
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)
