"""The placement ILP of Table II as a native CP-SAT model (Luo et al., seed 001).

The same one-hot counts as the Pyomo model of :mod:`.mapping` (y[s,m,v] = 1 iff server m hosts
v replicas of stage s), with the bottleneck (7) enforced only where the stage is on the server
(a CP-SAT half-reification instead of a big-M). CP-SAT needs integer coefficients: every
millisecond term of beta^m_s (4)-(6) is multiplied by ``scale`` and rounded *down*, so the
integer beta never exceeds ``scale`` times the true beta. Hence the integer optimum is at most
``scale`` alpha^min and CP-SAT's bound divided by ``scale`` is a valid lower bound on alpha^min;
the placement found is evaluated by :func:`~.alpha.alpha_ms` itself, so the rounding (below 4
units of 1/scale ms per beta) only widens the gap, never the claim. CP-SAT's presolve is off
(:data:`PARAMS`), and a model value that does not match the placement found is an error.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from dlsched.errors import InternalError
from dlsched.models.ddlwmp import alpha as alpha_model  # (4)-(7), written once
from dlsched.models.ddlwmp.alpha import Placement
from dlsched.models.ddlwmp.instance import Cluster, Job
from dlsched.solvers import SolverSettings
from dlsched.solvers.cpsat import run_cpsat
from dlsched.solvers.deadline import Deadline

#: the largest integer value the scaled alpha may take
TOP = 10**12
#: CP-SAT's presolve returned wrong optima on this model with coefficients near 1e10 (seen
#: with OR-Tools 9.15 on Table I's (2, 2) configurations); without it the model is both right
#: on every Table II and Table I case and faster
PARAMS = {"cp_model_presolve": False}


@dataclass
class CpsatMapping:
    model: Any
    y: dict[tuple[int, int, int], Any]
    alpha: Any
    scale: float


def _scale(big_ms: float) -> float:
    """The power of ten that maps ``big_ms`` to at most :data:`TOP`."""
    return float(10 ** math.floor(math.log10(TOP / max(big_ms, 1e-9))))


def _add_counts(mdl: Any, job: Job, free: Sequence[int]) -> dict[tuple[int, int, int], Any]:
    """One-hot y[s,m,v]; (2) every replica placed, (3) at most the free GPUs of a server."""
    k = [st.replicas for st in job.stages]
    servers = [m for m in range(len(free)) if free[m] > 0]
    y = {
        (s, m, v): mdl.new_bool_var(f"y_{s}_{m}_{v}")
        for s in range(len(k))
        for m in servers
        for v in range(min(k[s], free[m]) + 1)
    }
    for s in range(len(k)):
        for m in servers:
            mdl.add_exactly_one(y[s, m, v] for v in range(min(k[s], free[m]) + 1))
        placed = (v * y[s, m, v] for m in servers for v in range(1, min(k[s], free[m]) + 1))
        mdl.add(sum(placed) == k[s])  # (2)
    for m in servers:  # (3)
        mdl.add(
            sum(v * y[s, m, v] for s in range(len(k)) for v in range(1, min(k[s], free[m]) + 1))
            <= free[m]
        )
    return y


def _beta_terms(
    job: Job, cluster: Cluster, y: dict[tuple[int, int, int], Any], s: int, m: int, scale: float
) -> Any:
    """scale x beta^m_s of (4) + (5) + (6), every coefficient rounded down, valid when the
    stage is on the server: comp + NIC terms as the constant, minus what each neighbour
    replica on the same server saves, plus AllReduce by the count."""
    k = [st.replicas for st in job.stages]
    ip, inx = alpha_model.inter_coef(job, cluster, s)
    ap, anx = alpha_model.intra_coef(job, cluster, s)
    # (4), and (5) with every neighbour off the server
    terms: Any = math.floor(scale * (alpha_model.comp_ms(job, s) + ip + inx))
    for t, off, on in ((s - 1, ip, ap), (s + 1, inx, anx)):  # (5): neighbours on server m
        if 0 <= t < len(k):
            for v in range(1, k[t] + 1):
                if (t, m, v) in y:
                    terms += math.floor(scale * (on - off) * v / k[t]) * y[t, m, v]
    for v in range(1, k[s] + 1):  # (6)
        if (s, m, v) in y:
            terms += math.floor(scale * alpha_model.allreduce_ms(job, cluster, s, v)) * y[s, m, v]
    return terms


def build_mapping_cpsat(
    job: Job, cluster: Cluster, free: Sequence[int], big_ms: float
) -> CpsatMapping:
    """min alpha over placements on ``free`` GPUs per server; ``big_ms`` bounds every beta."""
    from ortools.sat.python import cp_model

    mdl = cp_model.CpModel()
    scale = _scale(big_ms)
    y = _add_counts(mdl, job, free)
    alpha = mdl.new_int_var(0, math.ceil(scale * big_ms), "alpha")
    for s, m, v in y:
        if v == 0:  # (7): alpha >= beta^m_s wherever stage s is on server m
            mdl.add(alpha >= _beta_terms(job, cluster, y, s, m, scale)).only_enforce_if(
                y[s, m, 0].Not()
            )
    mdl.minimize(alpha)
    return CpsatMapping(mdl, y, alpha, scale)


def _consistent(
    job: Job, cluster: Cluster, place: Placement, objective: float | None, scale: float
) -> None:
    """The scaled optimum of the found placement lies in [scale alpha - 4, scale alpha]: each
    beta has at most four rounded-down terms. Anything else is a solver fault, not a result."""
    true = scale * alpha_model.alpha_ms(job, cluster, place)
    if objective is None or not true - 4 - 1e-6 * true <= objective <= true + 1e-6 * true:
        raise InternalError(
            f"CP-SAT placement of {job.name}: model value {objective} for alpha {true / scale} ms"
            f" at scale {scale:g}"
        )


def solve_mapping_cpsat(
    job: Job,
    cluster: Cluster,
    free: Sequence[int],
    big_ms: float,
    settings: SolverSettings,
    deadline: Deadline,
    hint: Placement | None = None,
) -> tuple[Placement | None, float | None, bool]:
    """(placement, proven lower bound on alpha in ms, hit the limit) within ``deadline``,
    the model's building included."""
    cm = build_mapping_cpsat(job, cluster, free, big_ms)
    if hint is not None:
        given = dict(hint)
        for (s, m, v), var in cm.y.items():
            cm.model.add_hint(var, given.get(m, (0,) * len(job.stages))[s] == v)
    run = run_cpsat(
        cm.model, deadline.solve_options(settings), label=f"mapping {job.name}", params=PARAMS
    )
    place = None
    if run.has_solution:
        place = alpha_model.from_counts(
            (c for c, var in cm.y.items() if run.value(var)), len(job.stages)
        )
        _consistent(job, cluster, place, run.objective, cm.scale)
    bound = None if run.bound is None else math.floor(run.bound + 1e-6) / cm.scale
    return place, bound, run.hit_limit


__all__ = ["CpsatMapping", "build_mapping_cpsat", "solve_mapping_cpsat"]
