"""Shared fixtures: real profile homes on disk, real supervisors."""

from __future__ import annotations

import os
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from multiplex import Supervisor

REPO = Path(__file__).resolve().parent.parent

HomeFactory = Callable[..., Path]


def write_home(
    root: Path,
    name: str,
    config: str = "",
    env: str | None = None,
    files: dict[str, str] | None = None,
) -> Path:
    """Create a profile home ``root/name`` with the given config.yaml, .env and files."""
    home = root / name
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(textwrap.dedent(config))
    if env is not None:
        (home / ".env").write_text(textwrap.dedent(env))
    for rel, text in (files or {}).items():
        path = home / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return home


@pytest.fixture
def make_home(tmp_path: Path) -> HomeFactory:
    root = tmp_path / "profiles"

    def make(
        name: str, config: str = "", env: str | None = None, files: dict[str, str] | None = None
    ) -> Path:
        return write_home(root, name, config, env, files)

    return make


@pytest.fixture
def write_config(tmp_path: Path) -> Callable[[str], Path]:
    """Write a multiplex.yaml next to the ``profiles`` folder."""

    def write(text: str) -> Path:
        path = tmp_path / "multiplex.yaml"
        path.write_text(textwrap.dedent(text))
        return path

    return write


@pytest.fixture
def supervisor_of(write_config: Callable[[str], Path]) -> Iterator[Callable[..., Supervisor]]:
    made: list[Supervisor] = []

    def build(config: str = "profiles_dir: profiles\n", **kwargs: object) -> Supervisor:
        sup = Supervisor.from_config(write_config(config), **kwargs)  # type: ignore[arg-type]
        made.append(sup)
        return sup

    yield build
    for sup in made:
        sup.close()


@pytest.fixture
def registry() -> Iterator[None]:
    """Put the surface registry back after a test registered its own surfaces."""
    from multiplex.scopes import SURFACES

    saved = SURFACES.snapshot()
    yield
    SURFACES.restore(saved)


@pytest.fixture(autouse=True)
def _no_process_scope() -> Iterator[None]:
    # Standalone supervisors bind a process-wide scope; never let it leak
    # from one test into the next.
    from multiplex.scopes import set_process_scope

    yield
    set_process_scope(None)


def run_cli(
    *args: str,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    stdin: str | None = None,
    replace_env: bool = False,
):  # type: ignore[no-untyped-def]
    """Run the real ``multiplex`` console script in a subprocess (``replace_env``: only ``env``)."""
    import subprocess
    import sys

    full_env = {} if replace_env else dict(os.environ)
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "multiplex", *args],
        cwd=cwd,
        env=full_env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A real redis-server for this session (skips, saying why, when not installed)."""
    from tests.redis_server import RedisServer

    try:
        server = RedisServer(tmp_path_factory.mktemp("redis")).start()
    except FileNotFoundError:
        pytest.skip("redis-server is not installed (make test installs it with apt-get)")
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def redis_url(redis_server: Any) -> str:
    """The session's Redis, running and empty."""
    if redis_server.proc is None:
        redis_server.start()
    redis_server.flush()
    return str(redis_server.url)
