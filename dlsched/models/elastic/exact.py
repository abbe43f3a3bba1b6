"""Program (2)/(15) solved exactly as the packing ILP (8)/(17) over enumerated Gamma_j.

Zhou et al., Section 5.1: with every feasible schedule l of job j a column x_jl, the
minimization (2)/(15) is "exactly one schedule per job" (2a) under per-slot, per-server,
per-resource capacities (8a)/(17a), with objective sum_j w_j (t_l + d_l). Its LP relaxation
(x_jl in [0, 1]) is a lower bound; the columns are those of :mod:`.enumerate` or a subset
(column generation, :mod:`.colgen`); :func:`schedule_of` is the schedule of chosen columns.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from dlsched.models.elastic.enumerate import Config, Gamma
from dlsched.models.elastic.instance import ElasticInstance
from dlsched.models.elastic.solution import ElasticSchedule

if TYPE_CHECKING:
    from dlsched.solvers.pyomo_env import pyo


@dataclass(frozen=True)
class Column:
    """Schedule l of a job: configuration ``config`` started at ``start``."""

    config: Config
    start: int

    @property
    def job(self) -> int:
        return self.config.job

    @property
    def end(self) -> int:
        return self.start + self.config.duration

    def cost(self, inst: ElasticInstance) -> float:
        """w_j c_j, the column's term of objective (2)."""
        return inst.jobs[self.job].weight * self.end


def all_columns(inst: ElasticInstance, gammas: Sequence[Gamma]) -> list[Column]:
    return [Column(c, t) for g in gammas for c in g.configs for t in c.starts(inst)]


def schedule_of(columns: Sequence[Column], chosen: Sequence[int]) -> ElasticSchedule:
    """The schedule of the ``chosen`` columns (indices into ``columns``), one entry each."""
    return ElasticSchedule.of(columns[k].config.at(columns[k].start) for k in chosen)


def _capacity_terms(
    inst: ElasticInstance, columns: Sequence[Column]
) -> dict[tuple[int, int, int], list[tuple[int, float]]]:
    """(t, h, r) -> [(column index, f_jh^r(l))] over the columns running in slot t."""
    terms: dict[tuple[int, int, int], list[tuple[int, float]]] = defaultdict(list)
    for k, col in enumerate(columns):
        hs, rs = col.config.usage.nonzero()
        for h, r in zip(hs.tolist(), rs.tolist(), strict=True):
            amount = float(col.config.usage[h, r])
            for t in range(col.start, col.end):
                terms[(t, h, r)].append((k, amount))
    return terms


def _binding(inst: ElasticInstance, terms: dict, key: tuple[int, int, int]) -> bool:
    """Whether the columns of a (t, h, r) row can exceed its capacity together."""
    _, h, r = key
    return sum(a for _, a in terms[key]) > inst.servers[h].capacity[r] * (1 + 1e-12)


#: The equation each component of :func:`build_packing` states (its ``doc``).
PACKING_EQUATIONS = {
    "one_schedule": "(2a), (8b)/(17b) as equality: exactly one schedule per job",
    "capacity": "(8a)/(17a), equivalent to (2h)/(15b): capacity per slot, server and resource",
    "weighted_completion": "(2)/(15): min sum_j w_j c_j",
}


def build_packing(
    inst: ElasticInstance,
    columns: Sequence[Column],
    *,
    relax: bool = False,
    penalty: float | None = None,
) -> pyo.ConcreteModel:
    """ILP (8)/(17) in its minimization form over ``columns`` (LP relaxation if ``relax``).

    Rows that no combination of columns can violate are left out. With ``penalty``, each job
    also has an artificial column ``art[j]`` of that cost using no resource (a restricted master
    of column generation stays feasible).
    """
    from dlsched.solvers.pyomo_env import (
        pyo,  # when a model is built (the heuristics import this module)
    )

    m = pyo.ConcreteModel(name=f"elastic-packing-{inst.name}")
    m.COLS = pyo.RangeSet(0, len(columns) - 1)
    m.JOBS = pyo.RangeSet(0, inst.num_jobs - 1)
    domain = pyo.UnitInterval if relax else pyo.Binary
    m.x = pyo.Var(m.COLS, domain=domain, bounds=(0, 1))
    by_job: dict[int, list[int]] = defaultdict(list)
    for k, col in enumerate(columns):
        by_job[col.job].append(k)
    terms = _capacity_terms(inst, columns)
    rows = sorted(key for key in terms if _binding(inst, terms, key))
    m.ROWS = pyo.Set(initialize=rows, dimen=3)

    m.art = pyo.Var(m.JOBS, bounds=(0, 1 if penalty is not None else 0))

    @m.Constraint(m.JOBS, doc=PACKING_EQUATIONS["one_schedule"])
    def one_schedule(m, j):  # (2a) with (8b)/(17b) as equality
        return sum(m.x[k] for k in by_job[j]) + m.art[j] == 1

    @m.Constraint(m.ROWS, doc=PACKING_EQUATIONS["capacity"])
    def capacity(m, t, h, r):  # (8a)/(17a), equivalent to (2h)/(15b)
        return sum(a * m.x[k] for k, a in terms[(t, h, r)]) <= inst.servers[h].capacity[r]

    artificial = sum(m.art[j] for j in m.JOBS) * (penalty or 0.0)
    m.weighted_completion = pyo.Objective(  # (2)/(15)
        expr=sum(col.cost(inst) * m.x[k] for k, col in enumerate(columns)) + artificial,
        sense=pyo.minimize,
        doc=PACKING_EQUATIONS["weighted_completion"],
    )
    return m
