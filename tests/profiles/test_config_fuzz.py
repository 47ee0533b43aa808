"""docs/configuration.md#validation: whatever a config file holds, only ``ConfigError`` comes out."""

from __future__ import annotations

import contextlib
import tempfile
from pathlib import Path

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from multiplex._errors import ConfigError
from multiplex.profiles import Profile, load_config, parse_config, parse_dotenv, read_dotenv
from multiplex.supervision import load_supervisor_config
from tests.strategies import config_bytes, yaml_documents

FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# The fail-closed net's own words: seeing them means an exception escaped a check.
NET = ("cannot be validated (", "cannot be loaded (")


def _every_path(data: bytes) -> None:
    """Feed ``data`` through every way multiplex reads a config or .env."""
    try:
        parse_config(data, file="config.yaml")
    except ConfigError as exc:
        assert not any(n in str(exc) for n in NET), exc
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        (home / "config.yaml").write_bytes(data)
        (home / ".env").write_bytes(data)
        with contextlib.suppress(ConfigError):
            load_config(home / "config.yaml")
        with contextlib.suppress(ConfigError):
            read_dotenv(home / ".env")
        with contextlib.suppress(ConfigError):
            load_supervisor_config(home / "config.yaml")
        profile = Profile("fuzz", home)
        result = profile.reload()  # never raises
        assert result.result in {"ok", "error"}
        assert (profile.status == "error") == (result.result == "error")
        if result.result == "error":
            assert profile.error and "\n" not in profile.error
            assert not any(n in profile.error for n in NET), profile.error
        (home / ".env").write_bytes(b"")
        profile.reload()
    with contextlib.suppress(ConfigError):
        parse_dotenv(data.decode("utf-8", "replace"), file=".env")


@FUZZ
@given(yaml_documents())
def test_arbitrary_yaml_documents_only_raise_config_error(doc: object) -> None:
    for style in (False, True, None):
        _every_path(yaml.safe_dump(doc, default_flow_style=style).encode())
    if isinstance(doc, dict):
        _every_path(yaml.safe_dump({"approvals": doc, "terminal": doc}).encode())


@FUZZ
@given(config_bytes())
def test_arbitrary_bytes_only_raise_config_error(data: bytes) -> None:
    _every_path(data)


@FUZZ
@given(
    st.binary(max_size=64),
    st.sampled_from(
        [b"terminal:\n  timeout: ", b"approvals:\n  mode: ", b"command_allowlist:\n  - "]
    ),
)
def test_arbitrary_values_of_owned_keys_only_raise_config_error(
    value: bytes, prefix: bytes
) -> None:
    _every_path(prefix + value + b"\n")
