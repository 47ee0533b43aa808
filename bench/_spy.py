"""py-spy around a bench phase, and a short text summary of what it sampled.

``Spy(pid, out)`` records ``out`` (py-spy's raw format: one line per distinct
stack, frames joined by ``;``, then the sample count) until :meth:`Spy.stop`,
which writes ``out`` with ``.txt`` instead: the share of samples per thread,
then the functions with the largest inclusive and self shares. Only the thread
holding the GIL is sampled (``--gil``), so the shares say where the process
spends its Python CPU (not the kernel's: forks, socket writes).
"""

from __future__ import annotations

import re
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path

__all__ = ["Spy", "summarize"]

_LINE = re.compile(r"^(.*) (\d+)$")
_LINENO = re.compile(r":\d+\)$")


class Spy:
    """One py-spy recording of a running process."""

    def __init__(self, pid: int, out: Path, rate: int = 200) -> None:
        self.out = out
        spy = Path(sys.executable).with_name("py-spy")
        if not spy.exists():
            raise SystemExit(f"{spy}: not installed (pip install py-spy, or make install)")
        self._proc = subprocess.Popen(
            [
                *(str(spy), "record", "--pid", str(pid), "--format", "raw", "--threads"),
                *("--gil", "--nolineno", "--rate", str(rate), "--output", str(out)),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    def stop(self) -> Path:
        """End the recording; the path of its text summary."""
        self._proc.send_signal(signal.SIGINT)
        self._proc.wait(60)
        summary = self.out.with_suffix(".txt")
        summary.write_text(summarize(self.out.read_text("utf-8")))
        return summary


def summarize(raw: str, top: int = 40) -> str:
    """Thread, inclusive and self shares of the samples in py-spy's raw output."""
    threads: Counter[str] = Counter()
    inclusive: Counter[str] = Counter()
    own: Counter[str] = Counter()
    total = 0
    for line in raw.splitlines():
        found = _LINE.match(line)
        if not found:
            continue
        frames, count = found.group(1).split(";"), int(found.group(2))
        total += count
        threads[re.sub(r"\d+", "N", frames[0])] += count
        names = [_LINENO.sub(")", f) for f in frames[1:]]
        for name in set(names):
            inclusive[name] += count
        if names:
            own[names[-1]] += count
    if not total:
        return "no samples\n"
    out = [f"samples {total}"]
    out += [f"thread {n * 100 / total:5.1f}% {name}" for name, n in threads.most_common(12)]
    out.append("--- inclusive")
    out += [f"{n * 100 / total:5.1f}% {name}" for name, n in inclusive.most_common(top)]
    out.append("--- self")
    out += [f"{n * 100 / total:5.1f}% {name}" for name, n in own.most_common(top)]
    return "\n".join(out) + "\n"
