"""Per-turn scope cost, and loading 1000 profile homes (issue: foundation).

Prints the median time per turn of: bind a scope + resolve every registered
surface + unbind, and the ratio to a bare ContextVar.set/reset pair measured in
the same run. Then loads 1000 generated homes: wall time and RSS growth.
Targets: a turn <= 15x the bare pair (issue 32); 1000 homes in <= 3 s and <= 100 MB.
"""

from __future__ import annotations

import contextvars
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import median_us, write_home

from multiplex import Supervisor
from multiplex.approval import Gate  # noqa: F401  (registers every surface)
from multiplex.scopes import SURFACES


def rss_mb() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for i in range(20):
            write_home(
                root / "profiles",
                f"p{i}",
                f"terminal:\n  cwd: w{i}\n  env: {{I: '{i}'}}\ncommand_allowlist: ['git status']\n",
                f"API_TOKEN=token-value-{i:06d}\n",
            )
        (root / "multiplex.yaml").write_text("profiles_dir: profiles\ndefault_profile: null\n")
        sup = Supervisor.from_config(root / "multiplex.yaml")
        resolvers = [s.resolve for s in SURFACES]

        def one_turn() -> None:
            with sup.turn("p7", "s", "api") as scope:
                for resolve in resolvers:
                    resolve(scope)

        var: contextvars.ContextVar[object] = contextvars.ContextVar("bare", default=None)

        def bare() -> None:
            var.reset(var.set(object))

        turn = median_us(one_turn, loops=20_000)
        floor = median_us(bare, loops=200_000)
        print(
            f"scope per turn (bind + resolve {len(resolvers)} surfaces + unbind): median {turn:.2f} us"
        )
        print(
            f"bare ContextVar.set/reset: median {floor:.3f} us; ratio {turn / floor:.1f}x   (target: <= 15x)"
        )
        sup.close()

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for i in range(1000):
            write_home(
                root / "profiles",
                f"h{i:04d}",
                f"# home {i}\nterminal:\n  backend: {'local' if i % 3 else 'docker'}\n  cwd: work\n"
                f"  env: {{INDEX: '{i}'}}\n  env_passthrough: [API_TOKEN]\n"
                f"command_allowlist:\n  - git status\n  - 'npm run test:*'\n  - 'rule-{i} *'\n"
                f"approvals:\n  deny: ['git push *']\n",
                f"API_TOKEN=token-{i:06d}-abcdefgh\nOTHER=x\n",
            )
        (root / "multiplex.yaml").write_text("profiles_dir: profiles\ndefault_profile: null\n")
        before = rss_mb()
        started = time.perf_counter()
        sup = Supervisor.from_config(root / "multiplex.yaml")
        wall = time.perf_counter() - started
        grown = rss_mb() - before
        ok = sum(1 for p in sup.profiles.values() if p.status == "ok")
        print(
            f"load 1000 homes: {wall:.2f} s wall ({ok} ok), RSS +{grown:.1f} MB   (targets: <= 3 s, <= 100 MB)"
        )
        sup.close()


if __name__ == "__main__":
    main()
