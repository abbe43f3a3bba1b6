"""The elastic family's LP roundings against the paper's algorithms (seed 003), one table.

    python benchmarks/rounding_elastic.py [--quick]

Small: ``generate(5, 3, seed, architecture=a, horizon=20)``, seeds 0-2, both architectures,
ratios to the certified optimum (``exact``, which proves it on every one). Large:
``generate(40, 8, seed, architecture=a, horizon=40)``, seeds 0-1, both architectures, ratios to
the certified bound of ``lp-bound`` (column generation's Lagrangian bound, the LP optimum once
converged: the ratios over-state those to the optimum). The objective sum_j w_j c_j is
minimized, so every ratio is >= 1. Every method runs through ``run_method`` (its schedule
checked) with a 120 s limit and seed 0; seconds are each method's mean wall time (a rounding's
include its column generation). Mean and worst ratio over the instances.
"""

from __future__ import annotations

import argparse
import statistics

from dlsched.models import MethodOptions, run_method
from dlsched.models.elastic.generate import generate
from dlsched.models.elastic.instance import ElasticInstance
from dlsched.solvers import SolveOptions, Status

#: (label, method): the paper's algorithms, then the roundings
ROWS = [
    ("a-online (Algorithm 1)", "a-online"),
    ("a-dual (Algorithm 2)", "a-dual"),
    ("a-maxweight (Algorithm 3)", "a-maxweight"),
    ("lp-round", "lp-round"),
    ("lp-random-round", "lp-random-round"),
]
LIMIT = 120.0
OPTIONS = MethodOptions(SolveOptions(time_limit=LIMIT, seed=0))

Measured = dict[str, tuple[list[float], list[float], int]]


def measure(instances: list[ElasticInstance], reference: str) -> Measured:
    """Per method: (ratios to ``reference``'s optimum or bound, seconds, runs without a
    schedule)."""
    out: Measured = {m: ([], [], 0) for _, m in ROWS}
    for inst in instances:
        ref = run_method(inst, reference, OPTIONS)
        if reference == "exact":
            assert ref.status == Status.OPTIMAL, (inst.name, ref.status)
            base = ref.objective
        else:
            assert ref.status == Status.BOUND, (inst.name, ref.status)
            base = ref.bound
        assert base is not None
        for _, method in ROWS:
            got = run_method(inst, method, OPTIONS)
            ratios, seconds, missing = out[method]
            seconds.append(got.wall_time)
            if got.objective is None:
                out[method] = (ratios, seconds, missing + 1)
            else:
                ratios.append(got.objective / base)
    return out


def _cells(got: tuple[list[float], list[float], int]) -> str:
    ratios, seconds, missing = got
    mean = f"{statistics.mean(ratios):.3f}" if ratios else "-"
    worst = f"{max(ratios):.3f}" if ratios else "-"
    note = f" ({missing} without schedule)" if missing else ""
    return f"{mean}{note} | {worst} | {statistics.mean(seconds):.2f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="one seed per architecture and size")
    args = ap.parse_args()
    small_seeds, large_seeds = (range(1), range(1)) if args.quick else (range(3), range(2))
    archs = ("ps", "ring")
    small = [generate(5, 3, s, architecture=a, horizon=20) for s in small_seeds for a in archs]
    large = [generate(40, 8, s, architecture=a, horizon=40) for s in large_seeds for a in archs]
    a, b = measure(small, "exact"), measure(large, "lp-bound")
    print(
        f"| method | small: mean / OPT ({len(small)} x 5 jobs, 3 servers) | worst | s "
        f"| large: mean / LP bound ({len(large)} x 40 jobs, 8 servers) | worst | s |"
    )
    print("|---|---|---|---|---|---|---|")
    for label, method in ROWS:
        print(f"| {label} | {_cells(a[method])} | {_cells(b[method])} |")


if __name__ == "__main__":
    main()
