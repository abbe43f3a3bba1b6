"""The worst-case search of ``dlsched verify --search`` against plain seeded sampling, on every
(claim, method) pair of the registry, from nothing (seeded draws of each theorem's generator:
no bundled instance, no remembered counterexample).

    python benchmarks/worst_case_search.py [--target-budget 600] [--budget 60] [--processes 2]
                                           [--only 002-thm4,...] [--out DIR]

The three targets, each with ``--target-budget`` seconds: a Theorem 4 violation of seed 002
(Algorithm 1 above alpha(2 + alpha) times the certified optimum), a Lemma 2 violation of seed
002, and an Algorithm 4 (A_mincost1) miss on (13) of seed 003's Theorem 1. Every other pair
gets ``--budget`` seconds. Each pair is searched on its own (the theorem narrowed to that
method), on a Dask LocalCluster of ``--processes`` processes, then sampled by ``verify``'s
own seeded run until the sample has at least as many certified solves; the sample's worst is
taken over exactly as many.

One markdown table: per pair the budget, the certified solves, the worst ratio found by the
search and by the sample (and each over the guarantee where the guarantee depends on the
instance: what the search maximizes), whether the claim was violated, the solve at which the
search first beat the sample's worst, and the checks: search >= sample, and the search's excess
over 1 at least 1.2 times the sample's (where the sample's excess is positive). The machine may
be shared: the load average at the start and the end is printed under the table.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from dlsched.solvers.base import SolveOptions
from dlsched.verify import registry
from dlsched.verify.runner import VerifyOptions
from dlsched.verify.search import SearchOptions, search

TARGETS = {("002-thm4", "hare"), ("002-lemma2", "hare"), ("003-thm1", "A_mincost1")}
TIME_LIMIT = 10.0  # per certification (the exact routes on the search's small instances)


def _value(row: dict[str, Any], prefix: str, over: bool) -> float | None:
    if row.get(f"{prefix}_infinite"):
        return math.inf
    return row.get(f"{prefix}_over_bound" if over else f"{prefix}_ratio")


def _text(x: float | None) -> str:
    if x is None:
        return "-"
    return "inf" if math.isinf(x) else f"{x:.4g}"


def _first_beat(row: dict[str, Any]) -> str:
    """The solve at which the search's worst first exceeded the sample's final worst."""
    target = _value(row, "sample_worst", over=True)
    if target is None:
        return "-"
    for n, s in row.get("history") or []:
        if (math.inf if s is None else s) > target:
            return str(n)
    return "never"


def checks(row: dict[str, Any]) -> tuple[bool, bool | None]:
    """(search >= sample, search's excess over 1 >= 1.2 x the sample's, None where the
    sample's excess is not positive), on what the search maximizes."""
    a, b = _value(row, "worst", over=True), _value(row, "sample_worst", over=True)
    if a is None:
        return b is None, None
    if b is None:
        return True, None
    at_least = a >= b - 1e-12
    excess = None if b <= 1 + 1e-9 else (math.isinf(a) or (a - 1) >= 1.2 * (b - 1))
    return at_least, excess


def run_pair(theorem_id: str, method: str, budget: float, processes: int, out: Path,
             ) -> dict[str, Any]:  # fmt: skip
    t = dataclasses.replace(registry()[theorem_id], methods=(method,))
    options = VerifyOptions(
        solve=SolveOptions(time_limit=TIME_LIMIT, threads=1), processes=processes, progress=False
    )
    started = time.monotonic()
    (row,) = search([t], out / f"{theorem_id}-{method}", options, SearchOptions(budget)).rows
    return {**row, "wall": time.monotonic() - started}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--target-budget", type=float, default=600.0)
    p.add_argument("--budget", type=float, default=60.0)
    p.add_argument("--processes", type=int, default=2)
    p.add_argument("--only", default="", help="comma-separated theorem ids (default: all)")
    p.add_argument("--out", default=None, help="folder of the runs (default: a temporary one)")
    a = p.parse_args()
    out = Path(a.out) if a.out else Path(tempfile.mkdtemp(prefix="worst-case-"))
    wanted = [x for x in a.only.split(",") if x]
    load_start, started = os.getloadavg()[0], time.monotonic()
    print("| theorem | method | budget s | solves | search worst | sample worst "
          "| search / guarantee | sample / guarantee | violated (search, sample) "
          "| search beat sample at solve | >= sample | excess >= 1.2 x | wall s |")  # fmt: skip
    print("|" + "---|" * 13, flush=True)
    rows = []
    for t in registry().values():
        if wanted and t.id not in wanted:
            continue
        for m in t.methods:
            target = (t.id, m) in TARGETS
            row = run_pair(t.id, m, a.target_budget if target else a.budget, a.processes, out)
            rows.append(row)
            ge, excess = checks(row)
            name = f"**{t.id}**" if target else t.id
            print(
                f"| {name} | {m} | {row['budget']:g} | {row['solves']} "
                f"| {_text(_value(row, 'worst', False))} "
                f"| {_text(_value(row, 'sample_worst', False))} "
                f"| {_text(_value(row, 'worst', True))} "
                f"| {_text(_value(row, 'sample_worst', True))} "
                f"| {'yes' if row['violated'] else 'no'}, "
                f"{'yes' if row['sample_violated'] else 'no'} "
                f"| {_first_beat(row)} | {'yes' if ge else 'NO'} "
                f"| {'-' if excess is None else 'yes' if excess else 'no'} | {row['wall']:.0f} |",
                flush=True,
            )
    ge = sum(checks(r)[0] for r in rows)
    excess = [checks(r)[1] for r in rows if checks(r)[1] is not None]
    print(
        f"\n{len(rows)} pairs; search >= sample on {ge}; excess >= 1.2 x the sample's on "
        f"{sum(bool(x) for x in excess)} of the {len(excess)} pairs whose sample exceeded 1. "
        f"Targets (bold) at {a.target_budget:g} s, the others at {a.budget:g} s; certification "
        f"time limit {TIME_LIMIT:g} s; {a.processes} Dask processes; load average "
        f"{load_start:.1f} at the start, {os.getloadavg()[0]:.1f} at the end, "
        f"{os.cpu_count()} cores; {time.monotonic() - started:.0f} s in all; runs in {out}."
    )


if __name__ == "__main__":
    main()
