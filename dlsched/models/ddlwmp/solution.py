"""Solutions of the ddlwmp family. Only :mod:`dlsched.models.ddlwmp.check` decides whether they
are feasible and what they cost.

- :class:`JobMapping`: one placement per job on the free GPUs (the mapping methods);
- :class:`Schedule`: a start time (seconds, on the slot grid) and a placement per job
  (problem (8)).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from dlsched.models.ddlwmp.alpha import Placement

if TYPE_CHECKING:
    from dlsched.models.ddlwmp.instance import DdlwmpInstance


def _rows(p: Placement) -> dict[str, list[int]]:
    return {str(m): list(row) for m, row in p}


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
        return {
            "jobs": {
                j.name: {"start": t, "placement": _rows(p)}
                for j, t, p in zip(instance.jobs, self.starts, self.placements, strict=True)
            }
        }


__all__ = ["JobMapping", "Schedule"]
