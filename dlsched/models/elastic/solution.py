"""Schedules of the elastic family (seed 003). Only :mod:`.check` decides whether they are
feasible and what they cost."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from dlsched import answers as a

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


#: What a rule of the family returns, as its error names it.
FORM = "an ElasticSchedule or {'jobs': {job: {'start', 'worker_type', 'workers', ...}}}"


def solution_from_json(instance: ElasticInstance, data: Any, source: str) -> ElasticSchedule:
    """A user's answer as an :class:`ElasticSchedule`: one itself, or ``{"jobs": {job: its
    run}}`` (``dlsched solve --json``'s ``solution``), each run ``{"start", "worker_type",
    "workers": {server: count}}`` with, under a parameter server, ``"ps_type"`` and ``"ps":
    {server: count}`` (types and servers by name or index); ``duration`` (or ``end``) may be
    left out: the fewest slots that train the job (2f). UserCodeError naming the field if
    malformed."""
    if isinstance(data, ElasticSchedule):
        return data
    given = a.answer(source, data, "elastic", FORM)
    jobs = a.mapping(source, "jobs", a.get(source, "", given, "jobs"))
    names = [j.name for j in instance.jobs]
    out = [
        _run(instance, source, a.index(source, f"jobs.{job}", job, names, "job"), run)
        for job, run in jobs.items()
    ]
    return ElasticSchedule.of(out)


def _run(inst: ElasticInstance, source: str, j: int, raw: Any) -> JobSchedule:
    """Job ``j``'s run read from the answer."""
    from dlsched.models.elastic.instance import duration

    f = f"jobs.{inst.jobs[j].name}"
    entry = a.mapping(source, f, raw)
    servers = [s.name for s in inst.servers]
    start = a.integer(source, f"{f}.start", a.get(source, f, entry, "start"))
    types = [t.name for t in inst.worker_types]
    m = a.index(source, f"{f}.worker_type", a.get(source, f, entry, "worker_type"), types, "type")
    by = a.counts(source, f"{f}.workers", a.get(source, f, entry, "workers"), servers, "server")
    workers = tuple(a.integer(source, f"{f}.workers", by.get(h, 0)) for h in range(len(servers)))
    p, ps = 0, (0,) * len(servers)
    if inst.is_ps:
        kinds = [t.name for t in inst.ps_types]
        p = a.index(source, f"{f}.ps_type", a.get(source, f, entry, "ps_type"), kinds, "PS type")
        by = a.counts(source, f"{f}.ps", a.get(source, f, entry, "ps"), servers, "server")
        ps = tuple(a.integer(source, f"{f}.ps", by.get(h, 0)) for h in range(len(servers)))
    d = entry.get("duration")
    if d is None and entry.get("end") is not None:
        d = a.integer(source, f"{f}.end", entry["end"]) - start
    if d is None:
        e = JobSchedule(j, start, 1, m, p, workers, ps)
        n = max(e.num_workers, 1)
        d = duration(inst, j, m, p if inst.is_ps else None, n, e.colocated())
    d = a.integer(source, f"{f}.duration", d, 1)
    return JobSchedule(j, start, d, m, p, workers, ps)
