"""The ddlwmp family's LP roundings against the paper's online policies (seed 001), one table.

    python benchmarks/rounding_ddlwmp.py [--quick]

Small: ``generate(6, 8, seed, gpus_per_server=4)``, seeds 0-9, ratios to the certified optimum
(``exact``, which proves it on every one). Large: ``generate(30, 16, seed)`` (2 servers x 8
GPUs), seeds 0-4, ratios to the LP value (the ``lp-bound``, a certified lower bound: the
ratios over-state those to the optimum). Every method runs through ``run_method`` (its
schedule checked) with a 120 s limit. The LP is solved once per instance (``lp-bound``'s run)
and handed to every rounding, so a rounding's seconds are the LP's wall time plus its own
(ordering, list scheduling, mapping, the check). Mean and worst ratio, mean seconds, over the
seeds.
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any
from unittest.mock import patch

from dlsched.models import MethodOptions, run_method
from dlsched.models.ddlwmp import methods
from dlsched.models.ddlwmp.generate import generate
from dlsched.models.ddlwmp.instance import DdlwmpInstance
from dlsched.solvers import SolveOptions, Status

#: (label, method, params): the paper's policies, then the roundings
ROWS: list[tuple[str, str, dict[str, Any]]] = [
    ("a-srpt (Algorithm 1)", "a-srpt", {}),
    ("spjf", "spjf", {}),
    ("spwf", "spwf", {}),
    ("wcs-duration", "wcs-duration", {}),
    ("wcs-workload", "wcs-workload", {}),
    ("wcs-subtime", "wcs-subtime", {}),
    ("lp-alpha (alpha 0.5, mapping=lp, the default)", "lp-alpha", {}),
    ("lp-alpha (strict order)", "lp-alpha", {"strict": True}),
    ("lp-alpha (mapping=heavy-edge)", "lp-alpha", {"mapping": "heavy-edge"}),
    ("lp-alpha (mapping=exact)", "lp-alpha", {"mapping": "exact"}),
    ("lp-random-alpha", "lp-random-alpha", {}),
    ("lp-random-alpha (mapping=heavy-edge)", "lp-random-alpha", {"mapping": "heavy-edge"}),
    ("lp-mean-start", "lp-mean-start", {}),
    ("lp-mean-start (mapping=heavy-edge)", "lp-mean-start", {"mapping": "heavy-edge"}),
]
LIMIT = 120.0


def _options(params: dict[str, Any], seed: int) -> MethodOptions:
    return MethodOptions(SolveOptions(time_limit=LIMIT, seed=seed), params)


def measure(
    instances: list[DdlwmpInstance], reference: str
) -> dict[str, tuple[list[float], list[float]]]:
    """Per row label: (ratios to ``reference``'s optimum or bound, seconds)."""
    out: dict[str, tuple[list[float], list[float]]] = {label: ([], []) for label, _, _ in ROWS}
    for seed, inst in enumerate(instances):
        opts = _options({}, seed)
        t0 = time.perf_counter()
        solved = methods.solve_relaxation(inst, opts.started())
        lp_seconds = time.perf_counter() - t0
        res = solved[0]
        assert res is not None and res.status == Status.OPTIMAL, inst.name
        base = res.objective  # the LP's value: a certified lower bound
        if reference == "exact":
            ref = run_method(inst, "exact", opts)
            assert ref.status == Status.OPTIMAL, (inst.name, ref.status)
            base = ref.objective
        assert base is not None, inst.name
        with patch.object(methods, "solve_relaxation", return_value=solved):
            for label, method, params in ROWS:
                got = run_method(inst, method, _options(params, seed))
                assert got.objective is not None, (inst.name, label, got.status)
                out[label][0].append(got.objective / base)
                lp = lp_seconds if method in methods.ROUNDINGS else 0.0
                out[label][1].append(lp + got.wall_time)
    return out


def _cells(ratios: list[float], seconds: list[float]) -> str:
    return f"{statistics.mean(ratios):.3f} | {max(ratios):.3f} | {statistics.mean(seconds):.2f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="two small and one large instance")
    args = ap.parse_args()
    small_seeds, large_seeds = (range(2), range(1)) if args.quick else (range(10), range(5))
    small = [generate(6, 8, s, gpus_per_server=4) for s in small_seeds]
    large = [generate(30, 16, s) for s in large_seeds]
    a, b = measure(small, "exact"), measure(large, "lp-bound")
    print(
        f"| method | 6 jobs, 2 x 4 GPUs ({len(small)} seeds): mean / OPT | worst / OPT | s "
        f"| 30 jobs, 2 x 8 GPUs ({len(large)} seeds): mean / LP | worst / LP | s |"
    )
    print("|---|---|---|---|---|---|---|")
    for label, _, _ in ROWS:
        print(f"| {label} | {_cells(*a[label])} | {_cells(*b[label])} |")


if __name__ == "__main__":
    main()
