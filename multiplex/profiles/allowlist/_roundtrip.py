"""Locked, atomic, comment-preserving writes of ``command_allowlist`` (docs/allowlist.md).

:func:`update_allowlist` changes only the ``command_allowlist`` node of a
profile's ``config.yaml``: every other byte (comments, key order, quoting, other
keys) is kept. It holds a cross-process lock on the sidecar ``config.yaml.lock``,
re-reads the file under it, writes a temp file in the same directory, fsyncs it,
``os.replace``-s it over the file and fsyncs the directory. :func:`commit_grants`
does the same for grants, sharing one write among processes granting at once.
The lock, the group commit and the durable replace are
:mod:`multiplex.profiles.allowlist._locked_write`.

Three ways to produce the new text, fastest first (docs/allowlist.md):

1. *Line splice* (:mod:`multiplex.profiles.allowlist._linesplice`). A block list whose
   items are one-line scalars is a run of lines; kept items keep their source
   line (quoting, trailing comment), removed ones lose theirs, new ones are
   appended with the same indentation. An :class:`AllowlistMemo` remembers the
   layout of the text last seen, so a file that another writer changed only
   inside the list is re-read line by line (each unknown line parsed on its
   own) instead of as a whole document.
2. *Node splice* for other simple shapes (``[]``, a one-line flow list, null, a
   legacy string, no key at all), verified by parsing the whole result.
3. *ruamel.yaml round trip* for anything else, verified the same way.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from io import StringIO
from pathlib import Path
from typing import Any

import yaml

from multiplex._errors import ProfileConfigError, RuleSyntaxError
from multiplex.profiles._loader import parse_config
from multiplex.profiles._yamlread import MAX_CONFIG_BYTES
from multiplex.profiles.allowlist._grants import GrantText, grant_from_mapping
from multiplex.profiles.allowlist._linesplice import (
    KEY,
    Layout,
    Loader,
    layout_from,
    rebuild,
    relayout,
    render,
    splice_plan,
)
from multiplex.profiles.allowlist._locked_write import (
    ChangedMeanwhile,
    Signature,
    group_commit,
    replace_durably,
    sidecar_lock,
    signature,
)
from multiplex.shell import parse_rule

__all__ = ["AllowlistMemo", "commit_grants", "update_allowlist"]


class AllowlistMemo:
    """What the last locked read or write learned about one file; one writer at a time."""

    __slots__ = ("layout",)

    def __init__(self) -> None:
        self.layout: Layout | None = None


def update_allowlist(
    path: Path,
    compute: Callable[[list[str]], list[str]],
    *,
    lock_timeout: float,
    memo: AllowlistMemo | None = None,
) -> list[str]:
    """Replace ``command_allowlist`` with ``compute(on_disk_now)`` under the lock; return it.

    ``compute`` runs with the lock held and receives the list read under it.
    When the result equals that list nothing is written. A malformed file, a
    result that cannot be written without changing another key, or a result
    over 1 MiB raises ``ProfileConfigError`` and leaves the file untouched; I/O
    failures and a lock not taken within ``lock_timeout`` raise ``OSError``.
    """
    target = _target(path)
    memo = memo if memo is not None else AllowlistMemo()
    with sidecar_lock(target, lock_timeout):
        return _update_locked(target, compute, memo)


def commit_grants(
    path: Path, grants: Sequence[str], *, lock_timeout: float, memo: AllowlistMemo | None = None
) -> list[str]:
    """Append ``grants`` (those not on disk yet) and return the list on disk afterwards.

    Group commit: the grants are first posted as an intent file in the state
    folder next to the config; whichever process takes the lock next writes every live intent in
    one locked write and deletes them after the directory fsync. A process whose
    intent disappears while it waits is done: its grants are durable. Errors as
    :func:`update_allowlist`; on error this process's intent is withdrawn.
    """
    target = _target(path)
    held = memo if memo is not None else AllowlistMemo()

    def write(posted: list[list[str]]) -> list[str]:
        def compute(on_disk: list[str]) -> list[str]:
            new, present = list(on_disk), set(on_disk)
            for texts in posted:
                new += [t for t in dict.fromkeys(texts) if t not in present]
                present.update(texts)
            return new

        return _update_locked(target, compute, held)

    return group_commit(
        target,
        grants,
        lock_timeout=lock_timeout,
        write=write,
        read=lambda: _read_list(target, held),
        admits=_is_rule,
    )


def _is_rule(text: str) -> bool:
    """What a posted intent may carry: texts ``AllowlistStore.grant`` would accept."""
    try:
        parse_rule(text)
    except RuleSyntaxError:
        return False
    return True


def _target(path: Path) -> Path:
    return Path(os.path.realpath(path))  # replace the file a symlink points to, not the link


def _update_locked(
    target: Path, compute: Callable[[list[str]], list[str]], memo: AllowlistMemo
) -> list[str]:
    # An operator's save takes no lock: one that lands while this write is made is read
    # again and this change applied to it, never overwritten (docs/allowlist.md).
    for _ in range(_ATTEMPTS - 1):
        try:
            return _update_once(target, compute, memo)
        except ChangedMeanwhile:
            memo.layout = None
    return _update_once(target, compute, memo)  # (changed yet again: an OSError, not written)


_ATTEMPTS = 5


def _update_once(
    target: Path, compute: Callable[[list[str]], list[str]], memo: AllowlistMemo
) -> list[str]:
    seen = signature(target)
    text = _read_text(target)
    if signature(target) != seen:
        raise ChangedMeanwhile(str(target))  # written while read
    layout = memo.layout and relayout(memo.layout, text)
    memo.layout = layout
    if layout is not None:  # valid: it differs from a verified text only in list lines
        on_disk = [v for v in layout.values if v is not None]
    else:
        on_disk = list(parse_config(text.encode(), file=target).settings.command_allowlist)
    new = list(compute(on_disk))
    if new == on_disk:
        return on_disk
    rebuilt = rebuild(layout, new) if layout is not None else None
    memo.layout = None  # until the write below succeeds
    new_text, after = (rebuilt.text, rebuilt) if rebuilt else _whole_document(text, new, target)
    _write(target, new_text, seen)
    memo.layout = after
    return new


def _read_list(target: Path, memo: AllowlistMemo) -> list[str]:
    """The list on disk now, read without the lock (writers replace the file atomically)."""
    text = _read_text(target)
    layout = memo.layout = memo.layout and relayout(memo.layout, text)
    if layout is not None:
        return [v for v in layout.values if v is not None]
    return list(parse_config(text.encode(), file=target).settings.command_allowlist)


def _read_text(target: Path) -> str:
    try:
        data = target.read_bytes()
    except FileNotFoundError:
        return ""
    if len(data) > MAX_CONFIG_BYTES:
        raise ProfileConfigError("file is larger than 1 MiB; refused", file=target)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ProfileConfigError("not valid UTF-8", file=target) from None


def _write(target: Path, text: str, expected: Signature | None) -> None:
    data = text.encode("utf-8")
    if len(data) > MAX_CONFIG_BYTES:
        raise ProfileConfigError(
            "the list would make the file larger than 1 MiB", file=target, key=KEY
        )
    replace_durably(target, data, checked=True, expected=expected)


# -- the whole document ------------------------------------------------------------


def _whole_document(text: str, new: list[str], target: Path) -> tuple[str, Layout | None]:
    """The new text by the fastest way whose whole-document parse verifies, and its layout."""
    root, old_doc = _compose(text)
    key, value = _find_key(root, target)
    layout = layout_from(text, key, value) if key is not None else None
    rebuilt = rebuild(layout, new) if layout is not None else None
    ways: tuple[Callable[[], str | None], ...] = (
        lambda: rebuilt.text if rebuilt else _splice(text, root, key, value, new, layout),
        lambda: _ruamel(text, new, _indentation(root)),
    )
    for way in ways:
        new_text = way()
        new_root = _verify(old_doc, new_text, new) if new_text is not None else None
        if new_text is not None and new_root is not None:
            new_key, new_value = _find_key(new_root, target)
            return new_text, layout_from(new_text, new_key, new_value)
    raise ProfileConfigError(
        "cannot rewrite the list without changing other keys; edit it by hand", file=target, key=KEY
    )


def _compose(text: str) -> tuple[Any, Any]:
    loader = Loader(text)
    try:
        root = loader.get_single_node()
        return root, (loader.construct_document(root) if root is not None else None)
    finally:
        loader.dispose()


def _find_key(root: Any, target: Path) -> tuple[Any, Any]:
    if not isinstance(root, yaml.MappingNode):
        return None, None
    pairs = [(k, v) for k, v in root.value if isinstance(k, yaml.ScalarNode) and k.value == KEY]
    if len(pairs) > 1:
        raise ProfileConfigError("the key appears more than once", file=target, key=KEY)
    return pairs[0] if pairs else (None, None)


def _splice(
    text: str, root: Any, key: Any, value: Any, new: list[str], layout: Layout | None
) -> str | None:
    """Rewrite a one-line value (or a missing key) as a block list, or a simple block
    list as ``[]``; None for every other shape (left to ruamel)."""
    newline = "\r\n" if "\r\n" in text else "\n"
    if root is not None and (not isinstance(root, yaml.MappingNode) or root.flow_style):
        return None
    items = "".join(f"  - {render(v)}{newline}" for v in new)
    if key is None:
        body = text if not text or text.endswith("\n") else text + newline
        return body + (f"{KEY}:{newline}{items}" if new else f"{KEY}: []{newline}")
    rows = text.split("\n")
    line = key.end_mark.line
    colon = rows[line].find(":", key.end_mark.column)
    if colon < 0 or key.start_mark.column != 0:
        return None
    row, start, end = rows[line], value.start_mark, value.end_mark
    if isinstance(value, yaml.SequenceNode) and not value.flow_style:
        if new or layout is None:
            return None
        for item in reversed(value.value):  # comment lines between items stay
            del rows[item.start_mark.line]
        rows[line] = row[: colon + 1] + " []" + row[colon + 1 :]
        return "\n".join(rows)
    empty = (start.line, start.column) == (end.line, end.column)
    if not empty and not start.line == end.line == line:
        return None  # a value over several lines
    if not new:
        if empty:
            rows[line] = row[: colon + 1] + " []" + row[colon + 1 :]
        else:
            rows[line] = row[: start.column] + "[]" + row[end.column :]
        return "\n".join(rows)
    if not empty:
        rows[line] = row[: start.column].rstrip(" ") + row[end.column :]
    rows.insert(line + 1, items[:-1])
    return "\n".join(rows)


_RUAMEL = "<ruamel>"


def _indentation(root: Any) -> tuple[int, int]:
    """(mapping indent, dash offset) as the operator wrote the top-level blocks."""
    mapping, offset = 2, 2
    for key, value in root.value if isinstance(root, yaml.MappingNode) else ():
        if isinstance(value, yaml.MappingNode) and not value.flow_style and value.value:
            mapping = value.value[0][0].start_mark.column - key.start_mark.column
        if isinstance(value, yaml.SequenceNode) and not value.flow_style and value.value:
            offset = value.start_mark.column - key.start_mark.column
    return max(mapping, 1), max(offset, 0)


def _ruamel(text: str, new: list[str], indentation: tuple[int, int]) -> str | None:
    """The fallback: ruamel.yaml's round trip, with the file's own indentation."""
    from ruamel.yaml import YAML
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    def item(value: str) -> Any:
        if not isinstance(value, GrantText):
            return str(value)
        data = CommentedMap(value.as_data())
        data.fa.set_flow_style()
        if "bind" in data:
            data["bind"] = CommentedMap(data["bind"])
            data["bind"].fa.set_flow_style()
        return data

    rt = YAML(typ="rt")
    rt.preserve_quotes = True
    rt.width = 1 << 30
    mapping, offset = indentation
    rt.indent(mapping=mapping, sequence=offset + 2, offset=offset)
    try:
        data = rt.load(text) if text.strip() else None
        data = CommentedMap() if data is None else data
        current = data.get(KEY)
        plain = isinstance(current, CommentedSeq) and all(isinstance(v, str) for v in current)
        plan = splice_plan(list(current), new) if plain else None
        if plan is not None:  # edit in place, so comments on kept items stay
            keep, appended = plan
            for index in reversed(range(len(current))):
                if index not in keep:
                    del current[index]
            current.extend(item(v) for v in appended)
        else:
            data[KEY] = CommentedSeq(item(v) for v in new)
        out = StringIO()
        rt.dump(data, out)
    except Exception:  # any ruamel failure: the caller refuses the write
        return None
    return out.getvalue()


def _verify(old_doc: Any, text: str, new: list[str]) -> Any:
    """The new root node if ``text`` is ``old_doc`` with only the list changed, else None."""
    try:
        root, doc = _compose(text)
    except yaml.YAMLError:
        return None
    expected = dict(old_doc) if isinstance(old_doc, dict) else {}
    expected[KEY] = new
    if isinstance(doc, dict) and isinstance(doc.get(KEY), list):
        doc = {**doc, KEY: [_as_entry(v) for v in doc[KEY]]}
    if not isinstance(doc, dict) or list(doc) != list(expected) or not _same(doc, expected):
        return None
    return root


def _as_entry(value: Any) -> Any:
    """An entry as the store holds it: a mapping read back is the grant it spells."""
    if not isinstance(value, dict):
        return value
    try:
        return grant_from_mapping(value)
    except ValueError:
        return value  # never equal to a grant: the write is refused


def _same(a: Any, b: Any) -> bool:
    """Equality that holds for NaN and tells ``1`` from ``True``."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(map(_same, a, b))
    return bool(a == b or (isinstance(a, float) and a != a and b != b))
