"""``multiplex allowlist add --expires/--uses/--bind``, ``allowlist list`` and ``approvals suggest``
through the real console script (docs/allowlist.md#grants, docs/approvals.md#suggestions)."""

from __future__ import annotations

import json

from tests.conftest import run_cli

CONFIG = "# mine\ncommand_allowlist:\n  - git status   # keep me\napprovals:\n  mode: manual\n"


def test_grants_are_added_listed_with_their_state_and_removed(make_home, write_config) -> None:  # type: ignore[no-untyped-def]
    home = make_home("p", CONFIG, files={"workspace/build.py": "print('b')\n"})
    base = ("--config", str(write_config("profiles_dir: profiles\ndefault_profile: p\n")))
    added = run_cli(
        *base, "allowlist", "add", "-p", "p", "--expires", "8h", "--uses", "3", "npm run *"
    )
    assert added.returncode == 0 and "3 uses" in added.stdout, added.stderr
    dated = run_cli(*base, "allowlist", "add", "-p", "p", "--expires", "2099-12-31", "ls *")
    assert dated.returncode == 0 and "until 2099-12-31T00:00:00Z" in dated.stdout, dated.stderr
    bound = run_cli(*base, "allowlist", "add", "-p", "p", "--bind", "build.py", "python3 build.py")
    assert bound.returncode == 0 and "bound to build.py (sha256:" in bound.stdout, bound.stderr
    text = (home / "config.yaml").read_text()
    assert text.startswith("# mine\n") and "  - git status   # keep me\n" in text
    assert "  - {rule: 'ls *', expires: '2099-12-31T00:00:00Z'}\n" in text

    (home / "workspace" / "build.py").write_text("print('changed')\n")
    listed = run_cli(*base, "allowlist", "list", "-p", "p", "--json")
    assert listed.returncode == 0, listed.stderr
    rows = {r if isinstance(r, str) else r["rule"]: r for r in json.loads(listed.stdout)}
    assert rows["git status"] == "git status"
    assert rows["npm run *"]["uses_left"] == 3 and rows["npm run *"]["state"] == "active"
    assert rows["ls *"]["expires"] == "2099-12-31T00:00:00Z"
    assert rows["python3 build.py"]["state"] == "held"
    assert rows["python3 build.py"]["bind"][0]["state"] == "changed"
    human = run_cli(*base, "allowlist", "list", "-p", "p").stdout
    assert "python3 build.py    bound to build.py (changed)    [HELD]" in human
    assert "npm run *    expires " in human and "3 uses left    [active]" in human

    removed = run_cli(*base, "allowlist", "remove", "-p", "p", "npm run *")
    assert removed.returncode == 0, removed.stderr
    assert "npm run" not in (home / "config.yaml").read_text()


def test_bad_conditions_are_one_line_and_touch_nothing(make_home, write_config) -> None:  # type: ignore[no-untyped-def]
    home = make_home("p", CONFIG)
    base = ("--config", str(write_config("profiles_dir: profiles\ndefault_profile: p\n")))
    before = (home / "config.yaml").read_bytes()
    for args in (
        ("--expires", "soon"),
        ("--expires", "2001-01-01"),
        ("--bind", "missing.py"),
        ("--uses", "0"),
    ):
        result = run_cli(*base, "allowlist", "add", "-p", "p", *args, "npm test")
        assert result.returncode == 2, (args, result.stderr)
        assert "Traceback" not in result.stderr, result.stderr
    assert (home / "config.yaml").read_bytes() == before


def test_approvals_suggest_lists_rules_with_counts(make_home, write_config) -> None:  # type: ignore[no-untyped-def]
    make_home("p", CONFIG, files={"workspace/package.json": "{}\n"})
    base = ("--config", str(write_config("profiles_dir: profiles\ndefault_profile: p\n")))
    result = run_cli(
        *base,
        "approvals",
        "suggest",
        "-p",
        "p",
        "--json",
        "--",
        "npm",
        "run",
        "test:unit",
        "--",
        "--watch",
    )
    assert result.returncode == 0, result.stderr
    found = json.loads(result.stdout)
    assert found["command"] == "npm run test:unit -- --watch"
    assert [s["rule"] for s in found["suggestions"]] == [
        "npm run test:unit -- --watch",
        "npm run test:unit *",
        "npm run test:* *",
        "npm run *",
    ]
    assert found["suggestions"][0]["saves"] and found["suggestions"][0]["bind"] == ["package.json"]
    human = run_cli(*base, "approvals", "suggest", "-p", "p", "--", "npm run build")
    assert human.stdout.splitlines()[0].startswith("always saves: npm run build    (0 recorded")


def test_check_reports_a_grant_whose_rule_does_not_parse(make_home, write_config) -> None:  # type: ignore[no-untyped-def]
    make_home("p", "command_allowlist:\n  - git status\n  - {rule: '*', uses: 2}\n")
    config = write_config("profiles_dir: profiles\ndefault_profile: p\n")
    result = run_cli("--config", str(config), "check")
    assert result.returncode == 1
    assert "config.yaml:3: command_allowlist.1: invalid rule '*'" in result.stdout + result.stderr
