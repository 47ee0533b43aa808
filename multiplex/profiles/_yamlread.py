"""Fast, bounded, strict YAML reads (docs/configuration.md#validation).

PyYAML's C parser with a constructor that fails closed: 1 MiB at most, no
anchors or aliases, a duplicate key anywhere is an error naming both lines,
integers over 64 digits are refused, and nothing but ``ProfileConfigError``
comes out (a timestamp like ``2026-13-45`` or a nesting too deep for the
constructor included). It also remembers the line of every key and item and
which booleans were written as a bare ``off``, so the loader can name the line
of any key it rejects.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from multiplex._errors import ProfileConfigError

__all__ = [
    "MAX_CONFIG_BYTES",
    "Located",
    "holds_no_document",
    "line_of",
    "load_yaml_bytes",
    "load_yaml_located",
]

MAX_CONFIG_BYTES = 1024 * 1024
MAX_INT_DIGITS = 64
_Base: type[Any] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_BOOL_TAG = "tag:yaml.org,2002:bool"
_STR_TAG = "tag:yaml.org,2002:str"
_MAP_TAG = "tag:yaml.org,2002:map"
_SEQ_TAG = "tag:yaml.org,2002:seq"
# Scalars built directly (see _StrictLoader.construct_document); any other tag
# (a timestamp, binary, a merge key, an explicit tag) goes PyYAML's own way.
_DIRECT_SCALARS = frozenset(f"tag:yaml.org,2002:{t}" for t in ("null", "bool", "int", "float"))


class _Unusual(Exception):
    """A node the direct construction leaves to PyYAML's own."""


class _Marks:
    """Per container (by id): key or index -> (line, bare-off)."""

    def __init__(self) -> None:
        self.by_id: dict[int, dict[Any, tuple[int, bool]]] = {}


# (node kind, value, implicit) -> tag: the resolver's answer depends on nothing else
# (no path resolvers here), and 10,000 homes' configs repeat their keys and words.
# Short values only, and a bounded number of them.
_RESOLVED: dict[tuple[Any, Any, Any], str] = {}
_RESOLVED_MAX = 65536
_RESOLVED_LONGEST = 64


class _StrictLoader(_Base):  # type: ignore[misc]
    """The C safe loader with duplicate-key, big-integer and position bookkeeping."""

    def resolve(self, kind: Any, value: Any, implicit: Any) -> str:
        key = (kind, value, implicit)
        try:
            return _RESOLVED[key]
        except KeyError:
            pass
        tag: str = super().resolve(kind, value, implicit)
        if (value is None or len(value) <= _RESOLVED_LONGEST) and len(_RESOLVED) < _RESOLVED_MAX:
            _RESOLVED[key] = tag
        return tag

    def __init__(self, stream: str, file: Path | str) -> None:
        super().__init__(stream)
        self.file = file
        self.marks = _Marks()
        self.keep: list[object] = []  # containers stay alive while their ids are in marks

    def _entries(
        self, node: yaml.MappingNode, deep: bool
    ) -> tuple[dict[Any, Any], dict[Any, tuple[int, bool]]]:
        self.flatten_mapping(node)
        mapping: dict[Any, Any] = {}
        where: dict[Any, tuple[int, bool]] = {}
        for key_node, value_node in node.value:
            key = self.construct_object(key_node, deep=deep)
            line = key_node.start_mark.line + 1
            try:
                hash(key)
            except TypeError:
                raise ProfileConfigError(
                    "a mapping key must be a plain value", file=self.file, line=line
                ) from None
            if key in where:
                raise ProfileConfigError(
                    f"duplicate key {_shown(key)} (lines {where[key][0]} and {line})",
                    file=self.file,
                    line=line,
                )
            mapping[key] = self.construct_object(value_node, deep=deep)
            where[key] = (line, _bare_off(value_node))
        return mapping, where

    def construct_yaml_timestamp(self, node: yaml.ScalarNode) -> Any:
        # A date that does not exist (2099-02-30) fails in the constructor, without a line.
        try:
            return super().construct_yaml_timestamp(node)
        except (ValueError, OverflowError):
            raise ProfileConfigError(
                f"{node.value!r} is not a date or time that exists",
                file=self.file,
                line=node.start_mark.line + 1,
            ) from None

    def construct_document(self, node: yaml.Node) -> Any:
        # PyYAML's construction goes through several Python calls a node and a
        # queue of generators; a config is plain maps, lists and scalars, built
        # here in one recursive call a node (thousands of homes are read at
        # start). Anything else, or anything wrong, is built again PyYAML's way,
        # which gives the same document or raises the same error as it always did.
        try:
            return self._direct(node)
        except Exception:
            self.marks.by_id.clear()
            self.keep.clear()
            return super().construct_document(node)

    def _direct(self, node: yaml.Node) -> Any:
        kind = type(node)
        tag = node.tag
        if kind is yaml.ScalarNode:
            if tag == _STR_TAG:
                return node.value
            if tag not in _DIRECT_SCALARS:
                raise _Unusual(tag)
            return self.yaml_constructors[tag](self, node)
        if kind is yaml.MappingNode and tag == _MAP_TAG:
            mapping: dict[Any, Any] = {}
            where: dict[Any, tuple[int, bool]] = {}
            for key_node, value_node in node.value:
                if type(key_node) is not yaml.ScalarNode:
                    raise _Unusual("a key that is not a scalar")
                key = self._direct(key_node)
                if key in where:
                    raise _Unusual("a duplicate key")  # named with both lines PyYAML's way
                mapping[key] = self._direct(value_node)
                where[key] = (key_node.start_mark.line + 1, _bare_off(value_node))
            self.marks.by_id[id(mapping)] = where
            self.keep.append(mapping)
            return mapping
        if kind is yaml.SequenceNode and tag == _SEQ_TAG:
            items = node.value
            sequence = [self._direct(item) for item in items]
            self.marks.by_id[id(sequence)] = {
                i: (item.start_mark.line + 1, _bare_off(item)) for i, item in enumerate(items)
            }
            self.keep.append(sequence)
            return sequence
        raise _Unusual(tag)

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        mapping, _ = self._entries(node, deep)
        return mapping

    def construct_yaml_map(self, node: yaml.MappingNode) -> Iterator[dict[Any, Any]]:
        data: dict[Any, Any] = {}
        yield data
        mapping, where = self._entries(node, False)
        data.update(mapping)
        self.marks.by_id[id(data)] = where
        self.keep.append(data)

    def construct_yaml_seq(self, node: yaml.SequenceNode) -> Iterator[list[Any]]:
        data: list[Any] = []
        yield data
        data.extend(self.construct_sequence(node))
        self.marks.by_id[id(data)] = {
            i: (item.start_mark.line + 1, _bare_off(item)) for i, item in enumerate(node.value)
        }
        self.keep.append(data)

    def construct_yaml_int(self, node: yaml.ScalarNode) -> int:
        digits = sum(ch.isdigit() for ch in str(node.value))
        if digits > MAX_INT_DIGITS:
            raise ProfileConfigError(
                f"a number with {digits} digits; refused (at most {MAX_INT_DIGITS})",
                file=self.file,
                line=node.start_mark.line + 1,
            )
        return int(super().construct_yaml_int(node))


_StrictLoader.add_constructor("tag:yaml.org,2002:map", _StrictLoader.construct_yaml_map)
_StrictLoader.add_constructor("tag:yaml.org,2002:seq", _StrictLoader.construct_yaml_seq)
_StrictLoader.add_constructor("tag:yaml.org,2002:int", _StrictLoader.construct_yaml_int)


def _bare_off(node: yaml.Node) -> bool:
    return (
        isinstance(node, yaml.ScalarNode)
        and node.tag == _BOOL_TAG
        and not node.style  # plain: None (pure) or '' (C parser)
        and str(node.value).lower() == "off"
    )


def _shown(key: object) -> str:
    text = repr(key) if isinstance(key, str) else str(key)
    return text if len(text) <= 60 else text[:57] + "..."


@dataclass(frozen=True)
class Located:
    """A parsed document and where each of its keys was written."""

    doc: Any
    marks: _Marks = field(repr=False)

    def line(self, path: tuple[str | int, ...]) -> int | None:
        """The 1-based line of the deepest key of ``path`` found in the document."""
        node, found = self.doc, None
        for part in path:
            where = self.marks.by_id.get(id(node))
            if where is None or part not in where:
                break
            found = where[part][0]
            node = node[part]
        return found

    def bare_off(self, path: tuple[str | int, ...]) -> bool:
        """Whether the value at ``path`` was written as a bare ``off``."""
        node = self.doc
        for part in path[:-1]:
            node = node[part]
        where = self.marks.by_id.get(id(node), {})
        return where.get(path[-1], (0, False))[1]


def load_yaml_located(data: bytes, *, file: Path | str) -> Located:
    """Parse one YAML document strictly; raise ``ProfileConfigError`` naming file and line."""
    if len(data) > MAX_CONFIG_BYTES:
        raise ProfileConfigError("file is larger than 1 MiB; refused", file=file)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ProfileConfigError("not valid UTF-8", file=file, line=line) from None
    loader = _StrictLoader(text, file)
    try:
        # Without '&' there is no anchor, and an alias with no anchor fails to
        # compose: a '*' (a glob in a rule) costs the event scan only on a failure,
        # where it names an alias exactly as a scan first would have.
        if "&" in text:
            _refuse_anchors(text, file)
        try:
            return Located(loader.get_single_data(), loader.marks)
        except Exception:
            if "*" in text:
                _refuse_anchors(text, file)
            raise
    except yaml.MarkedYAMLError as exc:
        marks = [m for m in (exc.context_mark, exc.problem_mark) if m is not None]
        # The first offending line: an unclosed quote on line 6 says line 6, not EOF.
        first = min(m.line for m in marks) + 1 if marks else None
        problem = (exc.problem or "invalid YAML").split("\n")[0]
        raise ProfileConfigError(f"invalid YAML: {problem}", file=file, line=first) from None
    except yaml.YAMLError as exc:
        raise ProfileConfigError(f"invalid YAML: {type(exc).__name__}", file=file) from None
    except RecursionError:
        raise ProfileConfigError("invalid YAML: nested too deeply", file=file) from None
    except (ValueError, TypeError, OverflowError) as exc:
        # e.g. `2026-13-45` (a timestamp PyYAML cannot build); the message may quote content.
        raise ProfileConfigError(
            f"invalid YAML: a value cannot be read ({type(exc).__name__})", file=file
        ) from None
    finally:
        loader.dispose()


_StrictLoader.add_constructor("tag:yaml.org,2002:timestamp", _StrictLoader.construct_yaml_timestamp)


def load_yaml_bytes(data: bytes, *, file: Path | str) -> Any:
    """Parse one YAML document strictly (see :func:`load_yaml_located`)."""
    return load_yaml_located(data, file=file).doc


def _refuse_anchors(text: str, file: Path | str) -> None:
    # Billion-laughs expansion needs anchors; no operator config needs them.
    for event in yaml.parse(text, Loader=_Base):
        anchor = getattr(event, "anchor", None)
        if anchor is not None or isinstance(event, yaml.AliasEvent):
            mark = event.start_mark
            raise ProfileConfigError(
                "YAML anchors and aliases are not allowed",
                file=file,
                line=mark.line + 1 if mark is not None else None,
            )


def line_of(data: bytes, path: tuple[str | int, ...]) -> int | None:
    """The 1-based line of the node at ``path`` in a YAML document, if it exists."""
    try:
        return load_yaml_located(data, file="").line(path)
    except ProfileConfigError:
        return None


def holds_no_document(data: bytes) -> bool:
    """Nothing but blank lines and comments: a YAML file with no document at all (a save
    caught between truncating and writing; docs/configuration.md#validation)."""
    return all(not line.strip() or line.lstrip().startswith(b"#") for line in data.splitlines())
