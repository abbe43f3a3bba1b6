"""What the theorems of Zhou et al. (seed 003) measure, as functions of the instance; each
theorem (its rows in ``dlsched verify``, Theorem 5's guarantee in ``dlsched compare``) is
defined once, in :mod:`.theorems`, and checked by the core's verify runner, which also saves
and shrinks every violation.

- Theorems 1 and 6: Algorithms 4-7 (:mod:`.mincost`) solve problem (13) (PS) or (21)
  (Ring-AllReduce) optimally for fixed m', p', L and t^-. :func:`problem13_costs` sets one
  algorithm's cost beside the exact MILP of the same problem (:func:`build_problem13`, HiGHS)
  and beside Algorithm 4 under the other reading of lines 15-19; :func:`oracle_costs` does the
  same for the whole oracle of one job; :func:`reading` classifies a violation by them.
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
import pyomo.environ as pyo

from dlsched.bounds import SLACK
from dlsched.models.elastic.algorithms import alpha_theorem5, lam
from dlsched.models.elastic.enumerate import enumerate_all, ps_count
from dlsched.models.elastic.exact import all_columns
from dlsched.models.elastic.instance import ElasticInstance
from dlsched.models.elastic.mincost import fixed_mincost, mincost1_fixed
from dlsched.solvers import Status, solve


def theorem3_guarantee(inst: ElasticInstance) -> float:
    """Theorem 3: OPT / A_maxweight <= 2 log2 lambda."""
    return 2 * math.log2(lam(inst)[1])


def theorem5_guarantee(inst: ElasticInstance) -> float:
    """Theorem 5: A_online is 4 alpha-competitive."""
    return 4.0 * alpha_theorem5(inst, lam(inst)[1])


# --- Theorems 1 and 6 ------------------------------------------------------------------------


def build_problem13(
    inst: ElasticInstance, m: int, p: int, n: int, q: bool, win: np.ndarray, room: np.ndarray
) -> pyo.ConcreteModel:
    """Problem (13) (PS) or (21) (Ring-AllReduce) for fixed m', p', L (through n workers at
    colocation q) and t^-: prices summed over the window ``win`` [h, r], free capacity
    ``room`` [h, r]. q = True demands one server for everything (13a)/(21a)."""
    h_count = inst.num_servers
    e = np.array(inst.worker_types[m].demand)
    z = np.array(inst.ps_types[p].demand) if inst.is_ps else np.zeros_like(e)
    s_max = ps_count(inst, m, p, n) if inst.is_ps else 0
    md = pyo.ConcreteModel(name="problem13")
    md.SERVERS = pyo.RangeSet(0, h_count - 1)
    md.y = pyo.Var(md.SERVERS, domain=pyo.NonNegativeIntegers, bounds=(0, n))  # (13f)
    md.s = pyo.Var(md.SERVERS, domain=pyo.NonNegativeIntegers, bounds=(0, s_max))  # (13f)
    md.ps_on = pyo.Var(md.SERVERS, domain=pyo.Binary)  # s_h > 0
    md.only = pyo.Var(md.SERVERS, domain=pyo.Binary)  # q = 1: the one server

    @md.Constraint()
    def worker_count(md):  # (13b), (13c) / (21b)
        return sum(md.y[h] for h in md.SERVERS) == n

    md.ROWS = pyo.Set(
        initialize=[(h, r) for h in range(h_count) for r in range(len(e)) if e[r] or z[r]],
        dimen=2,
    )

    @md.Constraint(md.ROWS)
    def capacity(md, h, r):  # (2h) on the free capacity
        return float(e[r]) * md.y[h] + float(z[r]) * md.s[h] <= float(room[h, r])

    if inst.is_ps:
        _ps_rows(inst, md, m, p, n)
    if q:
        _colocation_rows(md, n, s_max)
    else:
        _spread_rows(md)
    md.cost = pyo.Objective(
        expr=sum(float(win[h] @ e) * md.y[h] + float(win[h] @ z) * md.s[h] for h in md.SERVERS)
    )
    return md


def _ps_rows(inst: ElasticInstance, md: pyo.ConcreteModel, m: int, p: int, n: int) -> None:
    b, big_b = inst.worker_types[m].bandwidth, inst.ps_types[p].bandwidth
    s_max = md.s[0].ub

    @md.Constraint(md.SERVERS)
    def ps_if_on(md, h):  # s_h > 0 only where ps_on_h
        return md.s[h] <= s_max * md.ps_on[h]

    @md.Constraint(md.SERVERS)
    def on_if_ps(md, h):  # ps_on_h only where s_h > 0
        return md.ps_on[h] <= md.s[h]

    @md.Constraint(md.SERVERS)
    def bandwidth(md, h):  # (13d): PSs on h cover the workers elsewhere (when s_h > 0)
        remote = n * b  # the most any server's PSs must cover
        return md.s[h] * big_b >= b * (n - md.y[h]) - remote * (1 - md.ps_on[h])

    @md.Constraint()
    def one_ps(md):  # (13e)
        return sum(md.s[h] for h in md.SERVERS) >= 1


def _spread_rows(md: pyo.ConcreteModel) -> None:
    @md.Constraint(md.SERVERS)
    def not_all_on(md, h):  # (13a)/(21a) with q = 0: something runs off server h
        others = [k for k in md.SERVERS if k != h]
        if not others:  # one server: q = 0 cannot hold
            return pyo.Constraint.Infeasible
        return sum(md.y[k] + md.s[k] for k in others) >= 1


def _colocation_rows(md: pyo.ConcreteModel, n: int, s_max: int) -> None:
    @md.Constraint()
    def one_server(md):  # (13a)/(21a) with q = 1
        return sum(md.only[h] for h in md.SERVERS) == 1

    @md.Constraint(md.SERVERS)
    def workers_there(md, h):
        return md.y[h] == n * md.only[h]

    @md.Constraint(md.SERVERS)
    def ps_there(md, h):
        return md.s[h] <= s_max * md.only[h]


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
    finds nothing), the MILP's optimum (None: infeasible), and A_mincost1's cost under the other
    reading of Algorithm 4, lines 15-19 (the largest g that keeps a PS on server n,
    :func:`.mincost.mincost1_fixed`; PS with q = 0 only, else None)."""
    paper = fixed_mincost(inst, m, p, n, q, win, room)[0]
    res = solve(build_problem13(inst, m, p, n, q, win, room), "highs")
    exact = res.objective if res.status == Status.OPTIMAL else None
    other = None
    if inst.is_ps and not q:
        other = mincost1_fixed(inst, m, p, n, win, room, keep_ps=True)[0]
    return paper, exact, other


def oracle_costs(
    inst: ElasticInstance, j: int, prices: np.ndarray, free: np.ndarray, window: tuple[int, int]
) -> tuple[float, float, float | None]:
    """Theorem 1/6 for the whole oracle of job ``j``: the cheaper of Algorithms 4 and 5 (6 and
    7) over every (m', p', L, t^-) as written (:func:`.mincost.paper_mincost`), the exact
    minimum of (12)/(20) (:mod:`.pricing`), and Algorithm 4 under the other reading of lines
    15-19 (PS only, else None)."""
    from dlsched.models.elastic.mincost import paper_mincost
    from dlsched.models.elastic.pricing import Pricer, price_job

    paper = paper_mincost(inst, j, prices, free, window).cost
    exact = price_job(Pricer(inst, prices, free, window), j, weight=0.0).cost
    other = paper_mincost(inst, j, prices, free, window, keep_ps=True).cost if inst.is_ps else None
    return paper, exact, other


def reading(other: float | None, exact: float) -> str:
    """A violation of Theorem 1/6 by its kind: "reading" when the other reading of Algorithm
    4, lines 15-19 reaches the optimum ``exact``, "both" when it misses it too (a
    counterexample whichever way the lines are read)."""
    tol = SLACK * max(1.0, abs(exact))
    return "reading" if other is not None and other <= exact + tol else "both"


# --- Theorems 3 and 5 -------------------------------------------------------------------------


def max_weight_optimum(inst: ElasticInstance, tau: int) -> float:
    """ILP (8)/(17): the most weight completed by tau (Gamma_j enumerated, HiGHS)."""
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
    "build_problem13",
    "max_weight_optimum",
    "oracle_costs",
    "problem13_costs",
    "reading",
    "theorem3_guarantee",
    "theorem5_guarantee",
]
