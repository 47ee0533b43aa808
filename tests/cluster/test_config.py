"""``cluster:`` in multiplex.yaml and ``MULTIPLEX_REDIS_URL`` (docs/cluster.md#configuration)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from multiplex import ConfigError
from multiplex.supervision import REDIS_URL_ENV, load_supervisor_config


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
    cluster = _load(tmp_path, "cluster: {redis_url: 'redis://127.0.0.1:6379/0'}\n").cluster  # type: ignore[attr-defined]
    assert cluster.run_ttl == 86_400 and cluster.node_timeout == 15
    assert cluster.node_id.endswith(f"-{os.getpid()}")


def test_environment_supplies_the_url(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(REDIS_URL_ENV, "redis://127.0.0.1:7000/2")
    assert _load(tmp_path, "{}\n").cluster.redis_url == "redis://127.0.0.1:7000/2"  # type: ignore[attr-defined]
    partial = _load(tmp_path, "cluster: {node_id: n1}\n").cluster  # type: ignore[attr-defined]
    assert (partial.redis_url, partial.node_id) == ("redis://127.0.0.1:7000/2", "n1")
    # The file wins over the variable.
    own = _load(tmp_path, "cluster: {redis_url: 'redis://10.0.0.1/0'}\n").cluster  # type: ignore[attr-defined]
    assert own.redis_url == "redis://10.0.0.1/0"
    missing = load_supervisor_config(tmp_path / "none.yaml", missing_ok=True)
    assert missing.cluster is not None and missing.cluster.redis_url.endswith(":7000/2")


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("cluster: {redis_url: 'http://u:hunter2@host/0'}\n", "cluster.redis_url"),
        ("cluster: {redis_url: 'redis://h/0', node_timeout: 0}\n", "cluster.node_timeout"),
        ("cluster: {redis_url: 'redis://h/0', run_ttl: -5}\n", "cluster.run_ttl"),
        ("cluster: {redis_url: 'redis://h/0', node_id: 'a b'}\n", "cluster.node_id"),
        ("cluster: {redis_url: 'redis://h/0', node_id: 'x:*'}\n", "cluster.node_id"),
        ("cluster: {redis_url: 'redis://h/0', nodes: 3}\n", "cluster.nodes"),
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
