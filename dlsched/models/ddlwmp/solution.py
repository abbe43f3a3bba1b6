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


__all__ = ["JobMapping", "PooledSchedule", "Schedule", "pooled"]
