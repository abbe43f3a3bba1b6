"""Run the whole speed suite and rebuild benchmarks/RESULTS.md from its sections."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).parent


def main() -> int:
    sections = []
    for script, out in (
        ("bench_placement.py", "RESULTS_placement.md"),
        ("bench_hare.py", "RESULTS_hare.md"),
    ):
        subprocess.run([sys.executable, str(HERE / script), "--out", str(HERE / out)], check=True)
        sections.append((HERE / out).read_text())
    head = (
        "# Benchmark results\n\nRegenerate with `make bench` (runs `benchmarks/run.py`). "
        "Figures are from one run per suite on a\n2-core shared machine; compare ratios "
        "measured side by side, not absolute seconds.\n\n"
    )
    (HERE / "RESULTS.md").write_text(head + "\n".join(sections))
    return 0


if __name__ == "__main__":
    sys.exit(main())
