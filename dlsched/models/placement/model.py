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
by an incremental (unary) encoding of K_i.

The computation term T_i |Pi_i| / V_i is convex in V_i > 0. ``computation="nonlinear"``
states it as t_i >= T_i |Pi_i| / V_i for a global MINLP solver (SCIP, which detects the
convexity; the bilinear form t_i V_i >= T_i |Pi_i| solved 3-4x slower);
``computation="tangents"`` keeps only a ConstraintList ``tangent`` of supporting lines that
the outer-approximation loop of :mod:`dlsched.models.placement.exact` grows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from dlsched.models.placement.categories import validate_category
from dlsched.models.placement.instance import BITS_PER_GBIT, BITS_PER_MB, PlacementInstance
from dlsched.models.program import symmetry_breaking
from dlsched.solvers.pyomo_env import pyo

#: The equation each component of :func:`build_p1` states (its ``doc``).
P1_EQUATIONS = {
    "every_worker_serves_one_job": "(8c)+(8d): every worker serves exactly one job",
    "throughput": "(13): V_i = sum_k sigma_ik rho_ik",
    "steps_in_order": "(8b), (6): K_i in unary form, step[i, c] = [K_i >= c]",
    "job_size": "(8b): K_i = sum_k sigma_ik = 1 + sum_c step[i, c] >= 1",
    "node_used": "(5): uses_node[i, h] = 1 when job i has a worker on node h",
    "spans_nodes": "(5): a ring over two or more nodes has r_i^min = inter-node rate",
    "too_big_for_one_node": "(5): a job larger than every node spans nodes",
    "slow_ring_product": "(6): slow_ring_i = ring_i spans_i, the inter-node part of l_i^[c]",
    "computation_epigraph": "(14): t_i >= T_i |Pi_i| / V_i, the computation term",
    "tangent": "(14): supporting lines of t_i >= T_i |Pi_i| / V_i",
    "identical_nodes_ordered": symmetry_breaking(
        "(8b)-(8d)", "identical nodes in lexicographic order of their job counts"
    ),
    "avg_jct": "(8)/(14): min (1/S) sum_i T_i (l_i^[p] + l_i^[c])",
}


@dataclass(frozen=True)
class Groups:
    """Interchangeable workers: ``members[g]`` worker indices, ``node[g]`` node index."""

    members: tuple[tuple[int, ...], ...]
    node: tuple[int, ...]
    rho: np.ndarray  # (S, G) throughput of a group's worker for each job

    @property
    def cap(self) -> tuple[int, ...]:
        return tuple(len(m) for m in self.members)


def worker_groups(instance: PlacementInstance, by_node: bool = True) -> Groups:
    """Groups of interchangeable workers; ``by_node=False`` ignores nodes (for models that do
    not see the network, such as LAS)."""
    if by_node:
        members = instance.worker_groups()
    else:
        cols: dict[tuple[float, ...], list[int]] = {}
        for k in range(instance.num_workers):
            cols.setdefault(tuple(instance.rho[:, k]), []).append(k)
        members = [tuple(ks) for ks in cols.values()]
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
    tangent_points: int = 96,
    symmetry_breaking: bool = True,
) -> pyo.ConcreteModel:
    """P1 (8)/(14), or P2 (16)-(17) when ``category`` = (K_1, ..., K_S) is given.

    ``symmetry_breaking`` orders interchangeable nodes (same multiset of worker groups) by a
    lexicographic key of their job counts; any solution can be permuted to satisfy it.
    """
    if computation not in ("nonlinear", "tangents"):
        raise ValueError(f"computation must be 'nonlinear' or 'tangents', not {computation!r}")
    s, k = instance.num_jobs, instance.num_workers
    if category is not None:
        validate_category(tuple(category), k, s)
    grp = worker_groups(instance)

    m = pyo.ConcreteModel(name=f"P1[{instance.name}]")
    m.JOBS = pyo.RangeSet(0, s - 1)
    m.GROUPS = pyo.RangeSet(0, len(grp.members) - 1)
    m.NODES = pyo.RangeSet(0, len(instance.nodes) - 1)
    m.work = pyo.Param(m.JOBS, initialize={i: float(instance.work[i]) for i in range(s)})
    _assignment(m, instance, grp)
    _job_sizes(m, k - s + 1, category)
    comm = _communication(m, instance, grp)
    _computation(m, instance, computation, tangent_points)
    if symmetry_breaking:
        _break_node_symmetry(m, grp, s)
    m.comm = pyo.Expression(m.JOBS, rule=lambda m, i: comm[i])
    m.avg_jct = pyo.Objective(  # (14)
        expr=sum(m.t[i] + m.comm[i] for i in m.JOBS) / s,
        sense=pyo.minimize,
        doc=P1_EQUATIONS["avg_jct"],
    )
    m._groups = grp  # decoding needs the grouping
    return m


def _assignment(m: pyo.ConcreteModel, instance: PlacementInstance, grp: Groups) -> None:
    """n[i, g] workers of group g serve job i, every worker exactly one job (8c)-(8d); V_i is
    job i's throughput (13)."""
    m.n = pyo.Var(
        m.JOBS, m.GROUPS, domain=pyo.NonNegativeIntegers, bounds=lambda m, i, g: (0, grp.cap[g])
    )

    @m.Constraint(m.GROUPS, doc=P1_EQUATIONS["every_worker_serves_one_job"])
    def every_worker_serves_one_job(m, g):  # (8c) + (8d)
        return sum(m.n[i, g] for i in m.JOBS) == grp.cap[g]

    m.V = pyo.Var(m.JOBS, bounds=lambda m, i: _throughput_range(instance, i))

    @m.Constraint(m.JOBS, doc=P1_EQUATIONS["throughput"])
    def throughput(m, i):  # (13)
        return m.V[i] == sum(float(grp.rho[i, g]) * m.n[i, g] for g in m.GROUPS)


def _job_sizes(m: pyo.ConcreteModel, max_size: int, category: tuple[int, ...] | None) -> None:
    """K_i in the incremental ("delta") form: step[i, c] = [K_i >= c] for c = 2..K-S+1,
    non-increasing in c, so K_i = 1 + sum_c step[i, c] (8b holds by construction) and the
    concave ring factor (K_i - 1)/K_i = sum_c (1/(c-1) - 1/c) step[i, c] of eq. (6) is exact.
    A category fixes every K_i (17)."""
    m.STEPS = pyo.RangeSet(2, max_size) if max_size >= 2 else pyo.Set(initialize=[])
    m.step = pyo.Var(m.JOBS, m.STEPS, domain=pyo.Binary)

    @m.Constraint(m.JOBS, m.STEPS, doc=P1_EQUATIONS["steps_in_order"])
    def steps_in_order(m, i, c):
        if c == 2:
            return pyo.Constraint.Skip
        return m.step[i, c] <= m.step[i, c - 1]

    @m.Constraint(m.JOBS, doc=P1_EQUATIONS["job_size"])
    def job_size(m, i):  # K_i = sum_k sigma_ik
        return sum(m.n[i, g] for g in m.GROUPS) == 1 + sum(m.step[i, c] for c in m.STEPS)

    if category is not None:
        for i in m.JOBS:  # (17)
            for c in m.STEPS:
                m.step[i, c].fix(1 if c <= category[i] else 0)

    m.ring = pyo.Expression(  # (K_i - 1)/K_i of eq. (6)
        m.JOBS, rule=lambda m, i: sum((1 / (c - 1) - 1 / c) * m.step[i, c] for c in m.STEPS)
    )


def _communication(
    m: pyo.ConcreteModel, instance: PlacementInstance, grp: Groups
) -> dict[int, Any]:
    """Each job's ring all-reduce time (5)-(6): a_i ring_i, plus b_i ring_i when the ring spans
    two or more nodes (the inter-node link is then the bottleneck)."""
    a, b = _comm_coefficients(instance)
    num_nodes = len(instance.nodes)
    if num_nodes <= 1 or not np.any(b > 0):
        return {i: a[i] * m.ring[i] for i in m.JOBS}
    m.uses_node = pyo.Var(m.JOBS, m.NODES, domain=pyo.Binary)
    m.spans = pyo.Var(m.JOBS, domain=pyo.Binary)
    m.slow_ring = pyo.Var(m.JOBS, bounds=(0, 1))  # = ring_i * spans_i

    @m.Constraint(m.JOBS, m.GROUPS, doc=P1_EQUATIONS["node_used"])
    def node_used(m, i, g):
        return m.n[i, g] <= grp.cap[g] * m.uses_node[i, grp.node[g]]

    @m.Constraint(m.JOBS, doc=P1_EQUATIONS["spans_nodes"])
    def spans_nodes(m, i):  # two or more nodes -> the inter-node link is the bottleneck (5)
        return sum(m.uses_node[i, h] for h in m.NODES) <= 1 + (num_nodes - 1) * m.spans[i]

    node_size: dict[int, int] = {}
    for g, h in enumerate(grp.node):
        node_size[h] = node_size.get(h, 0) + grp.cap[g]
    biggest = max(node_size.values())

    @m.Constraint(m.JOBS, doc=P1_EQUATIONS["too_big_for_one_node"])
    def too_big_for_one_node(m, i):  # K_i > largest node => the ring spans nodes
        if biggest + 1 not in m.STEPS:
            return pyo.Constraint.Skip
        return m.spans[i] >= m.step[i, biggest + 1]

    @m.Constraint(m.JOBS, doc=P1_EQUATIONS["slow_ring_product"])
    def slow_ring_product(m, i):  # exact for binary spans and ring in [0, 1), b_i >= 0
        return m.slow_ring[i] >= m.ring[i] - (1 - m.spans[i])

    return {i: a[i] * m.ring[i] + b[i] * m.slow_ring[i] for i in m.JOBS}


def _computation(
    m: pyo.ConcreteModel, instance: PlacementInstance, computation: str, tangent_points: int
) -> None:
    """t_i >= T_i |Pi_i| / V_i, the computation seconds of (14): the convex constraint itself
    (``nonlinear``) or its tangents at geometrically spaced throughputs (``tangents``)."""

    def t_bounds(m, i):
        lo, hi = _throughput_range(instance, i)
        return (float(instance.work[i]) / hi, float(instance.work[i]) / lo)

    m.t = pyo.Var(m.JOBS, bounds=t_bounds)
    if computation == "nonlinear":

        @m.Constraint(m.JOBS, doc=P1_EQUATIONS["computation_epigraph"])
        def computation_epigraph(m, i):  # t_i >= T_i |Pi_i| / V_i, convex for V_i > 0
            return m.t[i] >= m.work[i] / m.V[i]

        return
    m.tangent = pyo.ConstraintList(doc=P1_EQUATIONS["tangent"])
    for i in m.JOBS:
        lo, hi = _throughput_range(instance, i)
        for v0 in np.geomspace(lo, hi, max(tangent_points, 2)):
            add_tangent(m, i, float(v0))


def _break_node_symmetry(m: pyo.ConcreteModel, grp: Groups, s: int) -> None:
    """Identical nodes h1 < h2 < ... get non-increasing keys sum_i B^i n[i, g_h] over the
    node's first group g_h (B = capacity + 1 makes the key lexicographic in i). Permuting
    whole identical nodes maps any placement to one that satisfies the order."""
    by_node: dict[int, list[int]] = {}
    for g, h in enumerate(grp.node):
        by_node.setdefault(h, []).append(g)
    signature: dict[tuple, list[int]] = {}
    for h, gs in sorted(by_node.items()):
        sig = tuple(sorted((tuple(np.round(grp.rho[:, g], 9)), grp.cap[g]) for g in gs))
        signature.setdefault(sig, []).append(h)
    pairs = []
    for sig, nodes in signature.items():
        if len(nodes) < 2:
            continue
        col = sig[0][0]
        first = {
            h: next(g for g in by_node[h] if tuple(np.round(grp.rho[:, g], 9)) == col)
            for h in nodes
        }
        base = sig[0][1] + 1
        jobs = min(s, 6)  # keep coefficients <= base^6 for numerical safety; any key is valid
        for h1, h2 in zip(nodes, nodes[1:], strict=False):
            pairs.append((first[h1], first[h2], base, jobs))
    m.SYM = pyo.RangeSet(0, len(pairs) - 1) if pairs else pyo.Set(initialize=[])

    @m.Constraint(m.SYM, doc=P1_EQUATIONS["identical_nodes_ordered"])
    def identical_nodes_ordered(m, p):
        g1, g2, base, jobs = pairs[p]
        return sum(base**i * m.n[i, g1] for i in range(jobs)) >= sum(
            base**i * m.n[i, g2] for i in range(jobs)
        )


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
    grp = worker_groups(instance, by_node=False)  # LAS sees throughput only
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
