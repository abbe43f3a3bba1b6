"""GPU_Grouping (4)-(6) of the online hare family (seed 004): the exact grouping, the greedy rule
and the LP roundings, by spread, one table.

    python benchmarks/rounding_hare_online.py [--quick]

Small: ``generate(10, M, seed, shape="unrelated")`` (M distinct GPUs) for M = 8 and 12, and the
generator's clusters of the paper's four GPU types (20 jobs) for M = 10 and 14, seeds 0-1, in
ceil(M / 4) groups; ratios to the certified optimum (``group_gpus(..., "exact")`` proves every
one). Large: M = 32 and 40 distinct GPUs and M = 46 of the four types (50 jobs), seed 0-1;
ratios to the exact route's grouping after LIMIT seconds (the optimum where it proved it; its
count is in the header). The LP row is the relaxation's value over the same reference (<= 1).
Every spread is :func:`spread`'s, re-evaluated from the speeds; seconds are means (a rounding's
include building and solving its LP). Seed 0 for ``lp-random``.
"""

from __future__ import annotations

import argparse
import statistics
import time

from dlsched.models.hare.generate import generate
from dlsched.models.hare.instance import HareInstance
from dlsched.models.hare.online.grouping import group_gpus
from dlsched.models.hare.online.rounding import lp_grouping
from dlsched.solvers import SolverSettings, Status
from dlsched.solvers.deadline import Deadline

#: (label, grouping): the paper's MILP, the greedy rule, then the roundings
ROWS = [
    ("exact (the paper's program)", "exact"),
    ("greedy", "greedy"),
    ("lp-round", "lp-round"),
    ("lp-random (20 draws)", "lp-random"),
]
LIMIT = 10.0
SETTINGS = SolverSettings(seed=0)

Measured = dict[str, tuple[list[float], list[float]]]


def run(inst: HareInstance, how: str) -> tuple[float, float, float | None, Status]:
    """(spread, seconds, LP value, status) of one grouping."""
    t0 = time.perf_counter()
    if how in ("exact", "greedy"):
        res = group_gpus(inst, None, how, SETTINGS, deadline=Deadline.after(LIMIT))
    else:
        res = lp_grouping(inst, None, how, SETTINGS, deadline=Deadline.after(LIMIT))
    return res.spread, time.perf_counter() - t0, res.info.get("lp_value"), res.status


def measure(instances: list[HareInstance]) -> tuple[Measured, int]:
    """Per grouping (and "lp", the relaxation's value): (ratios to the exact grouping's spread,
    seconds); and how many exact groupings are proven optimal."""
    out: Measured = {m: ([], []) for _, m in [*ROWS, ("", "lp")]}
    proven = 0
    for inst in instances:
        got = {how: run(inst, how) for _, how in ROWS}
        ref, _, _, status = got["exact"]
        proven += status == Status.OPTIMAL
        assert ref > 0, inst.name  # a grouping of no spread leaves no ratio
        for how, (value, seconds, lp, _) in got.items():
            out[how][0].append(value / ref)
            out[how][1].append(seconds)
            if how == "lp-round" and lp is not None:
                out["lp"][0].append(lp / ref)
    return out, proven


def _cells(got: tuple[list[float], list[float]], worst: bool = True) -> str:
    ratios, seconds = got
    mean = f"{statistics.mean(ratios):.3f}" if ratios else "-"
    bad = (max(ratios) if worst else min(ratios)) if ratios else None
    time_cell = f"{statistics.mean(seconds):.2f}" if seconds else "-"
    return f"{mean} | {'-' if bad is None else f'{bad:.3f}'} | {time_cell}"


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="seed 0 only")
    args = ap.parse_args()
    seeds = range(1) if args.quick else range(2)
    small = [generate(10, m, s, shape="unrelated") for m in (8, 12) for s in seeds]
    small += [generate(20, m, s) for m in (10, 14) for s in seeds]
    large = [generate(10, m, s, shape="unrelated") for m in (32, 40) for s in seeds]
    large += [generate(50, 46, s) for s in seeds]
    (a, pa), (b, pb) = measure(small), measure(large)
    print(
        f"| grouping | small: mean / OPT ({len(small)}, 8-14 GPUs, {pa} proven) | worst | s "
        f"| large: mean / exact's at {LIMIT:g} s ({len(large)}, 32-46 GPUs, {pb} proven) "
        "| worst | s |"
    )
    print("|---|---|---|---|---|---|---|")
    for label, how in ROWS:
        print(f"| {label} | {_cells(a[how])} | {_cells(b[how])} |")
    lp_a, lp_b = (a["lp"][0], []), (b["lp"][0], [])
    print(f"| LP value (lowest) | {_cells(lp_a, False)} | {_cells(lp_b, False)} |")


if __name__ == "__main__":
    main()
