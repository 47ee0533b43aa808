"""docs/configuration.md#resolution-what-a-command-of-the-profile-gets resolution rules and docs/execution.md credential plans, against real homes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from multiplex import Supervisor


@pytest.mark.parametrize("cwd", ["null", "'.'", "auto", "cwd", "''"])
def test_placeholder_cwd_is_the_homes_workspace_for_local_and_default_elsewhere(
    make_home, supervisor_of, cwd: str
) -> None:  # type: ignore[no-untyped-def]
    """Never the supervisor's HOME unless the operator names it (docs/execution.md#the-sandbox)."""
    home = make_home("loc", f"terminal:\n  cwd: {cwd}\n")
    make_home("dock", f"terminal:\n  backend: docker\n  cwd: {cwd}\n")
    sup = supervisor_of()
    with sup.turn("loc") as scope:
        assert scope.cwd == home / "workspace"
        assert scope.cwd != Path(os.environ["HOME"])
    with sup.turn("dock") as scope:
        assert scope.cwd is None


@pytest.mark.parametrize("cwd", ["'{home}'", "'{home}/'", "'{home}/sub/..'"])
def test_a_cwd_that_is_the_home_folder_itself_is_its_workspace(
    make_home, supervisor_of, tmp_path: Path, cwd: str
) -> None:  # type: ignore[no-untyped-def]
    """The home's config.yaml, lock and intents are never in a command's writable cwd."""
    home = tmp_path / "profiles" / "loc"
    make_home("loc", f"terminal:\n  cwd: {cwd.format(home=home)}\n")
    sup = supervisor_of()
    assert sup.view("loc").cwd == home / "workspace"


def test_cwd_forms(make_home, supervisor_of) -> None:  # type: ignore[no-untyped-def]
    home = make_home("rel", "terminal:\n  cwd: work/dir\n")
    make_home("tilde", "terminal:\n  cwd: ~/projects\n")
    make_home("abs", "terminal:\n  cwd: /srv/data\n")
    sup = supervisor_of()
    assert sup.view("rel").cwd == home.resolve() / "work/dir"
    assert sup.view("tilde").cwd == Path(os.environ["HOME"]) / "projects"
    assert sup.view("abs").cwd == Path("/srv/data")


def test_command_env_is_base_plus_profile_only(make_home, supervisor_of, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("LC_ALL", "C.UTF-8")
    monkeypatch.setenv("UNRELATED_PROCESS_VAR", "nope")
    make_home(
        "a",
        "terminal:\n  env: {A: '1'}\n  env_passthrough: [TOKEN_A, MISSING]\n",
        env="TOKEN_A=secret-a-123456\nOTHER=x\n",
    )
    sup = supervisor_of()
    env = dict(sup.view("a").env)
    assert env["A"] == "1" and env["TOKEN_A"] == "secret-a-123456" and env["LC_ALL"] == "C.UTF-8"
    assert "PATH" in env and "HOME" in env
    assert "UNRELATED_PROCESS_VAR" not in env and "OTHER" not in env and "MISSING" not in env
    assert any("MISSING" in w for w in sup.view("a").warnings)


@pytest.mark.parametrize(
    ("config_value", "dotenv", "expected"),
    [
        ("true", "", True),
        ("false", "", False),
        ("true", "MULTIPLEX_REDACT_SECRETS=0", False),
        ("false", "MULTIPLEX_REDACT_SECRETS=yes", True),
        ("false", "MULTIPLEX_REDACT_SECRETS=garbage", True),
    ],
)
def test_redaction_switch(
    make_home, supervisor_of, config_value: str, dotenv: str, expected: bool
) -> None:  # type: ignore[no-untyped-def]
    make_home("a", f"security:\n  redact_secrets: {config_value}\n", env=dotenv + "\n")
    assert supervisor_of().view("a").redact_secrets is expected


def test_credential_plan_per_backend(make_home, supervisor_of) -> None:  # type: ignore[no-untyped-def]
    files = {"credentials/gh.txt": "token-value-abcdef\n", "credentials/sub/aws.json": "{}"}
    make_home(
        "loc",
        "terminal:\n  credential_files: [credentials/gh.txt, credentials/sub/aws.json]\n",
        files=files,
    )
    make_home(
        "dock",
        "terminal:\n  backend: docker\n  credential_files: [credentials/gh.txt]\n",
        files=files,
    )
    sup = supervisor_of()
    loc = sup.view("loc").credential_mounts
    assert [m.target for m in loc] == ["credentials/gh.txt", "credentials/sub/aws.json"]
    dock = sup.view("dock").credential_mounts
    assert [m.target for m in dock] == ["/run/credentials/credentials/gh.txt"]
    assert all(m.read_only for m in dock)


def test_symlink_escaping_home_is_rejected(make_home, supervisor_of, tmp_path) -> None:  # type: ignore[no-untyped-def]
    outside = tmp_path / "outside-secret"
    outside.write_text("host secret")
    home = make_home("evil", "terminal:\n  credential_files: [credentials/link]\n")
    (home / "credentials").mkdir()
    (home / "credentials" / "link").symlink_to(outside)
    make_home("good")
    sup = supervisor_of()
    evil = sup.profiles["evil"]
    assert evil.status == "error" and "resolves outside the profile home" in (evil.error or "")
    assert "terminal.credential_files.0" in (evil.error or "")
    assert sup.profiles["good"].status == "ok"  # one broken profile never takes the others down


def test_symlink_inside_home_is_fine(make_home, supervisor_of) -> None:  # type: ignore[no-untyped-def]
    home = make_home(
        "a",
        "terminal:\n  credential_files: [credentials/link]\n",
        files={"secrets/real.txt": "value-123456"},
    )
    (home / "credentials").mkdir()
    (home / "credentials" / "link").symlink_to(home / "secrets" / "real.txt")
    mounts = supervisor_of().view("a").credential_mounts
    assert mounts[0].source == (home / "secrets" / "real.txt").resolve()


def test_caches_are_keyed_by_profile_home(make_home, supervisor_of) -> None:  # type: ignore[no-untyped-def]
    make_home("a")
    make_home("b")
    sup: Supervisor = supervisor_of()
    with sup.turn("a") as a:
        cache_a = a.cache("lsp")
        cache_a["k"] = "a"
        assert cache_a.path("index.db").parent == sup.profiles["a"].home / "cache" / "lsp"
    with sup.turn("b") as b:
        assert b.cache("lsp") is not cache_a and "k" not in b.cache("lsp")
    with sup.turn("a") as a2:
        assert a2.cache("lsp") is cache_a


def test_redaction_through_the_scope(make_home, supervisor_of) -> None:  # type: ignore[no-untyped-def]
    make_home("on", "", env="API_TOKEN=own-secret-value-111\n")
    make_home(
        "off", "security:\n  redact_secrets: false\n", env="DB_PASSWORD=off-secret-value-222\n"
    )
    sup = supervisor_of()
    gh = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    with sup.turn("off") as scope:
        out = scope.redact(f"{gh} own=off-secret-value-222 other=own-secret-value-111")
        assert gh in out  # layer 2 off for this profile's own output
        assert "off-secret-value-222" not in out  # its own known values still masked
        assert "own-secret-value-111" not in out  # another profile's value: always masked
    with sup.turn("on") as scope:
        assert gh not in scope.redact(gh)


def test_broken_profile_is_listed_but_not_routable(make_home, supervisor_of) -> None:  # type: ignore[no-untyped-def]
    from multiplex import RoutingError

    make_home("ok")
    make_home("broken", "command_allowlist: {a: b}\n")
    sup = supervisor_of("profiles_dir: profiles\ndefault_profile: ok\n")
    assert sup.profiles["broken"].status == "error"
    with pytest.raises(RoutingError, match="not routable"):
        sup.turn("broken").__enter__()
    with sup.turn("ok") as scope:
        assert scope.name == "ok"


def test_standalone_binds_for_the_whole_process(make_home) -> None:  # type: ignore[no-untyped-def]
    import threading

    from multiplex import current_scope

    home = make_home("solo", "terminal:\n  env: {WHO: solo}\n")
    sup = Supervisor.standalone(home)
    seen: list[str] = []
    thread = threading.Thread(target=lambda: seen.append(current_scope().env["WHO"]))
    thread.start()
    thread.join()
    assert seen == ["solo"] and list(sup.profiles) == ["solo"]
    sup.close()
