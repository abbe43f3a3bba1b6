"""The hare family's programs for :func:`dlsched.model` (its ``programs`` part): Hare_Sched
(4)-(8), its relaxation Hare_Sched_RL (9), (4)-(7), and GPU_Grouping (4)-(6) of the TCC 2024
paper. Their equations are :data:`.model.SCHED_EQUATIONS`, :data:`.model.RL_EQUATIONS` and
:data:`.online.grouping.GROUPING_EQUATIONS`, beside the builders."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dlsched.errors import InfeasibleSolutionError
from dlsched.models.program import Program, ProgramInfo

#: A push of the decoded starts up to this share of the horizon is the solver's feasibility
#: tolerance and is removed; a larger one means the answer breaks (4), (7) or (8) itself.
REPAIR = 1e-6


def _hare_sched(instance: Any, horizon: float | None = None) -> Any:
    from dlsched.models.hare.model import build_exact_gdp

    return build_exact_gdp(instance, horizon)


def _relaxation(instance: Any, horizon: float | None = None) -> Any:
    from dlsched.models.hare.model import build_relaxation

    return build_relaxation(instance, "pairs", horizon)


def _schedule(instance: Any, m: Any, values: Mapping[str, float]) -> Any:
    """The model's schedule; starts pushed later only as far as the solver's tolerance
    (:data:`REPAIR`), so an answer that breaks (4), (7) or (8) reaches the checker as it is."""
    from dlsched.models.hare.common import push_to_feasible
    from dlsched.models.hare.model import decode

    raw = decode(m, values)
    tasks = {e.task for e in raw.entries}
    if len(tasks) != len(raw.entries) or len(tasks) != instance.num_tasks:
        return raw  # a task on no GPU or on two: the checker names (5)
    pushed, shift = push_to_feasible(instance, raw)
    return pushed if shift <= REPAIR * max(1.0, instance.horizon()) else raw


def _big_m(m: Any) -> Any:
    """A big-M copy of a pyomo.gdp model (the one a student changed stays as it is)."""
    from dlsched.models.hare.model import to_milp

    return to_milp(m.clone())


def _grouping(instance: Any, groups: int | None = None) -> Any:
    """GPU_Grouping with the paper's binary z[m, u] over the instance's job profiles, ``groups``
    groups (default ceil(|M| / 4))."""
    from dlsched.models.hare.online.grouping import (
        build_grouping_model,
        check_groups,
        default_groups,
        speed_matrix,
    )

    u = check_groups(
        instance.num_gpus, default_groups(instance.num_gpus) if groups is None else groups
    )
    return build_grouping_model(speed_matrix(instance), u)


@dataclass(frozen=True)
class GpuGrouping:
    """GPU_Grouping's answer: ``groups[u]`` the GPU indices of group u."""

    groups: tuple[tuple[int, ...], ...]

    def to_json(self, instance: Any) -> dict[str, Any]:
        return {"groups": [[instance.gpus[g] for g in grp] for grp in self.groups]}


def _groups(instance: Any, m: Any, values: Mapping[str, float]) -> GpuGrouping:
    """Group u holds every GPU whose z[m, u] is above 1/2 (a GPU may be in none or several
    when (4) is dropped: the checker then says so)."""
    return GpuGrouping(
        tuple(tuple(g for g in m.GPUS if values.get(m.z[g, u].name, 0.0) > 0.5) for u in m.GROUPS)
    )


def _spread(instance: Any, grouping: GpuGrouping) -> float:
    """The checker of a grouping: a partition of the GPUs into non-empty groups (4), its
    spread max_n (p_n^max - p_n^min) (5)-(6) from the instance's own speeds."""
    from dlsched.models.hare.online.grouping import speed_matrix, spread

    try:
        return spread(speed_matrix(instance), grouping.groups)
    except ValueError as e:
        raise InfeasibleSolutionError(
            f"instance '{instance.name}': GPU groups {list(grouping.groups)}: {e} (4)"
        ) from None


PROGRAMS = (
    Program(
        ProgramInfo(
            "hare-sched",
            "hare",
            "(4)-(8)",
            "Hare_Sched: task starts x, GPUs y, completions C; (8) as a disjunction per "
            "task pair and GPU (pyomo.gdp, big-M when solved)",
        ),
        _hare_sched,
        "dlsched.models.hare.model:SCHED_EQUATIONS",
        _schedule,
        ties="(6)",
        params=("horizon",),
        prepare=_big_m,
    ),
    Program(
        ProgramInfo(
            "hare-sched-rl",
            "hare",
            "(9), (4)-(7)",
            "Hare_Sched_RL: (8) replaced by Queyranne's inequality per GPU (9), linearized "
            "exactly; a lower bound on Hare_Sched (no schedule)",
        ),
        _relaxation,
        "dlsched.models.hare.model:RL_EQUATIONS",
        None,
        params=("horizon",),
    ),
    Program(
        ProgramInfo(
            "gpu-grouping",
            "hare",
            "(4)-(6) (TCC 2024)",
            "GPU_Grouping: the GPUs in groups=|U| groups, min the largest speed spread "
            "max_n (p_n^max - p_n^min) (binary z[m, u], the paper's model)",
        ),
        _grouping,
        "dlsched.models.hare.online.grouping:GROUPING_EQUATIONS",
        _groups,
        ties="(5)-(6)",
        params=("groups",),
        check=_spread,
    ),
)

__all__ = ["PROGRAMS", "REPAIR", "GpuGrouping"]
