r"""The papers' programs as Pyomo models to print, change and solve.

:func:`model` builds a paper's program for an instance with the family's own builder; every
constraint component (and the objective) carries the equation it states in its ``doc``.
:func:`solve_model` solves such a model, changed or not, and reads its answer back through the
family's checker (:func:`dlsched.result.verified_outcome`): an answer that breaks a constraint
of the paper is the checker's :class:`~dlsched.errors.InfeasibleSolutionError`, never an
"optimal" status. :func:`programs` lists what can be built; the three are ``dlsched.model``,
``dlsched.solve_model`` and ``dlsched.programs``. Program (2)/(15) of the elastic family has no
builder of its own: ``elastic-packing`` is its exact equivalent over every
schedule of :math:`\Gamma_j`.

>>> import dlsched
>>> m = dlsched.model("hare/toy-2gpu", "hare-sched")
>>> m.round_barrier.doc
'(7): round r + 1 starts after every task of round r finished, synchronization included'
>>> out = dlsched.solve_model("hare/toy-2gpu", m)
>>> out.method, str(out.status), out.objective
('model:hare-sched', 'optimal', 13.5)
>>> m.round_barrier.deactivate()  # drop (7): the optimum falls, and its answer breaks (7)
>>> dlsched.solve_model("hare/toy-2gpu", m)
Traceback (most recent call last):
...
dlsched.errors.InfeasibleSolutionError: task ... before round 0 finishes (training + sync) ... (7)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

from dlsched.errors import InfeasibleSolutionError, OptionError
from dlsched.solvers.base import DEFAULT_TIME_LIMIT, SolveResult

if TYPE_CHECKING:
    from dlsched.result import Outcome

#: A push of the decoded starts up to this share of the horizon is the solver's feasibility
#: tolerance and is removed; a larger one means the answer breaks (4), (7) or (8) itself.
REPAIR = 1e-6


class ProgramInfo(NamedTuple):
    """One row of :func:`programs`."""

    name: str
    family: str
    equations: str
    summary: str


@dataclass(frozen=True)
class Program:
    """A paper's program: its builder, the equation of each component it builds, and how a
    solved model's values become the family's solution (None: a relaxation, a bound only)."""

    info: ProgramInfo
    build: Callable[..., Any]  # (instance, **params) -> pyomo ConcreteModel
    docs: Mapping[str, str]  # component name -> the equation it states
    decode: Callable[[Any, Any, Mapping[str, float]], Any] | None
    #: the equations that tie the objective to the answer (named when they disagree)
    ties: str = ""
    #: the objective is the answer's cost itself (no epigraph variable that may be slack)
    exact_objective: bool = False
    params: tuple[str, ...] = ()
    backends: tuple[str, ...] = ("highs", "scip")
    #: the checker's objective of a solution; None: the family's (through verified_outcome)
    check: Callable[[Any, Any], float] | None = None
    #: the model handed to the solver (pyomo.gdp models: a big-M copy)
    prepare: Callable[[Any], Any] = lambda m: m


# --- builders and decoders -----------------------------------------------------------------


def _p1(
    instance: Any, category: tuple[int, ...] | None = None, symmetry_breaking: bool = True
) -> Any:
    from dlsched.models.placement.model import build_p1

    return build_p1(instance, category, "nonlinear", symmetry_breaking=symmetry_breaking)


def _placement(instance: Any, m: Any, values: Mapping[str, float]) -> Any:
    """The placement of P1's counts n[i, g]; a group whose workers the counts do not give out
    exactly once cannot be written as a placement, so (8c)-(8d) is reported here."""
    from dlsched.models.placement.model import counts_from_values, expand_counts
    from dlsched.models.placement.solution import Placement

    counts = counts_from_values(m, dict(values))
    for g, cap in enumerate(m._groups.cap):
        given = int(counts[:, g].sum())
        if given != cap:
            first = instance.workers[m._groups.members[g][0]].name
            raise InfeasibleSolutionError(
                f"instance '{instance.name}': the {cap} workers like {first} serve {given} "
                "job slots in the model's answer; (8c)-(8d): every worker serves exactly one job"
            )
    return Placement(expand_counts(m._groups, counts, instance.num_workers))


def _hare_schedule(instance: Any, m: Any, values: Mapping[str, float]) -> Any:
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


def _time_indexed(instance: Any, prune: bool = True) -> Any:
    """Program (8) over every job's best placement per usage; ``prune``: only the start slots
    of schedules that beat the best online policy's (as the exact route does; the optimum is
    kept, but a constraint that raises it above that schedule's cost makes the model
    infeasible: build with ``prune=False`` then)."""
    from dlsched.models.ddlwmp.methods import best_online_schedule
    from dlsched.models.ddlwmp.model import build_time_indexed, job_options

    options = [job_options(instance, i) for i in range(instance.num_jobs)]
    upper = best_online_schedule(instance)[0] if prune else None
    m = build_time_indexed(instance, options, upper=upper)
    m._options = options  # decoding needs each start's placement
    return m


def _ddlwmp_schedule(instance: Any, m: Any, values: Mapping[str, float]) -> Any:
    """The schedule of the chosen starts z[i, o, t]; a job started other than once cannot be
    written as a schedule, so (2) is reported here."""
    from dlsched.models.ddlwmp.model import decode
    from dlsched.models.ddlwmp.solution import Schedule

    runs = [0] * instance.num_jobs
    for i, o, t in m.STARTS:
        runs[i] += values.get(m.z[i, o, t].name, 0.0) > 0.5
    for i, count in enumerate(runs):
        if count != 1:
            raise InfeasibleSolutionError(
                f"instance '{instance.name}': job {instance.jobs[i].name} starts {count} times "
                "in the model's answer; (2): every job runs once"
            )
    starts, places = decode(instance, m, m._options, dict(values))
    return Schedule(tuple(starts), tuple(places))


def _packing(instance: Any, max_configs: int | None = None) -> Any:
    """ILP (8)/(17) over every schedule of every job (Gamma_j enumerated, dominance applied)."""
    from dlsched.models.elastic.enumerate import MAX_CONFIGS, enumerate_all
    from dlsched.models.elastic.exact import all_columns, build_packing

    columns = all_columns(instance, enumerate_all(instance, max_configs or MAX_CONFIGS))
    m = build_packing(instance, columns)
    m._columns = columns  # decoding needs each column's schedule
    return m


def _elastic_schedule(instance: Any, m: Any, values: Mapping[str, float]) -> Any:
    from dlsched.models.elastic.exact import schedule_of

    chosen = [k for k in m.COLS if values.get(m.x[k].name, 0.0) > 0.5]
    return schedule_of(m._columns, chosen)


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


def _groups(instance: Any, m: Any, values: Mapping[str, float]) -> Any:
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


@dataclass(frozen=True)
class GpuGrouping:
    """GPU_Grouping's answer: ``groups[u]`` the GPU indices of group u."""

    groups: tuple[tuple[int, ...], ...]

    def to_json(self, instance: Any) -> dict[str, Any]:
        return {"groups": [[instance.gpus[g] for g in grp] for grp in self.groups]}


def _big_m(m: Any) -> Any:
    """A big-M copy of a pyomo.gdp model (the one a student changed stays as it is)."""
    from dlsched.models.hare.model import to_milp

    return to_milp(m.clone())


def _relaxation(instance: Any, horizon: float | None = None) -> Any:
    from dlsched.models.hare.model import build_relaxation

    return build_relaxation(instance, "pairs", horizon)


def _hare_sched(instance: Any, horizon: float | None = None) -> Any:
    from dlsched.models.hare.model import build_exact_gdp

    return build_exact_gdp(instance, horizon)


# --- the equation each component states -----------------------------------------------------

_SYMMETRY = "not in the paper: symmetry breaking, valid for {}: {}"

_HARE_BASE = {
    "arrival": "(4): x_i >= a_n, no task starts before its job arrives",
    "assign_once": "(5): sum_m y_im = 1, every task on one GPU",
    "completion": "(6): C_n >= x_i + sum_m y_im (T^c_im + T^s_im) for every task of job n",
    "round_barrier": (
        "(7): round r + 1 starts after every task of round r finished, synchronization included"
    ),
    "identical_tasks_ordered": _SYMMETRY.format(
        "(4)-(8)", "the tasks of one round start in index order"
    ),
    "total_weighted_completion": "objective of Hare_Sched, stated above (4): min sum_n w_n C_n",
}

_MCCORMICK = "(9), linearized: u[i, m] = y[i, m] x[i] (McCormick, exact for binary y)"
_PRODUCT = "(9), linearized: w[i, j, m] = y[i, m] y[j, m] (exact for binary y)"

PROGRAMS: dict[str, Program] = {
    p.info.name: p
    for p in (
        Program(
            ProgramInfo(
                "p1",
                "placement",
                "(8)/(14), (8b)-(8d), (13), (5)-(6)",
                "P1: workers for each job with proportional load balancing, min average JCT "
                "(a convex MINLP, solved by scip); category=(K_1, .., K_S) makes it P2 (17)",
            ),
            _p1,
            {
                "every_worker_serves_one_job": "(8c)+(8d): every worker serves exactly one job",
                "throughput": "(13): V_i = sum_k sigma_ik rho_ik",
                "steps_in_order": "(8b), (6): K_i in unary form, step[i, c] = [K_i >= c]",
                "job_size": "(8b): K_i = sum_k sigma_ik = 1 + sum_c step[i, c] >= 1",
                "node_used": "(5): uses_node[i, h] = 1 when job i has a worker on node h",
                "spans_nodes": "(5): a ring over two or more nodes has r_i^min = inter-node rate",
                "too_big_for_one_node": "(5): a job larger than every node spans nodes",
                "slow_ring_product": (
                    "(6): slow_ring_i = ring_i spans_i, the inter-node part of l_i^[c]"
                ),
                "computation_epigraph": "(14): t_i >= T_i |Pi_i| / V_i, the computation term",
                "tangent": "(14): supporting lines of t_i >= T_i |Pi_i| / V_i",
                "identical_nodes_ordered": _SYMMETRY.format(
                    "(8b)-(8d)", "identical nodes in lexicographic order of their job counts"
                ),
                "avg_jct": "(8)/(14): min (1/S) sum_i T_i (l_i^[p] + l_i^[c])",
            },
            _placement,
            ties="(13) and (14)",
            params=("category", "symmetry_breaking"),
            backends=("scip",),
        ),
        Program(
            ProgramInfo(
                "hare-sched",
                "hare",
                "(4)-(8)",
                "Hare_Sched: task starts x, GPUs y, completions C; (8) as a disjunction per "
                "task pair and GPU (pyomo.gdp, big-M when solved)",
            ),
            _hare_sched,
            {
                **_HARE_BASE,
                "no_overlap": (
                    "(8): two tasks on one GPU do not overlap in training (a disjunction)"
                ),
            },
            _hare_schedule,
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
            {
                **_HARE_BASE,
                "queyranne": "(9): Queyranne's inequality over all tasks of each GPU",
                "u_upper_y": _MCCORMICK,
                "u_lower_y": _MCCORMICK,
                "u_upper_x": _MCCORMICK,
                "u_lower_x": _MCCORMICK,
                "w_lower": _PRODUCT,
                "w_upper_i": _PRODUCT,
                "w_upper_j": _PRODUCT,
                "subset_cuts": "(9) over subsets of a GPU's tasks (empty until separated)",
            },
            None,
            params=("horizon",),
        ),
        Program(
            ProgramInfo(
                "ddlwmp-8",
                "ddlwmp",
                "(8), (1)-(3)",
                "problem (8), time-indexed: z[i, o, t] = job i starts at slot t with the best "
                "placement o of one usage; prune=False keeps every start slot",
            ),
            _time_indexed,
            {
                "start_once": "(2), (1): every job starts once, at or after its release",
                "server_capacity": "(3): at most g GPUs of a server busy in each slot",
                "obj": "(8): min sum_i (t_i + n_i alpha_i)",
            },
            _ddlwmp_schedule,
            ties="(8)",
            exact_objective=True,
            params=("prune",),
        ),
        Program(
            ProgramInfo(
                "elastic-packing",
                "elastic",
                "(8)/(17), (2)/(15)",
                "program (2)/(15) as the packing ILP (8)/(17) over every schedule of "
                "Gamma_j: exactly one per job, capacity per slot, server and resource",
            ),
            _packing,
            {
                "one_schedule": "(2a), (8b)/(17b) as equality: exactly one schedule per job",
                "capacity": "(8a)/(17a), equivalent to (2h)/(15b): capacity per slot, server "
                "and resource",
                "weighted_completion": "(2)/(15): min sum_j w_j c_j",
            },
            _elastic_schedule,
            ties="(2)/(15)",
            exact_objective=True,
            params=("max_configs",),
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
            {
                "one_group": "(4): every GPU in exactly one group",
                "max_speed": "(5): p_n^max >= the speed of job n in every group",
                "min_speed": "(6): p_n^min <= the speed of job n in every group",
                "spread_epigraph": "objective of GPU_Grouping, with (4): spread >= p_n^max - "
                "p_n^min",
                "non_empty": "not in the paper ((4)-(6) allow an empty group): every group "
                "holds a GPU (docs/errata.md)",
                "lowest_gpu_order": _SYMMETRY.format(
                    "(4)-(6)", "groups in order of their lowest GPU"
                ),
                "identical_order": _SYMMETRY.format(
                    "(4)-(6)", "of identical GPUs the lower is in the lower group"
                ),
                "objective": "objective of GPU_Grouping, with (4)-(6): min max_n (p_n^max - "
                "p_n^min)",
            },
            _groups,
            ties="(5)-(6)",
            params=("groups",),
            check=_spread,
        ),
    )
}


# --- the public calls -------------------------------------------------------------------


def programs(family: str | None = None) -> list[ProgramInfo]:
    """The paper programs :func:`model` builds: (name, family, equations, summary), those of
    ``family`` only if given."""
    if family is not None:
        from dlsched import families

        families.get(family)  # OptionError for an unknown family
    return [p.info for p in PROGRAMS.values() if family in (None, p.info.family)]


def model(instance: Any, program: str, **params: Any) -> Any:
    """The Pyomo ``ConcreteModel`` of ``program`` (see :func:`programs`) for ``instance`` (an
    instance, or a bundled name or a path as :func:`dlsched.load` takes), built by the family's
    own builder; every constraint component's ``doc`` says the equation it states.
    ``params`` are the program's own (``category=`` for p1, ``groups=`` for gpu-grouping, ...)."""
    from dlsched.api import load
    from dlsched.instances import instance_hash

    inst = load(instance)
    spec = _program(program)
    if inst.family != spec.info.family:
        raise OptionError(
            "program",
            program,
            f"is a {spec.info.family} program; instance '{inst.name}' is {inst.family} "
            f"(its programs: {', '.join(p.name for p in programs(inst.family))})",
        )
    for key in params:
        if key not in spec.params:
            takes = ", ".join(spec.params) or "none"
            raise OptionError(key, params[key], f"not a parameter of {program} (it takes {takes})")
    m = spec.build(inst, **params)
    for component in _statements(m):
        component.doc = spec.docs.get(component.local_name, component.doc)
    m._program = program
    m._instance_hash = instance_hash(inst)
    return m


def equations(m: Any) -> list[tuple[str, str | None, bool]]:
    """(component, the equation it states, active) for every constraint component and the
    objective of a model, in the order built; a component added later has no equation."""
    return [(c.local_name, c.doc, _active(c)) for c in _statements(m)]


def solve_model(
    instance: Any,
    program_or_model: Any,
    backend: str | None = None,
    time_limit: float | None = DEFAULT_TIME_LIMIT,
    *,
    seed: int = 0,
    threads: int = 1,
    mip_gap: float = 0.0,
    **params: Any,
) -> Outcome:
    """Solve a model of :func:`model` (or build ``program_or_model`` by name first, with
    ``params``) on ``backend`` (default: the program's first, HiGHS, or SCIP for p1) within
    ``time_limit`` seconds (building included), and return the verified
    :class:`~dlsched.result.Outcome` of method ``model:<program>``.

    The answer is decoded into the family's solution and re-checked from the raw instance: an
    answer that breaks a constraint of the paper raises the checker's
    :class:`~dlsched.errors.InfeasibleSolutionError`, and so does a model objective below the
    checker's for its own answer (a dropped constraint the objective depends on). A relaxation
    returns no solution and status ``bound``. ``details`` name the components found inactive
    and those added to the model; the model's variables hold the answer afterwards.
    """
    from dlsched.api import load
    from dlsched.solvers.base import SolveOptions
    from dlsched.solvers.deadline import Deadline

    inst = load(instance)
    options = SolveOptions(time_limit=time_limit, seed=seed, threads=threads, mip_gap=mip_gap)
    deadline = Deadline.after(options.time_limit)
    m = _model_for(inst, program_or_model, params)
    spec = PROGRAMS[m._program]
    backend = backend or spec.backends[0]
    if backend not in spec.backends:
        raise OptionError(
            "backend", backend, f"{spec.info.name} is solved by {', '.join(spec.backends)}"
        )
    from dlsched.solvers import solve

    solved = spec.prepare(m)
    res = solve(solved, backend, deadline.solve_options(options))
    if solved is not m:
        _load(m, res.values)
    return _outcome(inst, spec, m, res, deadline.elapsed())


# --- inside -----------------------------------------------------------------------------


def _program(name: Any) -> Program:
    if name not in PROGRAMS:
        raise OptionError("program", name, f"unknown program (known: {', '.join(PROGRAMS)})")
    return PROGRAMS[name]


def _statements(m: Any) -> list[Any]:
    """The constraint components, disjunctions and objectives of a model, top level only."""
    import pyomo.environ as pyo
    from pyomo.gdp import Disjunction

    kinds = (pyo.Constraint, Disjunction, pyo.Objective)
    return list(m.component_objects(kinds, descend_into=False))


def _active(c: Any) -> bool:
    """Whether a component and every row of it are active."""
    return bool(c.active) and all(d.active for d in c.values())


def _model_for(inst: Any, program_or_model: Any, params: Mapping[str, Any]) -> Any:
    """The model to solve: built by name, or one of :func:`model` for this very instance."""
    from dlsched.instances import instance_hash

    if isinstance(program_or_model, str):
        return model(inst, program_or_model, **params)
    m = program_or_model
    if params:
        key = next(iter(params))
        raise OptionError(key, params[key], "a parameter of model(), not of a model built")
    if getattr(m, "_program", None) not in PROGRAMS:
        raise OptionError("model", getattr(m, "name", m), "not built by dlsched.model()")
    if m._instance_hash != instance_hash(inst):
        raise OptionError("instance", inst.name, f"the model {m.name} was built for another one")
    return m


def _load(m: Any, values: Mapping[str, float]) -> None:
    """The answer of a copy solved in its place, into the model itself (to read as usual)."""
    import pyomo.environ as pyo

    for v in m.component_data_objects(pyo.Var):
        if v.name in values:
            v.set_value(values[v.name], skip_validation=True)


def _outcome(inst: Any, spec: Program, m: Any, res: SolveResult, wall: float) -> Outcome:
    from dataclasses import replace

    from dlsched.result import verified_outcome
    from dlsched.solvers.certify import Proof

    method = f"model:{spec.info.name}"
    details = _details(spec, m, res)
    solver = replace(res, values={})
    if spec.decode is None:  # a relaxation: its bound only
        return verified_outcome(
            inst, method, None, wall_time=wall, proof=Proof.of(res), status=res.status,
            solver=solver, details=details,
        )  # fmt: skip
    solution = spec.decode(inst, m, res.values) if res.has_solution else None
    if solution is None:
        return verified_outcome(
            inst, method, None, wall_time=wall, proof=Proof.of(res), solver=solver,
            details=details,
        )  # fmt: skip
    objective = _checked(inst, spec, solution)
    _agrees(inst, spec, res, objective)
    if spec.check is not None:
        return _grouping_outcome(inst, method, solution, objective, res, wall, details)
    return verified_outcome(
        inst, method, solution, wall_time=wall, proof=Proof.of(res), solver=solver,
        claimed=res.objective, claimed_is_upper=not spec.exact_objective, details=details,
    )  # fmt: skip


def _checked(inst: Any, spec: Program, solution: Any) -> float:
    """The checker's objective of ``solution`` (its InfeasibleSolutionError on a violation)."""
    if spec.check is not None:
        return spec.check(inst, solution)
    from dlsched import families

    return float(families.of(inst).check(inst, solution).objective)


def _agrees(inst: Any, spec: Program, res: SolveResult, objective: float) -> None:
    """The model's objective and bound against the checker's objective of its own answer. A
    model objective below it means the answer breaks what ties the objective to it; one above
    it (where the objective is the cost itself) or a bound above it means the changed model no
    longer states the paper's objective."""
    from dlsched.result import AGREEMENT
    from dlsched.solvers.certify import tolerance

    claimed = res.objective if res.objective is not None else math.nan
    tol = AGREEMENT * max(1.0, abs(objective))
    name = spec.info.name
    if claimed < objective - tol:
        raise InfeasibleSolutionError(
            f"instance '{inst.name}': model {name}'s objective {claimed:.10g} is below the "
            f"checker's {objective:.10g} for the same answer, which breaks {spec.ties}"
        )
    above = claimed > objective + tol and spec.exact_objective
    if above or (res.bound is not None and res.bound > objective + tolerance(objective)):
        number, what = (claimed, "objective") if above else (res.bound, "bound")
        raise OptionError(
            "model",
            name,
            f"its {what} {number:.10g} is above the checker's objective {objective:.10g} of its "
            f"own answer: the changed model no longer states the objective {spec.ties}",
        )


def _grouping_outcome(
    inst: Any,
    method: str,
    solution: GpuGrouping,
    objective: float,
    res: SolveResult,
    wall: float,
    details: dict[str, Any],
) -> Outcome:
    """The Outcome of a GPU grouping, whose checker (:func:`_spread`) is not the hare family's
    (that one checks schedules): status and bound by :func:`certify` as verified_outcome does."""
    from dataclasses import replace

    from dlsched.instances import instance_hash
    from dlsched.result import Outcome
    from dlsched.solvers.certify import Proof, certify

    cert = certify(objective, Proof.of(res), instance=inst.name, route=method)
    return Outcome(
        method=method,
        instance=inst.name,
        instance_hash=instance_hash(inst),
        status=cert.status,
        objective=objective,
        bound=cert.bound,
        wall_time=wall,
        solution=solution,
        solver=replace(res, values={}),
        details={**details, "claimed_objective": res.objective},
    )


def _details(spec: Program, m: Any, res: SolveResult) -> dict[str, Any]:
    """The program, the backend, and what the model has that the builder did not give it."""
    rows = equations(m)
    out: dict[str, Any] = {
        "program": spec.info.name,
        "equations": spec.info.equations,
        "backend": res.backend,
        "inactive": [name for name, _, active in rows if not active],
        "added": [name for name, _, _ in rows if name not in spec.docs],
    }
    if res.message:
        out["solver_message"] = res.message
    return out


__all__ = [
    "PROGRAMS",
    "GpuGrouping",
    "Program",
    "ProgramInfo",
    "equations",
    "model",
    "programs",
    "solve_model",
]
