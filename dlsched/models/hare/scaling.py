"""Integer data for the exact hare routes: the one place where times and weights are scaled.

CP-SAT and the time-indexed models need integers. Times (arrivals, T^c, T^s) are multiplied by
the smallest power of ten that makes them all integral, weights likewise; when no power up to
:data:`MAX_TIME_SCALE` does, times are rounded *up* (``exact`` False): the model is then a
restriction, whose schedules are feasible but whose bounds bound nothing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dlsched.errors import InstanceError
from dlsched.models.hare.instance import HareInstance
from dlsched.models.hare.solution import TaskSchedule

#: Largest scaled objective the integer models accept (CP-SAT works in 64-bit integers;
#: 2^53 keeps every value exact in a double too).
MAX_SCALED = 2**53

#: Largest power of ten tried to make the times (or the weights) integral.
MAX_TIME_SCALE = 10**6


def power_of_ten_scale(values: list[float], cap: int = MAX_TIME_SCALE) -> tuple[int, bool]:
    """Smallest power of ten s <= cap with s * v integral for all v; (cap, False) if none
    (v * s within 1e-9 relative of its nearest integer; numpy, one pass per power)."""
    arr = np.asarray(values, dtype=float)
    s = 1
    while s <= cap:
        v = arr * s
        if np.all(np.abs(v - np.round(v)) <= 1e-9 * np.maximum(1.0, np.abs(v))):
            return s, True
        s *= 10
    return cap, False


def time_values(instance: HareInstance) -> list[float]:
    out = [j.arrival for j in instance.jobs]
    for j in instance.jobs:
        out.extend(j.train_time)
        out.extend(j.sync_time)
    return out


@dataclass(frozen=True)
class ScaledData:
    """Integer data for CP-SAT: ``time_scale`` * time, ``weight_scale`` * weight."""

    time_scale: int
    weight_scale: int
    exact: bool
    tc: tuple[tuple[int, ...], ...]
    ts: tuple[tuple[int, ...], ...]
    arrival: tuple[int, ...]
    weight: tuple[int, ...]
    horizon: int

    @property
    def unit(self) -> int:
        """The integer objective's units per original unit: ``time_scale * weight_scale``."""
        return self.time_scale * self.weight_scale


def scale_data(instance: HareInstance) -> ScaledData:
    s, exact_t = power_of_ten_scale(time_values(instance))
    w, exact_w = power_of_ten_scale([j.weight for j in instance.jobs])

    def up(v: np.ndarray) -> list:
        """Times scaled to integers (rounded, or up when no power was exact), as Python ints."""
        scaled = np.rint(v * s) if exact_t else np.ceil(v * s - 1e-9)
        return scaled.astype(np.int64).tolist()

    tc = tuple(map(tuple, up(instance.tc)))
    ts = tuple(map(tuple, up(instance.ts)))
    arrival = tuple(up(np.array([j.arrival for j in instance.jobs], dtype=float)))
    weight = tuple(max(1, int(round(j.weight * w))) for j in instance.jobs)
    work = sum(
        max(a + b for a, b in zip(tc[n], ts[n], strict=True)) * j.rounds * j.tasks_per_round
        for n, j in enumerate(instance.jobs)
    )
    horizon = max(arrival) + work
    if horizon * max(weight) * len(weight) > MAX_SCALED:
        raise InstanceError(
            instance.name,
            "jobs",
            f"horizon {horizon} x weight scale {w}",
            "too large for the exact routes' 64-bit integer model (round the times or weights "
            "to fewer decimals, or shorten the instance)",
        )
    return ScaledData(s, w, exact_t and exact_w, tc, ts, arrival, weight, horizon)


def scaled_objective(built_data: ScaledData, instance: HareInstance, schedule: TaskSchedule) -> int:
    """The schedule's objective in the model's integer units (exact data only)."""
    from dlsched.models.hare.check import check_schedule  # the checker imports nothing of ours

    ev = check_schedule(instance, schedule)
    return sum(
        w * int(round(c * built_data.time_scale))
        for w, c in zip(built_data.weight, ev.completion, strict=True)
    )


def scaled_bound(value: float, unit: int) -> int:
    """A proven bound in the original units as a bound in integer objective units (the value
    times ``unit`` is an integer up to round-off when it comes from a CP-SAT run or a rounded-up
    LP bound of a sub-instance, whose units divide ``unit``)."""
    v = value * unit
    return math.ceil(v - 1e-6 * max(1.0, abs(v)))


def objective_unit(d: ScaledData) -> float | None:
    """The lattice of the optimum: with times and weights integral after exact scaling, some
    optimal (left-justified) schedule has every completion time a sum of data, so the optimum
    is an integer multiple of ``1 / (time_scale * weight_scale)``. None if the scaling was not
    exact."""
    return 1.0 / (d.time_scale * d.weight_scale) if d.exact else None
