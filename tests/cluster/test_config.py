"""``cluster:`` in multiplex.yaml and ``MULTIPLEX_REDIS_URL`` (docs/cluster.md#configuration)."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import pytest

from multiplex import ConfigError
from multiplex.supervision import REDIS_URL_ENV, ClusterConfig, load_supervisor_config
from multiplex.supervision._config import masked_redis_url
from tests.conftest import run_cli


def _load(tmp_path: Path, text: str) -> object:
    path = tmp_path / "multiplex.yaml"
    path.write_text(text)
    return load_supervisor_config(path)


def test_absent_means_one_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(REDIS_URL_ENV, raising=False)
    config = _load(tmp_path, "profiles_dir: profiles\n")
    assert config.cluster is None  # type: ignore[attr-defined]


def test_defaults(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(REDIS_URL_ENV, raising=False)
    cluster = _load(tmp_path, "cluster: {redis_url: 'redis://:pw@127.0.0.1:6379/0'}\n").cluster  # type: ignore[attr-defined]
    assert cluster.run_ttl == 86_400 and cluster.node_timeout == 15
    assert cluster.node_id.endswith(f"-{os.getpid()}")


def test_environment_supplies_the_url(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(REDIS_URL_ENV, "redis://:pw@127.0.0.1:7000/2")
    assert _load(tmp_path, "{}\n").cluster.redis_url == "redis://:pw@127.0.0.1:7000/2"  # type: ignore[attr-defined]
    partial = _load(tmp_path, "cluster: {node_id: n1}\n").cluster  # type: ignore[attr-defined]
    assert (partial.redis_url, partial.node_id) == ("redis://:pw@127.0.0.1:7000/2", "n1")
    # The file wins over the variable.
    own = _load(tmp_path, "cluster: {redis_url: 'redis://u:pw@10.0.0.1/0'}\n").cluster  # type: ignore[attr-defined]
    assert own.redis_url == "redis://u:pw@10.0.0.1/0"
    missing = load_supervisor_config(tmp_path / "none.yaml", missing_ok=True)
    assert missing.cluster is not None and missing.cluster.redis_url.endswith(":7000/2")


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("cluster: {redis_url: 'http://u:hunter2@host/0'}\n", "cluster.redis_url"),
        ("cluster: {redis_url: 'redis://:hunter2@h/0', node_timeout: 0}\n", "cluster.node_timeout"),
        ("cluster: {redis_url: 'redis://:hunter2@h/0', run_ttl: -5}\n", "cluster.run_ttl"),
        ("cluster: {redis_url: 'redis://:hunter2@h/0', node_id: 'a b'}\n", "cluster.node_id"),
        ("cluster: {redis_url: 'redis://:hunter2@h/0', node_id: 'x:*'}\n", "cluster.node_id"),
        ("cluster: {redis_url: 'redis://:hunter2@h/0', nodes: 3}\n", "cluster.nodes"),
        ("cluster: {node_id: n1}\n", "cluster.redis_url"),
    ],
)
def test_bad_values_are_one_line_naming_the_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, key: str
) -> None:
    monkeypatch.delenv(REDIS_URL_ENV, raising=False)
    with pytest.raises(ConfigError) as info:
        _load(tmp_path, text)
    message = str(info.value)
    assert key in message and "multiplex.yaml" in message and "\n" not in message
    assert "hunter2" not in message  # a password in the URL is never repeated


NO_CREDENTIALS = [
    "redis://127.0.0.1:6379",
    "redis://127.0.0.1:6379/0",
    "rediss://cache.internal:6380/1",
    "redis://multiplex@10.0.0.5:6379/0",  # a user without a password sends no AUTH
    "redis://:@10.0.0.5:6379/0",
    "redis://10.0.0.5/0?password=",
]


@pytest.mark.parametrize("url", NO_CREDENTIALS)
def test_a_url_without_credentials_is_refused_naming_file_and_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, url: str
) -> None:
    monkeypatch.delenv(REDIS_URL_ENV, raising=False)
    with pytest.raises(ConfigError) as info:
        _load(tmp_path, f"profiles_dir: p\ncluster:\n  redis_url: '{url}'\n")
    assert str(info.value).startswith(
        f"{tmp_path / 'multiplex.yaml'}:3: cluster.redis_url: {url} has no credentials; "
    ), str(info.value)
    assert "cluster.allow_unauthenticated: true" in str(info.value)
    assert "\n" not in str(info.value)


def test_the_variable_s_url_is_held_to_the_same_rule(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(REDIS_URL_ENV, "redis://10.0.0.5:6379/0")
    with pytest.raises(ConfigError, match=r"cluster\.redis_url: redis://10\.0\.0\.5:6379/0 has no"):
        _load(tmp_path, "{}\n")
    allowed = _load(tmp_path, "cluster: {allow_unauthenticated: true}\n").cluster  # type: ignore[attr-defined]
    assert allowed.redis_url == "redis://10.0.0.5:6379/0"


@pytest.mark.parametrize(
    "url",
    [
        "redis://:s3cret@10.0.0.5:6379/0",
        "redis://multiplex:s3cret@10.0.0.5:6379/0",
        "rediss://multiplex:s3cret@cache.internal:6380/0",
        "redis://10.0.0.5:6379/0?password=s3cret",
        "unix:///run/redis/redis.sock",
    ],
)
def test_credentials_or_a_socket_are_enough(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, url: str, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.delenv(REDIS_URL_ENV, raising=False)
    with caplog.at_level(logging.WARNING):
        cluster = _load(tmp_path, f"cluster: {{redis_url: '{url}'}}\n").cluster  # type: ignore[attr-defined]
    assert cluster.redis_url == url and not cluster.unauthenticated
    assert "s3cret" not in cluster.safe_url and not caplog.records


def test_allow_unauthenticated_loads_with_a_warning_and_check_flags_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.delenv(REDIS_URL_ENV, raising=False)
    (tmp_path / "profiles").mkdir()
    text = "profiles_dir: profiles\ncluster:\n  redis_url: redis://127.0.0.1:6379/0\n  allow_unauthenticated: true\n"
    with caplog.at_level(logging.WARNING, logger="multiplex.supervision"):
        cluster = _load(tmp_path, text).cluster  # type: ignore[attr-defined]
    assert cluster.unauthenticated
    warned = [r.getMessage() for r in caplog.records]
    assert len(warned) == 1 and str(tmp_path / "multiplex.yaml") in warned[0]
    assert "without credentials" in warned[0] and "redis://127.0.0.1:6379/0" in warned[0]
    checked = run_cli("--config", str(tmp_path / "multiplex.yaml"), "check")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert (
        f"warning: {tmp_path / 'multiplex.yaml'}:4: cluster.allow_unauthenticated: Redis at"
        " redis://127.0.0.1:6379/0 is used without credentials" in checked.stdout
    ), checked.stdout
    as_json = json.loads(
        run_cli("--config", str(tmp_path / "multiplex.yaml"), "check", "--json").stdout
    )
    keys = [w["key"] for w in as_json["warnings"]]
    assert as_json["ok"] and keys.count("cluster.allow_unauthenticated") == 1, as_json


def test_with_credentials_check_says_nothing_about_redis(tmp_path: Path) -> None:
    (tmp_path / "profiles").mkdir()
    path = tmp_path / "multiplex.yaml"
    path.write_text(
        "profiles_dir: profiles\ncluster: {redis_url: 'redis://:pw@127.0.0.1:6379/0'}\n"
    )
    checked = run_cli("--config", str(path), "check", env={REDIS_URL_ENV: ""})
    assert "redis" not in checked.stdout.lower(), checked.stdout


@pytest.mark.parametrize(
    ("url", "masked"),
    [
        ("redis://:hunter2@h:6379/0", "redis://:***@h:6379/0"),
        ("redis://multiplex:hunter2@h:6379/0", "redis://multiplex:***@h:6379/0"),
        ("rediss://u:hun%40ter2@h/0?ssl_cert_reqs=none", "rediss://u:***@h/0?ssl_cert_reqs=none"),
        ("redis://h/0?password=hunter2&db=1", "redis://h/0?password=***&db=1"),
        ("unix:///run/r.sock?password=hunter2", "unix:///run/r.sock?password=***"),
        ("redis://h:6379/0", "redis://h:6379/0"),
    ],
)
def test_a_password_is_masked_wherever_the_url_is_shown(url: str, masked: str) -> None:
    assert masked_redis_url(url) == masked
    assert ClusterConfig(redis_url=url, allow_unauthenticated=True).safe_url == masked
