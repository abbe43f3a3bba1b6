"""The placement family's LP roundings against the paper's heuristics (seed 000), one table.

    python benchmarks/rounding_placement.py [--quick]

Small: the bundled K = 4-15 instances (motivating example, s3k8-seed1, s4k12-seed0,
s4k15-seed0) and ``generate(4, 12, seed)`` for seeds 1-2. Large: the bundled s4k30-seed0 and
s5k100-seed0, ``generate(5, 200, 0)`` and ``generate(8, 300, 0)``. ``exact`` proves the optimum
of every one (the column route), so every ratio is to the certified optimum of P1's average
JCT (>= 1). HAS is left out of the large instances: its category search runs to any limit
there (60 s at K = 100). The LP row is the relaxation's value over the optimum (<= 1), with the
share of relaxed counts n_ig that are fractional. Every method runs through ``run_method``
(checked placement) with a LIMIT s limit and seed 0; seconds are means (a rounding's include
its cutting-plane LPs).
"""

from __future__ import annotations

import argparse
import statistics

from dlsched.instances import load
from dlsched.models import MethodOptions, run_method
from dlsched.models.placement import generate
from dlsched.models.placement.instance import PlacementInstance
from dlsched.solvers import SolveOptions, Status

#: (label, method): the paper's heuristics, a baseline, then the roundings
ROWS = [
    ("HAS (Algorithm 2)", "has"),
    ("JPS (Algorithm 3)", "jps"),
    ("Optimus-LB", "optimus-lb"),
    ("lp-round", "lp-round"),
    ("lp-random (20 draws)", "lp-random"),
]
LIMIT = 60.0
OPTIONS = MethodOptions(SolveOptions(time_limit=LIMIT, seed=0))

Measured = dict[str, tuple[list[float], list[float]]]


def measure(instances: list[PlacementInstance], skip: tuple[str, ...] = ()) -> Measured:
    """Per method (and "lp", the relaxation's value, "fractional", the share of fractional
    counts): (ratios to the certified optimum, seconds)."""
    out: Measured = {m: ([], []) for m in (*(m for _, m in ROWS), "lp", "fractional")}
    for inst in instances:
        exact = run_method(inst, "exact", OPTIONS)
        assert exact.status == Status.OPTIMAL, (inst.name, exact.status)
        for _, method in ROWS:
            if method in skip:
                continue
            got = run_method(inst, method, OPTIONS)
            out[method][0].append(got.objective / exact.objective)
            out[method][1].append(got.wall_time)
            if method == "lp-round":
                d = got.details
                out["lp"][0].append(d["lp_value"] / exact.objective)
                out["fractional"][0].append(d["fractional_counts"] / d["relaxed_counts"])
    return out


def _cells(got: tuple[list[float], list[float]], worst: bool = True) -> str:
    ratios, seconds = got
    if not ratios:
        return "- | - | -"
    bad = max(ratios) if worst else min(ratios)
    time_cell = f"{statistics.mean(seconds):.2f}" if seconds else "-"
    return f"{statistics.mean(ratios):.4f} | {bad:.4f} | {time_cell}"


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="the bundled instances only")
    args = ap.parse_args()
    bundled = ("motivating", "s3k8-seed1", "s4k12-seed0", "s4k15-seed0")
    small = [load(f"placement/liu2024-{n}") for n in bundled]
    large = [load(f"placement/liu2024-{n}") for n in ("s4k30-seed0", "s5k100-seed0")]
    if not args.quick:
        small += [generate(4, 12, s) for s in (1, 2)]
        large += [generate(5, 200, 0), generate(8, 300, 0)]
    a, b = measure(small), measure(large, skip=("has",))
    print(
        f"| method | small: mean / OPT ({len(small)}, K = 4-15) | worst | s "
        f"| large: mean / OPT ({len(large)}, K = 30-300) | worst | s |"
    )
    print("|---|---|---|---|---|---|---|")
    for label, method in ROWS:
        print(f"| {label} | {_cells(a[method])} | {_cells(b[method])} |")
    print(f"| LP value (lowest) | {_cells(a['lp'], False)} | {_cells(b['lp'], False)} |")
    frac = [f"{statistics.mean(m['fractional'][0]):.0%}" for m in (a, b)]
    print(f"| fractional n_ig (mean share) | {frac[0]} | | | {frac[1]} | | |")


if __name__ == "__main__":
    main()
