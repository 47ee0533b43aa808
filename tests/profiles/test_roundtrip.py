"""The locked, atomic, comment-preserving write of command_allowlist (docs/allowlist.md)."""

from __future__ import annotations

import math
import os
import re
import stat
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from multiplex._errors import ProfileConfigError
from multiplex.profiles._loader import read_allowlist
from multiplex.profiles.allowlist._roundtrip import AllowlistMemo, commit_grants, update_allowlist
from tests.profiles.intents import Poster

OPERATOR_FILE = """\
# research profile -- hand edited, keep my notes
terminal:
  backend: local      # no container
  cwd: "~/src"        # quoted on purpose
  env: {EDITOR: vim}
  timeout: 180
command_allowlist:    # approved commands
  - git status        # the classic
  # reading only below
  - 'ls *'
  - "grep -r TODO ."
approvals:
  mode: 'manual'
  deny: [rm -rf *]
  timeout: .nan       # odd but valid
security:
  redact_secrets: yes
"""


def set_to(new: list[str]):  # type: ignore[no-untyped-def]
    return lambda on_disk: list(new)


def write(path: Path, new: list[str], memo: AllowlistMemo | None = None) -> list[str]:
    return update_allowlist(path, set_to(new), lock_timeout=5, memo=memo)


def outside_list(text: str) -> list[str]:
    """The lines of a file that are not list items of command_allowlist."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("command_allowlist:"))
    end = next(
        (i for i in range(start + 1, len(lines)) if re.match(r"[A-Za-z_]", lines[i])), len(lines)
    )
    items = [line for line in lines[start + 1 : end] if re.match(r"\s*- ", line)]
    key_line = lines[start].replace(" []", "")  # `[]` when the list is empty
    return [
        *lines[:start],
        key_line,
        *(x for x in lines[start + 1 : end] if x not in items),
        *lines[end:],
    ]


def doc_without_list(path: Path) -> dict[str, object]:
    doc = yaml.safe_load(path.read_text())
    doc.pop("command_allowlist", None)
    return doc


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "config.yaml"
    path.write_text(OPERATOR_FILE)
    return path


def test_a_grant_appends_one_line_and_keeps_every_other_byte(config: Path) -> None:
    write(config, ["git status", "ls *", "grep -r TODO .", "docker *"])
    expected = OPERATOR_FILE.replace(
        '  - "grep -r TODO ."\n', '  - "grep -r TODO ."\n  - docker *\n'
    )
    assert config.read_text() == expected


def test_a_removal_drops_only_that_line(config: Path) -> None:
    write(config, ["git status", "grep -r TODO ."])
    assert config.read_text() == OPERATOR_FILE.replace("  - 'ls *'\n", "")


def test_an_empty_list_becomes_flow_brackets_and_reads_back_empty(config: Path) -> None:
    write(config, [])
    assert read_allowlist(config) == []
    assert "command_allowlist: []    # approved commands" in config.read_text()
    assert outside_list(config.read_text()) == outside_list(OPERATOR_FILE)


def test_comments_and_other_keys_survive_100_grants_and_revocations(config: Path) -> None:
    memo = AllowlistMemo()
    current = read_allowlist(config)
    for step in range(100):
        if step % 3 == 2 and current:
            current = current[1:] if step % 2 else current[:-1]
        else:
            current = [*current, f"tool{step} --flag '{step}' *"]
        write(config, current, memo if step % 4 else None)  # both the memo and the full path
        assert read_allowlist(config) == current
        assert outside_list(config.read_text()) == outside_list(OPERATOR_FILE)
    nan_doc = yaml.safe_load(config.read_text())
    assert math.isnan(nan_doc["approvals"]["timeout"])


@pytest.mark.parametrize(
    "before",
    [
        "terminal: {timeout: 5}\ncommand_allowlist: []  # none yet\n",
        "command_allowlist: [git status, 'ls *']\nsecurity: {redact_secrets: false}\n",
        "command_allowlist:\n# nothing\nsecurity: {redact_secrets: false}\n",
        "command_allowlist: null\n",
        "# only a comment\n",
        "",
        "command_allowlist: \"['git status', 'ls *']\"  # legacy\n",
        "terminal:\n  timeout: 5\ncommand_allowlist:\n- git status\n- ls *\napprovals: {mode: off}\n",
        "command_allowlist:\r\n  - git status\r\nterminal:\r\n  timeout: 5\r\n",
        "command_allowlist: [git status,\n   'ls *']\nterminal:\n  timeout: 5\n",
        "command_allowlist:\n  - git\n    status\n",
        "terminal:\n  timeout: 5\ncommand_allowlist:\n  - git status",
        "{terminal: {timeout: 5}, command_allowlist: [a]}\n",
    ],
    ids=[
        "empty-flow",
        "one-line-flow",
        "null-with-comment",
        "explicit-null",
        "comment-only",
        "empty-file",
        "legacy-string",
        "indentless",
        "crlf",
        "multi-line-flow",
        "multi-line-item",
        "no-final-newline",
        "flow-mapping",
    ],
)
def test_every_shape_is_written_as_the_new_list_with_other_keys_intact(
    tmp_path: Path, before: str
) -> None:
    path = tmp_path / "config.yaml"
    path.write_bytes(before.encode())
    old = yaml.safe_load(before) or {}
    old.pop("command_allowlist", None)
    for new in (["docker *", "git status"], ["npm test"], []):
        write(path, new)
        assert read_allowlist(path) == new
        assert doc_without_list(path) == old
    for comment in re.findall(r"#.*", before):
        assert comment in path.read_text(), "an operator comment was lost"
    if "\r\n" in before:
        assert path.read_bytes().count(b"\n") == path.read_bytes().count(b"\r\n")


def test_a_missing_file_is_created_with_a_block_list(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    write(path, ["ls *"])
    assert path.read_text() == "command_allowlist:\n  - ls *\n"


def test_a_malformed_file_is_refused_and_left_byte_for_byte(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    for broken in ("command_allowlist: [a\n", "command_allowlist: {a: 1}\n", "a: &x 1\nb: *x\n"):
        path.write_text(broken)
        with pytest.raises(ProfileConfigError):
            write(path, ["git status"])
        assert path.read_text() == broken


def test_an_unchanged_list_is_not_written(config: Path) -> None:
    before = os.stat(config)
    assert write(config, ["git status", "ls *", "grep -r TODO ."]) == [
        "git status",
        "ls *",
        "grep -r TODO .",
    ]
    after = os.stat(config)
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)


def test_compute_gets_the_list_read_under_the_lock(config: Path) -> None:
    seen: list[list[str]] = []

    def compute(on_disk: list[str]) -> list[str]:
        seen.append(on_disk)
        return [*on_disk, "make"]

    memo = AllowlistMemo()
    update_allowlist(config, compute, lock_timeout=5, memo=memo)
    # Someone else edits the list by hand between our writes: the memo must notice.
    config.write_text(config.read_text().replace("  - 'ls *'\n", "  - cargo build  # new\n"))
    update_allowlist(config, compute, lock_timeout=5, memo=memo)
    assert seen[1] == ["git status", "cargo build", "grep -r TODO .", "make"]
    assert read_allowlist(config) == ["git status", "cargo build", "grep -r TODO .", "make", "make"]


def test_mode_is_kept_and_the_lock_sidecar_stays(config: Path) -> None:
    config.chmod(0o640)
    write(config, ["x"])
    assert stat.S_IMODE(config.stat().st_mode) == 0o640
    assert (config.parent / "config.yaml.lock").exists()


def test_a_symlinked_config_stays_a_symlink(tmp_path: Path, config: Path) -> None:
    link = tmp_path / "link.yaml"
    link.symlink_to(config)
    write(link, ["x"])
    assert link.is_symlink()
    assert read_allowlist(config) == ["x"]


def test_stale_temp_files_of_a_dead_writer_are_removed(config: Path) -> None:
    stale = config.parent / ".config.yaml.allowlist-99999-abc.tmp"
    stale.write_text("half written")
    write(config, ["x"])
    assert not stale.exists()
    assert [p.name for p in config.parent.iterdir() if p.name.endswith(".tmp")] == []


def test_a_result_over_one_mebibyte_is_refused(config: Path) -> None:
    huge = [f"tool --case {i} {'x' * 200}" for i in range(6000)]
    with pytest.raises(ProfileConfigError, match="1 MiB"):
        write(config, huge)
    assert config.read_text() == OPERATOR_FILE


rule_text = st.text(
    alphabet=st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp")), min_size=1, max_size=12
).filter(lambda s: s.strip() == s and s)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(lists=st.lists(st.lists(rule_text, max_size=6), min_size=1, max_size=6))
def test_any_list_of_strings_round_trips_and_the_memo_path_writes_the_same_text(
    tmp_path_factory: pytest.TempPathFactory, lists: list[list[str]]
) -> None:
    base = tmp_path_factory.mktemp("rt")
    with_memo, fresh = base / "a.yaml", base / "b.yaml"
    with_memo.write_text(OPERATOR_FILE)
    fresh.write_text(OPERATOR_FILE)
    memo = AllowlistMemo()
    for new in lists:
        write(with_memo, new, memo)
        write(fresh, new)
        assert read_allowlist(with_memo) == new
        assert with_memo.read_text() == fresh.read_text()
        assert outside_list(with_memo.read_text()) == outside_list(OPERATOR_FILE)


def test_one_write_carries_the_intents_of_live_processes_and_drops_dead_ones(config: Path) -> None:
    live = Poster(config, ["make", "ls *"])
    dead = Poster(config, ["rm -rf *"]).die()  # its lock went with it
    try:
        written = commit_grants(config, ["docker *"], lock_timeout=5)
    finally:
        live.die()
    assert written == ["git status", "ls *", "grep -r TODO .", "make", "docker *"]
    assert read_allowlist(config) == written
    assert not live.intent.exists() and not dead.intent.exists()
    assert [p.name for p in config.parent.iterdir() if p.suffix in (".json", ".tmp")] == []
    assert list((config.parent / ".multiplex-state").iterdir()) == []
