"""Theorem 1 of seed 003 (Algorithm 4 solves problem (13)) under both readings of Algorithm 4,
lines 15-19 (as written, and without its g = N iteration), on two distributions of one-shape
cases and on saved counterexamples (docs/errata.md, seed 003, "Algorithms 4-7" and "Theorem 1:
which violations are readings, which are counterexamples").

    python benchmarks/theorem1_readings.py [--draws 1000] [--seed 0] [--saved DIR ...]

1. ``mincost_cases``' distribution (:func:`.theorems.mincost_cases`, the cases
   :func:`.theorems.mincost_sweep` runs: the small generator, 3 servers, random m', p', N, q);
2. memory-bound PSs: the types of ``elastic/theorem1-counterexample-both`` (a worker is 1 GPU +
   1 vCPU, a PS 1 vCPU + 4 GB), B / b uniform in 1..4, 2 or 3 servers, N uniform in 1..5,
   q = 0, free GPUs uniform in 0..5, vCPUs in 0..8, GB 4 x uniform in 0..3 (0-3 PSs), prices
   summed over the window uniform in [0, 2) per GPU and per vCPU and [0, 3) per GB.

3. saved cases: every Theorem 1 counterexample file (``dlsched verify`` rows with their
   instance, as ``counterexamples/`` holds them) under the folders given with ``--saved``
   (default: the family's ``data/violations``), each case measured again.

Each case: Algorithm 4 as written and without its g = N iteration ("keep a PS",
:func:`.mincost.mincost1_fixed` with ``skip_g_n``) against the MILP of (13) (HiGHS), through
:func:`.guarantees.problem13_costs` (a whole-oracle case through
:func:`.guarantees.oracle_costs`); a cost is off the optimum when it exceeds it beyond
:data:`dlsched.bounds.SLACK` (:func:`dlsched.bounds.within`).
"""

from __future__ import annotations

import argparse
import json
import math
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from dlsched.bounds import within
from dlsched.instances import load
from dlsched.models.elastic.guarantees import oracle_costs, problem13_costs
from dlsched.models.elastic.instance import ElasticInstance, Server
from dlsched.models.elastic.theorems import COUNTEREXAMPLES, mincost_cases
from dlsched.verify.check import load_counterexample


@dataclass(frozen=True)
class Case:
    """One draw: its shape (n, q, free capacity) and the three costs."""

    n: int
    q: bool
    servers: int
    paper: float
    exact: float | None
    other_reading: float | None


def costs(inst: ElasticInstance, m: int, p: int, n: int, q: bool, win, room) -> Case:
    paper, exact, other = problem13_costs(inst, m, p, n, q, win, room)
    return Case(n, q, len(room), paper, exact, other)


def memory_bound_case(rng: np.random.Generator) -> Case:
    """One case of distribution 2 (see the module's docstring)."""
    base = load("elastic/theorem1-counterexample-both")
    h, n, ratio = int(rng.integers(2, 4)), int(rng.integers(1, 6)), int(rng.integers(1, 5))
    ps = replace(base.ps_types[0], bandwidth=base.worker_types[0].bandwidth * ratio)
    servers = tuple(Server(f"s{k}", (5.0, 8.0, 16.0)) for k in range(h))
    inst: ElasticInstance = replace(base, name="memory-bound", servers=servers, ps_types=(ps,))
    room = np.stack(
        [rng.integers(0, 6, h), rng.integers(0, 9, h), 4 * rng.integers(0, 4, h)], axis=1
    ).astype(float)
    win = np.stack([rng.random(h) * 2, rng.random(h) * 2, rng.random(h) * 3], axis=1)
    return costs(inst, 0, 0, n, False, win, room)


def saved_case(path: Path) -> Case | None:
    """A saved Theorem 1 counterexample (PS) measured again (N = 0: a whole-oracle case);
    None for any other file."""
    if not {"instance", "record"} <= set(json.loads(path.read_text())):
        return None
    inst, rec = load_counterexample(path)
    d = rec.get("details") or {}
    if rec.get("theorem") != "003-thm1" or not getattr(inst, "is_ps", False):
        return None
    prices, free = np.array(d["prices"], dtype=float), np.array(d["free"], dtype=float)
    if "job" in d:  # the whole oracle of one job
        window = (int(d["window"][0]), int(d["window"][1]))
        paper, exact, other = oracle_costs(inst, int(d["job"]), prices, free, window)
        return Case(0, False, inst.num_servers, paper, exact, other)
    return costs(inst, d["m"], d["p"], d["n"], d["q"], prices, free)


def off(cost: float | None, rec: Case) -> bool:
    assert rec.exact is not None
    return cost is not None and not within(cost, rec.exact)


def summary(title: str, recs: list[Case]) -> list[str]:
    feasible = [r for r in recs if r.exact is not None]
    spread = [r for r in feasible if not r.q]  # Algorithm 4 (q = 0)
    written = [r for r in spread if off(r.paper, r)]
    keep = [r for r in spread if off(r.other_reading, r)]
    none = [r for r in keep if r.other_reading is not None and not math.isfinite(r.other_reading)]
    lines = [
        f"## {title}",
        "",
        f"{len(recs)} draws, {len(feasible)} with a feasible MILP, {len(spread)} of them q = 0 "
        f"(Algorithm 4). Off the optimum: as written {len(written)}, without g = N {len(keep)} "
        f"({len(none)} with no schedule at all).",
        "",
        "| N | q = 0, feasible | as written off | without g = N off |",
        "|---|---|---|---|",
    ]
    by_n = Counter(r.n for r in spread)
    for n in sorted(by_n):
        w = sum(r.n == n for r in written)
        k = sum(r.n == n for r in keep)
        lines.append(f"| {n} | {by_n[n]} | {w} | {k} |")
    worst = sorted(keep, key=lambda r: (r.n, (r.other_reading or 0) - (r.exact or 0)))[:3]
    lines += ["", "Smallest N off the optimum without g = N:"]
    for r in worst:
        lines.append(
            f"- N = {r.n}, {r.servers} servers: without g = N "
            f"{r.other_reading:.4f}, as written {r.paper:.4f}, optimum {r.exact:.4f}"
        )
    return [*lines, ""]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--draws", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--saved", action="append", help="a folder of counterexample files")
    args = ap.parse_args()
    sweep = [
        costs(inst, c["m"], c["p"], c["n"], c["q"], c["win"], c["room"])
        for inst, c in mincost_cases(args.draws, args.seed, "ps")
    ]
    rng = np.random.default_rng(args.seed)
    memory = [memory_bound_case(rng) for _ in range(args.draws)]
    lines = summary(f"mincost_cases, seed {args.seed}", sweep) if args.draws else []
    lines += summary(f"memory-bound PSs, seed {args.seed}", memory) if args.draws else []
    files = sorted(f for d in args.saved or [COUNTEREXAMPLES] for f in Path(d).rglob("*.json"))
    cases = [c for c in map(saved_case, files) if c is not None]
    lines += summary(f"saved counterexamples ({len(files)} files)", cases)
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
