"""10,000 profile homes: load time, memory, one inotify instance, revocation latency (docs/operations.md#capacity).

Generates 10,000 homes (config.yaml with allowlist, deny rules and env; a
.env with a token), then:

- loads them with ``Supervisor.from_config`` (and, for the ratio, closes that
  supervisor before it watches anything; a second one loads for what follows):
  wall time and RSS growth (targets: <= 2x the floor, <= 300 MB),
  against the floor measured in the same run, before and after: reading the
  same 20,000 files and parsing each config.yaml with PyYAML's C loader;
- starts the watcher: how many inotify instances the process holds (target: 1);
- revokes an allowlist rule by hand (write-temp-then-rename) in homes spread
  over the fleet, 60 times: p50/p99 until the running supervisor stops allowing
  it (target p99 <= 200 ms), against the configured debounce (the floor);
- pages ``/v1/profiles`` (limit 100) through the ASGI app in process.

    .venv/bin/python bench/fleet_scale.py [--homes 10000] [--edits 60]
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import tempfile
import time
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import percentile, write_home

from multiplex import Supervisor

DEBOUNCE_MS = 50


def config_of(i: int, extra: str = "") -> str:
    return (
        f"# home {i}\nterminal:\n  cwd: .\n  env: {{INDEX: '{i}'}}\n"
        f"command_allowlist:\n  - git status\n  - 'npm run test:*'\n{extra}"
        f"approvals:\n  mode: manual\n  deny: ['git push *']\n"
    )


def rss_mb() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def inotify_instances() -> int:
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}") == "anon_inode:inotify":
                count += 1
        except OSError:
            continue
    return count


def floor_read(root: Path, names: list[str]) -> float:
    began = time.perf_counter()
    for name in names:
        home = root / "profiles" / name
        yaml.load((home / "config.yaml").read_bytes(), Loader=yaml.CSafeLoader)
        (home / ".env").read_bytes()
    return time.perf_counter() - began


def atomic_write(path: Path, text: str) -> None:
    tmp = path.with_name(".config.yaml.edit")
    tmp.write_text(text)
    os.replace(tmp, path)


def until(predicate, limit: float = 10.0) -> float:  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    while not predicate():
        if time.perf_counter() - start > limit:
            raise TimeoutError("the edit was not seen")
        time.sleep(0.0005)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--homes", type=int, default=10_000)
    parser.add_argument("--edits", type=int, default=60)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        names = [f"h{i:05d}" for i in range(args.homes)]
        for i, name in enumerate(names):
            write_home(
                root / "profiles",
                name,
                config_of(i),
                f"MULTIPLEX_TOKEN=tok-{i:06d}-abcdefghijklmnopqrstuvwx\nAPI_KEY=key-{i:08d}\n",
            )
        (root / "multiplex.yaml").write_text(
            "profiles_dir: profiles\ndefault_profile: null\n"
            f"watch: {{mode: auto, debounce_ms: {DEBOUNCE_MS}}}\n"
        )
        floor_before = floor_read(root, names)
        gc.collect()
        before = rss_mb()
        began = time.perf_counter()
        sup = Supervisor.from_config(root / "multiplex.yaml")
        load = time.perf_counter() - began
        grown = rss_mb() - before
        ok = sum(1 for p in sup.profiles.values() if p.status == "ok")
        began = time.perf_counter()
        sup.close()  # as loaded: what stopping a watcher costs is not the load's
        close = time.perf_counter() - began
        sup = Supervisor.from_config(root / "multiplex.yaml")  # the one that watches
        inotify_before = inotify_instances()
        began = time.perf_counter()
        sup.start()
        start = time.perf_counter() - began
        inotify = inotify_instances() - inotify_before
        try:
            latencies: list[float] = []
            step = max(1, args.homes // args.edits)
            for k in range(args.edits):
                i = (k * step + 7) % args.homes
                profile = sup.profiles[names[i]]
                rule = f"deploy-{k} *"
                atomic_write(profile.config_path, config_of(i, f"  - '{rule}'\n"))
                until(lambda r=rule, p=profile: p.allowlist.allows([r.split()[0], "x"]))
                began = time.perf_counter()
                atomic_write(profile.config_path, config_of(i))  # the revocation
                until(lambda r=rule, p=profile: not p.allowlist.allows([r.split()[0], "x"]))
                latencies.append((time.perf_counter() - began) * 1000)
            watch_mode = sup.watcher.mode if sup.watcher is not None else "none"
        finally:
            sup.close()
        floor = (floor_before + floor_read(root, names)) / 2
    load_avg = os.getloadavg()
    print(f"homes: {args.homes}  cores: {os.cpu_count()}  load average: {load_avg[0]:.1f}")
    print(
        f"load: {load:.2f} s ({ok} ok), close {close:.2f} s, RSS +{grown:.0f} MB; floor (read "
        f"every file + PyYAML's C loader, before and after): {floor:.2f} s; ratio load + close: "
        f"{(load + close) / floor:.2f}x   (targets: <= 2x, <= 300 MB)"
    )
    print(
        f"watcher start: {start:.2f} s, mode {watch_mode}, inotify instances: {inotify} (target: 1)"
    )
    print(
        f"revocation in one of {args.homes} watched homes ({len(latencies)} edits): "
        f"p50 {percentile(latencies, 50):.0f} ms, p99 {percentile(latencies, 99):.0f} ms "
        f"(target p99 <= 200 ms); floor: the {DEBOUNCE_MS} ms debounce, "
        f"ratio p99 {percentile(latencies, 99) / DEBOUNCE_MS:.1f}x"
    )


if __name__ == "__main__":
    main()
