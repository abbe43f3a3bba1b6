"""Problem (13) (parameter server) and (21) (Ring-AllReduce) of Zhou et al.: the cheapest
placement of N workers of type m' (and the PSs of type p') on the servers' free capacity, for a
fixed duration L and start t^-, which Algorithms 4-7 (:mod:`.mincost`) solve and Theorems 1
and 6 claim they solve optimally.

:func:`build_problem13` is the exact MILP (HiGHS) the theorems' records compare with
(:mod:`.guarantees`); :func:`check_problem13` re-derives a placement's feasibility and cost
from the instance, for ``dlsched.solve_model`` (program ``elastic-13``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from dlsched.errors import InfeasibleSolutionError
from dlsched.models.elastic.enumerate import ps_count
from dlsched.models.elastic.instance import ElasticInstance
from dlsched.solvers.pyomo_env import pyo

#: The equation each component of :func:`build_problem13` states (its ``doc``).
EQUATIONS = {
    "worker_count": "(13b), (13c) / (21b): exactly N workers placed",
    "capacity": "(2h) on the free capacity of each server and resource over the window",
    "ps_if_on": "(13d), linearized: s_h > 0 only where ps_on_h",
    "on_if_ps": "(13d), linearized: ps_on_h only where s_h > 0",
    "bandwidth": "(13d): the PSs on server h cover the workers elsewhere (when s_h > 0)",
    "one_ps": "(13e): at least one PS",
    "not_all_on": "(13a)/(21a) with q = 0: something runs off every server",
    "one_server": "(13a)/(21a) with q = 1: one server for everything",
    "workers_there": "(13a)/(21a) with q = 1: every worker on that server",
    "ps_there": "(13a)/(21a) with q = 1: every PS on that server",
    "cost": "(13)/(21): min sum_h (Omega_h y_h + price of the PSs s_h) over the window",
}


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

    @md.Constraint(doc=EQUATIONS["worker_count"])
    def worker_count(md):  # (13b), (13c) / (21b)
        return sum(md.y[h] for h in md.SERVERS) == n

    md.ROWS = pyo.Set(
        initialize=[(h, r) for h in range(h_count) for r in range(len(e)) if e[r] or z[r]],
        dimen=2,
    )

    @md.Constraint(md.ROWS, doc=EQUATIONS["capacity"])
    def capacity(md, h, r):  # (2h) on the free capacity
        return float(e[r]) * md.y[h] + float(z[r]) * md.s[h] <= float(room[h, r])

    if inst.is_ps:
        _ps_rows(inst, md, m, p, n)
    if q:
        _colocation_rows(md, n, s_max)
    else:
        _spread_rows(md)
    md.cost = pyo.Objective(
        expr=sum(float(win[h] @ e) * md.y[h] + float(win[h] @ z) * md.s[h] for h in md.SERVERS),
        doc=EQUATIONS["cost"],
    )
    return md


def _ps_rows(inst: ElasticInstance, md: pyo.ConcreteModel, m: int, p: int, n: int) -> None:
    b, big_b = inst.worker_types[m].bandwidth, inst.ps_types[p].bandwidth
    s_max = md.s[0].ub

    @md.Constraint(md.SERVERS, doc=EQUATIONS["ps_if_on"])
    def ps_if_on(md, h):  # s_h > 0 only where ps_on_h
        return md.s[h] <= s_max * md.ps_on[h]

    @md.Constraint(md.SERVERS, doc=EQUATIONS["on_if_ps"])
    def on_if_ps(md, h):  # ps_on_h only where s_h > 0
        return md.ps_on[h] <= md.s[h]

    @md.Constraint(md.SERVERS, doc=EQUATIONS["bandwidth"])
    def bandwidth(md, h):  # (13d): PSs on h cover the workers elsewhere (when s_h > 0)
        remote = n * b  # the most any server's PSs must cover
        return md.s[h] * big_b >= b * (n - md.y[h]) - remote * (1 - md.ps_on[h])

    @md.Constraint(doc=EQUATIONS["one_ps"])
    def one_ps(md):  # (13e)
        return sum(md.s[h] for h in md.SERVERS) >= 1


def _spread_rows(md: pyo.ConcreteModel) -> None:
    @md.Constraint(md.SERVERS, doc=EQUATIONS["not_all_on"])
    def not_all_on(md, h):  # (13a)/(21a) with q = 0: something runs off server h
        others = [k for k in md.SERVERS if k != h]
        if not others:  # one server: q = 0 cannot hold
            return pyo.Constraint.Infeasible
        return sum(md.y[k] + md.s[k] for k in others) >= 1


def _colocation_rows(md: pyo.ConcreteModel, n: int, s_max: int) -> None:
    @md.Constraint(doc=EQUATIONS["one_server"])
    def one_server(md):  # (13a)/(21a) with q = 1
        return sum(md.only[h] for h in md.SERVERS) == 1

    @md.Constraint(md.SERVERS, doc=EQUATIONS["workers_there"])
    def workers_there(md, h):
        return md.y[h] == n * md.only[h]

    @md.Constraint(md.SERVERS, doc=EQUATIONS["ps_there"])
    def ps_there(md, h):
        return md.s[h] <= s_max * md.only[h]


# --- a placement of (13) read back and checked -----------------------------------------------


@dataclass(frozen=True)
class Case:
    """What (13)/(21) is solved for: worker type m', PS type p', N workers, colocation q,
    prices summed over the window ``prices`` [h][r] and free capacity ``free`` [h][r]."""

    m: int
    p: int
    n: int
    q: bool
    prices: tuple[tuple[float, ...], ...]
    free: tuple[tuple[float, ...], ...]


@dataclass(frozen=True)
class MinCostPlacement:
    """An answer of (13)/(21): ``workers[h]`` workers and ``ps[h]`` PSs on server h."""

    case: Case
    workers: tuple[int, ...]
    ps: tuple[int, ...]

    def to_json(self, instance: Any) -> dict[str, Any]:
        names = [s.name for s in instance.servers]
        return {
            "workers": dict(zip(names, self.workers, strict=True)),
            "ps": dict(zip(names, self.ps, strict=True)),
        }


def _broken(inst: ElasticInstance, what: str) -> InfeasibleSolutionError:
    return InfeasibleSolutionError(f"instance '{inst.name}': {what}")


def check_problem13(inst: ElasticInstance, sol: MinCostPlacement) -> float:
    """The cost of ``sol`` re-derived from the instance and its case; InfeasibleSolutionError
    naming the first of (13a)-(13f)/(21) it breaks."""
    c = sol.case
    e = np.array(inst.worker_types[c.m].demand)
    z = np.array(inst.ps_types[c.p].demand) if inst.is_ps else np.zeros_like(e)
    y, s = np.array(sol.workers), np.array(sol.ps)
    if (y < 0).any() or (s < 0).any() or (s.any() and not inst.is_ps):
        raise _broken(inst, f"workers {y.tolist()}, PSs {s.tolist()}: (13f)")
    if int(y.sum()) != c.n:
        raise _broken(inst, f"{int(y.sum())} workers placed, {c.n} asked: (13b)-(13c)/(21b)")
    used = np.outer(y, e) + np.outer(s, z)
    if (used > np.array(c.free) + 1e-9).any():
        raise _broken(inst, f"servers use {used.tolist()} of free {list(c.free)}: (2h)")
    if inst.is_ps:
        b, big_b = inst.worker_types[c.m].bandwidth, inst.ps_types[c.p].bandwidth
        if s.sum() < 1:
            raise _broken(inst, "no PS: (13e)")
        short = [h for h in range(len(s)) if s[h] and s[h] * big_b < b * (c.n - y[h]) - 1e-9]
        if short:
            raise _broken(inst, f"the PSs on server {short[0]} cover too little: (13d)")
    hosts = np.flatnonzero(y + s)
    if c.q and len(hosts) != 1:
        raise _broken(inst, f"q = 1 and servers {hosts.tolist()} used: (13a)/(21a)")
    if not c.q and len(hosts) <= 1:
        raise _broken(inst, f"q = 0 and everything on servers {hosts.tolist()}: (13a)/(21a)")
    win = np.array(c.prices, dtype=float)
    return float(sum(win[h] @ e * y[h] + win[h] @ z * s[h] for h in range(len(y))))


__all__ = [
    "EQUATIONS",
    "Case",
    "MinCostPlacement",
    "build_problem13",
    "check_problem13",
]
