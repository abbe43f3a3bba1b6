"""Run the whole speed suite and rebuild benchmarks/RESULTS.md from its sections (each
suite's generated RESULTS_<suite>.md, then its hand-written READING_<suite>.md if any).

    python benchmarks/run.py             # every suite
    python benchmarks/run.py hare        # rerun one suite, reassemble RESULTS.md from all
    python benchmarks/run.py --assemble  # only reassemble RESULTS.md
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).parent


SUITES = ("placement", "hare", "ddlwmp", "hare_online", "elastic", "verify")
#: sections measured by their own scripts (each names its command), appended after the suites:
#: time_limits.py, the rounding_<family>.py tables, startup.py, sweep_scaling.py,
#: frontier_rsumwc.py, user_policies.py, user_methods (several commands), bound_timings.py,
#: exact_regression.py
EXTRAS = (
    "time_limits",
    "rounding",
    "startup",
    "sweep_scaling",
    "trace_online",
    "user_policies",
    "user_methods",
    "worst_case_search",
    "frontier_rsumwc",
    "bound_timings",
    "exact_regression",
)


def main() -> int:
    args = sys.argv[1:]
    chosen = [] if args == ["--assemble"] else args or list(SUITES)
    unknown = sorted(set(chosen) - set(SUITES))
    if unknown:
        print(f"unknown suite(s) {unknown}; expected some of {list(SUITES)}", file=sys.stderr)
        return 2
    sections = []
    for suite in SUITES:
        script, out = f"bench_{suite}.py", f"RESULTS_{suite}.md"
        if suite in chosen:
            subprocess.run(
                [sys.executable, str(HERE / script), "--out", str(HERE / out)], check=True
            )
        sections.append((HERE / out).read_text())
        reading = HERE / out.replace("RESULTS_", "READING_")
        if reading.exists():  # the hand-written reading of that suite's figures
            sections.append(reading.read_text())
    for extra in EXTRAS:
        path = HERE / f"RESULTS_{extra}.md"
        if path.exists():
            sections.append(path.read_text())
    head = (
        "# Benchmark results\n\nRegenerate with `make bench` (runs `benchmarks/run.py`). "
        "Figures are from one run per suite on a\n2-core shared machine; compare ratios "
        "measured side by side, not absolute seconds.\n\n"
    )
    (HERE / "RESULTS.md").write_text(head + "\n".join(sections))
    return 0


if __name__ == "__main__":
    sys.exit(main())
