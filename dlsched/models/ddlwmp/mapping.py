"""GPU mapping of one job onto free GPUs: Heavy-Edge (Section IV-B) and the exact placement
MILP (Table II "ILP") of Luo et al. (seed 001), plus exhaustive enumeration for tiny jobs.

The job graph Omega has one vertex per stage replica; between every replica of stage s-1 and
of stage s an edge of weight 2 d^in_s / k_{s-1} (= 2 d^out_{s-1} / k_s); inside a stage a ring
(RAR, weight 2 (k-1) h / k) or a double binary tree (TAR, weight (k-1) h / k).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from functools import lru_cache
from typing import Any

import numpy as np

from dlsched.models.ddlwmp.alpha import (
    Placement,
    allreduce_ms,
    alpha_ms,
    comp_ms,
    from_counts,
    inter_coef,
    intra_coef,
    normalize,
)
from dlsched.models.ddlwmp.instance import Cluster, Job, Stage

# --- the job graph ----------------------------------------------------------------------------


def _intra_edges(k: int, kind: str) -> set[tuple[int, int]]:
    """Replica pairs of one stage linked by RAR (a ring) or TAR (two mirrored binary trees)."""
    if k < 2:
        return set()
    if kind == "ring":
        return {tuple(sorted((r, (r + 1) % k))) for r in range(k)}  # type: ignore[misc]
    tree = {(((r - 1) // 2), r) for r in range(1, k)}
    mirror = {tuple(sorted((k - 1 - a, k - 1 - b))) for a, b in tree}
    return tree | mirror  # type: ignore[operator]


def job_graph(job: Job) -> tuple[list[int], np.ndarray]:
    """(stage of each vertex, symmetric weight matrix in MB) of the graph Omega."""
    stage_of = [s for s, st in enumerate(job.stages) for _ in range(st.replicas)]
    first = np.cumsum([0] + [st.replicas for st in job.stages])
    w = np.zeros((len(stage_of), len(stage_of)))
    for s, st in enumerate(job.stages):
        k, h = st.replicas, st.params_mb
        if s > 0:
            kp = job.stages[s - 1].replicas
            w[first[s - 1] : first[s], first[s] : first[s + 1]] += 2 * st.activation_in_mb / kp
        weight = 2 * (k - 1) * h / k if job.allreduce == "ring" else (k - 1) * h / k
        for a, b in _intra_edges(k, job.allreduce):
            w[first[s] + a, first[s] + b] += weight
    return stage_of, w + w.T


# --- Heavy-Edge --------------------------------------------------------------------------------


def _fill_server(w: np.ndarray, left: list[int], cap: int) -> list[int]:
    """Vertices for one server of ``cap`` GPUs, by the Heavy-Edge principle."""
    if len(left) == cap:
        return list(left)
    if cap == 1:  # the vertex with the minimum total edge weight
        return [min(left, key=lambda v: (w[v].sum(), v))]
    sub = w[np.ix_(left, left)]
    if sub.max() > 0:  # seed: the heaviest edge among unassigned vertices
        a, b = np.unravel_index(int(np.argmax(sub)), sub.shape)
        chosen = [left[int(a)], left[int(b)]]
    else:
        chosen = [left[0]]
    rest = [v for v in left if v not in chosen]
    while len(chosen) < cap:
        cut = w[np.ix_(chosen, rest)].max(axis=0)
        j = int(np.argmax(cut)) if cut.max() > 0 else 0  # no edge: the first unassigned
        chosen.append(rest.pop(j))
    return chosen


def heavy_edge(job: Job, caps: Sequence[tuple[int, int]]) -> Placement:
    """Heavy-Edge: ``caps`` lists (server, GPUs to use) with sum = g_i; servers are filled in
    decreasing order of their count (ties by server index)."""
    stage_of, w = job_graph(job)
    left = list(range(len(stage_of)))
    rows: dict[int, list[int]] = {}
    for m, cap in sorted(caps, key=lambda mc: (-mc[1], mc[0])):
        if cap <= 0 or not left:
            continue
        chosen = _fill_server(w, left, min(cap, len(left)))
        row = rows.setdefault(m, [0] * len(job.stages))
        for v in chosen:
            row[stage_of[v]] += 1
        left = [v for v in left if v not in chosen]
    return normalize(rows)


def most_free_caps(free: Sequence[int], need: int) -> list[tuple[int, int]]:
    """GPUs taken from the servers with the most free GPUs first (Algorithm 1, line 9)."""
    caps, left = [], need
    for m in sorted(range(len(free)), key=lambda m: (-free[m], m)):
        if left == 0:
            break
        take = min(free[m], left)
        if take > 0:
            caps.append((m, take))
            left -= take
    return caps


def alpha_tilde_min(job: Job, cluster: Cluster) -> tuple[float, Placement]:
    """alpha~^min of Section IV-B: Heavy-Edge on the fewest servers (full ones, then g')."""
    return _alpha_tilde_min(job.stages, job.allreduce, cluster)


@lru_cache(maxsize=4096)
def _alpha_tilde_min(
    stages: tuple[Stage, ...], kind: str, cluster: Cluster
) -> tuple[float, Placement]:
    job = Job("", 0.0, 1, stages, kind)
    g = cluster.gpus_per_server
    caps = most_free_caps([g] * -(-job.gpus // g), job.gpus)
    p = heavy_edge(job, caps)
    return alpha_ms(job, cluster, p), p


# --- exhaustive enumeration (tiny jobs) -------------------------------------------------------


def all_placements(job: Job, free: Sequence[int]) -> Iterator[Placement]:
    """Every placement of the job on the free GPUs (exponential: tiny jobs only)."""
    servers = [m for m in range(len(free)) if free[m] > 0]

    def split(k: int, caps: list[int], at: int) -> Iterator[list[int]]:
        if at == len(caps) - 1:
            if k <= caps[at]:
                yield [k]
            return
        for v in range(min(k, caps[at]) + 1):
            for rest in split(k - v, caps, at + 1):
                yield [v, *rest]

    def rec(s: int, caps: list[int], cols: list[list[int]]) -> Iterator[Placement]:
        if s == len(job.stages):
            yield normalize({m: [c[j] for c in cols] for j, m in enumerate(servers)})
            return
        for part in split(job.stages[s].replicas, caps, 0):
            yield from rec(s + 1, [c - v for c, v in zip(caps, part, strict=True)], [*cols, part])

    if servers:
        yield from rec(0, [free[m] for m in servers], [])


# --- the exact placement MILP -----------------------------------------------------------------


def big_m(job: Job, cluster: Cluster) -> float:
    """An upper bound of every beta^m_s: the largest of each comm term, and AllReduce at x=1."""
    best = 0.0
    for s in range(len(job.stages)):
        ip, inx = inter_coef(job, cluster, s)
        ap, anx = intra_coef(job, cluster, s)
        ar = allreduce_ms(job, cluster, s, 1)
        best = max(best, comp_ms(job, s) + max(ip, ap) + max(inx, anx) + ar)
    return best


def build_mapping_model(job: Job, cluster: Cluster, free: Sequence[int]) -> Any:
    """min alpha_i over placements on ``free`` GPUs per server: eq. (2), (4)-(7) with one-hot
    counts y[s,m,v] (x^m_s = sum_v v y[s,m,v]) so that (4) and (6) are linear."""
    from dlsched.solvers.pyomo_env import pyo

    mdl = pyo.ConcreteModel(name=f"mapping-{job.name}")
    k = [st.replicas for st in job.stages]
    mdl.STAGES = pyo.Set(initialize=range(len(k)))
    mdl.SERVERS = pyo.Set(initialize=[m for m in range(len(free)) if free[m] > 0])
    mdl.COUNTS = pyo.Set(
        dimen=3,
        initialize=[
            (s, m, v)
            for s in mdl.STAGES
            for m in mdl.SERVERS
            for v in range(min(k[s], free[m]) + 1)
        ],
    )
    mdl.y = pyo.Var(mdl.COUNTS, domain=pyo.Binary)
    big = big_m(job, cluster)
    mdl.alpha = pyo.Var(bounds=(0, big))

    def x(s: int, m: int) -> Any:
        return sum(v * mdl.y[s, m, v] for v in range(min(k[s], free[m]) + 1))

    @mdl.Constraint(mdl.STAGES, mdl.SERVERS)
    def one_count(mdl: Any, s: int, m: int) -> Any:
        return sum(mdl.y[s, m, v] for v in range(min(k[s], free[m]) + 1)) == 1

    @mdl.Constraint(mdl.STAGES)
    def replicas_placed(mdl: Any, s: int) -> Any:  # (2)
        return sum(x(s, m) for m in mdl.SERVERS) == k[s]

    @mdl.Constraint(mdl.SERVERS)
    def server_free(mdl: Any, m: int) -> Any:  # (3) for one job on the free GPUs
        return sum(x(s, m) for s in mdl.STAGES) <= free[m]

    @mdl.Constraint(mdl.STAGES, mdl.SERVERS)
    def bottleneck(mdl: Any, s: int, m: int) -> Any:  # (7) over used (m, s): beta by (4)-(6)
        return (
            mdl.alpha
            >= _beta_expr(mdl, job, cluster, s, m, x, min(k[s], free[m])) - big * (mdl.y[s, m, 0])
        )

    mdl.obj = pyo.Objective(expr=mdl.alpha, sense=pyo.minimize)
    return mdl


def _beta_expr(mdl: Any, job: Job, cluster: Cluster, s: int, m: int, x: Any, top: int) -> Any:
    """beta^m_s as a linear expression, valid when x^m_s > 0: (4) + (5) + (6)."""
    k = [st.replicas for st in job.stages]
    comp = comp_ms(job, s) * (1 - mdl.y[s, m, 0])  # (4)
    ip, inx = inter_coef(job, cluster, s)
    ap, anx = intra_coef(job, cluster, s)
    comm: Any = 0.0  # (5)
    if s > 0:
        on = x(s - 1, m) / k[s - 1]
        comm = comm + ip * (1 - on) + ap * on
    if s < len(k) - 1:
        on = x(s + 1, m) / k[s + 1]
        comm = comm + inx * (1 - on) + anx * on
    ar = sum(allreduce_ms(job, cluster, s, v) * mdl.y[s, m, v] for v in range(1, top + 1))  # (6)
    return comp + comm + ar


def decode_mapping(mdl: Any, job: Job, values: dict[str, float]) -> Placement:
    chosen = (c for c in mdl.COUNTS if values.get(mdl.y[c].name, 0.0) > 0.5)
    return from_counts(chosen, len(job.stages))


__all__ = [
    "all_placements",
    "alpha_tilde_min",
    "big_m",
    "build_mapping_model",
    "decode_mapping",
    "heavy_edge",
    "job_graph",
    "most_free_caps",
]
