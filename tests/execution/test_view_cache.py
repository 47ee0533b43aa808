"""docs/execution.md#what-a-run-costs-the-supervisor: a kept view's prints tell every change a full print tells.

``_prints`` takes one full print per folder and an ``fstatat`` per entry that
is not a link; these tests hold it to ``_print`` of each path, on every kind of
path a view looks at, and check that a change a full print sees changes it too.
"""

from __future__ import annotations

import os
from pathlib import Path

from multiplex.execution.sandbox._view_cache import _print, _prints


def _tree(root: Path) -> list[str]:
    (root / "homes/a/logs").mkdir(parents=True)
    (root / "homes/b").mkdir()
    (root / "homes/a/.env").write_text("X=1\n")
    (root / "elsewhere").mkdir()
    (root / "homes/link").symlink_to(root / "elsewhere")
    (root / "homes/dangling").symlink_to(root / "nowhere")
    (root / "via").symlink_to(root / "homes")
    names = ["homes/a", "homes/a/..", "homes/a/.env", "homes/a/.env/x", "homes/a/logs"]
    names += ["homes/a/logs/runs", "homes/b", "homes/link", "homes/dangling", "homes/missing"]
    names += ["missing/x", "via/a", "via/link", "homes/./a", "homes/a/", "homes"]
    return [str(root / name) if not name.endswith("/") else f"{root}/{name}" for name in names]


def test_prints_are_the_full_prints_of_each_path(tmp_path: Path) -> None:
    paths = [*_tree(tmp_path), "/", "/etc", "/proc/self"]
    assert _prints(paths) == tuple(_print(path) for path in paths)


def test_an_entry_or_a_folder_replaced_by_a_link_changes_the_print(tmp_path: Path) -> None:
    paths = _tree(tmp_path)
    before = _prints(paths)
    (tmp_path / "homes/b").rename(tmp_path / "elsewhere/b")
    (tmp_path / "homes/b").symlink_to(
        tmp_path / "elsewhere/b"
    )  # the same folder, now behind a link
    after = _prints(paths)
    assert after == tuple(_print(path) for path in paths)
    index = paths.index(str(tmp_path / "homes/b"))
    assert before[index] != after[index]
    assert before[index] is not None and after[index] is not None
    assert before[index][1:] == after[index][1:]  # same device, inode, mode: only where it resolves
    os.rename(tmp_path / "homes", tmp_path / "homes-before")
    os.symlink(tmp_path / "homes-before", tmp_path / "homes")
    moved = _prints(paths)
    assert moved == tuple(_print(path) for path in paths)
    assert (
        moved[paths.index(str(tmp_path / "homes/a"))]
        != before[paths.index(str(tmp_path / "homes/a"))]
    )
