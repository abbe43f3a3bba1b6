"""Metrics of Liu et al. (TPDS 2024): fairness degree F (33) and heterogeneity degree H (35)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dlsched.models.placement.instance import BITS_PER_GBIT, BITS_PER_MB, PlacementInstance


def equal_share_jct(instance: PlacementInstance) -> np.ndarray:
    """Lambda_i^[e] (32): JCT of job i with an equal 1/S share of the cluster.

    Read as T_i (2 (K/S - 1) D_i / (r K/S) + S |Pi_i| / sum_k rho_ik): the computation term
    uses the equal-share throughput V_i^Equal = sum_k rho_ik / S of Section IV-A, and r is the
    slowest link of the cluster (the inter-node rate when there are several nodes). The printed
    (32) has S in the denominator and a stray sum over i; see docs/errata.md.
    """
    s, k = instance.num_jobs, instance.num_workers
    share = k / s
    r = instance.inter_node_gbps if len(instance.nodes) > 1 else instance.intra_node_gbps
    out = []
    for i, job in enumerate(instance.jobs):
        comm = 2 * (share - 1) * job.model_size_mb * BITS_PER_MB / (r * BITS_PER_GBIT * share)
        comp = s * job.dataset_size / float(instance.rho[i].sum())
        out.append(job.epochs * (comm + comp))
    return np.array(out)


def fairness_degree(instance: PlacementInstance, jct: Sequence[float]) -> float:
    """Jain's index (33) of Lambda_i / Lambda_i^[e]; in [1/S, 1]."""
    x = np.asarray(jct, dtype=float) / equal_share_jct(instance)
    return float(x.sum() ** 2 / (len(x) * (x**2).sum()))


def heterogeneity_degree(instance: PlacementInstance) -> float:
    """H (35) = sum_k sum_i rho_ik / (K min_k sum_i rho_ik); 1 for identical workers."""
    col = instance.rho.sum(axis=0)
    return float(col.sum() / (instance.num_workers * col.min()))
