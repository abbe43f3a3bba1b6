"""Speed and quality of the elastic family (seed 003), measured side by side in one run.

    python benchmarks/bench_elastic.py [--quick] [--out benchmarks/RESULTS_elastic.md]

1. ``exact`` (Gamma_j enumerated, packing ILP on HiGHS) on 6 jobs, 3 servers, T = 20, both
   architectures;
2. ``lp-bound`` (column generation) on 30 jobs, 10 servers, T = 50, and the full LP over
   every enumerated column beside it on a small instance;
3. every heuristic against the certified optimum on small instances (ratios side by side);
4. A_maxweight against the greedy of Jain et al. [44] and the optimum of ILP (8);
5. Section 7's setting (300 jobs, 150 servers, T = 300): ``a-online`` (fast oracle) side by
   side with the baselines; the fast and exact oracles on slices;
6. Theorems 1/6, 3 and 5 over sweeps by the verify runner (``dlsched.verify.check``), with
   Section 5.1's assumptions; every violation of Theorems 1/6 saved (instance + verify row) in
   ``dlsched/models/elastic/data/violations/``;
7. short horizons (T = 10): how often each heuristic returns no schedule, beside exact.
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from dlsched.bounds import save_counterexample
from dlsched.instances import load
from dlsched.models import MethodOptions, run_method
from dlsched.models.elastic.algorithms import Ledger, a_maxweight, lam
from dlsched.models.elastic.baselines import greedy_maxweight
from dlsched.models.elastic.colgen import full_lp
from dlsched.models.elastic.enumerate import enumerate_all
from dlsched.models.elastic.exact import all_columns
from dlsched.models.elastic.generate import generate
from dlsched.models.elastic.guarantees import assumptions, max_weight_optimum
from dlsched.models.elastic.theorems import BY_ID, COUNTEREXAMPLES
from dlsched.solvers import SolveOptions
from dlsched.verify.check import check

HEURISTICS = ("a-online", "a-dual", "a-maxweight", "fifo", "drf", "tiresias", "antman")
#: Section 3's columns: (label, method, params).
COLUMNS = (
    [(m, m, {}) for m in HEURISTICS[:1]]
    + [("a-online (exact oracle)", "a-online", {"oracle": "exact"})]
    + [(m, m, {}) for m in HEURISTICS[1:]]
)


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
        "| instance | OPT | " + " | ".join(c[0] for c in COLUMNS) + " |",
        "|---|---|" + "---|" * len(COLUMNS),
    ]
    seeds = range(2) if quick else range(4)
    for arch in ("ps", "ring"):
        for seed in seeds:
            inst = generate(5, 3, seed, architecture=arch, horizon=20)
            opt = run_method(inst, "exact", opts).objective
            cells = [
                fmt(run_method(inst, m, replace(opts, params=p)).objective / opt, 3)
                for _, m, p in COLUMNS
            ]
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


def _paper_row(lines, inst, label, method, params, ref):
    out, wall = timed(inst, method, MethodOptions(params=params))
    d = out.details
    fb = d.get("fallback_jobs")
    note = "-" if fb is None else str(len(fb))
    ratio = "-" if ref is None else fmt(out.objective / ref, 3)
    lines.append(
        f"| {inst.name} | {label} | {d.get('alpha', '-')} | {note} | {fmt(out.objective, 0)} | "
        f"{ratio} | {wall:.1f} |"
    )
    return out


def section_paper(lines, quick):
    lines += [
        "## 5. Section 7's setting: A_online against the baselines, one run",
        "",
        "Default setting (`dlsched generate elastic --jobs 300 --gpus 150 --param "
        "setting=paper --param horizon=300`); ratios against FIFO's objective. `a-online` uses "
        "the fast oracle (Algorithms 4-7 vectorised) unless marked; alpha is Theorem 5's unless "
        "set.",
        "",
        "| instance | method | alpha | fallback jobs | objective | / FIFO | time (s) |",
        "|---|---|---|---|---|---|---|",
    ]
    big = generate(300, 150, 0, setting="paper", horizon=300)
    ref = _paper_row(lines, big, "fifo", "fifo", {}, None).objective
    for m in ("drf", "tiresias", "antman"):
        _paper_row(lines, big, m, m, {}, ref)
    _paper_row(lines, big, "a-online", "a-online", {}, ref)
    _paper_row(lines, big, "a-online alpha=4", "a-online", {"alpha": 4}, ref)
    if not quick:
        _paper_row(lines, big, "a-dual alpha=4", "a-dual", {"alpha": 4}, ref)
    lines += [
        "",
        "The oracles side by side on slices of the same setting (alpha = 4):",
        "",
        "| instance | oracle | alpha | fallback jobs | objective | / fast | time (s) |",
        "|---|---|---|---|---|---|---|",
    ]
    sizes = [(4, 10, 100)] if quick else [(4, 10, 100), (8, 20, 150)]
    for jobs, servers, horizon in sizes:
        inst = generate(jobs, servers, 0, setting="paper", horizon=horizon)
        fast = _paper_row(lines, inst, "fast", "a-online", {"alpha": 4}, None).objective
        _paper_row(lines, inst, "exact", "a-online", {"alpha": 4, "oracle": "exact"}, fast)
    lines.append("")


def _clear_counterexamples():
    """The sweeps below rewrite every counterexample they find (the folder is theirs)."""
    COUNTEREXAMPLES.mkdir(parents=True, exist_ok=True)
    for old in COUNTEREXAMPLES.glob("*.json"):
        old.unlink()


def _kinds(rows):
    bad = [r for r in rows if r["holds"] is False]
    kinds = [r["details"].get("kind") for r in bad]
    return len(bad), kinds.count("reading"), kinds.count("both")


def _save(inst, row):
    """A violation of Theorem 1/6 saved as ``counterexample-<instance>.json`` (instance and the
    verify row, :func:`dlsched.verify.check.recheck` reruns it)."""
    return save_counterexample(inst, row, COUNTEREXAMPLES, stem=f"counterexample-{inst.name}")


def _mincost_theorem(inst):
    return BY_ID["003-thm1" if inst.is_ps else "003-thm6"]


def section_oracle(lines, n):
    """Theorems 1/6 for the whole oracle; every violation saved as a counterexample."""
    from dlsched.models.elastic.fastprice import FastOracle

    lines += [
        "## 6. Theorems over sweeps",
        "",
        f"Theorems 1/6, whole oracle: {n} random cases per architecture (2 jobs, 3 servers, "
        "T = 10, random prices, free capacity), the fast oracle (Algorithms 4-7) against the "
        "exact minimum of (12)/(20). Every violation is saved (instance + verify row) in "
        "`dlsched/models/elastic/data/violations/` and classified: *reading* when "
        "Algorithm 4 read as keeping a PS on its PS server (lines 15-19: the largest g < N) "
        "reaches the minimum, *both* when it misses it under both readings.",
        "",
        "| architecture | jobs priced | algorithms above the optimum | reading | both | "
        "worst excess | saved |",
        "|---|---|---|---|---|---|---|",
    ]
    for arch in ("ps", "ring"):
        priced = 0
        excess = 0.0
        rows, saved = [], []
        for seed in range(n):
            inst = generate(2, 3, seed, architecture=arch, horizon=10)
            rng = np.random.default_rng(seed)
            cap = np.array([s.capacity for s in inst.servers])
            shape = (inst.horizon, inst.num_servers, len(inst.resources))
            prices = rng.random(shape) * (rng.random(shape) < 0.6) * 3
            free = np.maximum(cap - rng.integers(0, 3, shape) * (rng.random(shape) < 0.4), 0)
            fast, exact = FastOracle(inst), FastOracle(inst, exact=True)
            for j in range(inst.num_jobs):
                a = fast(inst, j, prices, free, (0, inst.horizon)).cost
                b = exact(inst, j, prices, free, (0, inst.horizon)).cost
                priced += 1
                if a > b + 1e-9:
                    named = replace(inst, name=f"theorem1-oracle-{arch}-s{seed}-j{j}")
                    case = {"job": j, "window": [0, inst.horizon], "prices": prices.tolist(),
                            "free": free.tolist()}  # fmt: skip
                    (row,) = check(_mincost_theorem(named), named, case=f"oracle-j{j}",
                                   details=case)  # fmt: skip
                    rows.append(row)
                    if row["holds"] is False:
                        saved.append(_save(named, row))
                    excess = max(excess, a - b)
        bad, reading, both = _kinds(rows)
        lines.append(
            f"| {arch} | {priced} | {bad} | {reading} | {both} | {excess:.4f} | "
            f"{', '.join(f'`{p.name}`' for p in saved) or '-'} |"
        )


def section_shapes(lines, quick):
    """Theorems 1/6 on one shape per case (:func:`.theorems.mincost_sweep`), violations saved."""
    from dlsched.models.elastic.theorems import mincost_cases, mincost_sweep

    lines += [
        "",
        "Theorems 1/6, one shape: the MILP of (13)/(21) against the algorithm for one "
        "(m', p', N, q) (`mincost_sweep`, on the verify runner), every violation saved as above:",
        "",
        "| architecture | cases | violations | reading | both | notes (placement outside (13)) "
        "| saved |",
        "|---|---|---|---|---|---|---|",
    ]
    count = 20 if quick else 60
    for arch in ("ps", "ring"):
        rows, _ = mincost_sweep(count, 7, architecture=arch)
        drawn = mincost_cases(count, 7, arch)
        saved = []
        for r in rows:
            if r["holds"] is False:  # saved on the instance as drawn (named after its case)
                inst = drawn[int(r["case"][4:])][0]
                (row,) = check(_mincost_theorem(inst), inst, case=r["case"], details=r["details"])
                saved.append(_save(inst, row))
        bad, reading, both = _kinds(rows)
        notes = sum(1 for r in rows if r["note"] and r["holds"] is not False)
        lines.append(
            f"| {arch} | {len(rows)} | {bad} | {reading} | {both} | {notes} | "
            f"{', '.join(f'`{p.name}`' for p in saved) or '-'} |"
        )
    hand = load("elastic/theorem1-counterexample-both")
    case = {"m": 0, "p": 0, "n": 5, "q": False, "prices": [[0.5, 0.5, 0.0], [0.6, 0.5, 2.375]],
            "free": [[5.0, 5, 0], [5, 8, 16]]}  # fmt: skip
    (row,) = check("003-thm1", hand, details=case)
    lines += [
        "",
        f"Bundled `elastic/theorem1-counterexample-both` (five workers, B = 4 b): A_mincost1 "
        f"{row['value']:g} as written and {row['details']['other_reading']:g} under the other "
        f"reading, the MILP of (13) {row['reference']:g} ({row['details']['kind']}).",
    ]


def section_theorems(lines, quick):
    """Theorems 1/6 (whole oracle and single shapes), 3 and 5 over sweeps."""
    from dlsched.models.elastic.algorithms import alpha_theorem5
    from dlsched.models.elastic.theorems import maxweight_by
    from dlsched.verify.check import sample

    _clear_counterexamples()
    section_oracle(lines, 50 if quick else 150)
    section_shapes(lines, quick)
    lines += [
        "",
        "Theorem 3 (OPT / A_maxweight <= 2 log lambda, tau = 8) and Section 5.1's assumptions "
        "(`003-thm3` on the verify runner: judged only where both hold):",
        "",
        "| instance | OPT | A_maxweight | ratio | 2 log lambda | w >= consumption | "
        "f/C <= 1/log lambda |",
        "|---|---|---|---|---|---|---|",
    ]
    rows, _ = sample(maxweight_by(8), 3 if quick else 6, generate=lambda s, **_: generate(5, 2, s))
    for r in rows:
        inst = generate(5, 2, int(r["instance"].rsplit("-s", 1)[1]))
        f_value, lam_value = lam(inst)
        a = assumptions(inst, lam_value, f_value)
        lines.append(
            f"| {inst.name} | {fmt(r['reference'], 0)} | {fmt(r['value'], 0)} | "
            f"{fmt(r['ratio'], 3)} | {fmt(r['bound'])} | {a['weight_at_least_consumption']} | "
            f"{a['small_demand']} |"
        )
    lines += [
        "",
        "Theorem 5 (a-online / OPT <= 4 alpha), `003-thm5` on the verify runner (holds: blank "
        "where Section 5.1's assumptions fail):",
        "",
        "| instance | OPT | a-online | ratio | 4 alpha | holds | w >= consumption | "
        "f/C <= 1/log lambda |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for arch in ("ps", "ring"):

        def draw(s, arch=arch, **_):
            return generate(4, 2, s, architecture=arch, horizon=16)

        rows, _ = sample("003-thm5", 2 if quick else 4, generate=draw)
        for r in (r for r in rows if r["method"] == "a-online"):
            inst = draw(int(r["instance"].rsplit("-s", 1)[1]))
            f_value, lam_value = lam(inst)
            a = assumptions(inst, lam_value, f_value)
            assert r["bound"] == 4 * alpha_theorem5(inst, lam_value)
            holds = "" if r["holds"] is None else r["holds"]
            lines.append(
                f"| {inst.name} | {fmt(r['reference'], 0)} | {fmt(r['value'], 0)} | "
                f"{fmt(r['ratio'], 3)} | {fmt(r['bound'], 0)} | {holds} | "
                f"{a['weight_at_least_consumption']} | {a['small_demand']} |"
            )
    section_within(lines, quick)
    lines.append("")


def section_within(lines, quick):
    """Theorems 3 and 5 on instances scaled until Section 5.1's assumptions hold."""
    from dlsched.models.elastic.theorems import within_assumptions

    lines += [
        "",
        "Theorems 3 and 5 within Section 5.1's assumptions (3 jobs, 2 servers, weights and "
        "capacities scaled until both hold, as `dlsched verify` draws them):",
        "",
        "| instance | w >= consumption | f/C <= 1/log lambda | Th. 3 OPT / ALG | 2 log lambda | "
        "Th. 5 a-online / OPT | 4 alpha | fallback jobs | holds |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for seed in range(2 if quick else 4):
        inst = within_assumptions(seed, 3, 2)
        (r3,) = check("003-thm3", inst)
        r5 = next(r for r in check("003-thm5", inst) if r["method"] == "a-online")
        fallback = len(run_method(inst, "a-online").details["fallback_jobs"])
        f_value, lam_value = lam(inst)
        a = assumptions(inst, lam_value, f_value)
        lines.append(
            f"| {inst.name} | {a['weight_at_least_consumption']} | {a['small_demand']} | "
            f"{fmt(r3['ratio'], 3)} | {fmt(r3['bound'])} | {fmt(r5['ratio'], 3)} | "
            f"{fmt(r5['bound'], 0)} | {fallback} of {inst.num_jobs} | "
            f"{r3['holds'] is not False and r5['holds'] is not False} |"
        )


def section_tight(lines, quick):
    """Short horizons (T = 10): how often each heuristic finds no schedule, beside exact."""
    from collections import Counter

    seeds = range(2) if quick else range(6)
    insts = [
        generate(jobs, servers, seed, architecture=arch, horizon=10)
        for arch in ("ps", "ring")
        for jobs in (2, 3, 4)
        for servers in (1, 2, 3)
        for seed in seeds
    ]
    exact = [run_method(inst, "exact").status for inst in insts]
    feasible = sum(s == "optimal" for s in exact)
    lines += [
        "## 7. Tight horizons: a schedule or an honest status",
        "",
        f"{len(insts)} instances with T = 10 (2-4 jobs, 1-3 servers, seeds {seeds[0]}-"
        f"{seeds[-1]}, both architectures): `exact` solves {feasible} and proves "
        f"{len(insts) - feasible} infeasible. A heuristic whose commitments leave a job no room "
        "before T returns no schedule (status `no_solution`, the jobs and the reason in its "
        "details; "
        "`infeasible` only when a job cannot finish even alone).",
        "",
        "| method | schedules | no schedule, instance feasible | no schedule, instance "
        "infeasible | status infeasible (proven) |",
        "|---|---|---|---|---|",
    ]
    for name in HEURISTICS:
        c = Counter()
        for inst, ex in zip(insts, exact, strict=True):
            out = run_method(inst, name)
            if out.solution is not None:
                c["ok"] += 1
            else:
                c["feasible" if ex == "optimal" else "infeasible"] += 1
                c["proven"] += out.status == "infeasible"
        lines.append(
            f"| {name} | {c['ok']} | {c['feasible']} | {c['infeasible']} | {c['proven']} |"
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
        f"Python {platform.python_version()}, {platform.machine()}, {os.cpu_count()} CPUs, load "
        f"average {os.getloadavg()[0]:.1f} at the start (other work shares the machine); one "
        "run, 60 s limit.",
        "",
    ]
    section_exact(lines, opts, args.quick)
    section_colgen(lines, opts, args.quick)
    section_ratios(lines, opts, args.quick)
    section_maxweight(lines, args.quick)
    section_paper(lines, args.quick)
    section_theorems(lines, args.quick)
    section_tight(lines, args.quick)
    Path(args.out).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
