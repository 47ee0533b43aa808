"""Profile of Redactor.redact on 1 MB of the realistic log of ``redaction_speed.py``.

Not part of ``make bench`` (the leading underscore): run it by hand,
``.venv/bin/python bench/_profile_redaction.py``, to see where redaction's time
goes. It writes the cProfile summary, sorted by own time, to
``bench/redaction_profile.txt``. cProfile adds a fixed cost to every Python
call, so the listing overstates per-match Python work against the time spent
inside Hyperscan and the regex engine; read it for the ranking, and take
throughput from ``redaction_speed.py``.
"""

from __future__ import annotations

import cProfile
import io
import pstats
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from redaction_speed import _redactor, median_seconds, realistic

from multiplex.redaction import _engine

OUT = Path(__file__).with_name("redaction_profile.txt")
RUNS = 5


def main() -> None:
    redactor = _redactor()
    text = realistic(1_000_000)
    seconds = median_seconds(lambda: redactor.redact(text))
    profile = cProfile.Profile()
    profile.enable()
    for _ in range(RUNS):
        redactor.redact(text)
    profile.disable()
    listing = io.StringIO()
    stats = pstats.Stats(profile, stream=listing)
    stats.strip_dirs().sort_stats("tottime").print_stats(25)
    header = (
        f"engine: {_engine.engine_name()}; realistic log, {len(text):,} characters, "
        f"{RUNS} runs under cProfile\n"
        f"unprofiled median: {seconds * 1e3:.1f} ms CPU per run, "
        f"{len(text) / seconds / 1e6:.1f} MB/s\n"
    )
    OUT.write_text(header + listing.getvalue())
    print(header + f"profile written to {OUT}")


if __name__ == "__main__":
    main()
