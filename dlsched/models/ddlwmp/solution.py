"""Solutions of the ddlwmp family. Only :mod:`dlsched.models.ddlwmp.check` decides whether they
are feasible and what they cost.

- :class:`JobMapping`: one placement per job on the free GPUs (the mapping methods);
- :class:`Schedule`: a start time (seconds, on the slot grid) and a placement per job
  (problem (8));
- :class:`PooledSchedule`: a start time per job on the pooled cluster (one pool of the G
  GPUs, each job run for n_i alpha~_i^min whatever its servers): the model of PAI's own
  simulator, which the online policies run with ``pooled=true``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from dlsched import answers
from dlsched.models.ddlwmp.alpha import Placement

if TYPE_CHECKING:
    from dlsched.models.ddlwmp.instance import DdlwmpInstance


def _rows(p: Placement, lists: dict[Any, Any] | None = None) -> dict[str, list[int]]:
    """A placement as JSON: ``{server: counts}``; ``lists`` keeps one server name and one
    list of counts for equal ones (a schedule of 150,000 jobs repeats them)."""
    if lists is None:
        return {str(m): list(row) for m, row in p}
    out = {}
    for m, row in p:
        name = lists.get(m) or lists.setdefault(m, str(m))
        out[name] = lists.get(row) or lists.setdefault(row, list(row))
    return out


@dataclass(frozen=True)
class JobMapping:
    """``placements[i]``: job i's GPUs per server and stage, all jobs on the same free GPUs."""

    placements: tuple[Placement, ...]

    def to_json(self, instance: DdlwmpInstance) -> dict[str, Any]:
        return {
            "placements": {
                j.name: _rows(p) for j, p in zip(instance.jobs, self.placements, strict=True)
            }
        }


@dataclass(frozen=True)
class Schedule:
    """``starts[i]`` (seconds) and ``placements[i]`` of every job."""

    starts: tuple[float, ...]
    placements: tuple[Placement, ...]

    def to_json(self, instance: DdlwmpInstance) -> dict[str, Any]:
        rows: dict[Placement, dict[str, list[int]]] = {}  # equal placements written once
        lists: dict[Any, Any] = {}
        return {
            "jobs": {
                j.name: {
                    "start": t,
                    "placement": rows.get(p) or rows.setdefault(p, _rows(p, lists)),
                }
                for j, t, p in zip(instance.jobs, self.starts, self.placements, strict=True)
            }
        }


@dataclass(frozen=True)
class PooledSchedule(Schedule):
    """``starts[i]`` (seconds) of every job on the pooled cluster; no placements (each is
    ``()``): :func:`pooled` makes one."""

    def to_json(self, instance: DdlwmpInstance) -> dict[str, Any]:
        return {
            "cluster": "pooled",
            "jobs": {j.name: {"start": t} for j, t in zip(instance.jobs, self.starts, strict=True)},
        }


def pooled(starts: tuple[float, ...]) -> PooledSchedule:
    """The pooled schedule of these starts."""
    return PooledSchedule(starts, ((),) * len(starts))


#: What a rule of the family returns, as its error names it.
FORM = "a Schedule or {'jobs': {job: {'start', 'placement': {server: [GPUs per stage]}}}}"


def solution_from_json(instance: DdlwmpInstance, data: Any, source: str) -> JobMapping | Schedule:
    """A user's answer as a solution of the family: one itself, or the forms ``dlsched solve
    --json`` prints under ``solution`` (jobs by name or index, servers by index):
    ``{"jobs": {job: {"start": seconds, "placement": {server: [GPUs of each stage]}}}}``, a
    :class:`Schedule` of problem (8); ``{"cluster": "pooled", "jobs": {job: {"start":
    seconds}}}``, a :class:`PooledSchedule`; ``{"placements": {job: {server: [...]}}}``, a
    :class:`JobMapping`. UserCodeError naming the field if malformed."""
    if isinstance(data, JobMapping | Schedule):
        return data
    entry = answers.answer(source, data, "ddlwmp", FORM)
    if "placements" in entry and "jobs" not in entry:
        given = _by_job(instance, source, "placements", entry["placements"])
        return JobMapping(tuple(_placement(instance, source, f, p) for f, p in given))
    pooled_cluster = entry.get("cluster") == "pooled"
    starts, placements = [], []
    for f, run in _by_job(instance, source, "jobs", answers.get(source, "", entry, "jobs")):
        job = answers.mapping(source, f, run)
        starts.append(answers.number(source, f"{f}.start", answers.get(source, f, job, "start")))
        if not pooled_cluster:
            raw = answers.get(source, f, job, "placement")
            placements.append(_placement(instance, source, f"{f}.placement", raw))
    if pooled_cluster:
        return pooled(tuple(starts))
    return Schedule(tuple(starts), tuple(placements))


def _by_job(instance: DdlwmpInstance, source: str, field: str, value: Any) -> list[Any]:
    """(field name, value) of every job in the instance's order; UserCodeError if a job is
    missing or unknown."""
    names = [j.name for j in instance.jobs]
    given: dict[int, Any] = {}
    for key, v in answers.mapping(source, field, value).items():
        given[answers.index(source, f"{field}.{key}", key, names, "job")] = v
    missing = next((n for i, n in enumerate(names) if i not in given), None)
    if missing is not None:
        raise answers.wrong(source, f"{field}.{missing}", None, "missing: every job needs one")
    return [(f"{field}.{names[i]}", given[i]) for i in range(len(names))]


def _placement(instance: DdlwmpInstance, source: str, field: str, value: Any) -> Placement:
    """``{server: [GPUs of each stage]}`` as a :data:`Placement` (servers in order; rows of
    zeros left out)."""
    servers = [str(m) for m in range(instance.cluster.servers)]
    rows = answers.counts(source, field, value, servers, "server")
    out = []
    for m in sorted(rows):
        row = answers.items(source, f"{field}.{m}", rows[m])
        counts = tuple(answers.integer(source, f"{field}.{m}[{s}]", x) for s, x in enumerate(row))
        if any(counts):
            out.append((m, counts))
    return tuple(out)


__all__ = ["JobMapping", "PooledSchedule", "Schedule", "pooled", "solution_from_json"]
