"""Gate decision latency on a realistic corpus (issue: the approval gate; issue 32 target 3).

1000 agent commands against a profile with 200 deny rules and 10,000
allowlist rules; prints p50/p99 of a decision without a prompt (the gate's
steps 1-9: parse, hardline, deny, allowlist, detection) and the ratio to parsing
the same corpus alone, measured in the same run. Also prints the full decide()
path (with its decisions.jsonl write and metrics) for unattended commands.

The peer (issue 32 target 3): hermes-agent 0.19.0, fetched from PyPI into
bench/.peers/ (ignored by git; never part of the repository) and timed on the
same corpus in the same run, taking turns with ours by blocks of 50 commands: its pure
decision work per command, ``detect_hardline_command`` + ``detect_dangerous_command``
(what its ``check_all_command_guards`` does before I/O). Left out: its
``_match_user_deny_rule``, which reads its config from disk on every call, and
tirith. Ours in that pairing is a decision with no per-line cache carried over
from an earlier decision (the corpus repeats lines: every functools cache of
multiplex.shell and multiplex.approval is cleared before each timed decision,
except those that depend only on the profile's rules, the option tables or the
turn's place); the figure with caches kept is printed beside it. Target: ours
<= 1/10 of hermes's median. Without PyPI the peer is reported as not measured.

Long lines (issue 10): the time per KiB at 1, 8 and 64 KiB, the slope from 8 to
64 KiB (without the fixed per-decision cost), the slowest 64 KiB line, and 64 KiB
lines an agent writes or that used to be quadratic (docs/security.md#linear-time).
"""

from __future__ import annotations

import functools
import importlib
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import ORDINARY_CORPUS, percentile, write_home

from multiplex import Supervisor
from multiplex.shell import parse_line

REPO = Path(__file__).resolve().parent.parent
# The corpus p50 measured before issue 10's changes, on the 2-core build machine
# (three runs: 118, 132, 140 us; median 132). Issue 10 allows at most 1.5x this.
BASELINE_P50_US = 132.0
PEER = "hermes-agent==0.19.0"
PEERS = REPO / "bench" / ".peers"  # in .gitignore: the peer's code is never committed
# Caches that depend only on the profile's rules, the option tables or the turn's place:
# kept between decisions. Every other cache of the gate's modules is per line.
RULE_CACHES = frozenset(
    {"_compile", "deny_set", "_deny_set", "_by_program", "_meant", "_globs", "_shapes", "_home_set",
     "_secret_cwd", "_place", "_allow_index", "_neutral"}
)  # fmt: skip
TEMPLATES = [
    "git status",
    "git diff --stat",
    "git log --oneline -20",
    "git add -A && git commit -m 'wip {n}'",
    "ls -la src/{w}",
    "cat src/{w}/main.py | head -50",
    "grep -rn 'TODO' src/{w}",
    "find . -name '*.py' | wc -l",
    "python -m pytest tests/test_{w}.py -q",
    "npm run test:{w}",
    "npm install --save-dev {w}",
    "docker ps -a",
    "kubectl get pods -n {w}",
    "curl -sS https://api.example.test/{w} -o out.json",
    "sed -n '1,40p' src/{w}.py",
    "awk '{{print $1}}' data/{w}.csv | sort | uniq -c",
    "jq '.items[]' {w}.json",
    "make build && make test",
    "rm -rf build/{w}",
    "mkdir -p out/{w} && cp -r assets out/{w}/",
    "echo $PATH | tr ':' '\\n'",
    "tar czf {w}.tgz src/",
    "pip install -e '.[test]'",
    "cargo build --release",
    "git push origin feature/{w}",
    "bash -c 'cd src && ls'",
    "sudo systemctl restart {w}",
    "xargs -n1 echo < list.txt",
]


def corpus(rng: random.Random) -> list[str]:
    words = ["api", "core", "auth", "billing", "search", "ui", "db", "cli"]
    lines = [
        t.format(n=i, w=rng.choice(words)) for i, t in enumerate(rng.choices(TEMPLATES, k=900))
    ]
    ordinary = ORDINARY_CORPUS.read_text().splitlines()
    lines += [line for line in ordinary if line.strip() and not line.startswith("#")][:100]
    return lines[:1000]


def long_lines(kib: int) -> list[str]:
    """Valid lines of ``kib`` KiB: many words, one long word, a long && list (issue 10)."""
    size = kib * 1024
    words = ("echo " + " ".join(f"w{i}" for i in range(size)))[:size]
    word = "echo " + "x" * (size - 5)
    listed = ("cd src && " + "make test-x && " * size)[:size].rsplit(" &&", 1)[0]
    return [words, word, listed]


def realistic_lines(kib: int) -> dict[str, str]:
    """Long lines an agent does write: an inline script, a long commit message."""
    size = kib * 1024
    body = "".join(f"rows.append(parse(line_{i}))\n" for i in range(size // 20))
    script = ("python3 -c 'import sys\n" + body)[: size - 1] + "'"
    words = " ".join(f"fix{i}" for i in range(size // 4))
    message = ('git commit -m "' + words)[: size - 1] + '"'
    return {"python -c script": script, "commit message": message}


def adversarial_lines(kib: int) -> dict[str, str]:
    """Lines that made two regexes quadratic before issue 10's last change."""
    size = kib * 1024
    return {
        "brace commas": "echo {" + "," * (size - 6),
        "rm_rf spaces": "python3 -c 'rm_rf" + " " * (size - 19) + "'",
    }


def decision_s(sup: Supervisor, scope: object, line: str, repeats: int) -> float:
    """Median seconds of one decision of ``line``."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        sup.gate.evaluate(scope, line)  # type: ignore[arg-type]
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def long_times(sup: Supervisor, scope: object, kib: int) -> list[float]:
    """Median seconds of a decision of each of the long lines of ``kib`` KiB."""
    return [decision_s(sup, scope, line, 3 if kib > 8 else 5) for line in long_lines(kib)]


def per_kib(times: list[float], kib: int) -> float:
    """Median microseconds per KiB over the long lines of ``kib`` KiB."""
    return statistics.median(times) * 1e6 / kib


def timed(fn, items: list[str]) -> list[float]:  # type: ignore[no-untyped-def]
    out = []
    for item in items:
        start = time.perf_counter()
        fn(item)
        out.append((time.perf_counter() - start) * 1e6)
    return out


def peer_module() -> tuple[ModuleType | None, str]:
    """hermes-agent's ``tools.approval``, unpacked from its wheel under bench/.peers/, or why not."""
    folder = PEERS / PEER.replace("==", "-")
    if not (folder / "tools" / "approval.py").is_file():
        with tempfile.TemporaryDirectory() as tmp:
            pip = [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "-d", tmp, PEER]
            try:
                subprocess.run(pip, check=True, capture_output=True, timeout=300)
            except (subprocess.SubprocessError, OSError) as exc:
                return None, f"pip download {PEER} failed ({type(exc).__name__})"
            wheels = list(Path(tmp).glob("*.whl"))
            if not wheels:
                return None, f"pip download {PEER} gave no wheel"
            with zipfile.ZipFile(wheels[0]) as wheel:
                wheel.extractall(folder)
    # Its import makes a home folder: keep it out of the user's (~/.hermes).
    os.environ.setdefault("HERMES_HOME", str(PEERS / "hermes-home"))
    sys.path.insert(0, str(folder))
    try:
        return importlib.import_module("tools.approval"), ""
    except Exception as exc:  # any failure of a third party's import: not measured
        return None, f"import of {PEER}'s tools.approval failed: {type(exc).__name__}: {exc}"
    finally:
        sys.path.remove(str(folder))


def line_caches() -> list[Callable[[], None]]:
    """``cache_clear`` of every per-line functools cache of the gate's modules."""
    found: dict[int, Callable[[], None]] = {}
    for name, module in list(sys.modules.items()):
        if not name.startswith(("multiplex.shell", "multiplex.approval")):
            continue
        for attr, value in vars(module).items():
            clear = getattr(value, "cache_clear", None)
            if callable(clear) and attr not in RULE_CACHES:
                found[id(value)] = clear
    return list(found.values())


def paired(
    ours: Callable[[str], object], peer: Callable[[str], object], items: list[str], block: int = 50
) -> tuple[list[float], list[float]]:
    """Microseconds of ``ours`` (no per-line cache carried over) and ``peer`` on each item.

    They take turns by blocks of ``block`` items, so that both see the same load; not item
    by item, where each would run with its caches emptied by the other's work (that made
    both slower, ours by half)."""
    clears = line_caches()
    mine, theirs = [], []
    for first in range(0, len(items), block):
        chunk = items[first : first + block]
        for item in chunk:
            for clear in clears:
                clear()
            start = time.perf_counter()
            ours(item)
            mine.append((time.perf_counter() - start) * 1e6)
        theirs += timed(peer, chunk)
    return mine, theirs


def hermes_decision(module: ModuleType) -> Callable[[str], object]:
    def decide(line: str) -> object:
        return module.detect_hardline_command(line), module.detect_dangerous_command(line)

    return decide


def main() -> None:
    rng = random.Random(7)
    programs = [f"tool{i}" for i in range(400)] + [
        "git",
        "npm",
        "python",
        "ls",
        "cat",
        "docker",
        "kubectl",
        "make",
    ]
    allow = {
        f"{rng.choice(programs)} {rng.choice(['run', 'get', 'build', 'show', 'x'])}-{i} *"
        for i in range(10_000)
    }
    allow = [*sorted(allow)[:10000], "git status", "git diff *", "ls *"]
    deny = [
        f"{rng.choice(programs)} {rng.choice(['delete', 'push', 'drop', 'rm'])}-{i} *"
        for i in range(197)
    ]
    deny += ["git push --force *", "kubectl delete *", "terraform destroy *"]
    lines = corpus(rng)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        config = "command_allowlist:\n" + "".join(f"  - '{r}'\n" for r in allow)
        config += "approvals:\n  deny:\n" + "".join(f"    - '{r}'\n" for r in deny)
        write_home(root / "profiles", "p", config)
        (root / "multiplex.yaml").write_text("profiles_dir: profiles\ndefault_profile: p\n")
        sup = Supervisor.from_config(root / "multiplex.yaml")
        with sup.turn("p", context="cron") as scope:
            for line in lines[:200]:  # warm up parsers, caches
                sup.gate.evaluate(scope, line)
            parse = timed(parse_line, lines * 3)
            gate = timed(lambda c: sup.gate.evaluate(scope, c), lines * 3)
            evaluate = functools.partial(sup.gate.evaluate, scope)
            peer, why_not = peer_module()
            if peer is not None:
                for line in lines[:200]:  # warm up its regexes
                    hermes_decision(peer)(line)
                cold, hermes = paired(evaluate, hermes_decision(peer), lines * 3)
            else:
                cold, hermes = paired(evaluate, lambda c: None, lines * 3)
            decide = timed(lambda c: sup.gate.decide(scope, c), lines)
            long = {size: long_times(sup, scope, size) for size in (1, 8, 64)}
            kib = {size: per_kib(times, size) for size, times in long.items()}
            extra = {**realistic_lines(64), **adversarial_lines(64)}
            extra_ms = {name: decision_s(sup, scope, line, 3) * 1e3 for name, line in extra.items()}
        outcomes: dict[str, int] = {}
        with sup.turn("p", context="api") as scope:
            for line in lines:
                key = sup.gate.evaluate(scope, line).outcome.value
                outcomes[key] = outcomes.get(key, 0) + 1
        sup.close()
    p50, p99 = statistics.median(gate), percentile(gate, 99)
    q50, q99 = statistics.median(parse), percentile(parse, 99)
    print(
        f"corpus: {len(lines)} commands; profile: {len(allow)} allow rules, {len(deny)} deny rules; verdicts {outcomes}"
    )
    print(
        f"gate decision (steps 1-9, no prompt): p50 {p50:.1f} us, p99 {p99:.1f} us   (targets: p50 <= 150 us, p99 <= 1000 us)"
    )
    print(f"parsing alone (the floor):            p50 {q50:.1f} us, p99 {q99:.1f} us")
    print(f"ratio gate/parse: p50 {p50 / q50:.2f}x, p99 {p99 / q99:.2f}x")
    c50 = statistics.median(cold)
    print(
        f"gate decision, no per-line cache carried over: p50 {c50:.1f} us, "
        f"p99 {percentile(cold, 99):.1f} us (with caches kept, above: p50 {p50:.1f} us)"
    )
    if peer is None:
        print(f"peer {PEER}: could not be measured: {why_not}")
    else:
        h50 = statistics.median(hermes)
        print(
            f"peer {PEER} (detect_hardline_command + detect_dangerous_command, same corpus, "
            f"in turns with ours): p50 {h50:.1f} us, p99 {percentile(hermes, 99):.1f} us"
        )
        print(
            f"ratio ours/hermes: p50 {c50 / h50:.3f} (target <= 0.10); "
            f"with caches kept {p50 / h50:.3f}"
        )
    print(
        "long lines (issue 10), time per KiB: "
        + ", ".join(f"{k} KiB {v:.0f} us/KiB" for k, v in kib.items())
        + f"; 64 KiB decided in {kib[64] * 64 / 1000:.1f} ms (target well under 100 ms)"
    )
    print(f"ratio 64 KiB / 1 KiB per KiB: {kib[64] / kib[1]:.2f}x (target near 1)")
    # The ratio above divides a fixed per-decision cost by 1 KiB: below 1 means that cost
    # dominates a short line. The slope from 8 to 64 KiB leaves it out.
    slope = (statistics.median(long[64]) - statistics.median(long[8])) * 1e6 / 56
    print(
        f"  slope 8 -> 64 KiB: {slope:.0f} us per added KiB ({slope / kib[64]:.2f}x the 64 KiB "
        f"figure); slowest 64 KiB line (words, one word, && list): "
        f"{max(long[64]) * 1e3:.1f} ms"
    )
    print(
        "  other 64 KiB lines: " + ", ".join(f"{name} {ms:.1f} ms" for name, ms in extra_ms.items())
    )
    print(
        f"corpus p50 vs before issue 10 ({BASELINE_P50_US:.0f} us on this machine): "
        f"{p50 / BASELINE_P50_US:.2f}x (limit 1.5x)"
    )
    print(
        f"full decide() incl. decisions.jsonl + metrics (cron): p50 {statistics.median(decide):.1f} us, p99 {percentile(decide, 99):.1f} us"
    )


if __name__ == "__main__":
    main()
