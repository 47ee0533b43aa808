"""docs/configuration.md#configyaml-keys validation: a corpus of valid, legacy and malformed config files."""

from __future__ import annotations

import math
import os
import textwrap
from pathlib import Path

import pytest

from multiplex._errors import ProfileConfigError
from multiplex.profiles import Profile, parse_config
from multiplex.profiles._schema import APPROVAL_TIMEOUT_MAX, APPROVAL_TIMEOUT_MIN

# (id, config text, expected substring of the one-line error)
MALFORMED: list[tuple[str, str, str]] = [
    (
        "allowlist-mapping",
        "command_allowlist: {git: status}\n",
        "command_allowlist: expected a list, got a mapping",
    ),
    (
        "allowlist-int-member",
        "command_allowlist:\n  - git status\n  - 3\n",
        "command_allowlist.1: expected a string",
    ),
    (
        "allowlist-nested-list",
        "command_allowlist:\n  - [git, status]\n",
        "command_allowlist.0: expected a string",
    ),
    (
        "allowlist-bool-member",
        "command_allowlist: [true]\n",
        "command_allowlist.0: expected a string",
    ),
    (
        "allowlist-null-member",
        "command_allowlist: [null]\n",
        "command_allowlist.0: expected a string",
    ),
    ("allowlist-number", "command_allowlist: 5\n", "command_allowlist: expected a list"),
    (
        "allowlist-bad-legacy",
        "command_allowlist: \"['git status', 3]\"\n",
        "command_allowlist: expected a list",
    ),
    (
        "deny-mapping",
        "approvals:\n  deny: {a: b}\n",
        "approvals.deny: expected a list, got a mapping",
    ),
    ("deny-int", "approvals:\n  deny: [1]\n", "approvals.deny.0: expected a string"),
    ("mode-unknown", "approvals:\n  mode: sometimes\n", "approvals.mode: must be one of"),
    ("mode-true", "approvals:\n  mode: true\n", "approvals.mode: a YAML boolean"),
    ("mode-no", "approvals:\n  mode: no\n", "approvals.mode: a YAML boolean"),
    ("mode-false", "approvals:\n  mode: false\n", "approvals.mode: a YAML boolean"),
    ("mode-quoted-no", "approvals:\n  mode: 'no'\n", "approvals.mode: must be one of"),
    (
        "env-bool",
        "terminal:\n  env: {DEBUG: yes}\n",
        "terminal.env.DEBUG: expected a string, got a boolean",
    ),
    ("cwd-bool", "terminal:\n  cwd: off\n", "terminal.cwd: expected a string, got a boolean"),
    ("unattended-bool", "approvals:\n  unattended: no\n", "approvals.unattended: must be one of"),
    (
        "unattended-unknown",
        "approvals:\n  unattended: maybe\n",
        "approvals.unattended: must be one of",
    ),
    (
        "timeout-string",
        "approvals:\n  timeout: soon\n",
        "approvals.timeout: must be a number of seconds",
    ),
    (
        "timeout-bool",
        "approvals:\n  timeout: true\n",
        "approvals.timeout: must be a number of seconds",
    ),
    (
        "timeout-list",
        "approvals:\n  timeout: [1]\n",
        "approvals.timeout: must be a number of seconds",
    ),
    ("yolo-string", "approvals:\n  yolo: sure\n", "approvals.yolo"),
    (
        "protected-mapping",
        "approvals:\n  protected_files: {a: 1}\n",
        "approvals.protected_files: expected a list",
    ),
    ("approvals-list", "approvals: [manual]\n", "approvals: expected a mapping"),
    ("terminal-string", "terminal: local\n", "terminal: expected a mapping"),
    ("backend-unknown", "terminal:\n  backend: kubernetes\n", "terminal.backend: must be one of"),
    ("cwd-list", "terminal:\n  cwd: [a]\n", "terminal.cwd: expected a string"),
    ("env-list", "terminal:\n  env: [A=1]\n", "terminal.env: expected a mapping"),
    ("env-nested", "terminal:\n  env: {A: {b: 1}}\n", "terminal.env.A: expected a string"),
    (
        "passthrough-mapping",
        "terminal:\n  env_passthrough: {a: 1}\n",
        "terminal.env_passthrough: expected a list, got a mapping",
    ),
    (
        "credential-absolute",
        "terminal:\n  credential_files: [/etc/passwd]\n",
        "terminal.credential_files: '/etc/passwd' must be a path relative",
    ),
    (
        "credential-dotdot",
        "terminal:\n  credential_files: [credentials/../../x]\n",
        "must not contain '..'",
    ),
    (
        "credential-home",
        "terminal:\n  credential_files: ['~/.ssh/id_rsa']\n",
        "must be a path relative",
    ),
    ("terminal-timeout-zero", "terminal:\n  timeout: 0\n", "terminal.timeout"),
    ("terminal-timeout-inf", "terminal:\n  timeout: .inf\n", "terminal.timeout"),
    (
        "host-mounts-string-member",
        "terminal:\n  host_mounts: [1]\n",
        "terminal.host_mounts.0: expected a string",
    ),
    ("security-list", "security: [redact]\n", "security: expected a mapping"),
    ("redact-string", "security:\n  redact_secrets: maybe\n", "security.redact_secrets"),
    ("top-level-list", "- a\n- b\n", "the top level must be a mapping"),
    ("top-level-scalar", "just text\n", "the top level must be a mapping"),
    ("invalid-yaml", "terminal: [unclosed\n", "invalid YAML"),
    ("invalid-indent", "approvals:\n  mode: manual\n bad: x\n", "invalid YAML"),
    ("tab-indent", "approvals:\n\tmode: manual\n", "invalid YAML"),
    ("anchor-alias", "a: &x [1, 2]\nb: *x\n", "YAML anchors and aliases are not allowed"),
    (
        "billion-laughs",
        "a: &a [x, x]\nb: &b [*a, *a]\nc: [*b, *b]\n",
        "YAML anchors and aliases are not allowed",
    ),
    ("duplicate-document", "a: 1\n---\nb: 2\n", "invalid YAML"),
]


@pytest.mark.parametrize(("case", "text", "expected"), MALFORMED, ids=[c[0] for c in MALFORMED])
def test_malformed_config_is_rejected_with_file_and_key(
    tmp_path: Path, case: str, text: str, expected: str
) -> None:
    home = tmp_path / case
    home.mkdir()
    config = home / "config.yaml"
    config.write_text(text)
    before = (config.read_bytes(), config.stat().st_mtime_ns)
    profile = Profile(case, home)
    result = profile.reload()
    assert result.result == "error"
    assert profile.status == "error" and not profile.loaded
    message = profile.error or ""
    assert str(config) in message, message
    assert expected in message, message
    assert "\n" not in message
    # Nothing rewrites a malformed file on read, and nothing is admitted from it.
    assert (config.read_bytes(), config.stat().st_mtime_ns) == before
    with pytest.raises(ProfileConfigError):
        profile.allowlist  # noqa: B018


def test_corpus_is_large_enough() -> None:
    assert len(MALFORMED) >= 30


def test_error_names_the_line(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    data = b"terminal:\n  backend: local\ncommand_allowlist:\n  - ok\n  - 42\n"
    with pytest.raises(Exception) as info:
        parse_config(data, file=config)
    assert f"{config}:5: command_allowlist.1" in str(info.value)


def test_oversized_config_is_refused(tmp_path: Path) -> None:
    data = b"command_allowlist:\n" + b"  - 'git status'\n" * 70_000
    assert len(data) > 1024 * 1024
    with pytest.raises(Exception, match="larger than 1 MiB"):
        parse_config(data, file=tmp_path / "config.yaml")


def _load(text: str, tmp_path: Path):  # type: ignore[no-untyped-def]
    return parse_config(textwrap.dedent(text).encode(), file=tmp_path / "config.yaml")


def test_defaults_match_the_spec(tmp_path: Path) -> None:
    s = _load("", tmp_path).settings
    assert s.terminal.backend == "local" and s.terminal.cwd is None and s.terminal.timeout == 180
    assert (
        s.terminal.env == {}
        and s.terminal.env_passthrough == ()
        and s.terminal.credential_files == ()
    )
    assert s.terminal.host_mounts == () and s.command_allowlist == ()
    a = s.approvals
    assert (a.mode, a.deny, a.timeout, a.unattended, a.yolo) == ("manual", (), 300, "deny", False)
    assert a.protected_files == ("AGENTS.md", "SOUL.md", ".env", "config.yaml")
    assert s.security.redact_secrets is True


def test_bare_off_reads_as_off(tmp_path: Path) -> None:
    assert _load("approvals:\n  mode: off\n", tmp_path).settings.approvals.mode == "off"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (".inf", APPROVAL_TIMEOUT_MAX),
        ("1e18", APPROVAL_TIMEOUT_MAX),
        ("-5", APPROVAL_TIMEOUT_MIN),
        ("0", APPROVAL_TIMEOUT_MIN),
        ("-.inf", APPROVAL_TIMEOUT_MIN),
        (".nan", 300.0),
        ("42", 42.0),
    ],
)
def test_approval_timeout_is_clamped_with_a_warning(
    tmp_path: Path, value: str, expected: float
) -> None:
    loaded = _load(f"approvals:\n  timeout: {value}\n", tmp_path)
    assert loaded.settings.approvals.timeout == expected
    assert math.isfinite(loaded.settings.approvals.timeout)
    warned = any("approvals.timeout" in w for w in loaded.warnings)
    assert warned == (value != "42")


@pytest.mark.parametrize(
    ("text", "rules"),
    [
        ("command_allowlist: \"['git status', 'ls *']\"\n", ("git status", "ls *")),
        ("command_allowlist: '[\"npm test\"]'\n", ("npm test",)),
        ("command_allowlist: git status\n", ("git status",)),
        ('command_allowlist: "[]"\n', ()),
    ],
)
def test_legacy_stringified_list_is_recovered_with_a_warning(
    tmp_path: Path, text: str, rules: tuple[str, ...]
) -> None:
    loaded = _load(text, tmp_path)
    assert loaded.settings.command_allowlist == rules
    assert any("command_allowlist" in w for w in loaded.warnings)


def test_legacy_list_is_not_rewritten_on_load(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text("command_allowlist: \"['git status', 'ls *']\"\n")
    before = (config.read_bytes(), config.stat().st_mtime_ns)
    profile = Profile("legacy", tmp_path)
    assert profile.reload().result == "ok"
    assert profile.allowlist.allows(["git", "status"])
    assert (config.read_bytes(), config.stat().st_mtime_ns) == before


def test_runtime_sections_are_listed_as_warnings(tmp_path: Path) -> None:
    loaded = _load("model: gpt\napprovals:\n  mode: strict\n", tmp_path)
    assert any("model: not a multiplex section" in w for w in loaded.warnings)
    assert loaded.settings.approvals.mode == "strict"


def test_empty_sections_mean_defaults(tmp_path: Path) -> None:
    s = _load("terminal:\napprovals:\ncommand_allowlist:\n", tmp_path).settings
    assert s.terminal.backend == "local" and s.command_allowlist == ()


def test_numbers_in_env_become_text(tmp_path: Path) -> None:
    s = _load("terminal:\n  env: {PORT: 8080, RATIO: 0.5}\n", tmp_path).settings
    assert s.terminal.env == {"PORT": "8080", "RATIO": "0.5"}


def test_process_environment_never_overrides_a_profile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # pydantic-settings would normally read these names from the environment.
    for name in (
        "APPROVALS",
        "approvals",
        "TERMINAL",
        "terminal",
        "COMMAND_ALLOWLIST",
        "command_allowlist",
        "SECURITY",
    ):
        monkeypatch.setenv(name, '{"mode": "off", "redact_secrets": false}')
    s = _load("approvals:\n  mode: strict\n", tmp_path).settings
    assert (
        s.approvals.mode == "strict"
        and s.command_allowlist == ()
        and s.security.redact_secrets is True
    )
    assert os.environ["APPROVALS"]  # the environment was really set
