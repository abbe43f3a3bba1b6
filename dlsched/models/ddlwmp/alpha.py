"""Per-iteration training time alpha_i of a placement: eq. (4)-(7) of Luo et al. (seed 001).

A placement is sparse: ``((m, (x_1, ..., x_S)), ...)`` lists each server m that hosts replicas
of the job with x_s = x^m_{i,s}, the GPUs of server m that host stage s (servers in increasing
order, no all-zero rows). Times are in milliseconds.

beta^m_s = comp (4) + comm (5) + AllReduce (6) for every (m, s) with x^m_s > 0, and
alpha = max beta (7). In (5) the factor x^m_s cancels against the reserved share x^m_s / g of
the NIC, so comm is linear in the neighbours' x; the first stage has no s-1 term and the last
no s+1 term (docs/errata.md). These helpers are the one place of each formula: the
mapping MILP (:mod:`dlsched.models.ddlwmp.mapping`) builds its linear pieces from them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from dlsched.models.ddlwmp.instance import MS_PER_MB_PER_GBPS, Cluster, Job

Placement = tuple[tuple[int, tuple[int, ...]], ...]


def comp_ms(job: Job, s: int) -> float:
    """Eq. (4) when x^m_s > 0: p^f + p^b."""
    st = job.stages[s]
    return st.forward_ms + st.backward_ms


def inter_coef(job: Job, cluster: Cluster, s: int) -> tuple[float, float]:
    """Eq. (5), NIC part: ms per unit of the fraction of stage s-1 (resp. s+1) replicas that are
    *off* server m: 2 d^in_s g / B_inter (resp. 2 d^out_s g / B_inter); 0 without that stage."""
    st, g = job.stages[s], cluster.gpus_per_server
    scale = 2 * MS_PER_MB_PER_GBPS * g / cluster.inter_gbps
    prev = scale * st.activation_in_mb if s > 0 else 0.0
    nxt = scale * st.activation_out_mb if s < len(job.stages) - 1 else 0.0
    return prev, nxt


def intra_coef(job: Job, cluster: Cluster, s: int) -> tuple[float, float]:
    """Eq. (5), intra-server part: ms per unit of the fraction of stage s-1 (resp. s+1)
    replicas that are *on* server m: 2 d^in_s / B_intra (resp. 2 d^out_s / B_intra)."""
    st = job.stages[s]
    scale = 2 * MS_PER_MB_PER_GBPS / cluster.intra_gbps
    prev = scale * st.activation_in_mb if s > 0 else 0.0
    nxt = scale * st.activation_out_mb if s < len(job.stages) - 1 else 0.0
    return prev, nxt


def allreduce_ms(job: Job, cluster: Cluster, s: int, x: int) -> float:
    """Eq. (6) for x = x^m_s >= 1 replicas of stage s on one server."""
    k, h = job.stages[s].replicas, job.stages[s].params_mb
    data = 2 * (k - 1) * h / k * MS_PER_MB_PER_GBPS
    if x < k:
        return data / (x / cluster.gpus_per_server * cluster.inter_gbps)
    return data / cluster.intra_gbps


def beta_ms(job: Job, cluster: Cluster, s: int, row: Sequence[int]) -> float:
    """beta^m_s for the counts ``row`` (x^m_1..x^m_S) of one server, with row[s] > 0."""
    k = [st.replicas for st in job.stages]
    ip, inx = inter_coef(job, cluster, s)
    ap, anx = intra_coef(job, cluster, s)
    comm = 0.0
    if s > 0:
        on = row[s - 1] / k[s - 1]
        comm += ip * (1 - on) + ap * on
    if s < len(k) - 1:
        on = row[s + 1] / k[s + 1]
        comm += inx * (1 - on) + anx * on
    return comp_ms(job, s) + comm + allreduce_ms(job, cluster, s, row[s])


def alpha_ms(job: Job, cluster: Cluster, placement: Placement) -> float:
    """Eq. (7): the bottleneck beta over every used (server, stage)."""
    return max(
        beta_ms(job, cluster, s, row)
        for _, row in placement
        for s in range(len(job.stages))
        if row[s] > 0
    )


def alpha_max_ms(job: Job, cluster: Cluster) -> float:
    """alpha^max as Section III-B defines it: g_i servers, one replica each, with a 1/g share of
    the NIC (every neighbour off-server)."""
    return max(
        beta_ms(job, cluster, s, [1 if t == s else 0 for t in range(len(job.stages))])
        for s in range(len(job.stages))
    )


def placement_usage(placement: Placement) -> dict[int, int]:
    """GPUs used per server."""
    return {m: sum(row) for m, row in placement}


def normalize(rows: dict[int, list[int]] | dict[int, tuple[int, ...]]) -> Placement:
    """Sparse placement from ``{server: counts}`` (zero rows dropped, servers sorted)."""
    return tuple((m, tuple(int(v) for v in rows[m])) for m in sorted(rows) if any(rows[m]))


def from_counts(chosen: Iterable[tuple[int, int, int]], stages: int) -> Placement:
    """The placement of the one-hot counts y[s, m, v] = 1 in ``chosen``: v replicas of stage s
    on server m (v = 0 places none)."""
    rows: dict[int, list[int]] = {}
    for s, m, v in chosen:
        if v > 0:
            rows.setdefault(m, [0] * stages)[s] = v
    return normalize(rows)


__all__ = [
    "Placement",
    "allreduce_ms",
    "alpha_max_ms",
    "alpha_ms",
    "beta_ms",
    "comp_ms",
    "from_counts",
    "inter_coef",
    "intra_coef",
    "normalize",
    "placement_usage",
]
