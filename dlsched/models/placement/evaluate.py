"""Fast, vectorised evaluation of eq. (14) used inside search loops (HAS, exhaustive, OA).

This is the model side's arithmetic; reported numbers always come from
:func:`dlsched.check.check_placement`, written separately from the raw instance.
"""

from __future__ import annotations

import numpy as np

from dlsched.models.placement.instance import BITS_PER_GBIT, BITS_PER_MB, PlacementInstance


class Evaluator:
    """Precomputes per-instance arrays; ``avg_jct(assignments)`` takes an (n, K) int array."""

    def __init__(self, instance: PlacementInstance) -> None:
        self.s = instance.num_jobs
        self.k = instance.num_workers
        self.rho = np.asarray(instance.rho)
        self.work = instance.work  # T_i |Pi_i|
        self.node = instance.node_index
        self.num_nodes = len(instance.nodes)
        bits = np.array([j.epochs * j.model_size_mb * BITS_PER_MB for j in instance.jobs])
        self.comm_intra = 2 * bits / (instance.intra_node_gbps * BITS_PER_GBIT)
        self.comm_inter = 2 * bits / (instance.inter_node_gbps * BITS_PER_GBIT)

    def per_job(
        self, assignment: np.ndarray, balance: str = "proportional"
    ) -> tuple[np.ndarray, np.ndarray]:
        """Computation and communication seconds per job, arrays of shape (n, S)."""
        a = np.atleast_2d(assignment)
        n = a.shape[0]
        comp = np.empty((n, self.s))
        comm = np.empty((n, self.s))
        for i in range(self.s):
            mask = a == i
            sizes = mask.sum(axis=1)
            if balance == "proportional":
                v = (mask * self.rho[i]).sum(axis=1)
                with np.errstate(divide="ignore"):
                    comp[:, i] = np.where(sizes > 0, self.work[i] / v, np.inf)
            else:  # equal split: the slowest selected worker dominates
                slowest = np.where(mask, self.rho[i], np.inf).min(axis=1)
                with np.errstate(divide="ignore"):
                    comp[:, i] = np.where(sizes > 0, self.work[i] / (sizes * slowest), np.inf)
            if self.num_nodes > 1:
                nodes_used = np.zeros(n, dtype=int)
                for h in range(self.num_nodes):
                    nodes_used += (mask & (self.node == h)).any(axis=1)
                spans = nodes_used > 1
            else:
                spans = np.zeros(n, dtype=bool)
            frac = np.where(sizes > 0, (sizes - 1) / np.maximum(sizes, 1), 0.0)
            comm[:, i] = frac * np.where(spans, self.comm_inter[i], self.comm_intra[i])
        return comp, comm

    def avg_jct(self, assignment: np.ndarray, balance: str = "proportional") -> np.ndarray:
        comp, comm = self.per_job(assignment, balance)
        return (comp + comm).sum(axis=1) / self.s

    def job_jct(self, i: int, workers: list[int], balance: str = "proportional") -> float:
        """JCT of job i alone on the given workers."""
        if not workers:
            return float("inf")
        r = self.rho[i, workers]
        if balance == "proportional":
            comp = self.work[i] / r.sum()
        else:
            comp = self.work[i] / (len(workers) * r.min())
        spans = len({int(self.node[k]) for k in workers}) > 1
        frac = (len(workers) - 1) / len(workers)
        return float(comp + frac * (self.comm_inter[i] if spans else self.comm_intra[i]))
