"""``multiplex allowlist list|add|remove`` (docs/allowlist.md, docs/cli.md) against a real file."""

from __future__ import annotations

import json

from tests.conftest import run_cli

CONFIG = "# operator comment\ncommand_allowlist:\n  - git status   # keep me\n  - 'ls *'\napprovals:\n  mode: manual\n"


def test_list_add_remove_round_trip(make_home, write_config) -> None:  # type: ignore[no-untyped-def]
    home = make_home("p", CONFIG)
    config = write_config("profiles_dir: profiles\ndefault_profile: p\n")
    base = ("--config", str(config), "allowlist")
    listed = run_cli(*base, "list", "-p", "p", "--json")
    assert listed.returncode == 0 and json.loads(listed.stdout) == ["git status", "ls *"]
    added = run_cli(*base, "add", "-p", "p", "npm run test:*")
    assert added.returncode == 0, added.stderr
    removed = run_cli(*base, "remove", "-p", "p", "ls *")
    assert removed.returncode == 0, removed.stderr
    assert json.loads(run_cli(*base, "list", "-p", "p", "--json").stdout) == [
        "git status",
        "npm run test:*",
    ]
    text = (home / "config.yaml").read_text()
    assert (
        text.startswith("# operator comment\n")
        and "git status   # keep me" in text
        and "mode: manual" in text
    )


def test_bad_input_exits_2_with_one_line(make_home, write_config) -> None:  # type: ignore[no-untyped-def]
    home = make_home("p", CONFIG)
    config = write_config("profiles_dir: profiles\ndefault_profile: p\n")
    before = (home / "config.yaml").read_bytes()
    for args in (
        ("add", "-p", "p", "git 'unbalanced"),
        ("add", "-p", "p", "*"),
        ("add", "-p", "ghost", "ls"),
        ("remove", "-p", "p", "never-there"),
        ("list", "-p", "ghost"),
    ):
        result = run_cli("--config", str(config), "allowlist", *args)
        assert result.returncode == 2, (args, result.stdout, result.stderr)
        assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr, result.stderr
    assert (home / "config.yaml").read_bytes() == before


def test_malformed_file_is_never_rewritten(make_home, write_config) -> None:  # type: ignore[no-untyped-def]
    home = make_home("p", "command_allowlist: {oops: 1}\n")
    config = write_config("profiles_dir: profiles\ndefault_profile: p\n")
    before = (home / "config.yaml").read_bytes()
    result = run_cli("--config", str(config), "allowlist", "add", "-p", "p", "git status")
    assert result.returncode == 2 and "command_allowlist" in result.stderr
    assert (home / "config.yaml").read_bytes() == before


def test_cli_revocation_reaches_a_running_supervisor(make_home, supervisor_of) -> None:  # type: ignore[no-untyped-def]
    import time

    make_home("p", CONFIG)
    sup = supervisor_of("profiles_dir: profiles\ndefault_profile: p\nwatch: {debounce_ms: 20}\n")
    sup.start()
    store = sup.profiles["p"].allowlist
    assert store.allows(["ls", "-la"])
    config = sup.config.source
    result = run_cli("--config", str(config), "allowlist", "remove", "-p", "p", "ls *")
    assert result.returncode == 0, result.stderr
    deadline = time.monotonic() + 10
    while store.allows(["ls", "-la"]) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not store.allows(["ls", "-la"])
    store.grant("docker ps")  # our next write never revives the revoked entry
    assert "ls *" not in (sup.profiles["p"].config_path.read_text())


def test_legacy_list_recovered_on_reload_without_rewrite(make_home, supervisor_of) -> None:  # type: ignore[no-untyped-def]
    import os
    import time

    home = make_home("p", "command_allowlist: ['git status']\n")
    sup = supervisor_of("profiles_dir: profiles\ndefault_profile: p\nwatch: {debounce_ms: 20}\n")
    sup.start()
    config = home / "config.yaml"
    tmp = home / "config.yaml.new"
    tmp.write_text("command_allowlist: \"['git status', 'make *']\"\n")
    os.replace(tmp, config)
    before = (config.read_bytes(), config.stat().st_mtime_ns)
    store = sup.profiles["p"].allowlist
    deadline = time.monotonic() + 10
    while not store.allows(["make", "all"]) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert store.allows(["make", "all"]) and sup.profiles["p"].status == "ok"
    time.sleep(0.2)
    assert (config.read_bytes(), config.stat().st_mtime_ns) == before


INVALID = "command_allowlist:\n  - git status\n  - '*'\n  - 'ls *'\napprovals:\n  mode: manual\n"


def test_an_invalid_entry_is_marked_not_counted_and_named_with_its_line(  # type: ignore[no-untyped-def]
    make_home, write_config
) -> None:
    home = make_home("p", INVALID)
    config = write_config("profiles_dir: profiles\ndefault_profile: p\n")
    before = (home / "config.yaml").read_bytes()
    where = f"{home / 'config.yaml'}:3"
    human = run_cli("--config", str(config), "allowlist", "list", "-p", "p")
    assert human.returncode == 1, human.stderr
    marked = [line for line in human.stdout.splitlines() if "INVALID" in line]
    assert len(marked) == 1 and marked[0].startswith("*") and "allows nothing" in marked[0]
    assert f"multiplex: error: {where}: command_allowlist:" in human.stderr
    as_json = run_cli("--config", str(config), "allowlist", "list", "-p", "p", "--json")
    assert as_json.returncode == 1 and json.loads(as_json.stdout) == ["git status", "ls *"]
    assert where in as_json.stderr
    rows = json.loads(run_cli("--config", str(config), "profiles", "list", "--json").stdout)
    assert rows[0]["allowlist_size"] == 2 and rows[0]["allowlist_invalid"] == 1
    assert rows[0]["schema_version"] == 1
    table = run_cli("--config", str(config), "profiles", "list")
    assert "2 (+1 invalid)" in table.stdout and "1 allowlist entry allows nothing" in table.stdout
    # Listing never rewrites the operator's file, invalid entry included.
    assert (home / "config.yaml").read_bytes() == before
