"""One regex for many literals, shaped as a trie (used by redaction and the gate).

A flat alternation of N literals makes the regex engine try every literal at
every position; a trie turns them into one branch per distinct next character,
so the cost per position stays flat as the set grows. The standard library has
no such builder, hence this one. A pure leaf: stdlib only.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["trie_pattern"]

# Beyond this many nested branch points the trie pattern would nest groups too
# deeply for the regex compiler; such (contrived) sets use a flat alternation.
_MAX_TRIE_DEPTH = 100

_Node = dict[str, "_Node"]


def trie_pattern(literals: Iterable[str]) -> str | None:
    """One regex matching the longest literal at each position, or None if too deep.

    A trie turns N alternatives into one branch per distinct next character, so
    the cost per text position stays flat as the set grows (measured: 3000 forms,
    1 MB of log text, 0.1 s against 4 s for a flat alternation).
    """
    root: _Node = {}
    for lit in literals:
        node = root
        for ch in lit:
            node = node.setdefault(ch, {})
        node[""] = {}  # end of a literal

    def build(node: _Node, depth: int) -> str | None:
        if depth > _MAX_TRIE_DEPTH:
            return None
        alternatives = []
        for ch in sorted(k for k in node if k):
            # Follow single-child chains so a unique tail is one literal, not a
            # nest of groups: the depth counts branch points only.
            run = [ch]
            child = node[ch]
            while len(child) == 1 and "" not in child:
                (nxt,) = child
                run.append(nxt)
                child = child[nxt]
            tail = build(child, depth + 1)
            if tail is None:
                return None
            alternatives.append(re.escape("".join(run)) + tail)
        if not alternatives:
            return ""
        body = alternatives[0] if len(alternatives) == 1 else "(?:" + "|".join(alternatives) + ")"
        # Greedy optional: a longer literal is tried before stopping at this one.
        return f"(?:{body})?" if "" in node else body

    return build(root, 0)
