"""Schedules of the elastic family (seed 003). Only :mod:`.check` decides whether they are
feasible and what they cost."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from dlsched.models.elastic.instance import ElasticInstance


@dataclass(frozen=True)
class JobSchedule:
    """One job's schedule l: it starts at slot ``start`` (x_jt = 1) and runs ``duration`` slots
    (d_j) with ``workers[h]`` workers of type ``worker_type`` (y_jhm) and ``ps[h]`` parameter
    servers of type ``ps_type`` (s_jhp) on server h. Under Ring-AllReduce ``ps`` is all zero
    and ``ps_type`` is 0 (unused)."""

    job: int
    start: int
    duration: int
    worker_type: int
    ps_type: int
    workers: tuple[int, ...]
    ps: tuple[int, ...]

    @property
    def end(self) -> int:
        """Completion time t + d_j."""
        return self.start + self.duration

    @property
    def num_workers(self) -> int:
        return sum(self.workers)

    def colocated(self) -> bool:
        """q_j of (2d)/(15a): every worker and PS of the job is on one server."""
        used = {h for h, n in enumerate(self.workers) if n}
        used |= {h for h, n in enumerate(self.ps) if n}
        return len(used) <= 1


@dataclass(frozen=True)
class ElasticSchedule:
    """A schedule of every job of an instance."""

    entries: tuple[JobSchedule, ...]

    @classmethod
    def of(cls, items: Iterable[JobSchedule]) -> ElasticSchedule:
        return cls(tuple(sorted(items, key=lambda e: (e.job, e.start))))

    def to_json(self, instance: ElasticInstance) -> dict[str, Any]:
        """``{"jobs": {job name: its schedule}}``."""
        return {"jobs": {instance.jobs[e.job].name: _entry(instance, e) for e in self.entries}}

    def to_frame(self, instance: ElasticInstance) -> pd.DataFrame:
        import pandas as pd

        return pd.DataFrame([_entry(instance, e) for e in self.entries])


def _entry(inst: ElasticInstance, e: JobSchedule) -> dict[str, Any]:
    names = [s.name for s in inst.servers]
    out: dict[str, Any] = {
        "job": inst.jobs[e.job].name,
        "start": e.start,
        "duration": e.duration,
        "end": e.end,
        "worker_type": inst.worker_types[e.worker_type].name,
        "workers": {names[h]: n for h, n in enumerate(e.workers) if n},
    }
    if inst.is_ps:
        out["ps_type"] = inst.ps_types[e.ps_type].name
        out["ps"] = {names[h]: n for h, n in enumerate(e.ps) if n}
    return out


#: What every heuristic returns: its schedule (None when some job got none) and its details.
Run = tuple[ElasticSchedule | None, dict[str, Any]]
