"""Long and adversarial lines are decided, and no regex of the analysis nests quantifiers (docs/security.md#linear-time).

Time itself is measured by bench/gate_latency.py (1, 8 and 64 KiB lines); here
hypothesis feeds long lines built from the fragments that made earlier regexes
quadratic, and every compiled pattern of ``multiplex.shell`` is checked for a
repeat inside a repeat.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import multiplex.shell
from multiplex.shell import Place, find_dangerous, find_hardline, find_named, parse_line

FRAGMENTS = [
    "x", "a ", "$", "x$", "\\x", "f() ", "(", ")", "{", "}", "'", '"', "`", "$(", "<(", ">(",
    "fork", " ", "\t", "while", "rm -rf ", "~/", "../", ".*", "${HOME:-", "/dev/tcp/", "|",
    "&", ";", "=", "-", "--", "@", ":", "*", "[", "]", "\\", "echo ", "sh -c ", "eval ",
]  # fmt: skip
PLACE = Place(cwd="/home/u/work", homes=("/home/u",), others=("/srv/p/other",))


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(st.lists(st.sampled_from(FRAGMENTS), min_size=1, max_size=8), st.integers(500, 8000))
def test_long_adversarial_lines_are_decided(pieces: list[str], repeat: int) -> None:
    line = ("".join(pieces) * repeat)[:65_536]
    parsed = parse_line(line)
    find_hardline(parsed, place=PLACE)
    find_named(parsed, PLACE)
    found = find_dangerous(parsed, place=PLACE)
    # A long line is either judged or reported as unparseable/over a limit: never waved through silently.
    assert found is not None or (parsed.error is None and parsed.over_limit is None)


def _nested(tree: Any, inside: bool = False) -> bool:
    for op, arg in tree:
        name = str(op)
        if name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            _low, high, sub = arg
            unbounded = high == re._constants.MAXREPEAT or high > 64  # type: ignore[attr-defined]
            if inside and unbounded:
                return True
            if _nested(sub, inside or unbounded):
                return True
        elif name in ("SUBPATTERN", "ATOMIC_GROUP"):
            if _nested(arg[-1], inside):
                return True
        elif name == "BRANCH" and any(_nested(branch, inside) for branch in arg[1]):
            return True
    return False


def test_no_pattern_nests_unbounded_quantifiers() -> None:
    found = []
    for info in pkgutil.iter_modules(multiplex.shell.__path__, "multiplex.shell."):
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if isinstance(value, re.Pattern):
                tree = re._parser.parse(value.pattern, value.flags)  # type: ignore[attr-defined]
                if _nested(list(tree)):
                    found.append(f"{info.name}.{name}")
    assert not found, found


def test_the_nesting_check_sees_nested_quantifiers() -> None:
    assert _nested(list(re._parser.parse(r"(a+)+")))  # type: ignore[attr-defined]
    assert _nested(list(re._parser.parse(r"(?:x\s*)*y")))  # type: ignore[attr-defined]
    assert not _nested(list(re._parser.parse(r"a*b*(?:ab|c)+")))  # type: ignore[attr-defined]


def test_every_pattern_is_documented() -> None:
    from pathlib import Path

    from multiplex.shell import DANGEROUS, HARDLINE

    text = (Path(__file__).resolve().parents[2] / "docs" / "security.md").read_text()
    missing = [p.name for p in HARDLINE + DANGEROUS if f"`{p.name}`" not in text]
    assert not missing, missing
