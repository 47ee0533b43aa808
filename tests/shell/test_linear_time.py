"""Long and adversarial lines are decided, and no regex of the analysis nests quantifiers (docs/security.md#linear-time).

Time itself is measured by bench/gate_latency.py (1, 8 and 64 KiB lines); here
hypothesis feeds long lines built from the fragments that made earlier regexes
quadratic, and every pattern of ``multiplex.shell`` (compiled at module level or
written inline as ``re.search(r"…")``) is checked for a repeat inside a repeat and
for two unbounded repeats in a row that can take the same characters.
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import multiplex.shell
from multiplex.shell import Place, find_dangerous, find_hardline, find_named, parse_line

FRAGMENTS = [
    "x", "a ", "$", "x$", "\\x", "f() ", "(", ")", "{", "}", "'", '"', "`", "$(", "<(", ">(",
    "fork", " ", "\t", "while", "rm -rf ", "~/", "../", ".*", "${HOME:-", "/dev/tcp/", "|",
    "&", ";", "=", "-", "--", "@", ":", "*", "[", "]", "\\", "echo ", "sh -c ", "eval ", ",",
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
        elif name == "SUBPATTERN":
            if _nested(arg[-1], inside):
                return True
        elif name == "ATOMIC_GROUP":  # (?>…), as fnmatch.translate writes: arg is the group
            if _nested(arg, inside):
                return True
        elif name == "BRANCH" and any(_nested(branch, inside) for branch in arg[1]):
            return True
    return False


def _patterns() -> Iterator[tuple[str, Any]]:
    """(where, parsed pattern) for every regex of multiplex.shell, compiled or inline."""
    for info in pkgutil.walk_packages(multiplex.shell.__path__, "multiplex.shell."):
        module = importlib.import_module(info.name)
        assert module.__file__ is not None
        for name, value in vars(module).items():
            if isinstance(value, re.Pattern):
                yield f"{info.name}.{name}", re._parser.parse(value.pattern, value.flags)  # type: ignore[attr-defined]
        source = ast.parse(Path(module.__file__).read_text())
        for node in ast.walk(source):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id == "re"
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)
            ):
                yield f"{info.name}:{node.lineno}", re._parser.parse(node.args[0].value)  # type: ignore[attr-defined]


def test_no_pattern_nests_unbounded_quantifiers() -> None:
    found = [where for where, tree in _patterns() if _nested(list(tree))]
    assert not found, found


_SAMPLE = [chr(i) for i in range(128)]


def _category(cat: Any, ch: str) -> bool:
    name = str(cat)
    kinds = {"DIGIT": ch.isdigit(), "SPACE": ch in " \t\n\r\f\v", "WORD": ch.isalnum() or ch == "_"}
    found = next((v for k, v in kinds.items() if k in name), True)
    return not found if "NOT" in name else found


def _chars(op: Any, arg: Any, flags: int) -> frozenset[str] | None:
    """The sample characters one single-character item matches (None: not such an item)."""

    def literal(code: int, ch: str) -> bool:
        return ch == chr(code) or bool(flags & re.IGNORECASE and ch.lower() == chr(code).lower())

    def member(ch: str) -> bool:
        for o, a in arg:
            kind = str(o)
            if (kind == "LITERAL" and literal(a, ch)) or (kind == "CATEGORY" and _category(a, ch)):
                return True
            if kind == "RANGE" and any(
                a[0] <= ord(c) <= a[1] for c in {ch, ch.lower(), ch.upper()}
            ):
                return True
        return False

    name = str(op)
    tests = {
        "LITERAL": lambda ch: literal(arg, ch),
        "NOT_LITERAL": lambda ch: not literal(arg, ch),
        "ANY": lambda ch: ch != "\n" or bool(flags & re.DOTALL),
        "CATEGORY": lambda ch: _category(arg, ch),
        "IN": lambda ch: member(ch) != any(str(o) == "NEGATE" for o, _ in arg),
    }
    test = tests.get(name)
    return None if test is None else frozenset(ch for ch in _SAMPLE if test(ch))


def _repeat(op: Any, arg: Any, flags: int) -> tuple[bool, frozenset[str] | None]:
    """(unbounded, characters of a one-character body) of a greedy or lazy repeat."""
    body = list(arg[2])
    chars = _chars(*body[0], flags) if len(body) == 1 else None
    return arg[1] == re._constants.MAXREPEAT or arg[1] > 64, chars  # type: ignore[attr-defined]


def _inside(op: Any, arg: Any) -> list[Any]:
    """The sequences nested in one item (group, alternatives, repeated body)."""
    name = str(op)
    if name == "SUBPATTERN":
        return [arg[-1]]
    if name == "ATOMIC_GROUP":
        return [arg]
    if name == "BRANCH":
        return list(arg[1])
    return [arg[2]] if name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT") else []


def _overlapping(items: Any, flags: int) -> bool:
    """Two unbounded repeats in a row whose characters meet, with nothing between them
    that the first cannot take or skip: ``\\s*\\(?\\s*``, ``[^}]*,[^}]*`` (quadratic on a miss)."""
    items = list(items)
    for i, (op, arg) in enumerate(items):
        if any(_overlapping(sub, flags) for sub in _inside(op, arg)):
            return True
        if str(op) not in ("MAX_REPEAT", "MIN_REPEAT"):
            continue
        unbounded, first = _repeat(op, arg, flags)
        if not unbounded or first is None:
            continue
        for op2, arg2 in items[i + 1 :]:
            if str(op2) in ("MAX_REPEAT", "MIN_REPEAT"):
                unbounded2, second = _repeat(op2, arg2, flags)
                if unbounded2 and (second is None or first & second):
                    return True
                if arg2[0] == 0 or (second is not None and second <= first):
                    continue
                break
            chars = _chars(op2, arg2, flags)
            if str(op2) != "AT" and (chars is None or not chars <= first):
                break
    return False


def test_no_two_quantifiers_in_a_row_take_the_same_characters() -> None:
    found = [where for where, tree in _patterns() if _overlapping(list(tree), tree.state.flags)]
    assert not found, found


def test_the_overlap_check_sees_overlapping_quantifiers() -> None:
    def check(pattern: str) -> bool:
        tree = re._parser.parse(pattern)  # type: ignore[attr-defined]
        return _overlapping(list(tree), tree.state.flags)

    assert check(r"rm_rf\s*\(?\s*['\"]")
    assert check(r"\{([^{}\s$]*,[^{}\s]*)\}")
    assert check(r"x(?:a\w*\d+)")
    assert not check(r"rm_rf\s*(?:\(\s*)?['\"]")
    assert not check(r"\{([^{}\s$,]*,[^{}\s]*)\}")
    assert not check(r"\bUPDATE\s+[\w.]+\s+SET\b")


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


def test_a_command_with_many_targets_is_asked_once_whether_it_unpacks(
    monkeypatch: Any,
) -> None:
    # each_persistence asks it for every target it writes: once per command, or a line of
    # many words grows as their square.
    from multiplex.shell.detection.paths import _writes

    calls: list[object] = []
    real = _writes._unpacks
    monkeypatch.setattr(_writes, "_unpacks", lambda cmd: calls.append(cmd) or real(cmd))
    find_named(parse_line("rm " + " ".join(f"f{i}" for i in range(500))), PLACE)
    assert len(calls) == 1
