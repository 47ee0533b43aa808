"""Local images: present or refused, never pulled; the busybox image built offline on first use.

``BUSYBOX_IMAGE`` (``localhost/multiplex-busybox``, any tag) is built from the
host's static busybox (Debian ``busybox-static``): a root folder with busybox,
a link per applet, ``/etc/passwd`` and the usual mount points, imported from
its tarball. No registry is needed. Any other image must already be present:
multiplex never pulls (docs/execution.md#containers).
"""

from __future__ import annotations

import fcntl
import io
import os
import shutil
import subprocess
import tarfile
import tempfile
import threading
from pathlib import Path

from multiplex.execution._engine import Engine

__all__ = ["BUSYBOX_IMAGE", "build_busybox_image", "ensure_image", "image_present"]

BUSYBOX_IMAGE = "localhost/multiplex-busybox"
_DIRS = ("bin", "etc", "tmp", "proc", "sys", "dev", "run", "root", "work", "workspace")
_LOCK = threading.Lock()
_present: set[tuple[str, str]] = set()


def image_present(engine: Engine, image: str) -> bool:
    """Whether ``image`` is in the engine's local store."""
    probe = [engine.binary, "image", "inspect", image]
    done = subprocess.run(probe, capture_output=True, timeout=60, check=False)
    return done.returncode == 0


def _busybox() -> Path | None:
    for candidate in ("/bin/busybox", "/usr/bin/busybox"):
        if Path(candidate).is_file():
            return Path(candidate)
    found = shutil.which("busybox")
    return Path(found) if found else None


def _add(tar: tarfile.TarFile, name: str, data: bytes | None = None, **kw: object) -> None:
    info = tarfile.TarInfo(name)
    for key, value in kw.items():
        setattr(info, key, value)
    if data is not None:
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    else:
        tar.addfile(info)


def build_busybox_image(engine: Engine, tag: str) -> str | None:
    """Build ``tag`` from the host's busybox-static; None, or why it could not."""
    busybox = _busybox()
    if busybox is None:
        return "busybox is not installed (Debian package busybox-static)"
    listed = subprocess.run([busybox, "--list"], capture_output=True, text=True, check=False)
    applets = sorted(set(listed.stdout.split()) - {"busybox"})
    if listed.returncode != 0 or "sh" not in applets:
        return f"{busybox} is not a busybox with a shell"
    with tempfile.TemporaryDirectory(prefix="multiplex-image-") as tmp:
        tarball = Path(tmp) / "rootfs.tar"
        with tarfile.open(tarball, "w") as tar:
            for folder in _DIRS:
                mode = 0o1777 if folder == "tmp" else 0o755
                _add(tar, folder, type=tarfile.DIRTYPE, mode=mode)
            _add(tar, "bin/busybox", busybox.read_bytes(), mode=0o755)
            for applet in applets:
                _add(tar, f"bin/{applet}", type=tarfile.SYMTYPE, linkname="busybox", mode=0o777)
            _add(tar, "etc/passwd", b"root:x:0:0:root:/root:/bin/sh\n", mode=0o644)
            _add(tar, "etc/group", b"root:x:0:\n", mode=0o644)
        done = subprocess.run(
            [engine.binary, "import", str(tarball), tag],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
    if done.returncode != 0:
        return f"{engine.cli} import failed: {(done.stderr.strip().splitlines() or ['?'])[-1]}"
    return None


def ensure_image(engine: Engine, image: str) -> str | None:
    """Make sure ``image`` is present (building the busybox image if it is that); None or why not."""
    key = (engine.binary, image)
    if key in _present:
        return None
    with _LOCK:
        if key not in _present:
            why = _ensure(engine, image)
            if why is not None:
                return why
            _present.add(key)
    return None


def _ensure(engine: Engine, image: str) -> str | None:
    if image_present(engine, image):
        return None
    if image.split(":", 1)[0] != BUSYBOX_IMAGE:
        return f"image {image!r} is not present locally ({engine.cli}); multiplex never pulls"
    # One build across processes (several supervisors or test workers at once): the
    # machine's /tmp, not $TMPDIR, which differs between processes; one file per user,
    # as the engine's image store is.
    shared = "/tmp" if os.access("/tmp", os.W_OK) else tempfile.gettempdir()
    lock_path = Path(shared) / f"multiplex-busybox-image-{os.getuid()}.lock"
    with open(lock_path, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if image_present(engine, image):
            return None
        return build_busybox_image(engine, image)
