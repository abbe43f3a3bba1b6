r"""The papers' programs as Pyomo models to print, change and solve.

:func:`model` builds a paper's program for an instance with the family's own builder; every
constraint component (and the objective) carries the equation it states in its ``doc``.
:func:`solve_model` solves such a model, changed or not, and reads its answer back through the
family's checker (:func:`dlsched.result.verified_outcome`): an answer that breaks a constraint
of the paper is the checker's :class:`~dlsched.errors.InfeasibleSolutionError`, never an
"optimal" status. :func:`programs` lists what can be built, :func:`equations` what each
component states; the four are ``dlsched.model``, ``dlsched.solve_model``, ``dlsched.programs``
and ``dlsched.equations``. Program (2)/(15) of the elastic family has no builder of its own:
``elastic-packing`` is its exact equivalent over every schedule of :math:`\Gamma_j`.

The programs are the families' own (each family's ``programs`` part, a sequence of
:class:`~dlsched.models.program.Program`, reached through :func:`dlsched.families.get`): this
module is the machinery alone. Each program's equations live once, beside its builder, which
gives each component its ``doc``.

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
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from dlsched import arguments, families
from dlsched.errors import InfeasibleSolutionError, OptionError
from dlsched.models.program import Program, ProgramInfo
from dlsched.solvers.base import DEFAULT_TIME_LIMIT, SolveResult

if TYPE_CHECKING:
    from dlsched.result import Outcome

# --- the public calls -------------------------------------------------------------------


def all_programs() -> dict[str, Program]:
    """Every family's programs by name, in registry order (each family's in its own order)."""
    out: dict[str, Program] = {}
    for name in families.names():
        for p in families.get(name).programs():
            if p.info.family != name or p.info.name in out:
                raise RuntimeError(f"{name}: program {p.info.name!r} is not its own or not unique")
            out[p.info.name] = p
    return out


def programs(family: str | None = None) -> list[ProgramInfo]:
    """The paper programs :func:`model` builds: (name, family, equations, summary), those of
    ``family`` only if given."""
    if family is not None:
        arguments.text("family", family)
        return [p.info for p in families.get(family).programs()]  # OptionError if unknown
    return [p.info for p in all_programs().values()]


def model(instance: Any, program: str, **params: Any) -> Any:
    """The Pyomo ``ConcreteModel`` of ``program`` (see :func:`programs`) for ``instance`` (an
    instance, or a bundled name or a path as :func:`dlsched.load` takes), built by the family's
    own builder; every constraint component's ``doc`` says the equation it states.
    ``params`` are the program's own (``category=`` for p1, ``groups=`` for gpu-grouping, ...)."""
    from dlsched.api import load
    from dlsched.instances import instance_hash

    inst = load(instance)
    spec = _program(arguments.text("program", program))
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
    m._program = program
    m._instance_hash = instance_hash(inst)
    return m


def equations(m: Any) -> list[tuple[str, str | None, bool]]:
    """(component, the equation it states, active) for every constraint component and the
    objective of a model, in the order built; a component added later has no equation unless
    it was given a ``doc``. Given a program's name instead of a model: every component its
    builder may add, with its equation (the index the documentation prints).

    >>> equations("ddlwmp-8")[2]
    ('obj', '(8): min sum_i (t_i + n_i alpha_i)', True)
    """
    if isinstance(m, str):
        return [(name, doc, True) for name, doc in _program(m).equations().items()]
    arguments.model("m", m)
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
    arguments.text("backend", backend, none=True)
    arguments.settings(time_limit, seed, threads, mip_gap)
    if not isinstance(program_or_model, str):
        arguments.model("program_or_model", program_or_model)
    options = SolveOptions(time_limit=time_limit, seed=seed, threads=threads, mip_gap=mip_gap)
    deadline = Deadline.after(options.time_limit)
    m = _model_for(inst, program_or_model, params)
    spec = _program(m._program)
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
    known = all_programs()
    if name not in known:
        raise OptionError("program", name, f"unknown program (known: {', '.join(known)})")
    return known[name]


def _statements(m: Any) -> list[Any]:
    """The constraint components, disjunctions and objectives of a model, top level only."""
    from dlsched.solvers.pyomo_env import Disjunction, pyo

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
    if getattr(m, "_program", None) not in all_programs():
        raise OptionError("model", getattr(m, "name", m), "not built by dlsched.model()")
    if m._instance_hash != instance_hash(inst):
        raise OptionError("instance", inst.name, f"the model {m.name} was built for another one")
    return m


def _load(m: Any, values: Mapping[str, float]) -> None:
    """The answer of a copy solved in its place, into the model itself (to read as usual)."""
    from dlsched.solvers.pyomo_env import pyo

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
        return _own_check_outcome(inst, method, solution, objective, res, wall, details)
    return verified_outcome(
        inst, method, solution, wall_time=wall, proof=Proof.of(res), solver=solver,
        claimed=res.objective, claimed_is_upper=not spec.exact_objective, details=details,
    )  # fmt: skip


def _checked(inst: Any, spec: Program, solution: Any) -> float:
    """The checker's objective of ``solution`` (its InfeasibleSolutionError on a violation)."""
    if spec.check is not None:
        return spec.check(inst, solution)
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


def _own_check_outcome(
    inst: Any,
    method: str,
    solution: Any,
    objective: float,
    res: SolveResult,
    wall: float,
    details: dict[str, Any],
) -> Outcome:
    """The Outcome of an answer its program checks itself (``Program.check``: a GPU grouping,
    a placement of (13), which the family's checker of schedules does not take): status and
    bound by :func:`certify` as verified_outcome does."""
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
        "added": [name for name, _, _ in rows if name not in spec.equations()],
    }
    if res.message:
        out["solver_message"] = res.message
    return out


__all__ = [
    "Program",
    "ProgramInfo",
    "all_programs",
    "equations",
    "model",
    "programs",
    "solve_model",
]
