"""Locked, atomic, comment-preserving writes of ``command_allowlist`` (SPEC §8).

:func:`update_allowlist` changes only the ``command_allowlist`` node of a
profile's ``config.yaml``: every other byte (comments, key order, quoting, other
keys) is kept. It holds a cross-process lock on the sidecar ``config.yaml.lock``,
re-reads the file under it, writes a temp file in the same directory, fsyncs it,
``os.replace``-s it over the file and fsyncs the directory. :func:`commit_grants`
does the same for grants, sharing one write among processes granting at once.

Three ways to produce the new text, fastest first (docs/allowlist.md):

1. *Line splice.* A block list whose items are one-line scalars is a run of
   lines; kept items keep their source line (quoting, trailing comment), removed
   ones lose theirs, new ones are appended with the same indentation. An
   :class:`AllowlistMemo` remembers the layout of the text last seen, so a file
   that another writer changed only inside the list is re-read line by line
   (each unknown line parsed on its own) instead of as a whole document.
2. *Node splice* for other simple shapes (``[]``, a one-line flow list, null, a
   legacy string, no key at all), verified by parsing the whole result.
3. *ruamel.yaml round trip* for anything else, verified the same way.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import secrets
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from io import StringIO
from pathlib import Path
from typing import Any

import yaml
from filelock import FileLock, Timeout

from multiplex._errors import ProfileConfigError
from multiplex.profiles._loader import parse_config
from multiplex.profiles._yamlread import MAX_CONFIG_BYTES

__all__ = ["AllowlistMemo", "commit_grants", "update_allowlist"]

KEY = "command_allowlist"
_Loader: type[Any] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_STR_TAG = "tag:yaml.org,2002:str"
_TEMP_INFIX = ".allowlist-"  # + pid-random.tmp: a temp file of a write in flight
_INTENT_INFIX = ".allowlist-intent-"  # + time-pid-random.json: grants waiting (commit_grants)
# Line breaks libyaml counts but str.split("\n") does not; their presence disables line splicing.
_ODD_BREAKS = ("\x85", "\u2028", "\u2029")
_TRAILER = re.compile(r"[ ]*(?:#.*)?\r?")  # what may follow an item, or fill a line between items
_DASH = re.compile(r"( *)- +")
_NOT_PLAIN_START = frozenset("&*!|>")  # anchor, alias, tag, block scalar


@dataclass(frozen=True, slots=True)
class _Layout:
    """A text as head + region + tail, where region is the list's item and comment lines."""

    text: str
    head: str
    lines: tuple[str, ...]  # each ends with "\n"
    values: tuple[str | None, ...]  # the item on each line; None for a blank or comment line
    tail: str
    dash: str  # indentation and "- " for new items
    newline: str


class AllowlistMemo:
    """What the last locked read or write learned about one file; one writer at a time."""

    __slots__ = ("layout",)

    def __init__(self) -> None:
        self.layout: _Layout | None = None


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
    with _lock(target, lock_timeout):
        return _update_locked(target, compute, memo)


def commit_grants(
    path: Path, grants: Sequence[str], *, lock_timeout: float, memo: AllowlistMemo | None = None
) -> list[str]:
    """Append ``grants`` (those not on disk yet) and return the list on disk afterwards.

    Group commit: the grants are first posted as an intent file next to the
    config; whichever process takes the lock next writes every live intent in
    one locked write and deletes them after the directory fsync. A process whose
    intent disappears while it waits is done: its grants are durable. Errors as
    :func:`update_allowlist`; on error this process's intent is withdrawn.
    """
    target = _target(path)
    memo = memo if memo is not None else AllowlistMemo()
    intent = _post_intent(target, grants)
    try:
        lock = _lock(target, lock_timeout)
        try:
            lock.acquire(cancel_check=lambda: not os.path.exists(intent))
        except Timeout:
            if os.path.exists(intent):
                raise
            return _read_list(target, memo)  # another process wrote our grants
        try:
            if not os.path.exists(intent):
                return _read_list(target, memo)
            posted = _collect_intents(target)

            def compute(on_disk: list[str]) -> list[str]:
                new, present = list(on_disk), set(on_disk)
                for _, texts in posted:
                    new += [t for t in dict.fromkeys(texts) if t not in present]
                    present.update(texts)
                return new

            written = _update_locked(target, compute, memo)
            for done, _ in posted:
                with contextlib.suppress(OSError):
                    os.unlink(done)
            return written
        finally:
            lock.release()
    finally:
        with contextlib.suppress(OSError):
            os.unlink(intent)


def _target(path: Path) -> Path:
    return Path(os.path.realpath(path))  # replace the file a symlink points to, not the link


def _lock(target: Path, timeout: float) -> FileLock:
    return FileLock(
        str(target.with_name(target.name + ".lock")),
        timeout=timeout,
        thread_local=False,
        preserve_lock_file=True,  # SPEC §8: the sidecar stays; waiters share one inode
        poll_interval=0.001,
    )


def _update_locked(
    target: Path, compute: Callable[[list[str]], list[str]], memo: AllowlistMemo
) -> list[str]:
    text = _read_text(target)
    layout = memo.layout and _relayout(memo.layout, text)
    memo.layout = layout
    if layout is not None:  # valid: it differs from a verified text only in list lines
        on_disk = [v for v in layout.values if v is not None]
    else:
        on_disk = list(parse_config(text.encode(), file=target).settings.command_allowlist)
    new = list(compute(on_disk))
    if new == on_disk:
        return on_disk
    rebuilt = _rebuild(layout, new) if layout is not None else None
    memo.layout = None  # until the write below succeeds
    new_text, after = (rebuilt.text, rebuilt) if rebuilt else _whole_document(text, new, target)
    _atomic_write(target, new_text)
    memo.layout = after
    return new


def _read_list(target: Path, memo: AllowlistMemo) -> list[str]:
    """The list on disk now, read without the lock (writers replace the file atomically)."""
    text = _read_text(target)
    layout = memo.layout = memo.layout and _relayout(memo.layout, text)
    if layout is not None:
        return [v for v in layout.values if v is not None]
    return list(parse_config(text.encode(), file=target).settings.command_allowlist)


def _post_intent(target: Path, grants: Sequence[str]) -> str:
    name = f".{target.name}{_INTENT_INFIX}{time.time_ns():020d}-{os.getpid()}-{secrets.token_hex(4)}.json"
    path = os.path.join(target.parent, name)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.write(fd, json.dumps(list(grants)).encode())
    finally:
        os.close(fd)
    return path


def _collect_intents(target: Path) -> list[tuple[str, list[str]]]:
    """Live intents in posting order (lock held); a dead poster's intent is dropped."""
    prefix = f".{target.name}{_INTENT_INFIX}"
    with os.scandir(target.parent) as entries:
        names = sorted(
            e.name for e in entries if e.name.startswith(prefix) and e.name.endswith(".json")
        )
    posted: list[tuple[str, list[str]]] = []
    for name in names:
        path = os.path.join(target.parent, name)
        try:
            os.kill(int(name[len(prefix) :].split("-")[1]), 0)
        except ProcessLookupError:  # its grant() never returned; it never happened
            with contextlib.suppress(OSError):
                os.unlink(path)
            continue
        except (PermissionError, ValueError, IndexError):
            pass
        try:
            with open(path, "rb") as handle:
                texts = json.loads(handle.read())
        except (OSError, ValueError):
            continue  # still being written; its poster will write it itself
        if isinstance(texts, list) and all(isinstance(t, str) for t in texts):
            posted.append((path, texts))
    return posted


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


# -- the line splice ---------------------------------------------------------------


def _relayout(old: _Layout, text: str) -> _Layout | None:
    """The layout of ``text`` if it differs from ``old.text`` only inside the region."""
    if text == old.text:
        return old
    end = len(text) - len(old.tail)
    if end < len(old.head) or not text.startswith(old.head) or not text.endswith(old.tail):
        return None
    middle = text[len(old.head) : end]
    if not middle.endswith("\n") or any(b in middle for b in _ODD_BREAKS):
        return None
    known = dict(zip(old.lines, old.values, strict=True))
    lines = [line + "\n" for line in middle[:-1].split("\n")]
    values: list[str | None] = []
    indent = old.dash.index("-")
    for line in lines:
        if line in known:
            values.append(known[line])
            continue
        ok, value = _classify(line, indent)
        if not ok:
            return None
        values.append(value)
    return _make_layout(old.head, lines, values, old.tail, old.dash, old.newline)


def _classify(line: str, indent: int) -> tuple[bool, str | None]:
    """(True, item) for an item line at ``indent``, (True, None) for a filler line."""
    content = line[:-1]
    if _TRAILER.fullmatch(content):
        return True, None
    dash = _DASH.match(content)
    if dash is None or len(dash.group(1)) != indent or "\t" in content or "\r" in content[:-1]:
        return False, None
    rest = content[dash.end() :]
    if not rest or rest[0] in _NOT_PLAIN_START:
        return False, None
    try:
        parsed = yaml.load(content, Loader=_Loader)
    except yaml.YAMLError:
        return False, None
    if isinstance(parsed, list) and len(parsed) == 1 and isinstance(parsed[0], str):
        return True, parsed[0]
    return False, None


def _make_layout(
    head: str,
    lines: Sequence[str],
    values: Sequence[str | None],
    tail: str,
    dash: str,
    newline: str,
) -> _Layout | None:
    """Move filler lines at either end of the region into head/tail; None if no item is left."""
    items = [i for i, v in enumerate(values) if v is not None]
    if not items:
        return None
    first, last = items[0], items[-1]
    head += "".join(lines[:first])
    tail = "".join(lines[last + 1 :]) + tail
    lines, values = tuple(lines[first : last + 1]), tuple(values[first : last + 1])
    return _Layout(head + "".join(lines) + tail, head, lines, values, tail, dash, newline)


def _rebuild(layout: _Layout, new: list[str]) -> _Layout | None:
    """Keep the lines of surviving items, drop the others, append new items (None: empty list)."""
    if not new:
        return None  # an empty list is `[]` on the key line: a node splice
    items = [v for v in layout.values if v is not None]
    if new[: len(items)] == items:  # the common case, grants only: append, keep every line
        added = tuple(layout.dash + _render(v) + layout.newline for v in new[len(items) :])
        grown = layout.lines + added
        text = layout.head + "".join(grown) + layout.tail
        values = layout.values + tuple(new[len(items) :])
        return _Layout(text, layout.head, grown, values, layout.tail, layout.dash, layout.newline)
    rows: list[tuple[str, str | None]]
    plan = _plan(layout.values, new)
    if plan is not None:  # removals and appends: surviving lines stay where they are
        keep, appended = plan
        rows = [
            (line, value)
            for index, (line, value) in enumerate(zip(layout.lines, layout.values, strict=True))
            if value is None or index in keep
        ]
    else:
        rows, appended = _reorder(layout, new)
    rows += [(layout.dash + _render(v) + layout.newline, v) for v in appended]
    return _make_layout(
        layout.head,
        [r[0] for r in rows],
        [r[1] for r in rows],
        layout.tail,
        layout.dash,
        layout.newline,
    )


def _reorder(layout: _Layout, new: list[str]) -> tuple[list[tuple[str, str | None]], list[str]]:
    """The n-th item line holds the n-th new value (its own source line if it had one)."""
    own: dict[str, list[str]] = {}
    for line, value in zip(reversed(layout.lines), reversed(layout.values), strict=True):
        if value is not None:
            own.setdefault(value, []).append(line)
    fill = iter(new)
    rows: list[tuple[str, str | None]] = []
    for line, value in zip(layout.lines, layout.values, strict=True):
        if value is None:
            rows.append((line, None))  # comments stay put
        elif (wanted := next(fill, None)) is not None:
            source = own.get(wanted)
            rows.append(
                (source.pop() if source else layout.dash + _render(wanted) + layout.newline, wanted)
            )
    return rows, list(fill)


def _plan(values: Sequence[object], new: list[str]) -> tuple[set[int], list[str]] | None:
    """Which existing items to keep and which values to append, so the list becomes ``new``.

    Each value of ``new`` takes the first unused equal item; None when ``new``
    would need a kept item to move.
    """
    free: dict[object, list[int]] = {}
    for index in range(len(values) - 1, -1, -1):
        if values[index] is not None:
            free.setdefault(values[index], []).append(index)
    keep: set[int] = set()
    appended: list[str] = []
    last = -1
    for value in new:
        slots = free.get(value)
        if not slots:
            appended.append(value)
            continue
        index = slots.pop()
        if appended or index < last:
            return None
        keep.add(index)
        last = index
    return keep, appended


@functools.lru_cache(maxsize=8192)
def _render(value: str) -> str:
    """``value`` as a one-line YAML scalar that reads back as exactly ``value``."""
    dumped = yaml.safe_dump([value], allow_unicode=True, width=1 << 30)
    scalar = dumped[2:-1] if dumped.startswith("- ") and dumped.count("\n") == 1 else ""
    if not scalar or any(c in scalar for c in "\r" + "".join(_ODD_BREAKS)):
        scalar = json.dumps(value)  # a JSON string is a valid double-quoted YAML scalar
    if yaml.load("- " + scalar, Loader=_Loader) != [value]:
        raise ProfileConfigError(f"cannot write the rule {value[:40]!r} as YAML", key=KEY)
    return scalar


def _layout_from(text: str, key: Any, value: Any) -> _Layout | None:
    """The line layout of a block list of one-line scalar items, or None for other shapes."""
    if not (isinstance(value, yaml.SequenceNode) and not value.flow_style and value.value):
        return None
    if any(b in text for b in _ODD_BREAKS) or text.count("\r") != text.count("\r\n"):
        return None
    rows = text.split("\n")
    first, last = value.value[0].start_mark.line, value.value[-1].start_mark.line
    if last + 1 >= len(rows) or key.end_mark.line >= first:
        return None  # the last item ends the file without a newline, or an odd key
    values: list[str | None] = [None] * (last - first + 1)
    indent = -1
    for item in value.value:
        start, end = item.start_mark, item.end_mark
        if not isinstance(item, yaml.ScalarNode) or item.tag != _STR_TAG or end.line != start.line:
            return None
        row = rows[start.line]
        dash = _DASH.fullmatch(row[: start.column])
        if dash is None or indent not in (-1, len(dash.group(1))) or "\t" in row:
            return None
        if not _TRAILER.fullmatch(row[end.column :]) or values[start.line - first] is not None:
            return None
        indent = len(dash.group(1))
        values[start.line - first] = item.value
    for offset, found in enumerate(values):
        if found is None and not _TRAILER.fullmatch(rows[first + offset]):
            return None
    for row in rows[last + 1 :]:  # nothing after the list may continue its last item
        if not _TRAILER.fullmatch(row):
            if len(row) - len(row.lstrip(" ")) > indent:
                return None
            break
    newline = "\r\n" if rows[first].endswith("\r") else "\n"
    head = "".join(row + "\n" for row in rows[:first])
    lines = [row + "\n" for row in rows[first : last + 1]]
    return _make_layout(
        head, lines, values, "\n".join(rows[last + 1 :]), " " * indent + "- ", newline
    )


# -- the whole document ------------------------------------------------------------


def _whole_document(text: str, new: list[str], target: Path) -> tuple[str, _Layout | None]:
    """The new text by the fastest way whose whole-document parse verifies, and its layout."""
    root, old_doc = _compose(text)
    key, value = _find_key(root, target)
    layout = _layout_from(text, key, value) if key is not None else None
    rebuilt = _rebuild(layout, new) if layout is not None else None
    ways: tuple[Callable[[], str | None], ...] = (
        lambda: rebuilt.text if rebuilt else _splice(text, root, key, value, new, layout),
        lambda: _ruamel(text, new, _indentation(root)),
    )
    for way in ways:
        new_text = way()
        new_root = _verify(old_doc, new_text, new) if new_text is not None else None
        if new_text is not None and new_root is not None:
            new_key, new_value = _find_key(new_root, target)
            return new_text, _layout_from(new_text, new_key, new_value)
    raise ProfileConfigError(
        "cannot rewrite the list without changing other keys; edit it by hand", file=target, key=KEY
    )


def _compose(text: str) -> tuple[Any, Any]:
    loader = _Loader(text)
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
    text: str, root: Any, key: Any, value: Any, new: list[str], layout: _Layout | None
) -> str | None:
    """Rewrite a one-line value (or a missing key) as a block list, or a simple block
    list as ``[]``; None for every other shape (left to ruamel)."""
    newline = "\r\n" if "\r\n" in text else "\n"
    if root is not None and (not isinstance(root, yaml.MappingNode) or root.flow_style):
        return None
    items = "".join(f"  - {_render(v)}{newline}" for v in new)
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

    rt = YAML(typ="rt")
    rt.preserve_quotes = True
    rt.width = 1 << 30
    mapping, offset = indentation
    rt.indent(mapping=mapping, sequence=offset + 2, offset=offset)
    try:
        data = rt.load(text) if text.strip() else None
        data = CommentedMap() if data is None else data
        current = data.get(KEY)
        plan = _plan(list(current), new) if isinstance(current, CommentedSeq) else None
        if plan is not None:  # edit in place, so comments on kept items stay
            keep, appended = plan
            for index in reversed(range(len(current))):
                if index not in keep:
                    del current[index]
            current.extend(appended)
        else:
            data[KEY] = CommentedSeq(new)
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
    if not isinstance(doc, dict) or list(doc) != list(expected) or not _same(doc, expected):
        return None
    return root


def _same(a: Any, b: Any) -> bool:
    """Equality that holds for NaN and tells ``1`` from ``True``."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(map(_same, a, b))
    return bool(a == b or (isinstance(a, float) and a != a and b != b))


# -- the atomic replace ------------------------------------------------------------


def _atomic_write(target: Path, text: str) -> None:
    """Temp file in the same directory, fsync, ``os.replace``, fsync the directory."""
    data = text.encode("utf-8")
    if len(data) > MAX_CONFIG_BYTES:
        raise ProfileConfigError(
            "the list would make the file larger than 1 MiB", file=target, key=KEY
        )
    prefix = f".{target.name}{_TEMP_INFIX}"
    _remove_stale_temps(target.parent, prefix)
    try:
        old = os.stat(target)
    except FileNotFoundError:
        old = None
    fd, temp = tempfile.mkstemp(dir=target.parent, prefix=f"{prefix}{os.getpid()}-", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fchmod(handle.fileno(), (old.st_mode & 0o7777) if old else 0o644)
            if old is not None and (old.st_uid, old.st_gid) != (os.geteuid(), os.getegid()):
                with contextlib.suppress(OSError):  # only root may give a file away
                    os.fchown(handle.fileno(), old.st_uid, old.st_gid)
            os.fsync(handle.fileno())
        os.replace(temp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
    directory = os.open(target.parent, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)


def _remove_stale_temps(directory: Path, prefix: str) -> None:
    # Called with the lock held: no writer is mid-write, so any temp file left is
    # from a writer that died (kill -9) between creating and renaming it.
    with os.scandir(directory) as entries:
        for entry in entries:
            if entry.name.startswith(prefix) and entry.name.endswith(".tmp"):
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)
