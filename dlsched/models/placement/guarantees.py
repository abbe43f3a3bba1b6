"""Theorem checks for the placement family (Liu et al., TPDS 2024).

- Theorem 1: the pricing loop of Algorithm 2 ends within P_max rounds (28).
- Theorem 2: in every category Algorithm 2 attains the P3 optimum (18); the reference is the
  P3 LP (transportation polytope, integral) solved by HiGHS.
- The paper's empirical claims: HAS equals the optimum (Fig. 9) and JPS (N = 60) is within
  0.54% / 2.04% of it at K = 15 / 30 (Section VI-B). :func:`empirical_claims` measures them
  against the certified optimum.

P1 has no proven approximation ratio for HAS or JPS, so :func:`dlsched.bounds.compare`
reports their ratios without a guarantee.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from dlsched.errors import InternalError
from dlsched.models import MethodOptions, run_method
from dlsched.models.placement import heuristics as H
from dlsched.models.placement.categories import categories as all_categories
from dlsched.models.placement.exact import solve_p3
from dlsched.models.placement.instance import PlacementInstance
from dlsched.result import Outcome
from dlsched.solvers import SolverSettings, Status

SLACK = 1e-9


@dataclass(frozen=True)
class Theorem2Record:
    category: tuple[int, ...]
    variant: str
    market_throughput: float | None  # None if the pricing loop did not end
    p3_optimum: float
    rounds: int | None
    p_max: float
    theorem1_holds: bool  # rounds <= P_max
    theorem2_holds: bool | None  # market throughput == P3 optimum

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["category"] = list(self.category)
        return d


def theorem_checks(
    instance: PlacementInstance,
    variants: Sequence[str] = ("clearing", "paper", "literal"),
    cats: Sequence[tuple[int, ...]] | None = None,
) -> list[Theorem2Record]:
    """Theorem 1 and Theorem 2 for each category and each reading of the pricing rule."""
    rho = np.asarray(instance.rho)
    out = []
    for cat in (
        cats if cats is not None else all_categories(instance.num_workers, instance.num_jobs)
    ):
        p3, _, _ = solve_p3(instance, tuple(cat))
        for variant in variants:
            ties, pricing, mult = H.VARIANTS[variant]
            p_max = sum(H._top_sum(rho[i], cat[i]) for i in range(len(cat)))
            cap = None if mult is None else mult * p_max
            try:
                res = H.matching_market(rho, tuple(cat), ties, pricing, cap)
            except H.PricingDidNotTerminate:
                out.append(Theorem2Record(tuple(cat), variant, None, p3, None, p_max, False, None))
                continue
            tput = float(sum(rho[res.assignment[k], k] for k in range(instance.num_workers)))
            out.append(
                Theorem2Record(
                    tuple(cat),
                    variant,
                    tput,
                    p3,
                    res.rounds,
                    p_max,
                    res.rounds <= p_max,
                    abs(tput - p3) <= SLACK * max(1.0, p3),
                )
            )
    return out


@dataclass(frozen=True)
class ClaimRecord:
    instance: str
    optimum: float
    optimum_status: str
    has: float
    has_gap: float  # HAS / OPT - 1; the paper reports 0 (Fig. 9)
    jps_mean_gap: float  # mean over seeds of JPS(N) / OPT - 1
    jps_worst_gap: float
    jps_seeds: int
    jps_samples: int
    paper_jps_gap: float | None  # 0.0054 at K = 15, 0.0204 at K = 30


PAPER_JPS_GAP = {15: 0.0054, 30: 0.0204}


def _objective(out: Outcome) -> float:
    """A heuristic's verified objective (it always has one)."""
    if out.objective is None:
        raise InternalError(f"{out.method} returned no placement on {out.instance}")
    return out.objective


def empirical_claims(
    instance: PlacementInstance, seeds: int = 10, samples: int = 60, time_limit: float = 60
) -> ClaimRecord:
    opts = MethodOptions(params={"route": "highs"}, time_limit=time_limit)
    ex = run_method(instance, "exact", opts)
    if ex.objective is None:
        raise RuntimeError(f"no incumbent for {instance.name} within {time_limit} s")
    has = _objective(run_method(instance, "has"))
    gaps = []
    for seed in range(seeds):
        j = run_method(
            instance,
            "jps",
            MethodOptions(solve=SolverSettings(seed=seed), params={"samples": samples}),
        )
        gaps.append(_objective(j) / ex.objective - 1)
    return ClaimRecord(
        instance=instance.name,
        optimum=ex.objective,
        optimum_status=str(ex.status) if ex.status == Status.OPTIMAL else f"{ex.status} (bound)",
        has=has,
        has_gap=has / ex.objective - 1,
        jps_mean_gap=float(np.mean(gaps)),
        jps_worst_gap=float(np.max(gaps)),
        jps_seeds=seeds,
        jps_samples=samples,
        paper_jps_gap=PAPER_JPS_GAP.get(instance.num_workers),
    )
