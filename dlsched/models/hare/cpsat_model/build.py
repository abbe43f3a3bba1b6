"""Hare_Sched (4)-(8) as a native CP-SAT model (Chen et al., HPDC 2022, Section 5.1).

One start variable per task; one optional fixed-size interval of length T^c_{n,m} per
(task, GPU) with a presence literal y_{i,m}; exactly one presence per task (5); one NoOverlap
per GPU over the training intervals (8); a barrier variable per (job, round >= 1) at or after
the finish (training + sync) of every task of the previous round (7); C_n after the finish of
every last-round task (6); starts at or after arrival (4). Tasks of one round of one job are
interchangeable: their starts are ordered.

GPUs with identical (T^c, T^s) columns form a class. By default (``pooled``) the model picks a
class, not a GPU: one optional interval per (task, class) and one cumulative of capacity
|class| per class. This is exact: fixed intervals of which at most c overlap at any time can be
given c GPUs (interval graphs are perfect; :func:`.hints.colour_pools` does it greedily by
start), and every schedule on the GPUs gives such intervals. It removes the |class|! symmetric
copies of each schedule instead of cutting them with ordering constraints, and halves the
literals on the generator's instances (2 GPUs per type); benchmarks/RESULTS_hare.md (section 2)
measures it against one NoOverlap per GPU.

CP-SAT needs integers: the data are scaled by :mod:`..scaling` (times rounded *up* when no
power of ten makes them integral: the schedule stays feasible for the true data but optimality
is no longer certified).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from dlsched.models.hare.instance import HareInstance, Task
from dlsched.solvers.deadline import NEVER, Deadline

from ..scaling import ScaledData, scale_data
from .constraints import Classes, add_constraints
from .objective import add_objective
from .variables import BuildTimeUp, add_variables, gpu_classes, job_windows


@dataclass(frozen=True)
class CpsatConfig:
    """The switches of the CP-SAT stages (all the route's defaults).

    ``use_upper``: a hint's objective (exact data) bounds the model's from above, and gives
    each job a deadline C_n <= (upper - sum_{k != n} w_k LB_k) / w_n with LB_k the job's chain
    bound a_k + R_k min_m (T^c + T^s). ``lp_bound``: first the time-indexed LP bound of
    :mod:`..lowerbound` (``lp_options``: keyword arguments of its ``time_indexed_bound``),
    stated as objective >= its value. ``job_bounds``: start and completion domains from the
    chain bounds. ``symmetry``: the first task on an identical GPU m' comes after the first on
    m < m' (unused when ``pooled``). ``redundant``: cumulatives implied by (8), of capacity |M|
    over all tasks at their minimum training time and of capacity |class| per class of identical
    GPUs, with ``linearization_level = 2`` (off by default, see benchmarks/READING_hare.md).
    ``pooled``: one cumulative per class of identical GPUs instead of a NoOverlap per GPU (see
    the module docstring); ``present`` is then keyed by (task, first GPU of the class).
    """

    use_upper: bool = True
    lp_bound: bool = True
    job_bounds: bool = True
    symmetry: bool = True
    redundant: bool = False
    pooled: bool = True
    lp_options: Mapping[str, Any] = field(default_factory=dict)


#: The route's switches, all on but the redundant cumulatives.
DEFAULT_CONFIG = CpsatConfig()


@dataclass
class CpsatHare:
    """The CP-SAT model and its variables (not a Pyomo model: CP-SAT is used natively here)."""

    model: Any
    data: ScaledData
    start: dict[Task, Any]
    present: dict[tuple[Task, int], Any]
    completion: list[Any]
    gpu_classes: list[list[int]] = field(default_factory=list)
    pools: dict[int, list[int]] = field(default_factory=dict)  # representative -> its GPUs
    slots: list[int] = field(default_factory=list)  # the GPUs, or the classes' representatives

    def placed_on(self, task: Task, value: Any) -> int:
        """The GPU (or, when pooled, the representative of the class) ``task`` is on, given
        ``value`` (a solver's value function)."""
        return next(m for m in self.slots if value(self.present[(task, m)]))


def build_cpsat(
    instance: HareInstance,
    data: ScaledData | None = None,
    config: CpsatConfig = DEFAULT_CONFIG,
    *,
    upper: int | None = None,
    lower: int | None = None,
    partial: Sequence[tuple[Sequence[int], int]] = (),
    deadline: Deadline = NEVER,
) -> CpsatHare:
    """Build Hare_Sched (4)-(8) in CP-SAT; never solves. Raises
    :class:`.variables.BuildTimeUp` if ``deadline`` passes before the model is whole.

    ``upper``: the (scaled) objective of a known schedule: the model keeps only schedules of
    objective <= upper, which contain every optimal one (and its jobs' deadlines follow).
    ``lower``: a proven lower bound on the (scaled) optimum, e.g. from
    :func:`..lowerbound.time_indexed_bound`. ``partial``: (jobs, bound) pairs, each a proven
    bound on sum_{n in jobs} w_n C_n (scaled).
    """
    if deadline.passed():  # nothing left: not even for importing CP-SAT (a second, cold)
        raise BuildTimeUp
    from ortools.sat.python import cp_model

    d = data or scale_data(instance)
    cp = cp_model.CpModel()
    every = gpu_classes(instance)
    pooled = config.pooled
    slots = [cls[0] for cls in every] if pooled else list(range(instance.num_gpus))
    windows = job_windows(d, instance, upper, config.job_bounds)
    v = add_variables(cp, d, instance, windows, slots, deadline)
    classes = Classes(pooled, every, every if config.symmetry and not pooled else [])
    add_constraints(cp, d, instance, v, classes, config.redundant, deadline)
    add_objective(cp, d, v.completion, upper, lower, partial)
    pools = {cls[0]: cls for cls in every} if pooled else {}
    return CpsatHare(cp, d, v.start, v.present, v.completion, classes.ordered, pools, slots)


__all__ = ["DEFAULT_CONFIG", "CpsatConfig", "CpsatHare", "build_cpsat"]
