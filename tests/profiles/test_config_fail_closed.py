"""docs/configuration.md#validation: a careless or hostile edit refuses to load, it never weakens."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from multiplex import ProfileConfigError, Supervisor
from multiplex.profiles import Profile, TerminalSettings, parse_config
from multiplex.profiles._sections import owned_sections
from tests.conftest import run_cli

GUARDED = "approvals:\n  mode: manual\n  unattended: deny\n  deny: ['git push *']\n"
HUGE = "9" * 5000


def _error(text: str, tmp_path: Path) -> str:
    with pytest.raises(ProfileConfigError) as caught:
        parse_config(text.encode(), file=tmp_path / "config.yaml")
    message = str(caught.value)
    assert str(tmp_path / "config.yaml") in message and "\n" not in message
    return message


# -- the examples of the issue, as written ------------------------------------------


def test_renaming_approvals_to_aprovals_keeps_the_deny_rules(make_home, supervisor_of) -> None:  # type: ignore[no-untyped-def]
    home = make_home("p", GUARDED)
    sup = supervisor_of("profiles_dir: profiles\nwatch: {mode: 'off'}\n")
    assert sup.test("p", "git push origin main").outcome.value == "blocked"
    (home / "config.yaml").write_text(GUARDED.replace("approvals:", "aprovals:"))
    result = sup.reload("p")
    assert result.result == "error" and sup.profiles["p"].status == "error"
    assert "aprovals: unknown section (did you mean 'approvals'?)" in (result.error or "")
    assert sup.test("p", "git push origin main").outcome.value == "blocked"  # last good kept


def test_a_fresh_profile_with_aprovals_is_not_served(make_home, write_config) -> None:  # type: ignore[no-untyped-def]
    make_home("p", GUARDED.replace("approvals:", "aprovals:"))
    make_home("q", GUARDED.replace("deny:", "deney:"))
    make_home("ok", "")
    listed = run_cli(
        "--config", str(write_config("profiles_dir: profiles\n")), "profiles", "list", "--json"
    )
    assert listed.returncode == 1, listed.stderr  # docs/cli.md: 1 when a profile is broken
    rows = {r["name"]: r for r in json.loads(listed.stdout)}
    assert rows["ok"]["status"] == "ok"
    assert rows["p"]["status"] == "error" and ":1: aprovals: unknown section" in rows["p"]["error"]
    assert rows["q"]["status"] == "error"
    assert ":4: approvals.deney: unknown key (did you mean 'deny'?)" in rows["q"]["error"]


def test_a_second_approvals_block_is_an_error_naming_both_lines(tmp_path: Path) -> None:
    text = GUARDED + "terminal:\n  timeout: 5\napprovals:\n  mode: off\n"
    message = _error(text, tmp_path)
    assert ":7: duplicate key 'approvals' (lines 1 and 7)" in message


def test_duplicate_keys_anywhere(tmp_path: Path) -> None:
    assert "(lines 2 and 3)" in _error("terminal:\n  timeout: 5\n  timeout: 6\n", tmp_path)
    assert "(lines 1 and 2)" in _error("model: a\nmodel: b\n", tmp_path)  # runtime keys too
    assert "duplicate key 'A'" in _error("terminal:\n  env: {A: x, A: y}\n", tmp_path)


@pytest.mark.parametrize("how", ["moved", "dangling"])
def test_missing_or_dangling_config_is_an_error_never_defaults(tmp_path: Path, how: str) -> None:
    home = tmp_path / "p"
    home.mkdir()
    config = home / "config.yaml"
    config.write_text(GUARDED)
    profile = Profile("p", home)
    assert profile.reload().result == "ok"
    config.unlink()
    if how == "dangling":
        config.symlink_to(tmp_path / "gone.yaml")
    result = profile.reload()
    assert result.result == "error" and profile.status == "error"
    expected = "a link to a file that does not exist" if how == "dangling" else "is missing"
    assert expected in (profile.error or "")
    fresh = Profile("fresh", home)
    assert fresh.reload().result == "error" and not fresh.loaded


def test_a_dangling_config_link_is_listed_as_an_error(
    make_home, write_config, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    make_home("ok", "")
    home = make_home("p", "")
    (home / "config.yaml").unlink()
    (home / "config.yaml").symlink_to(tmp_path / "nowhere.yaml")
    listed = run_cli(
        "--config", str(write_config("profiles_dir: profiles\n")), "profiles", "list", "--json"
    )
    rows = {r["name"]: r for r in json.loads(listed.stdout)}
    assert rows["p"]["status"] == "error" and rows["ok"]["status"] == "ok"


@pytest.mark.parametrize("word", ["no", "false", "No", "FALSE", "NO", "yes", "on", "true"])
def test_yaml_booleans_never_become_a_mode(tmp_path: Path, word: str) -> None:
    message = _error(f"approvals:\n  mode: {word}\n", tmp_path)
    assert "approvals.mode: a YAML boolean" in message


@pytest.mark.parametrize("word", ["off", "Off", "OFF"])
def test_only_bare_off_reads_as_off(tmp_path: Path, word: str) -> None:
    loaded = parse_config(f"approvals:\n  mode: {word}\n".encode(), file=tmp_path / "c.yaml")
    assert loaded.settings.approvals.mode == "off"


def test_flow_style_no_is_refused_too(tmp_path: Path) -> None:
    assert "a YAML boolean" in _error("approvals: {mode: no}\n", tmp_path)
    assert "a YAML boolean" in _error("approvals: {mode: false}\n", tmp_path)


def test_a_5000_digit_timeout_is_refused_not_a_traceback(tmp_path: Path) -> None:
    message = _error(f"terminal: {{timeout: {HUGE}}}\n", tmp_path)
    assert ":1: a number with 5000 digits; refused" in message
    assert HUGE[:100] not in message


def test_big_but_finite_numbers_are_clamped(tmp_path: Path) -> None:
    loaded = parse_config(
        b"terminal: {timeout: 1e300}\napprovals: {timeout: 1e300}\n", file="c.yaml"
    )
    assert loaded.settings.terminal.timeout == 31_536_000
    assert loaded.settings.approvals.timeout == 31_536_000
    assert any("terminal.timeout" in w and "clamped" in w for w in loaded.warnings)
    digits = parse_config(f"terminal: {{timeout: {'9' * 60}}}\n".encode(), file="c.yaml")
    assert digits.settings.terminal.timeout == 31_536_000


def test_live_the_huge_timeout_makes_the_profile_an_error(make_home, supervisor_of) -> None:  # type: ignore[no-untyped-def]
    home = make_home("p", GUARDED)
    make_home("q", "")
    sup: Supervisor = supervisor_of(
        "profiles_dir: profiles\nwatch: {mode: inotify, debounce_ms: 20}\n"
    )
    sup.start()
    (home / "config.yaml").write_text(f"terminal: {{timeout: {HUGE}}}\n")
    deadline = time.monotonic() + 10
    while sup.profiles["p"].status == "ok" and time.monotonic() < deadline:
        time.sleep(0.02)
    assert sup.profiles["p"].status == "error"
    assert sup.watcher is not None and sup.watcher.alive and sup.watcher.errors == 0
    assert sup.profiles["q"].status == "ok"


def test_up_and_profiles_list_survive_a_huge_timeout(
    make_home, write_config, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    make_home("p", f"terminal: {{timeout: {HUGE}}}\n")
    make_home("ok", "")
    config = write_config("profiles_dir: profiles\ndefault_profile: ok\n")
    listed = run_cli("--config", str(config), "profiles", "list", "--json")
    assert listed.returncode == 1 and "Traceback" not in listed.stderr, listed.stderr
    statuses = {r["name"]: r["status"] for r in json.loads(listed.stdout)}
    assert statuses == {"p": "error", "ok": "ok"}
    env = {**os.environ, "MULTIPLEX_ADMIN_TOKEN": "a" * 32}
    proc = subprocess.Popen(
        [sys.executable, "-m", "multiplex", "--config", str(config), "up", "--port", "0"],
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert proc.stderr is not None
    try:
        seen: list[str] = []
        while line := proc.stderr.readline():
            seen.append(line)
            if line.startswith("multiplex gateway on "):
                break
        assert any(x.startswith("multiplex gateway on ") for x in seen), "".join(seen)
        assert "Traceback" not in "".join(seen)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=20)


PEM = (
    "-----BEGIN PRIVATE KEY-----\n"
    "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKB\n"
    "wQNOAuLk1Tv1AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcdefABCDEFxyzXYZ\n"
    "-----END PRIVATE KEY-----\n"
)


def test_a_pem_block_in_env_never_shows_its_body(make_home, supervisor_of) -> None:  # type: ignore[no-untyped-def]
    make_home("p", "", env="API_KEY=abc\n" + PEM)
    sup: Supervisor = supervisor_of("profiles_dir: profiles\nwatch: {mode: 'off'}\n")
    error = sup.profiles["p"].error or ""
    assert ".env:2:" in error
    for line in PEM.splitlines():
        assert line not in error
    assert "MIIEvQ" not in error and "BEGIN" not in error


def test_a_body_line_that_looks_like_a_name_is_not_echoed(tmp_path: Path) -> None:
    from multiplex.profiles import parse_dotenv

    with pytest.raises(ProfileConfigError) as caught:
        parse_dotenv("A=1\nQUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo0123456789abcdef\n", file=".env")
    assert "QUJDREVG" not in str(caught.value) and ".env:2" in str(caught.value)


def test_an_unclosed_quote_on_line_6_says_line_6(tmp_path: Path) -> None:
    yaml_text = "a: 1\nb: 2\nc: 3\nd: 4\ne: 5\nf: 'abc\ng: 7\nh: 8\n"
    assert f"{tmp_path / 'config.yaml'}:6:" in _error(yaml_text, tmp_path)
    from multiplex.profiles import parse_dotenv

    with pytest.raises(ProfileConfigError, match=r"\.env:6: F: unterminated"):
        parse_dotenv("A=1\nB=2\nC=3\nD=4\nE=5\nF='abc\nG=7\n", file=".env")


def test_the_first_offending_line_is_reported(tmp_path: Path) -> None:
    text = "terminal:\n  backend: nope\napprovals:\n  modee: strict\n  timeout: soon\n"
    assert ":2: terminal.backend" in _error(text, tmp_path)
    text = "approvals:\n  modee: strict\nterminal:\n  backend: nope\n"
    assert ":2: approvals.modee" in _error(text, tmp_path)


def test_restoring_the_last_good_bytes_gives_status_ok(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(GUARDED)
    good = config.read_bytes()
    profile = Profile("p", tmp_path)
    assert profile.reload().result == "ok"
    config.write_text("approvals: [broken\n")
    assert profile.reload().result == "error" and profile.status == "error"
    config.write_bytes(good)
    profile.reload()
    assert profile.status == "ok" and profile.error is None and profile.epoch == 1


# -- the owned keys come from the models --------------------------------------------


def test_every_model_key_is_accepted_and_others_get_a_did_you_mean(tmp_path: Path) -> None:
    sections = owned_sections()
    assert {"terminal", "approvals", "security", "command_allowlist"} <= set(sections)
    for name in TerminalSettings.model_fields:
        text = f"terminal:\n  {name}:\n"
        parse_config(text.encode(), file="c.yaml")  # never "unknown key"
    assert "terminal.timout: unknown key (did you mean 'timeout'?)" in _error(
        "terminal:\n  timout: 5\n", tmp_path
    )
    assert "security.redact: unknown key (did you mean 'redact_secrets'?)" in _error(
        "security:\n  redact: false\n", tmp_path
    )
    assert "known keys:" in _error("approvals:\n  zzzzzzzz: 1\n", tmp_path)


@pytest.mark.parametrize("key", ["terminl", "Approvals", "securty", "command_alowlist", "approval"])
def test_top_level_typos_of_owned_sections_are_errors(tmp_path: Path, key: str) -> None:
    assert "unknown section (did you mean" in _error(f"{key}: {{}}\n", tmp_path)


def test_runtime_sections_stay_allowed_with_a_warning(tmp_path: Path) -> None:
    loaded = parse_config(
        b"model: gpt\nmemory: {turns: 3}\napprovals: {mode: strict}\n", file="c.yaml"
    )
    assert loaded.settings.approvals.mode == "strict"
    assert sum("not a multiplex section" in w for w in loaded.warnings) == 2


STRICT = "approvals:\n  mode: strict\ncommand_allowlist: ['true']\n"


@pytest.mark.parametrize("caught", ["", "\n\n", "# saving…\n", "  \n# a header\n\n"])
def test_a_save_caught_before_its_write_keeps_the_last_good_config(  # type: ignore[no-untyped-def]
    make_home, supervisor_of, caught: str
) -> None:
    """A truncated config.yaml (an editor or `>` between truncating and writing) would load as
    every default, a strict profile turned manual: a reload refuses it, in one line."""
    home = make_home("p", STRICT)
    sup = supervisor_of("profiles_dir: profiles\nwatch: {mode: 'off'}\n")
    assert sup.test("p", "echo hi").outcome.value == "ask"
    (home / "config.yaml").write_text(caught)
    result = sup.reload("p")
    assert result.result == "error" and "\n" not in (result.error or "")
    assert f"{home / 'config.yaml'}: is empty" in (result.error or "")
    assert sup.test("p", "echo hi").outcome.value == "ask"  # still strict
    (home / "config.yaml").write_text(STRICT)
    assert sup.reload("p").result in ("ok", "unchanged")
    assert sup.profiles["p"].status == "ok"
    (home / "config.yaml").write_text("{}\n")  # every default, said on purpose
    assert sup.reload("p").result == "ok"
    assert sup.test("p", "echo hi").outcome.value == "approved"


def test_an_empty_config_of_a_home_is_every_default_and_stays_so(make_home, supervisor_of) -> None:  # type: ignore[no-untyped-def]
    home = make_home("p", "")
    sup = supervisor_of("profiles_dir: profiles\nwatch: {mode: 'off'}\n")
    assert sup.profiles["p"].status == "ok"
    assert sup.reload("p").result == "unchanged"
    (home / "config.yaml").write_text("# every default\n")  # still no document: nothing weakens
    assert sup.reload("p").result in ("ok", "unchanged") and sup.profiles["p"].status == "ok"


def test_an_emptied_multiplex_yaml_keeps_every_profile_served(  # type: ignore[no-untyped-def]
    make_home, supervisor_of, write_config
) -> None:
    make_home("p", STRICT)
    sup = supervisor_of("profiles_dir: profiles\nwatch: {mode: 'off'}\n")
    config = write_config("# being saved\n\n")
    result = sup.reload_config()
    assert not result.ok and f"{config}: is empty" in (result.error or "")
    assert list(sup.profiles) == ["p"] and sup.test("p", "echo hi").outcome.value == "ask"
