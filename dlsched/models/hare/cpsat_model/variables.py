"""The variables of the CP-SAT model of Hare_Sched (Chen et al., HPDC 2022, Section 5.1).

Per task i = (n, r, k): its start x_i, whose domain states (4) (at or after the arrival, and
a round after the fastest rounds before it); per (task, slot) a presence literal y_{i,m} and an
optional fixed-size training interval of length T^c_{n,m}; the finish (training + sync) of each
task as an expression of those. Per job: a barrier variable per round >= 1 and its completion
C_n. A slot is a GPU, or (pooled) the first GPU of a class of identical GPUs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dlsched.models.hare.instance import HareInstance, Task
from dlsched.solvers.deadline import NEVER, Deadline

from ..relaxation import fastest_round
from ..scaling import ScaledData


class BuildTimeUp(Exception):
    """The deadline of a model's building passed before the model was whole."""


def in_time(deadline: Deadline) -> None:
    """:class:`BuildTimeUp` once ``deadline`` has passed (asked per task or job while a model
    is built: Python building cannot be stopped otherwise)."""
    if deadline.passed():
        raise BuildTimeUp


def gpu_classes(instance: HareInstance) -> list[list[int]]:
    """GPUs grouped by identical (T^c, T^s) columns over all jobs (interchangeable GPUs)."""
    groups: dict[tuple[tuple[float, ...], tuple[float, ...]], list[int]] = {}
    for m in range(instance.num_gpus):
        key = (tuple(instance.tc[:, m]), tuple(instance.ts[:, m]))
        groups.setdefault(key, []).append(m)
    return list(groups.values())


@dataclass(frozen=True)
class JobWindows:
    """Per job (scaled): the fastest round min_m (T^c + T^s), the chain bound on C_n
    (a_n + R_n * fastest round), the deadline implied by ``upper``, and whether the chain
    bounds tighten the domains (``job_bounds``)."""

    fast: list[int]
    chain: list[int]
    deadline: list[int]
    tighten: bool


def job_windows(
    d: ScaledData, instance: HareInstance, upper: int | None, tighten: bool = True
) -> JobWindows:
    """The one place of the per-job chain bound and deadline: with a known schedule of
    objective ``upper``, C_n <= (upper - sum_{k != n} w_k LB_k) / w_n, LB_k the chain bound."""
    fast = fastest_round(d.tc, d.ts)[1]
    chain = [d.arrival[n] + j.rounds * fast[n] for n, j in enumerate(instance.jobs)]
    deadline = [d.horizon] * len(chain)
    if upper is not None:
        total = sum(w * c for w, c in zip(d.weight, chain, strict=True))
        for n, (w, c) in enumerate(zip(d.weight, chain, strict=True)):
            deadline[n] = max(c, min(d.horizon, (upper - (total - w * c)) // w))
    return JobWindows(fast, chain, deadline, tighten)


@dataclass(frozen=True)
class Variables:
    """The model's variables (see the module docstring); ``intervals`` by slot."""

    start: dict[Task, Any]
    present: dict[tuple[Task, int], Any]
    intervals: dict[int, list[Any]]
    finish: dict[Task, Any]
    barrier: dict[tuple[int, int], Any]
    completion: list[Any]
    slots: list[int]


def add_variables(
    cp: Any,
    d: ScaledData,
    instance: HareInstance,
    w: JobWindows,
    slots: list[int],
    deadline: Deadline = NEVER,
) -> Variables:
    """Every variable of the model, within the windows ``w``."""
    start = _starts(cp, d, instance, w)
    present, intervals, finish = _placements(cp, d, instance, start, slots, deadline)
    barrier, completion = _rounds(cp, d, instance, w, deadline)
    return Variables(start, present, intervals, finish, barrier, completion, slots)


def _starts(cp: Any, d: ScaledData, instance: HareInstance, w: JobWindows) -> dict[Task, Any]:
    """x_i within [a_n + r * fastest round, deadline - remaining rounds]: (4) in the domains."""
    start = {}
    for i in instance.tasks:
        n, r, _ = i
        lo = d.arrival[n] + (r * w.fast[n] if w.tighten else 0)
        hi = w.deadline[n] - ((instance.jobs[n].rounds - r) * w.fast[n] if w.tighten else 0)
        start[i] = cp.new_int_var(lo, max(lo, hi), f"x{i}")
    return start


def _placements(
    cp: Any,
    d: ScaledData,
    instance: HareInstance,
    start: dict[Task, Any],
    slots: list[int],
    deadline: Deadline,
) -> tuple[dict, dict, dict]:
    """y_{i,m}, the optional training interval of task i on slot m, and each task's finish
    (training + sync on the slot it is placed on)."""
    present: dict[tuple[Task, int], Any] = {}
    intervals: dict[int, list[Any]] = {m: [] for m in slots}
    finish: dict[Task, Any] = {}
    for i in instance.tasks:
        in_time(deadline)
        n = i[0]
        for m in slots:
            lit = present[(i, m)] = cp.new_bool_var(f"y{i},{m}")
            intervals[m].append(
                cp.new_optional_fixed_size_interval_var(start[i], d.tc[n][m], lit, f"iv{i},{m}")
            )
        finish[i] = start[i] + sum((d.tc[n][m] + d.ts[n][m]) * present[(i, m)] for m in slots)
    return present, intervals, finish


def _rounds(
    cp: Any, d: ScaledData, instance: HareInstance, w: JobWindows, deadline: Deadline
) -> tuple[dict[tuple[int, int], Any], list[Any]]:
    """A barrier per (job, round >= 1), at or after the fastest rounds before it, and C_n,
    at or after the chain bound, both at most the job's deadline."""
    barrier: dict[tuple[int, int], Any] = {}
    completion = []
    for n, job in enumerate(instance.jobs):
        in_time(deadline)
        for r in range(1, job.rounds):
            lo = d.arrival[n] + (r * w.fast[n] if w.tighten else 0)
            barrier[(n, r)] = cp.new_int_var(lo, max(lo, w.deadline[n]), f"b{n},{r}")
        lo = w.chain[n] if w.tighten else d.arrival[n]
        completion.append(cp.new_int_var(lo, max(lo, w.deadline[n]), f"C{n}"))
    return barrier, completion


__all__ = ["BuildTimeUp", "JobWindows", "Variables", "add_variables", "gpu_classes", "job_windows"]
