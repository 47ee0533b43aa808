"""Fast, bounded YAML reads (docs/configuration.md#configyaml-keys: PyYAML's C safe loader, 1 MiB, no aliases)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from multiplex._errors import ProfileConfigError

__all__ = ["MAX_CONFIG_BYTES", "line_of", "load_yaml_bytes"]

MAX_CONFIG_BYTES = 1024 * 1024
_Loader: type[Any] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_yaml_bytes(data: bytes, *, file: Path | str) -> Any:
    """Parse one YAML document, refusing oversized input and anchors/aliases."""
    if len(data) > MAX_CONFIG_BYTES:
        raise ProfileConfigError("file is larger than 1 MiB; refused", file=file)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ProfileConfigError("not valid UTF-8", file=file) from None
    try:
        # Fast path: without '&' or '*' there can be no anchor or alias.
        if "&" in text or "*" in text:
            _refuse_anchors(text, file)
        return yaml.load(text, Loader=_Loader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        line = mark.line + 1 if mark is not None else None
        problem = (exc.problem or "invalid YAML").split("\n")[0]
        raise ProfileConfigError(f"invalid YAML: {problem}", file=file, line=line) from None
    except yaml.YAMLError as exc:
        raise ProfileConfigError(f"invalid YAML: {exc}", file=file) from None


def _refuse_anchors(text: str, file: Path | str) -> None:
    # Billion-laughs expansion needs anchors; no operator config needs them.
    for event in yaml.parse(text, Loader=_Loader):
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
        node = yaml.compose(data.decode("utf-8"), Loader=_Loader)
    except (yaml.YAMLError, UnicodeDecodeError):
        return None
    for part in path:
        if isinstance(node, yaml.MappingNode):
            found = next((v for k, v in node.value if k.value == part), None)
            if found is None:
                break
            node = found
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int):
            if part >= len(node.value):
                break
            node = node.value[part]
        else:
            break
    return node.start_mark.line + 1 if node is not None else None
