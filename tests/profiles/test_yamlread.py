"""A config's document, lines and errors are those of PyYAML's own construction.

The strict reader builds plain maps, lists and scalars itself (one call a
node) and leaves everything else to PyYAML's constructor; whichever builds it,
the document, the line of every key and item, the bare ``off`` marks and the
error message must be the same.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from multiplex._errors import ProfileConfigError
from multiplex.profiles import _yamlread
from tests.strategies import config_bytes, yaml_documents

FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

EDGES = [
    "a: 1\nb: [1, 2, {c: off}]\n",
    "mode: off\nquoted: 'off'\nlist: [off, Off, no]\n",
    "a: 1\na: 2\n",
    "x:\n  y: 1\n  y: 2\nz: 1\nz: 2\n",
    "k: {x: 1, x: 2}\nj: " + "9" * 70 + "\n",
    "a: [" + "9" * 70 + "]\nb:\n  c: 1\n  c: 2\n",
    "<<: {a: 1}\nb: 2\n",
    "= : 1\n",
    "? [a]\n: 1\n",
    "a: !!binary aGVsbG8=\n",
    "t: 2026-01-01\n",
    "t: 2026-13-45\n",
    "a: !!set {x, y}\n",
    "a: !!omap [x: 1]\n",
    "a: !custom 1\n",
    "a: !!str 1\nb: !!int '7'\nc: !!float 1\nd: !!null ''\n",
    "a: .nan\n.inf: 2\nnull: 1\n~: 2\n{1: a, 1.0: b}: 3\n",
    "{1: a, 1.0: b}\n",
    "- a\n- b: c\n",
    "[" * 2000 + "]" * 2000,
]


def _read(data: bytes) -> tuple[Any, ...]:
    try:
        located = _yamlread.load_yaml_located(data, file="config.yaml")
    except ProfileConfigError as exc:
        return ("error", str(exc))
    lines: dict[tuple[Any, ...], Any] = {}

    def walk(node: Any, path: tuple[Any, ...]) -> None:
        lines[path] = located.marks.by_id.get(id(node))
        if isinstance(node, dict | list):
            for key, value in node.items() if isinstance(node, dict) else enumerate(node):
                walk(value, (*path, repr(key)))

    walk(located.doc, ())
    return ("ok", repr(located.doc), lines)


def _both(data: bytes) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    direct = _read(data)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(
            _yamlread._StrictLoader, "construct_document", _yamlread._Base.construct_document
        )
        pyyaml = _read(data)
    return direct, pyyaml


@pytest.mark.parametrize("text", EDGES)
def test_edge_documents_read_as_pyyaml_builds_them(text: str) -> None:
    direct, pyyaml = _both(text.encode())
    assert direct == pyyaml


@FUZZ
@given(yaml_documents(), st.sampled_from([False, True, None]))
def test_arbitrary_documents_read_as_pyyaml_builds_them(doc: object, flow: bool | None) -> None:
    direct, pyyaml = _both(yaml.safe_dump(doc, default_flow_style=flow).encode())
    assert direct == pyyaml


@FUZZ
@given(config_bytes())
def test_arbitrary_bytes_read_as_pyyaml_builds_them(data: bytes) -> None:
    direct, pyyaml = _both(data)
    assert direct == pyyaml
