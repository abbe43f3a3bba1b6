"""Checker of the placement family (P1, seed 000): feasibility and objective re-computed
from the raw instance with plain arithmetic (no model, no solver values)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from dlsched.errors import InfeasibleSolutionError

if TYPE_CHECKING:  # pragma: no cover
    from dlsched.models.placement.instance import PlacementInstance
    from dlsched.models.placement.solution import Placement

BITS_PER_MB = 8e6
BITS_PER_GBIT = 1e9


@dataclass(frozen=True)
class PlacementEvaluation:
    """Everything eq. (2)-(8) and (12) say about one placement, per job i."""

    avg_jct: float  # objective (8), seconds
    jct: tuple[float, ...]  # Lambda_i (7)
    computation: tuple[float, ...]  # T_i * l_i^[p]
    communication: tuple[float, ...]  # T_i * l_i^[c]
    throughput: tuple[float, ...]  # V_i (13)
    workers: tuple[int, ...]  # K_i
    bottleneck_gbps: tuple[float | None, ...]  # r_i^min (5), None when K_i = 1
    data_split: tuple[tuple[float, ...], ...]  # |pi_{i,k}| per job, over its workers (12)

    @property
    def objective(self) -> float:
        """The minimised objective: the average JCT (8)."""
        return self.avg_jct


def check_placement(
    instance: PlacementInstance, placement: Placement, balance: str | None = None
) -> PlacementEvaluation:
    """Verify (8b)-(8d) and evaluate (8).

    ``balance="proportional"`` splits each job's data by (12) (the paper's scheme);
    ``balance="equal"`` splits it into equal parts (Optimus without load balancing);
    by default the placement's own ``balance``.
    Raises :class:`InfeasibleSolutionError` naming the violated constraint.
    """
    balance = balance or placement.balance
    if balance not in ("proportional", "equal"):
        raise ValueError(f"balance must be 'proportional' or 'equal', not {balance!r}")
    s = len(instance.jobs)
    a = placement.assignment
    _check_assignment(instance, a)
    jct, comp, comm, tput, sizes, rmin, splits = [], [], [], [], [], [], []
    for i, job in enumerate(instance.jobs):
        mine = [k for k in range(len(a)) if a[k] == i]
        if not mine:
            raise InfeasibleSolutionError(f"job {job.name} has no worker (8b)")
        split, l_p, v = _computation(instance, i, mine, balance)
        l_c, r_min = _communication(instance, i, mine)
        comp.append(job.epochs * l_p)
        comm.append(job.epochs * l_c)
        jct.append(job.epochs * (l_p + l_c))  # (7)
        tput.append(v)
        sizes.append(len(mine))
        rmin.append(r_min)
        splits.append(split)
    return PlacementEvaluation(
        avg_jct=sum(jct) / s,
        jct=tuple(jct),
        computation=tuple(comp),
        communication=tuple(comm),
        throughput=tuple(tput),
        workers=tuple(sizes),
        bottleneck_gbps=tuple(rmin),
        data_split=tuple(splits),
    )


def _check_assignment(instance: PlacementInstance, a: tuple[int, ...]) -> None:
    """(8c)-(8d): one job index per worker."""
    s, k_total = len(instance.jobs), len(instance.workers)
    if len(a) != k_total:
        raise InfeasibleSolutionError(
            f"placement lists {len(a)} workers, instance has {k_total} (8c)"
        )
    for k, i in enumerate(a):
        if not isinstance(i, int) or not 0 <= i < s:
            raise InfeasibleSolutionError(
                f"worker {instance.workers[k].name} is assigned to job {i!r}, not one of 0..{s - 1}"
                " (8c)-(8d): every worker serves exactly one job"
            )


def _computation(
    instance: PlacementInstance, i: int, mine: list[int], balance: str
) -> tuple[tuple[float, ...], float, float]:
    """(data split, epoch computation time l_p, throughput V_i): (12) splits the data by
    throughput, |pi_ik| = |Pi_i| rho_ik / V_i; (2)-(3) the epoch time is the slowest worker's."""
    job = instance.jobs[i]
    rho = [float(instance.throughput[i][k]) for k in mine]
    v = sum(rho)
    if balance == "proportional":
        split = [job.dataset_size * r / v for r in rho]
    else:
        split = [job.dataset_size / len(rho)] * len(rho)
    if abs(sum(split) - job.dataset_size) > 1e-6 * job.dataset_size:
        raise InfeasibleSolutionError(f"data split of job {job.name} does not cover (8a)")
    l_p = max(p / r for p, r in zip(split, rho, strict=True))
    return tuple(split), l_p, v


def _communication(
    instance: PlacementInstance, i: int, mine: list[int]
) -> tuple[float, float | None]:
    """(epoch ring all-reduce time l_c (6), bottleneck Gbit/s over all pairs of the job's
    workers (5), None for one worker)."""
    if len(mine) == 1:
        return 0.0, None
    r_min = min(
        instance.intra_node_gbps
        if instance.workers[k1].node == instance.workers[k2].node
        else instance.inter_node_gbps
        for x, k1 in enumerate(mine)
        for k2 in mine[x + 1 :]
    )
    kk = len(mine)
    size_mb = instance.jobs[i].model_size_mb
    return 2 * (kk - 1) * size_mb * BITS_PER_MB / (r_min * BITS_PER_GBIT * kk), r_min
