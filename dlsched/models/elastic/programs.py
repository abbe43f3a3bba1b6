"""The elastic family's programs for :func:`dlsched.model` (its ``programs`` part): (2)/(15)
as the packing ILP (8)/(17), and problem (13)/(21) that Algorithms 4-7 solve. Their equations
are :data:`.exact.PACKING_EQUATIONS` and :data:`.problem13.EQUATIONS`, beside the builders.
Program (2)/(15) has no builder of its own: ``elastic-packing`` is its exact equivalent over
every schedule of Gamma_j."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from dlsched.models.program import Program, ProgramInfo


def _packing(instance: Any, max_configs: int | None = None) -> Any:
    """ILP (8)/(17) over every schedule of every job (Gamma_j enumerated, dominance applied)."""
    from dlsched.models.elastic.enumerate import MAX_CONFIGS, enumerate_all
    from dlsched.models.elastic.exact import all_columns, build_packing

    columns = all_columns(instance, enumerate_all(instance, max_configs or MAX_CONFIGS))
    m = build_packing(instance, columns)
    m._columns = columns  # decoding needs each column's schedule
    return m


def _schedule(instance: Any, m: Any, values: Mapping[str, float]) -> Any:
    from dlsched.models.elastic.exact import schedule_of

    chosen = [k for k in m.COLS if values.get(m.x[k].name, 0.0) > 0.5]
    return schedule_of(m._columns, chosen)


def _rows(value: Sequence[Sequence[float]] | None, default: Any) -> tuple[tuple[float, ...], ...]:
    import numpy as np

    table = default if value is None else np.array(value, dtype=float)
    return tuple(tuple(float(x) for x in row) for row in table)


def _problem13(
    instance: Any,
    m: int = 0,
    p: int = 0,
    n: int = 1,
    q: bool = False,
    prices: Sequence[Sequence[float]] | None = None,
    free: Sequence[Sequence[float]] | None = None,
) -> Any:
    """Problem (13)/(21) for worker type ``m``, PS type ``p``, ``n`` workers, colocation
    ``q``, the prices summed over the window ``prices`` [h][r] (default 1 a unit) and the free
    capacity ``free`` [h][r] (default every server's capacity)."""
    import numpy as np

    from dlsched.models.elastic.problem13 import Case, build_problem13

    shape = (instance.num_servers, len(instance.resources))
    cap = np.array([s.capacity for s in instance.servers], dtype=float)
    case = Case(m, p, n, bool(q), _rows(prices, np.ones(shape)), _rows(free, cap))
    md = build_problem13(instance, m, p, n, case.q, np.array(case.prices), np.array(case.free))
    md._case = case  # decoding keeps what the placement answers
    return md


def _placement(instance: Any, md: Any, values: Mapping[str, float]) -> Any:
    from dlsched.models.elastic.problem13 import MinCostPlacement

    def count(v: Any) -> int:
        return round(values.get(v.name, 0.0))

    return MinCostPlacement(
        md._case,
        tuple(count(md.y[h]) for h in md.SERVERS),
        tuple(count(md.s[h]) for h in md.SERVERS),
    )


def _cost(instance: Any, placement: Any) -> float:
    from dlsched.models.elastic.problem13 import check_problem13

    return check_problem13(instance, placement)


PROGRAMS = (
    Program(
        ProgramInfo(
            "elastic-packing",
            "elastic",
            "(8)/(17), (2)/(15)",
            "program (2)/(15) as the packing ILP (8)/(17) over every schedule of "
            "Gamma_j: exactly one per job, capacity per slot, server and resource",
        ),
        _packing,
        "dlsched.models.elastic.exact:PACKING_EQUATIONS",
        _schedule,
        ties="(2)/(15)",
        exact_objective=True,
        params=("max_configs",),
    ),
    Program(
        ProgramInfo(
            "elastic-13",
            "elastic",
            "(13), (13a)-(13f) / (21)",
            "problem (13) (PS) or (21) (Ring-AllReduce): the cheapest placement of n workers "
            "of type m (and PSs of type p) on the free capacity for fixed L and t^-, which "
            "Algorithms 4-7 solve (Theorems 1 and 6)",
        ),
        _problem13,
        "dlsched.models.elastic.problem13:EQUATIONS",
        _placement,
        ties="(13)/(21)",
        exact_objective=True,
        params=("m", "p", "n", "q", "prices", "free"),
        check=_cost,
    ),
)

__all__ = ["PROGRAMS"]
