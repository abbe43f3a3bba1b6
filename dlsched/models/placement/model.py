"""Pyomo models of the placement family (Liu, Wang, Huang, Pan, IEEE TPDS 2024, seed 000).

- :func:`build_p1` -- P1, eq. (8)/(14): minimise the average JCT over worker selections with
  proportional load balancing (the data split (12) is implied). With ``category`` fixed it is
  P2, eq. (16)-(17).
- :func:`build_p3` -- P3, eq. (18): maximise total throughput with K_i fixed (a transportation
  LP, totally unimodular).
- :func:`build_las` -- the max-min fair placement of Section IV-A (Tiresias' LAS).

Interchangeable workers (same node and same throughput column) are aggregated into groups g
with integer counts n[i, g]; a solution is expanded back to workers by
:func:`expand_counts`. The ring bottleneck (5) with node-level rates is the inter-node rate
iff a job uses two or more nodes (binary ``spans``), and 2(K_i - 1)/K_i is represented exactly
by a one-hot choice of K_i.

The computation term T_i |Pi_i| / V_i is convex in V_i > 0. ``computation="nonlinear"``
states it as t_i >= T_i |Pi_i| / V_i for a global MINLP solver (SCIP, which detects the
convexity; the bilinear form t_i V_i >= T_i |Pi_i| solved 3-4x slower);
``computation="tangents"`` keeps only a ConstraintList ``tangent`` of supporting lines that
the outer-approximation loop of :mod:`dlsched.models.placement.exact` grows.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyomo.environ as pyo

from dlsched.instances.placement import BITS_PER_GBIT, BITS_PER_MB, PlacementInstance
from dlsched.models.placement.categories import validate_category


@dataclass(frozen=True)
class Groups:
    """Interchangeable workers: ``members[g]`` worker indices, ``node[g]`` node index."""

    members: tuple[tuple[int, ...], ...]
    node: tuple[int, ...]
    rho: np.ndarray  # (S, G) throughput of a group's worker for each job

    @property
    def cap(self) -> tuple[int, ...]:
        return tuple(len(m) for m in self.members)


def worker_groups(instance: PlacementInstance) -> Groups:
    members = instance.worker_groups()
    node = tuple(int(instance.node_index[m[0]]) for m in members)
    rho = np.array([[instance.rho[i, m[0]] for m in members] for i in range(instance.num_jobs)])
    return Groups(tuple(members), node, rho)


def _comm_coefficients(instance: PlacementInstance) -> tuple[np.ndarray, np.ndarray]:
    """a_i, b_i with comm_i = a_i (1 - 1/K_i) + b_i (1 - 1/K_i) spans_i (seconds, whole job)."""
    bits = np.array([2 * j.epochs * j.model_size_mb * BITS_PER_MB for j in instance.jobs])
    a = bits / (instance.intra_node_gbps * BITS_PER_GBIT)
    b = bits / (instance.inter_node_gbps * BITS_PER_GBIT) - a
    return a, b


def _throughput_range(instance: PlacementInstance, i: int) -> tuple[float, float]:
    """Bounds on V_i: one slowest worker .. the K - S + 1 fastest workers."""
    row = np.sort(instance.rho[i])[::-1]
    return float(row[-1]), float(row[: instance.num_workers - instance.num_jobs + 1].sum())


def build_p1(
    instance: PlacementInstance,
    category: tuple[int, ...] | None = None,
    computation: str = "nonlinear",
    tangent_points: int = 8,
) -> pyo.ConcreteModel:
    """P1 (8)/(14), or P2 (16)-(17) when ``category`` = (K_1, ..., K_S) is given."""
    if computation not in ("nonlinear", "tangents"):
        raise ValueError(f"computation must be 'nonlinear' or 'tangents', not {computation!r}")
    s, k = instance.num_jobs, instance.num_workers
    if category is not None:
        validate_category(tuple(category), k, s)
    grp = worker_groups(instance)
    a, b = _comm_coefficients(instance)
    num_nodes = len(instance.nodes)
    use_spans = num_nodes > 1 and bool(np.any(b > 0))
    max_size = k - s + 1

    m = pyo.ConcreteModel(name=f"P1[{instance.name}]")
    m.JOBS = pyo.RangeSet(0, s - 1)
    m.GROUPS = pyo.RangeSet(0, len(grp.members) - 1)
    m.SIZES = pyo.RangeSet(1, max_size)
    m.NODES = pyo.RangeSet(0, num_nodes - 1)
    m.work = pyo.Param(m.JOBS, initialize={i: float(instance.work[i]) for i in range(s)})

    m.n = pyo.Var(
        m.JOBS, m.GROUPS, domain=pyo.NonNegativeIntegers, bounds=lambda m, i, g: (0, grp.cap[g])
    )

    @m.Constraint(m.GROUPS)
    def every_worker_serves_one_job(m, g):  # (8c) + (8d)
        return sum(m.n[i, g] for i in m.JOBS) == grp.cap[g]

    def v_bounds(m, i):
        return _throughput_range(instance, i)

    m.V = pyo.Var(m.JOBS, bounds=v_bounds)

    @m.Constraint(m.JOBS)
    def throughput(m, i):  # (13)
        return m.V[i] == sum(float(grp.rho[i, g]) * m.n[i, g] for g in m.GROUPS)

    # K_i as a one-hot choice; (8b) K_i >= 1 is built in.
    m.size = pyo.Var(m.JOBS, m.SIZES, domain=pyo.Binary)

    @m.Constraint(m.JOBS)
    def one_size(m, i):
        return sum(m.size[i, c] for c in m.SIZES) == 1

    @m.Constraint(m.JOBS)
    def job_size(m, i):  # K_i = sum_k sigma_ik
        return sum(m.n[i, g] for g in m.GROUPS) == sum(c * m.size[i, c] for c in m.SIZES)

    if category is not None:
        for i in range(s):  # (17)
            for c in range(1, max_size + 1):
                m.size[i, c].fix(1 if c == category[i] else 0)

    m.ring = pyo.Expression(  # 1 - 1/K_i = (K_i - 1)/K_i of eq. (6)
        m.JOBS, rule=lambda m, i: sum((c - 1) / c * m.size[i, c] for c in m.SIZES)
    )
    if use_spans:
        m.uses_node = pyo.Var(m.JOBS, m.NODES, domain=pyo.Binary)
        m.spans = pyo.Var(m.JOBS, domain=pyo.Binary)
        m.slow_ring = pyo.Var(m.JOBS, bounds=(0, 1))  # = ring_i * spans_i

        @m.Constraint(m.JOBS, m.GROUPS)
        def node_used(m, i, g):
            return m.n[i, g] <= grp.cap[g] * m.uses_node[i, grp.node[g]]

        @m.Constraint(m.JOBS)
        def spans_nodes(m, i):  # two or more nodes -> the inter-node link is the bottleneck (5)
            return sum(m.uses_node[i, h] for h in m.NODES) <= 1 + (num_nodes - 1) * m.spans[i]

        @m.Constraint(m.JOBS)
        def slow_ring_product(m, i):  # exact for binary spans and ring in [0, 1), b_i >= 0
            return m.slow_ring[i] >= m.ring[i] - (1 - m.spans[i])

        comm = {i: a[i] * m.ring[i] + b[i] * m.slow_ring[i] for i in range(s)}
    else:
        comm = {i: a[i] * m.ring[i] for i in range(s)}

    def t_bounds(m, i):
        lo, hi = _throughput_range(instance, i)
        return (float(instance.work[i]) / hi, float(instance.work[i]) / lo)

    m.t = pyo.Var(m.JOBS, bounds=t_bounds)  # computation seconds T_i |Pi_i| / V_i
    if computation == "nonlinear":

        @m.Constraint(m.JOBS)
        def computation_epigraph(m, i):  # t_i >= T_i |Pi_i| / V_i, convex for V_i > 0
            return m.t[i] >= m.work[i] / m.V[i]

    else:
        m.tangent = pyo.ConstraintList()
        for i in range(s):
            lo, hi = _throughput_range(instance, i)
            for v0 in np.geomspace(lo, hi, max(tangent_points, 2)):
                add_tangent(m, i, float(v0))

    m.comm = pyo.Expression(m.JOBS, rule=lambda m, i: comm[i])
    m.avg_jct = pyo.Objective(  # (14)
        expr=sum(m.t[i] + m.comm[i] for i in m.JOBS) / s, sense=pyo.minimize
    )
    m._groups = grp  # decoding needs the grouping
    return m


def add_tangent(m: pyo.ConcreteModel, i: int, v0: float) -> None:
    """Supporting line of the convex t >= W / V at V = v0."""
    w = float(pyo.value(m.work[i]))
    m.tangent.add(m.t[i] >= w / v0 - w / v0**2 * (m.V[i] - v0))


def counts_from_values(m: pyo.ConcreteModel, values: dict[str, float]) -> np.ndarray:
    s = len(m.JOBS)
    g = len(m.GROUPS)
    out = np.zeros((s, g), dtype=int)
    for i in range(s):
        for gg in range(g):
            out[i, gg] = int(round(values[m.n[i, gg].name]))
    return out


def expand_counts(groups: Groups, counts: np.ndarray, num_workers: int) -> tuple[int, ...]:
    """Worker-level assignment from group counts (workers of a group in index order)."""
    assignment = [-1] * num_workers
    for g, members in enumerate(groups.members):
        pos = 0
        for i in range(counts.shape[0]):
            for _ in range(int(counts[i, g])):
                assignment[members[pos]] = i
                pos += 1
    return tuple(assignment)


def build_p3(instance: PlacementInstance, category: tuple[int, ...]) -> pyo.ConcreteModel:
    """P3 (18): max sum_i sum_k sigma_ik rho_ik s.t. sum_k sigma_ik = K_i (17), each worker once.

    Worker-level (no aggregation) so that its LP optimum certifies Theorem 2 directly; the
    constraint matrix is an interval (transportation) matrix, hence the LP has an integral
    optimum.
    """
    s, k = instance.num_jobs, instance.num_workers
    validate_category(tuple(category), k, s)
    m = pyo.ConcreteModel(name=f"P3[{instance.name}]")
    m.JOBS = pyo.RangeSet(0, s - 1)
    m.WORKERS = pyo.RangeSet(0, k - 1)
    m.sigma = pyo.Var(m.JOBS, m.WORKERS, bounds=(0, 1))

    @m.Constraint(m.JOBS)
    def job_size(m, i):  # (17)
        return sum(m.sigma[i, kk] for kk in m.WORKERS) == category[i]

    @m.Constraint(m.WORKERS)
    def worker_serves_one_job(m, kk):  # (8c)+(8d)
        return sum(m.sigma[i, kk] for i in m.JOBS) == 1

    m.total_throughput = pyo.Objective(
        expr=sum(float(instance.rho[i, kk]) * m.sigma[i, kk] for i in m.JOBS for kk in m.WORKERS),
        sense=pyo.maximize,
    )
    return m


def equal_share_throughput(instance: PlacementInstance) -> np.ndarray:
    """V_i^Equal = sum_k rho_ik / S (Section IV-A)."""
    return instance.rho.sum(axis=1) / instance.num_jobs


def build_las(instance: PlacementInstance, min_ratio: float | None = None) -> pyo.ConcreteModel:
    """LAS (Section IV-A): max min_i V_i / V_i^Equal over P1's feasible set.

    With ``min_ratio`` given, the second, tie-breaking stage: keep min_i V_i/V_i^Equal >=
    min_ratio and maximise sum_i V_i / V_i^Equal.
    """
    s = instance.num_jobs
    grp = worker_groups(instance)
    veq = equal_share_throughput(instance)
    m = pyo.ConcreteModel(name=f"LAS[{instance.name}]")
    m.JOBS = pyo.RangeSet(0, s - 1)
    m.GROUPS = pyo.RangeSet(0, len(grp.members) - 1)
    m.n = pyo.Var(
        m.JOBS, m.GROUPS, domain=pyo.NonNegativeIntegers, bounds=lambda m, i, g: (0, grp.cap[g])
    )

    @m.Constraint(m.GROUPS)
    def every_worker_serves_one_job(m, g):  # (8c)+(8d)
        return sum(m.n[i, g] for i in m.JOBS) == grp.cap[g]

    @m.Constraint(m.JOBS)
    def every_job_has_a_worker(m, i):  # (8b)
        return sum(m.n[i, g] for g in m.GROUPS) >= 1

    m.ratio = pyo.Expression(
        m.JOBS,
        rule=lambda m, i: sum(float(grp.rho[i, g]) * m.n[i, g] for g in m.GROUPS) / float(veq[i]),
    )
    hi = float(instance.rho.sum(axis=1).max() / veq.min())
    m.z = pyo.Var(bounds=(0, hi))
    if min_ratio is None:

        @m.Constraint(m.JOBS)
        def z_below_ratio(m, i):
            return m.z <= m.ratio[i]

        m.obj = pyo.Objective(expr=m.z, sense=pyo.maximize)
    else:

        @m.Constraint(m.JOBS)
        def keep_max_min(m, i):
            return m.ratio[i] >= min_ratio

        m.obj = pyo.Objective(expr=sum(m.ratio[i] for i in m.JOBS), sense=pyo.maximize)
    m._groups = grp
    return m
