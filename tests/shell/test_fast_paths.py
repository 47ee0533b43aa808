"""The gate's fast paths decide exactly as the forms they replace (issue 32 target 3).

Each fast path (one regex for a list of globs, an index before a glob match, a first
test that proves a check cannot fire) has its reference form here, the code it
replaced. Every line of the test corpora, and lines made of shell fragments, is
decided twice, once with each, and every finding the gate reads must agree: the
hardline, named and dangerous patterns, another profile's home, the deny match, every
danger, and the verdict with its trace.
"""

from __future__ import annotations

import fnmatch
import functools
import importlib
import posixpath
import re
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from multiplex import Supervisor
from multiplex.shell import (
    Place,
    RuleSet,
    deny_match,
    find_dangerous,
    find_dangers,
    find_hardline,
    find_named,
    find_other_home,
    parse_line,
)
from multiplex.shell.carriers import _runners
from multiplex.shell.detection import _inert
from multiplex.shell.detection.paths import _secret_paths, _writes
from multiplex.shell.parsing import _getopt, _plain
from tests.conftest import write_home

REPO = Path(__file__).resolve().parents[2]


# ---- the reference forms ------------------------------------------------------------


def _sensitive(path: str) -> bool:
    path = re.sub(r"^(\$\{HOME\}|\$HOME\b)", "~", path.strip())
    norm = posixpath.normpath(re.sub(r"/+", "/", path)) if path else path
    if norm.rsplit("/", 1)[-1] in _writes._SENSITIVE_NAMES:
        return True
    return any(fnmatch.fnmatchcase(norm, pattern) for pattern in _writes._SENSITIVE)


def _secrets_glob(path: str) -> bool:
    return any(fnmatch.fnmatchcase(path, p) for p in _secret_paths._SECRETS)


def _persistence_glob(path: str) -> bool:
    return any(fnmatch.fnmatchcase(path, p) for p in _secret_paths._PERSISTENCE)


def _tilde(path: str, place: Place) -> str:
    norm = posixpath.normpath(path) if "/." in path or "//" in path or path.endswith("/") else path
    for home in place.homes:
        home = posixpath.normpath(home)
        if norm == home:
            return "~"
        if norm.startswith(home + "/"):
            return "~" + norm[len(home) :]
    return norm


def _is_persistence_path(path: str) -> bool:
    if posixpath.basename(path) in _secret_paths.STARTUP:
        return True
    if not _secret_paths._PERSISTENCE_KEY.search(path):
        return False
    return _persistence_glob(path)


def _glob_reaches_secret(path: str) -> bool:
    parts = path.split("/")
    for k in range(2, len(parts) + 1):
        head = parts[:k]
        if not any(c in part for part in head for c in "*?["):
            continue
        examples = _secret_paths._EXAMPLES
        if any(
            len(example) == k and _secret_paths._expands_to(head, example) for example in examples
        ):
            return True
    return False


def _plain_lines(line: str) -> _plain.Pipelines | None:
    if "==" in line:
        return None
    masked = _plain._masked(line) if "'" in line or '"' in line else line
    if masked is None or not _plain._CHAIN.fullmatch(masked):
        return None
    if "&" in masked.replace("&&", "") or "|&" in masked or "&&&" in masked or "|||" in masked:
        return None
    out = _plain.Pipelines()
    out.listed = bool(_plain._LISTED.search(masked))
    at = 0
    for element in _plain._LIST_OPS.split(masked):
        stages: list[tuple[tuple[str, ...], str]] = []
        for stage in element.split("|"):
            start = masked.index(stage, at)
            at = start + len(stage)
            original = line[start:at]
            argv = (
                _plain.plain_argv(original)
                if stage == original
                else _plain._quoted_argv(original, stage)
            )
            if argv is None:
                return None
            stages.append((argv, original.strip(" ")))
        out.append(stages)
    if len(out) > 1 and any(len(stages) > 2 for stages in out):
        return None
    return out


def _resolve(self: _getopt.OptionTable, name: str) -> tuple[str, ...]:
    if name in self.longs:
        return (name,)
    return tuple(o for o in self.longs if o.startswith(name)) if name else ()


def _has(self: _getopt.Parsed, *names: str) -> bool:
    wanted = set(names)
    return any(wanted.intersection(found) for found, _ in self.options)


def _values(self: _getopt.Parsed, *names: str) -> list[str]:
    wanted = set(names)
    return [v for found, v in self.options if v is not None and wanted.intersection(found)]


def _carried_of(
    payloads: object,
    runs: str | None = None,
    unknown: str | None = None,
    writes: tuple[str, ...] = (),
    scripts: tuple[str, ...] = (),
) -> _runners.Carried:
    kept = tuple(p for p in payloads if p.strip())  # type: ignore[attr-defined]
    return _runners.Carried(kept, runs, unknown, writes, scripts)


class _Match:
    """A stand-in for a compiled regex's ``match``: what the reference form answers."""

    def __init__(self, test: Callable[[str], bool]) -> None:
        self.test = test

    def match(self, text: str) -> object | None:
        return True if self.test(text) else None


def _never_inert(parsed: object, place: Place, protected: tuple[str, ...]) -> bool:
    return False  # every check runs on every line (docs/security.md#inert-lines)


# (module, attribute, reference): each fast path and the form it replaced.
REFERENCES: list[tuple[object, str, object]] = [
    (_writes, "sensitive", _sensitive),
    (_secret_paths, "_SECRETS_GLOB", _Match(_secrets_glob)),
    (_secret_paths, "_PERSISTENCE_GLOB", _Match(_persistence_glob)),
    (_secret_paths, "_glob_reaches_secret", _glob_reaches_secret),
    (_secret_paths, "_tilde", _tilde),
    (_secret_paths, "is_persistence_path", _is_persistence_path),
    (_getopt.OptionTable, "resolve", _resolve),
    (_getopt.Parsed, "has", _has),
    (_getopt.Parsed, "values", _values),
    (_runners, "carried_of", _carried_of),
    (_plain, "plain_lines", _plain_lines),
    (_inert, "inert", _never_inert),
]


@contextmanager
def _references() -> Iterator[None]:
    """Every fast path replaced by its reference form (also where it was imported)."""
    saved: list[tuple[object, str, object]] = []
    for owner, name, reference in REFERENCES:
        fast = vars(owner)[name]
        holders = [owner] + [
            other
            for other in list(sys.modules.values())
            if other is not owner
            and getattr(other, "__name__", "").startswith("multiplex.")
            and getattr(other, name, None) is fast
        ]
        for holder in holders:
            saved.append((holder, name, fast))
            setattr(holder, name, reference)
    try:
        yield
    finally:
        for module, name, fast in saved:
            setattr(module, name, fast)


def _clear_line_caches() -> None:
    """Nothing one decision computed is seen by the next (the bench does the same)."""
    for clear in _line_caches():
        clear()


@functools.cache
def _line_caches() -> tuple[Callable[[], None], ...]:
    """``cache_clear`` of each per-line functools cache of the gate's modules, found once:
    those that depend only on a profile's rules or a turn's place stay, as in the bench."""
    sys.path.insert(0, str(REPO / "bench"))
    try:
        from gate_latency import RULE_CACHES
    finally:
        sys.path.remove(str(REPO / "bench"))
    return tuple(
        value.cache_clear
        for name, module in list(sys.modules.items())
        if name.startswith(("multiplex.shell", "multiplex.approval"))
        for attr, value in list(vars(module).items())
        if isinstance(value, functools._lru_cache_wrapper) and attr not in RULE_CACHES
    )


# ---- the lines ------------------------------------------------------------------------

_LINE_MODULES = (
    "tests.shell.test_carriers_round3",
    "tests.shell.test_carriers_round4",
    "tests.shell.test_carriers_round5",
    "tests.shell.test_bound_values",
    "tests.shell.test_siblings_round6",
)


def _strings(value: object, out: dict[str, None], depth: int = 0) -> None:
    if isinstance(value, str):
        out.setdefault(value, None)
    elif depth < 4 and isinstance(value, (list, tuple, set, frozenset)):
        for item in value:
            _strings(item, out, depth + 1)
    elif depth < 4 and isinstance(value, dict):
        for key, item in value.items():
            _strings(key, out, depth + 1)
            _strings(item, out, depth + 1)


def corpus_lines() -> list[str]:
    """Every line string of the gate's test corpora and of bench/_common.ORDINARY_CORPUS."""
    out: dict[str, None] = {}
    for path in sorted((REPO / "tests/approval/corpus").glob("*.tsv")):
        for raw in path.read_text(encoding="utf-8").splitlines():
            if raw.strip() and not raw.startswith("#"):
                out.setdefault(raw.split("\t")[-1], None)
    ordinary = (REPO / "tests/shell/corpus/ordinary.txt").read_text(encoding="utf-8")
    for raw in ordinary.splitlines():
        if raw.strip() and not raw.startswith("#"):
            out.setdefault(raw.replace("<NL>", "\n"), None)
    for name in _LINE_MODULES:
        module = importlib.import_module(name)
        for value in vars(module).values():
            _strings(value, out)
            for mark in getattr(value, "pytestmark", ()):
                if mark.name == "parametrize" and len(mark.args) > 1:
                    _strings(mark.args[1], out)
    return [line for line in out if line.strip()]


# ---- the decisions compared ---------------------------------------------------------

DENY = ("git push *", "systemctl stop *", "kubectl delete *", "docker rm *", "curl *")


@pytest.fixture(scope="module")
def sup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Supervisor]:
    root = tmp_path_factory.mktemp("fast-paths")
    deny = "".join(f"    - '{rule}'\n" for rule in DENY)
    config = f"approvals:\n  deny:\n{deny}terminal:\n  cwd: work\n"
    write_home(root / "profiles", "manual", config, files={"work/README.md": "x\n"})
    write_home(root / "profiles", "ci-bot", "", files={"credentials/registry.json": "{}\n"})
    (root / "multiplex.yaml").write_text("profiles_dir: profiles\ndefault_profile: null\n")
    supervisor = Supervisor.from_config(root / "multiplex.yaml")
    yield supervisor
    supervisor.close()


def _place(sup: Supervisor) -> Place:
    home = str(sup.profile("manual").home)
    other = str(sup.profile("ci-bot").home)
    return Place(
        cwd=home + "/work", homes=(home,), others=(other,), profiles_dirs=(str(Path(home).parent),)
    )


def _shown(found: object) -> object:
    if found is None:
        return None
    return (found.pattern.name, found.evidence, found.where)  # type: ignore[attr-defined]


def decided(sup: Supervisor, place: Place, line: str) -> tuple[object, ...]:
    """Everything the gate reads of ``line``, each from a fresh parse."""
    _clear_line_caches()
    parsed = parse_line(line)
    out: list[object] = [
        _shown(find_other_home(parsed, place)),
        _shown(find_hardline(parsed, place=place)),
        _shown(find_named(parsed, place)),
        _shown(find_dangerous(parsed, place=place)),
        tuple(_shown(f) for f in find_dangers(parsed, place)),
        deny_match(RuleSet(DENY, ignore_case_program=True), parsed, cwd=place.cwd),
    ]
    _clear_line_caches()
    verdict = sup.test("manual", line)
    out.append((verdict.outcome, verdict.cause, verdict.rule, verdict.dangers))
    out.append(tuple(tuple(sorted(t.as_dict().items())) for t in verdict.trace))
    return tuple(out)


def _both(
    sup: Supervisor, place: Place, line: str
) -> tuple[tuple[object, ...], tuple[object, ...]]:
    fast = decided(sup, place, line)
    with _references():
        reference = decided(sup, place, line)
    return fast, reference


def test_the_references_replace_something() -> None:
    for module, name, _ in REFERENCES:
        assert hasattr(module, name), (module, name)
    assert len(corpus_lines()) > 1000


@pytest.mark.slow
def test_every_corpus_line_is_decided_alike(sup: Supervisor) -> None:
    place = _place(sup)
    differ = []
    for line in corpus_lines():
        fast, reference = _both(sup, place, line)
        if fast != reference:
            differ.append((line, fast, reference))
    assert not differ, differ[:3]


PROGRAMS = (
    "cat", "tar czf", "tar xf", "cp", "cp -r", "mv", "rm -rf", "rm", "tee", "sed -i", "find",
    "ls", "git log", "git config", "curl -o", "wget -O", "chmod 600", "docker run -v",
    "sort -o", "vim", "python -m pytest --junit-xml", "dd of=", "unzip -d", "echo", "grep -r",
    "scp", "rsync -a", "systemctl enable", "ssh-keygen -f", "install",
)  # fmt: skip
PATHS = (
    "~/.ssh/id_rsa", "~/.ss?/id_*", "~/.ssh", "/etc/*", "/etc/passwd", "/etc/sha*", "*.py",
    "'*.py'", ".[test]", "'.[test]'", "~/work/x", "../../ci-bot/x", "$HOME/.bashrc", "~/.bashrc",
    "~/.aws/cred*", "~/.a?s/credentials", "~/*/*", "~/.config/autostart/x.desktop", "/usr/*",
    "/lib64/x", "~/.kube/config", "~/.docker/config.json", "~/.git-credentials", "out.json",
    "src/", "build/ui", "/var/log/syslog", "~/.gnupg/*", "/proc/sys/x", "~/.netrc", ".env",
    "~/.local/bin/x", "~/.vimrc", "/root/x", "/boot/*", "/bin/sh", "x.tgz", "~/.*", "*",
    "{a,b}", "~/.{ssh,aws}/*", "/dev/sda", ".git/hooks/pre-commit", "~/.gitconfig",
)  # fmt: skip
PLACES = (
    Place(cwd="/h/u/work", homes=("/h/u",)),
    Place(cwd="/h/u", homes=("/h/u/", "/h//p/./")),
    Place(homes=("/etc/../root",)),
    Place(),
)
JOINERS = (" ", " && ", " | ", "; ", " > ", " < ")


@st.composite
def fragment_lines(draw: st.DrawFn) -> str:
    parts = [draw(st.sampled_from(PROGRAMS))]
    for _ in range(draw(st.integers(1, 4))):
        if draw(st.booleans()):
            parts.append(draw(st.sampled_from(JOINERS)) + draw(st.sampled_from(PROGRAMS)))
        parts.append(" " + draw(st.sampled_from(PATHS)))
    return "".join(parts)


@pytest.mark.slow
@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(line=fragment_lines())
def test_lines_of_shell_fragments_are_decided_alike(sup: Supervisor, line: str) -> None:
    fast, reference = _both(sup, _place(sup), line)
    assert fast == reference


COMPONENTS = (
    "~", "", "etc", ".ssh", ".ss?", "*", ".*", "id_*", "[.]ssh", ".aws", "credentials", "cred*",
    "x", ".config", "usr", "lib*", "bin", "gcloud", "?", "work", "*.py", ".[test]", "shadow",
    "root", "home", "u", "h", "p", ".kube", "config", ".", "..", "$HOME", "${HOME}", "$HOMEX",
    "autostart", ".bashrc", "systemd", "user", ".git", "hooks",
)  # fmt: skip


@settings(max_examples=2000, deadline=None)
@given(path=st.lists(st.sampled_from(COMPONENTS), min_size=1, max_size=6).map("/".join))
def test_path_helpers_answer_as_before(path: str) -> None:
    assert _writes.sensitive(path) == _sensitive(path)
    assert (_secret_paths._SECRETS_GLOB.match(path) is not None) == _secrets_glob(path)
    assert (_secret_paths._PERSISTENCE_GLOB.match(path) is not None) == _persistence_glob(path)
    assert _secret_paths.is_persistence_path(path) == _is_persistence_path(path)
    for place in PLACES:
        assert _secret_paths._tilde(path, place) == _tilde(path, place)
    reaches = _secret_paths._glob_reaches_secret.__wrapped__(path)  # type: ignore[attr-defined]
    assert reaches == _glob_reaches_secret(path)


def _tables() -> list[_getopt.OptionTable]:
    found: dict[int, _getopt.OptionTable] = {}
    for name, module in list(sys.modules.items()):
        if name.startswith("multiplex.shell"):
            for value in vars(module).values():
                tables = value.values() if isinstance(value, dict) else [value]
                for table in tables:
                    if isinstance(table, _getopt.OptionTable):
                        found[id(table)] = table
    return list(found.values())


def test_abbreviations_resolve_as_before() -> None:
    tables = _tables()
    assert len(tables) > 20
    for spec in tables:
        names = {"", "x", "-", "=", "zz"} | {o[:k] for o in spec.longs for k in range(len(o) + 1)}
        for name in sorted(names):
            assert spec.resolve(name) == _resolve(spec, name), (spec, name)


WORDS = ("-a", "-b", "-abc", "-o", "-ofile", "--out", "--output=x", "--eval", "--", "x", "y", "-")


@settings(max_examples=500, deadline=None)
@given(
    args=st.lists(st.sampled_from(WORDS), max_size=6),
    asked=st.lists(
        st.sampled_from(("-a", "-b", "-c", "-o", "--output", "--eval", "--x")), max_size=3
    ),
    at=st.integers(0, 1000),
)
def test_options_are_read_as_before(args: list[str], asked: list[str], at: int) -> None:
    tables = _tables()
    spec = tables[at % len(tables)]
    parsed = _getopt.read_options(args, spec)
    assert parsed.has(*asked) == _has(parsed, *asked)
    assert parsed.values(*asked) == _values(parsed, *asked)


PLAIN_WORDS = ("ls", "git", "-la", "src/x", "'a b'", '"c d"', "'$x'", "==", "a=b", "-", "x@y")


@settings(max_examples=1000, deadline=None)
@given(
    words=st.lists(st.sampled_from(PLAIN_WORDS), min_size=1, max_size=5),
    spaces=st.sampled_from((" ", "  ")),
    ends=st.sampled_from(("", " ", "  ")),
)
def test_plain_lines_of_one_stage_are_read_as_before(
    words: list[str], spaces: str, ends: str
) -> None:
    line = ends + spaces.join(words) + ends
    fast, reference = _plain.plain_lines(line), _plain_lines(line)
    assert fast == reference
    assert (fast is None) or fast.listed == reference.listed  # type: ignore[union-attr]
