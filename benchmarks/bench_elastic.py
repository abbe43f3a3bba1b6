"""Speed and quality of the elastic family (seed 003), measured side by side in one run.

    python benchmarks/bench_elastic.py [--quick] [--out benchmarks/RESULTS_elastic.md]

1. ``exact`` (Gamma_j enumerated, packing ILP on HiGHS) on 6 jobs, 3 servers, T = 20, both
   architectures;
2. ``lp-bound`` (column generation) on 30 jobs, 10 servers, T = 50, and the full LP over
   every enumerated column beside it on a small instance;
3. every heuristic against the certified optimum on small instances (ratios side by side);
4. A_maxweight against the greedy of Jain et al. [44] and the optimum of ILP (8);
5. Section 7's setting: the baselines at the paper's scale (300 jobs, 150 servers, T = 300),
   ``a-online`` on smaller slices of the same setting.
"""

from __future__ import annotations

import argparse
import math
import platform
import time
from pathlib import Path

from dlsched.models import MethodOptions, run_method
from dlsched.models.elastic.algorithms import Ledger, a_maxweight, lam
from dlsched.models.elastic.baselines import greedy_maxweight
from dlsched.models.elastic.colgen import full_lp
from dlsched.models.elastic.enumerate import enumerate_all
from dlsched.models.elastic.exact import all_columns
from dlsched.models.elastic.generate import generate
from dlsched.models.elastic.guarantees import max_weight_optimum
from dlsched.solvers import SolveOptions

HEURISTICS = ("a-online", "a-dual", "a-maxweight", "fifo", "drf", "tiresias", "antman")


def fmt(x, nd=2):
    return "-" if x is None else f"{x:.{nd}f}"


def timed(inst, method, opts):
    t0 = time.perf_counter()
    out = run_method(inst, method, opts)
    return out, time.perf_counter() - t0


def section_exact(lines, opts, quick):
    lines += [
        "## 1. exact: Gamma_j enumeration + packing ILP (6 jobs, 3 servers, T = 20)",
        "",
        "| instance | status | objective | configs generated | kept | columns | time (s) |",
        "|---|---|---|---|---|---|---|",
    ]
    for arch in ("ps", "ring"):
        for seed in (0,) if quick else (0, 1):
            inst = generate(6, 3, seed, architecture=arch, horizon=20)
            out, wall = timed(inst, "exact", opts)
            d = out.details
            lines.append(
                f"| {inst.name} | {out.status} | {fmt(out.objective, 1)} | "
                f"{d['configs_generated']} | {d['configs_kept']} | {d['columns']} | {wall:.1f} |"
            )
    lines.append("")


def section_colgen(lines, opts, quick):
    lines += [
        "## 2. lp-bound: column generation (30 jobs, 10 servers, T = 50)",
        "",
        "| instance | status | bound | iterations | columns | time (s) |",
        "|---|---|---|---|---|---|",
    ]
    for arch in ("ps", "ring"):
        inst = generate(30, 10, 0, architecture=arch, horizon=50)
        out, wall = timed(inst, "lp-bound", opts)
        d = out.details
        lines.append(
            f"| {inst.name} | {out.status} | {fmt(out.bound)} | {d['iterations']} | "
            f"{d['columns_generated']} | {wall:.1f} |"
        )
    small = generate(5, 3, 1)
    cg, t_cg = timed(small, "lp-bound", opts)
    t0 = time.perf_counter()
    cols = all_columns(small, enumerate_all(small))
    lp = full_lp(small, cols)
    t_lp = time.perf_counter() - t0
    lines += [
        "",
        f"Side by side on {small.name}: column generation {fmt(cg.bound, 4)} "
        f"({cg.details['columns_generated']} columns, {t_cg:.2f} s) against the LP over all "
        f"{len(cols)} enumerated columns {fmt(lp, 4)} ({t_lp:.2f} s).",
        "",
    ]


def section_ratios(lines, opts, quick):
    lines += [
        "## 3. Heuristics / certified optimum (small instances)",
        "",
        "| instance | OPT | " + " | ".join(HEURISTICS) + " |",
        "|---|---|" + "---|" * len(HEURISTICS),
    ]
    seeds = range(2) if quick else range(4)
    for arch in ("ps", "ring"):
        for seed in seeds:
            inst = generate(5, 3, seed, architecture=arch, horizon=20)
            opt = run_method(inst, "exact", opts).objective
            cells = [fmt(run_method(inst, m, opts).objective / opt, 3) for m in HEURISTICS]
            lines.append(f"| {inst.name} | {fmt(opt, 0)} | " + " | ".join(cells) + " |")
    lines.append("")


def _weight(inst, got):
    return sum(inst.jobs[j].weight for j, _, _ in got)


def section_maxweight(lines, quick):
    lines += [
        "## 4. Maximum weighted schedule by tau: A_maxweight vs Jain et al. [44] vs ILP (8)",
        "",
        "| instance | tau | OPT | A_maxweight | greedy [44] | 2 log lambda |",
        "|---|---|---|---|---|---|",
    ]
    for seed in range(2) if quick else range(4):
        inst = generate(6, 2, seed)
        tau = 8
        jobs = list(range(inst.num_jobs))
        _, lam_value = lam(inst)
        mw = a_maxweight(inst, jobs, (0, tau), Ledger(inst), lam_value)
        gr = greedy_maxweight(inst, jobs, (0, tau))
        opt = max_weight_optimum(inst, tau)

        lines.append(
            f"| {inst.name} | {tau} | {fmt(opt, 0)} | {fmt(_weight(inst, mw), 0)} | "
            f"{fmt(_weight(inst, gr), 0)} | {fmt(2 * math.log2(lam_value))} |"
        )
    lines.append("")


def section_paper(lines, quick):
    lines += [
        "## 5. Section 7's setting",
        "",
        "| instance | method | objective | time (s) |",
        "|---|---|---|---|",
    ]
    big = generate(300, 150, 0, setting="paper", horizon=300)
    for m in ("fifo", "drf", "tiresias", "antman"):
        out, wall = timed(big, m, MethodOptions())
        lines.append(f"| {big.name} | {m} | {fmt(out.objective, 0)} | {wall:.1f} |")
    sizes = [(4, 10, 100)] if quick else [(4, 10, 100), (8, 20, 150)]
    for jobs, servers, horizon in sizes:
        inst = generate(jobs, servers, 0, setting="paper", horizon=horizon)
        out, wall = timed(inst, "a-online", MethodOptions(params={"alpha": 4}))
        fb = len(out.details["fallback_jobs"])
        lines.append(
            f"| {inst.name} | a-online (alpha=4, {fb} fallback) | {fmt(out.objective, 0)} | "
            f"{wall:.1f} |"
        )
    lines.append("")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out", default=str(Path(__file__).parent / "RESULTS_elastic.md"))
    args = ap.parse_args()
    opts = MethodOptions(solve=SolveOptions(time_limit=60))
    lines = [
        "# elastic (seed 003, Zhou et al.)",
        "",
        f"Python {platform.python_version()}, {platform.machine()}; one run, 60 s limit.",
        "",
    ]
    section_exact(lines, opts, args.quick)
    section_colgen(lines, opts, args.quick)
    section_ratios(lines, opts, args.quick)
    section_maxweight(lines, args.quick)
    section_paper(lines, args.quick)
    Path(args.out).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
