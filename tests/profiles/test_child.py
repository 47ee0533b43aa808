"""``child(path, name)`` is the path ``path / name`` makes."""

from __future__ import annotations

from pathlib import Path, PurePosixPath

import pytest

from multiplex.profiles._child import child


@pytest.mark.parametrize("base", ["/", "/srv/homes/alpha", "relative/home", ".", "/a/b/"])
@pytest.mark.parametrize(
    "name", ["config.yaml", ".env", "logs", "h00001", "a b", "...", ".", "..", "", "a/b", "/abs"]
)
def test_child_is_the_joined_path(base: str, name: str) -> None:
    for kind in (Path, PurePosixPath):
        made, joined = child(kind(base), name), kind(base) / name
        assert made == joined
        assert str(made) == str(joined)
        assert made.parts == joined.parts
        assert type(made) is type(joined)
        assert made.parent == joined.parent and made.name == joined.name
