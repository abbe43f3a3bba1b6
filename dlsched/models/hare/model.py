"""Pyomo builders for Hare_Sched (4)-(8) and its relaxation Hare_Sched_RL (9), (4)-(7).

Chen et al., *Hare: Exploiting Inter-job and Intra-job Parallelism of Distributed Machine
Learning on Heterogeneous GPUs*, HPDC 2022, Section 5. Relaxation (9) is Queyranne's
single-machine inequality (M. Queyranne, *Structure of a simple scheduling polyhedron*, Math.
Programming 58, 1993) written once per GPU over all tasks.

Index sets: ``JOBS`` (n), ``GPUS`` (m), ``TASKS`` (n, r, k): job, round, index in the round.
Variables: x[i] start (4), y[i, m] assignment (5), C[n] completion (6). Every variable has
finite bounds from :meth:`HareInstance.horizon`.

The builders never solve; :func:`to_milp` applies the big-M transformation of ``pyomo.gdp``
and :func:`decode` reads a solved model's schedule back.
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import combinations

from dlsched.models.hare.instance import HareInstance, Task
from dlsched.models.hare.solution import TaskSchedule
from dlsched.models.program import symmetry_breaking
from dlsched.solvers.pyomo_env import Disjunction, pyo

#: The equation each component of :func:`_base` states (its ``doc``), shared by Hare_Sched and
#: Hare_Sched_RL.
BASE_EQUATIONS = {
    "arrival": "(4): x_i >= a_n, no task starts before its job arrives",
    "assign_once": "(5): sum_m y_im = 1, every task on one GPU",
    "completion": "(6): C_n >= x_i + sum_m y_im (T^c_im + T^s_im) for every task of job n",
    "round_barrier": (
        "(7): round r + 1 starts after every task of round r finished, synchronization included"
    ),
    "identical_tasks_ordered": symmetry_breaking(
        "(4)-(8)", "the tasks of one round start in index order"
    ),
    "total_weighted_completion": "objective of Hare_Sched, stated above (4): min sum_n w_n C_n",
}
#: The equation each component of :func:`build_exact_gdp` states.
SCHED_EQUATIONS = {
    **BASE_EQUATIONS,
    "no_overlap": "(8): two tasks on one GPU do not overlap in training (a disjunction)",
}
_MCCORMICK = "(9), linearized: u[i, m] = y[i, m] x[i] (McCormick, exact for binary y)"
_PRODUCT = "(9), linearized: w[i, j, m] = y[i, m] y[j, m] (exact for binary y)"
#: The equation each component of :func:`build_relaxation` states.
RL_EQUATIONS = {
    **BASE_EQUATIONS,
    "queyranne": "(9): Queyranne's inequality over all tasks of each GPU",
    "u_upper_y": _MCCORMICK,
    "u_lower_y": _MCCORMICK,
    "u_upper_x": _MCCORMICK,
    "u_lower_x": _MCCORMICK,
    "w_lower": _PRODUCT,
    "w_upper_i": _PRODUCT,
    "w_upper_j": _PRODUCT,
    "subset_cuts": "(9) over subsets of a GPU's tasks (empty until separated)",
}


def _base(instance: HareInstance, horizon: float | None = None) -> pyo.ConcreteModel:
    """Variables, objective and the constraints (4)-(7) shared by Hare_Sched and RL."""
    jobs = instance.jobs
    hz = float(horizon if horizon is not None else instance.horizon())
    m = pyo.ConcreteModel(name=f"hare[{instance.name}]")
    m.JOBS = pyo.RangeSet(0, instance.num_jobs - 1)
    m.GPUS = pyo.RangeSet(0, instance.num_gpus - 1)
    m.TASKS = pyo.Set(initialize=list(instance.tasks), dimen=3, ordered=True)
    m.horizon = hz

    def tc(i: tuple[int, int, int], g: int) -> float:
        return float(jobs[i[0]].train_time[g])

    def ts(i: tuple[int, int, int], g: int) -> float:
        return float(jobs[i[0]].sync_time[g])

    m.tc, m.ts = tc, ts  # plain data accessors (not components)
    m.x = pyo.Var(m.TASKS, bounds=lambda _, n, r, k: (jobs[n].arrival, hz))
    m.y = pyo.Var(m.TASKS, m.GPUS, domain=pyo.Binary)
    m.C = pyo.Var(m.JOBS, bounds=lambda _, n: (jobs[n].arrival, hz))

    def finish(mm: pyo.ConcreteModel, i: tuple[int, int, int]) -> pyo.Expression:
        return mm.x[i] + sum(mm.y[i, g] * (tc(i, g) + ts(i, g)) for g in mm.GPUS)

    m.finish = pyo.Expression(m.TASKS, rule=lambda mm, n, r, k: finish(mm, (n, r, k)))

    @m.Constraint(m.TASKS, doc=BASE_EQUATIONS["arrival"])
    def arrival(mm, n, r, k):  # (4)
        return mm.x[n, r, k] >= jobs[n].arrival

    @m.Constraint(m.TASKS, doc=BASE_EQUATIONS["assign_once"])
    def assign_once(mm, n, r, k):  # (5)
        return sum(mm.y[n, r, k, g] for g in mm.GPUS) == 1

    @m.Constraint(m.TASKS, doc=BASE_EQUATIONS["completion"])
    def completion(mm, n, r, k):  # (6)
        return mm.C[n] >= mm.finish[n, r, k]

    barrier_pairs = [
        ((n, r, k), (n, r + 1, k2))
        for n, j in enumerate(jobs)
        for r in range(j.rounds - 1)
        for k in range(j.tasks_per_round)
        for k2 in range(j.tasks_per_round)
    ]
    m.BARRIER_PAIRS = pyo.Set(initialize=barrier_pairs, dimen=6, ordered=True)

    @m.Constraint(m.BARRIER_PAIRS, doc=BASE_EQUATIONS["round_barrier"])
    def round_barrier(mm, n, r, k, n2, r2, k2):  # (7)
        return mm.x[n2, r2, k2] >= mm.finish[n, r, k]

    sym = [
        (n, r, k)
        for n, j in enumerate(jobs)
        for r in range(j.rounds)
        for k in range(j.tasks_per_round - 1)
    ]
    m.SYM = pyo.Set(initialize=sym, dimen=3, ordered=True)

    @m.Constraint(m.SYM, doc=BASE_EQUATIONS["identical_tasks_ordered"])
    def identical_tasks_ordered(mm, n, r, k):  # symmetry breaking (not in the paper)
        return mm.x[n, r, k] <= mm.x[n, r, k + 1]

    m.total_weighted_completion = pyo.Objective(
        expr=sum(jobs[n].weight * m.C[n] for n in m.JOBS),
        sense=pyo.minimize,
        doc=BASE_EQUATIONS["total_weighted_completion"],
    )
    return m


def decode(model: pyo.ConcreteModel, values: Mapping[str, float]) -> TaskSchedule:
    """The schedule a solved model states: task i on every GPU m whose y[i, m] is above 1/2,
    from x[i] (a variable the solver was not given has no value: y counts as 0, x as NaN). Under
    (5) that is one GPU per task; a model without (5) gives a schedule the checker rejects."""
    return TaskSchedule.from_items(
        (i, g, values.get(model.x[i].name, float("nan")))
        for i in model.TASKS
        for g in model.GPUS
        if values.get(model.y[(*i, g)].name, 0.0) > 0.5
    )


def overlap_pairs(instance: HareInstance) -> list[tuple[Task, Task]]:
    """Task pairs that may compete for a GPU: tasks of one job in different rounds never do,
    because (7) already separates them by the training time of the earlier one."""
    return [
        (i, j) for i, j in combinations(instance.tasks, 2) if not (i[0] == j[0] and i[1] != j[1])
    ]


def build_exact_gdp(instance: HareInstance, horizon: float | None = None) -> pyo.ConcreteModel:
    """Hare_Sched (4)-(8) with (8) as disjunctions per (pair, GPU) (``pyomo.gdp``).

    For tasks i, j and GPU m: [not both on m] v [i trains before j] v [j trains before i].
    For two tasks of the same round of one job (ordered starts), the last disjunct is dropped.
    """
    m = _base(instance, horizon)
    pairs = overlap_pairs(instance)
    m.PAIRS = pyo.Set(initialize=[(*i, *j) for i, j in pairs], dimen=6, ordered=True)

    def no_overlap(mm, n1, r1, k1, n2, r2, k2, g):  # (8)
        i, j = (n1, r1, k1), (n2, r2, k2)
        disjuncts = [
            [mm.y[i, g] + mm.y[j, g] <= 1],  # not both on GPU g
            [mm.x[j] >= mm.x[i] + mm.tc(i, g)],  # i trains before j
        ]
        if not (n1 == n2 and r1 == r2):
            disjuncts.append([mm.x[i] >= mm.x[j] + mm.tc(j, g)])  # j trains before i
        return disjuncts

    m.no_overlap = Disjunction(
        m.PAIRS, m.GPUS, rule=no_overlap, xor=False, doc=SCHED_EQUATIONS["no_overlap"]
    )
    return m


def to_milp(model: pyo.ConcreteModel, method: str = "bigm") -> pyo.ConcreteModel:
    """Reformulate the disjunctions in place (big-M from the variable bounds, or hull)."""
    pyo.TransformationFactory(f"gdp.{method}").apply_to(model)
    return model


def relaxation_horizon(instance: HareInstance) -> float:
    """Upper bound on x in RL. RL has no horizon in the paper, and its optimum may start a task
    far beyond any schedule's horizon (all of (9)'s slack goes to the task of smallest w/T^c),
    so the schedule horizon would strengthen RL. The bound adds to it the largest push that
    (9) can demand, (sum_i max_m T^c_i)^2 / (2 min T^c); solutions at the bound are flagged."""
    tmax = float(sum(instance.tc[i[0]].max() for i in instance.tasks))
    return instance.horizon() + tmax**2 / (2 * float(instance.tc.min()))


def build_relaxation(
    instance: HareInstance, form: str = "pairs", horizon: float | None = None
) -> pyo.ConcreteModel:
    """Hare_Sched_RL: (4)-(7) and (9) per GPU.

    ``form="quadratic"``: (9) exactly as printed (a nonconvex MIQCP, for SCIP).
    ``form="pairs"``: the same set exactly linearized (a MILP, for HiGHS). With y binary,
    (sum_i y T)^2 = sum_i y T^2 + 2 sum_{i<j} y_i y_j T_i T_j, and (9) reduces to
    ``sum_i T_im u_im >= sum_{i<j} T_im T_jm w_ijm`` with u_im = y_im x_i (McCormick, exact for
    binary y and bounded x) and w_ijm = y_im y_jm (exact product of binaries; only the lower
    envelope is needed because w only appears on the larger side, but both are stated).
    """
    m = _base(instance, horizon if horizon is not None else relaxation_horizon(instance))
    tc = m.tc
    if form == "quadratic":

        @m.Constraint(m.GPUS, doc=RL_EQUATIONS["queyranne"])
        def queyranne(mm, g):  # (9)
            load = sum(mm.y[i, g] * tc(i, g) for i in mm.TASKS)
            return sum(mm.y[i, g] * tc(i, g) * (mm.x[i] + tc(i, g)) for i in mm.TASKS) >= 0.5 * (
                load**2 + sum((mm.y[i, g] * tc(i, g)) ** 2 for i in mm.TASKS)
            )

        return m
    if form != "pairs":
        raise ValueError(f"unknown relaxation form {form!r}")
    _add_products(m, instance)

    def queyranne_linearized(mm, g):  # (9), linearized
        return sum(tc(i, g) * mm.u[i, g] for i in mm.TASKS) >= sum(
            tc(i, g) * tc(j, g) * mm.w[(*i, *j, g)] for (i, j) in mm.pair_list
        )

    m.queyranne = pyo.Constraint(m.GPUS, rule=queyranne_linearized, doc=RL_EQUATIONS["queyranne"])

    return m


def _add_products(m: pyo.ConcreteModel, instance: HareInstance) -> None:
    """u[i,m] = y[i,m] x[i] and w[i,j,m] = y[i,m] y[j,m] (exact for binary y)."""
    jobs = instance.jobs
    hz = m.horizon
    m.u = pyo.Var(m.TASKS, m.GPUS, bounds=(0, hz))

    @m.Constraint(m.TASKS, m.GPUS, doc=RL_EQUATIONS["u_upper_y"])
    def u_upper_y(mm, n, r, k, g):
        return mm.u[n, r, k, g] <= hz * mm.y[n, r, k, g]

    @m.Constraint(m.TASKS, m.GPUS, doc=RL_EQUATIONS["u_lower_y"])
    def u_lower_y(mm, n, r, k, g):
        return mm.u[n, r, k, g] >= jobs[n].arrival * mm.y[n, r, k, g]

    @m.Constraint(m.TASKS, m.GPUS, doc=RL_EQUATIONS["u_upper_x"])
    def u_upper_x(mm, n, r, k, g):
        return mm.u[n, r, k, g] <= mm.x[n, r, k] - jobs[n].arrival * (1 - mm.y[n, r, k, g])

    @m.Constraint(m.TASKS, m.GPUS, doc=RL_EQUATIONS["u_lower_x"])
    def u_lower_x(mm, n, r, k, g):
        return mm.u[n, r, k, g] >= mm.x[n, r, k] - hz * (1 - mm.y[n, r, k, g])

    m.pair_list = list(combinations(instance.tasks, 2))
    m.WPAIRS = pyo.Set(
        initialize=[(*i, *j, g) for i, j in m.pair_list for g in range(instance.num_gpus)],
        dimen=7,
        ordered=True,
    )
    m.w = pyo.Var(m.WPAIRS, bounds=(0, 1))

    @m.Constraint(m.WPAIRS, doc=RL_EQUATIONS["w_lower"])
    def w_lower(mm, n1, r1, k1, n2, r2, k2, g):
        return mm.w[n1, r1, k1, n2, r2, k2, g] >= mm.y[n1, r1, k1, g] + mm.y[n2, r2, k2, g] - 1

    @m.Constraint(m.WPAIRS, doc=RL_EQUATIONS["w_upper_i"])
    def w_upper_i(mm, n1, r1, k1, n2, r2, k2, g):
        return mm.w[n1, r1, k1, n2, r2, k2, g] <= mm.y[n1, r1, k1, g]

    @m.Constraint(m.WPAIRS, doc=RL_EQUATIONS["w_upper_j"])
    def w_upper_j(mm, n1, r1, k1, n2, r2, k2, g):
        return mm.w[n1, r1, k1, n2, r2, k2, g] <= mm.y[n2, r2, k2, g]

    m.subset_cuts = pyo.ConstraintList(doc=RL_EQUATIONS["subset_cuts"])  # added by separation


def add_subset_cut(
    m: pyo.ConcreteModel, g: int, subset: list[tuple[int, int, int]]
) -> pyo.Constraint:
    """Queyranne's inequality for a subset S of tasks on GPU g (linearized form of (9) over S):
    sum_{i in S} T_i y_i x_i >= sum_{i<j in S} T_i T_j y_i y_j. Valid for every schedule."""
    tc = m.tc
    order = {t: p for p, t in enumerate(m.TASKS)}
    s = sorted(subset, key=order.__getitem__)
    lhs = sum(tc(i, g) * m.u[(*i, g)] for i in s)
    rhs = sum(tc(i, g) * tc(j, g) * m.w[(*i, *j, g)] for i, j in combinations(s, 2))
    return m.subset_cuts.add(lhs >= rhs)
