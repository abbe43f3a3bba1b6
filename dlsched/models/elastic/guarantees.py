"""What the theorems of Zhou et al. (seed 003) measure, as functions of the instance; each
theorem (its rows in ``dlsched verify``, Theorem 5's guarantee in ``dlsched compare``) is
defined once, in :mod:`.theorems`, and checked by the core's verify runner, which also saves
and shrinks every violation.

- Theorems 1 and 6: Algorithms 4-7 (:mod:`.mincost`) solve problem (13) (PS) or (21)
  (Ring-AllReduce) optimally for fixed m', p', L and t^-. :func:`problem13_costs` sets one
  algorithm's cost beside the exact MILP of the same problem (:func:`build_problem13`, HiGHS)
  and beside Algorithm 4 without the g = N iteration of its lines 15-19 (the reading that
  keeps a PS on the PS server); :func:`oracle_costs` does the same for the whole oracle of one
  job; :func:`reading` classifies a violation by them.
- Theorem 3: A_maxweight's total weight is within a factor 2 log lambda
  (:func:`theorem3_guarantee`) of the optimum of ILP (8)/(17) (:func:`max_weight_optimum`),
  under Section 5.1's assumptions (:func:`assumptions`).
- Theorem 5: A_online is 4 alpha-competitive (:func:`theorem5_guarantee`) under the same
  assumptions.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dlsched.bounds import SLACK
from dlsched.models.elastic.algorithms import alpha_theorem5, lam
from dlsched.models.elastic.enumerate import enumerate_all
from dlsched.models.elastic.exact import all_columns
from dlsched.models.elastic.instance import ElasticInstance
from dlsched.models.elastic.mincost import fixed_mincost, mincost1_fixed


def theorem3_guarantee(inst: ElasticInstance) -> float:
    """Theorem 3: OPT / A_maxweight <= 2 log2 lambda."""
    return 2 * math.log2(lam(inst)[1])


def theorem5_guarantee(inst: ElasticInstance) -> float:
    """Theorem 5: A_online is 4 alpha-competitive."""
    return 4.0 * alpha_theorem5(inst, lam(inst)[1])


# --- Theorems 1 and 6 ------------------------------------------------------------------------


ALGORITHM_NAMES = {
    (True, False): "A_mincost1",
    (True, True): "A_mincost2",
    (False, True): "A_RAmincost1",
    (False, False): "A_RAmincost2",
}


def problem13_costs(
    inst: ElasticInstance, m: int, p: int, n: int, q: bool, win: np.ndarray, room: np.ndarray
) -> tuple[float, float | None, float | None]:
    """The algorithm's cost on problem (13)/(21) for fixed m', p', n workers and q (inf: it
    finds nothing), the MILP's optimum (None: infeasible), and A_mincost1's cost without the
    g = N iteration of Algorithm 4, lines 15-19 (so that server n keeps a PS,
    :func:`.mincost.mincost1_fixed`; PS with q = 0 only, else None)."""
    from dlsched.models.elastic.problem13 import build_problem13  # Pyomo: when first measured
    from dlsched.solvers import Status, solve

    paper = fixed_mincost(inst, m, p, n, q, win, room)[0]
    res = solve(build_problem13(inst, m, p, n, q, win, room), "highs")
    exact = res.objective if res.status == Status.OPTIMAL else None
    other = None
    if inst.is_ps and not q:
        other = mincost1_fixed(inst, m, p, n, win, room, skip_g_n=True)[0]
    return paper, exact, other


def oracle_costs(
    inst: ElasticInstance, j: int, prices: np.ndarray, free: np.ndarray, window: tuple[int, int]
) -> tuple[float, float, float | None]:
    """Theorem 1/6 for the whole oracle of job ``j``: the cheaper of Algorithms 4 and 5 (6 and
    7) over every (m', p', L, t^-) as written (:func:`.mincost.paper_mincost`), the exact
    minimum of (12)/(20) (:mod:`.pricing`), and the same with Algorithm 4 without the g = N
    iteration of its lines 15-19 (PS only, else None)."""
    from dlsched.models.elastic.mincost import paper_mincost
    from dlsched.models.elastic.pricing import Pricer, price_job

    paper = paper_mincost(inst, j, prices, free, window).cost
    exact = price_job(Pricer(inst, prices, free, window), j, weight=0.0).cost
    other = paper_mincost(inst, j, prices, free, window, skip_g_n=True).cost if inst.is_ps else None
    return paper, exact, other


def reading(other: float | None, exact: float) -> str:
    """A violation of Theorem 1/6 by its kind: "reading" when Algorithm 4 without the g = N
    iteration of its lines 15-19 (``other``) reaches the optimum ``exact``, "both" when it
    misses it too (a counterexample whichever way the lines are read)."""
    tol = SLACK * max(1.0, abs(exact))
    return "reading" if other is not None and other <= exact + tol else "both"


# --- Theorems 3 and 5 -------------------------------------------------------------------------


def max_weight_optimum(inst: ElasticInstance, tau: int) -> float:
    """ILP (8)/(17): the most weight completed by tau (Gamma_j enumerated, HiGHS)."""
    from dlsched.solvers import Status, solve
    from dlsched.solvers.pyomo_env import (
        pyo,  # when first measured: listing the theorems stays light
    )

    cols = [c for c in all_columns(inst, enumerate_all(inst)) if c.end <= tau]
    md = pyo.ConcreteModel()
    md.x = pyo.Var(range(len(cols)), domain=pyo.Binary)
    md.at_most_one = pyo.ConstraintList()  # (8b)
    for j in range(inst.num_jobs):
        ks = [k for k, c in enumerate(cols) if c.job == j]
        if ks:
            md.at_most_one.add(sum(md.x[k] for k in ks) <= 1)
    md.capacity = pyo.ConstraintList()  # (8a)
    for t in range(tau):
        for h, srv in enumerate(inst.servers):
            for r, cap in enumerate(srv.capacity):
                terms = [
                    (k, float(c.config.usage[h, r]))
                    for k, c in enumerate(cols)
                    if c.start <= t < c.end and c.config.usage[h, r] > 0
                ]
                if sum(a for _, a in terms) > cap:
                    md.capacity.add(sum(a * md.x[k] for k, a in terms) <= cap)
    md.weight = pyo.Objective(  # (8)
        expr=sum(inst.jobs[c.job].weight * md.x[k] for k, c in enumerate(cols)),
        sense=pyo.maximize,
    )
    res = solve(md, "highs")
    assert res.status == Status.OPTIMAL and res.objective is not None
    return res.objective


def assumptions(inst: ElasticInstance, lam_value: float, f_value: float) -> dict[str, Any]:
    """The two assumptions of Section 5.1 over every enumerated schedule."""
    worst_low, worst_share = math.inf, 0.0
    cap = np.array([s.capacity for s in inst.servers])
    for g in enumerate_all(inst):
        w = inst.jobs[g.job].weight
        for c in g.configs:
            worst_low = min(worst_low, w / (c.duration * float(c.usage.sum())))
            share = np.divide(c.usage, cap, out=np.zeros_like(c.usage), where=cap > 0)
            worst_share = max(worst_share, float(share.max()))
    limit = 1 / math.log2(lam_value)
    return {
        "F": f_value,
        "min_weight_per_consumption": worst_low,
        "weight_at_least_consumption": worst_low >= 1,
        "max_share": worst_share,
        "share_limit": limit,
        "small_demand": worst_share <= limit,
    }


__all__ = [
    "ALGORITHM_NAMES",
    "assumptions",
    "max_weight_optimum",
    "oracle_costs",
    "problem13_costs",
    "reading",
    "theorem3_guarantee",
    "theorem5_guarantee",
]
