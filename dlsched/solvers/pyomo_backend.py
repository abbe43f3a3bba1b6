"""HiGHS and SCIP through Pyomo's solver interface (``pyomo.contrib.solver``).

HiGHS (highspy, linked statically in 1.13.1 so it coexists with OR-Tools) solves LPs and MILPs;
SCIP (pyscipopt) also solves MINLPs with nonlinear constraints to global optimality.
"""

from __future__ import annotations

from typing import Any

from dlsched.solvers.base import SolveOptions, SolveResult, Status
from dlsched.solvers.certify import EPSILON, solver_status
from dlsched.solvers.deadline import Deadline
from dlsched.solvers.highs_scheduler import use_threads

_PYOMO_NAMES = {"highs": "highs", "scip": "scip_direct"}


def _factory(name: str) -> Any:
    import pyomo.environ  # noqa: F401  (the new factory needs the environment registered)
    from pyomo.contrib.solver.common.factory import SolverFactory

    return SolverFactory(_PYOMO_NAMES[name])


def _backend_options(name: str, options: SolveOptions) -> dict[str, Any]:
    # the absolute gap at which a solver stops is a tenth of the certified EPSILON, so a
    # solver's "optimal" is also optimal under certify()
    if name == "highs":
        opts: dict[str, Any] = {
            "random_seed": options.seed,
            "threads": options.threads,
            "mip_abs_gap": EPSILON / 10,
        }
    else:
        opts = {
            "randomization/randomseedshift": options.seed,
            "parallel/maxnthreads": options.threads,
            "limits/absgap": EPSILON / 10,
        }
    opts.update(options.extra)
    return opts


def _objective_sense(model: Any) -> str:
    import pyomo.environ as pyo

    objs = list(model.component_data_objects(pyo.Objective, active=True))
    if len(objs) != 1:
        raise ValueError(f"model must have exactly one active objective, found {len(objs)}")
    return "max" if objs[0].sense == pyo.maximize else "min"


def collect_values(model: Any) -> dict[str, float]:
    import pyomo.environ as pyo

    return {
        v.name: float(v.value)
        for v in model.component_data_objects(pyo.Var, active=True)
        if v.value is not None
    }


class PyomoSolver:
    """One solver object per model; re-solving after adding constraints reuses it (HiGHS is
    persistent in Pyomo's interface, which the outer-approximation loop relies on)."""

    def __init__(self, name: str) -> None:
        if name not in _PYOMO_NAMES:
            raise ValueError(name)
        self.name = name
        self._opt = _factory(name)

    def version(self) -> str:
        v = self._opt.version()
        return ".".join(str(x) for x in v) if isinstance(v, tuple) else str(v)

    def solve(self, model: Any, options: SolveOptions | None = None) -> SolveResult:
        """``model`` solved under ``options`` (one solver call). Pyomo hands the model to the
        solver inside its own solve, and the solver times only its search: a route whose
        model is large builds and solves it forked under its deadline
        (:meth:`~dlsched.solvers.deadline.Deadline.run`), killed a grace past it."""
        options = options or SolveOptions()
        sense = _objective_sense(model)
        kwargs: dict[str, Any] = {
            "load_solutions": False,
            "raise_exception_on_nonoptimal_result": False,
            "rel_gap": options.mip_gap,
            "solver_options": _backend_options(self.name, options),
        }
        if options.time_limit is not None:
            kwargs["time_limit"] = options.time_limit
        if self.name == "highs":
            use_threads(int(kwargs["solver_options"]["threads"]))
        run = Deadline.after(options.time_limit)
        try:
            res = self._opt.solve(model, **kwargs)
        except Exception as e:  # solver crash: an explicit status, never a silent pass
            wall = run.elapsed()
            return SolveResult(
                Status.ERROR, None, None, wall, self.name, self.version(), sense,
                message=f"{type(e).__name__}: {e}",
            )  # fmt: skip
        return self._result(model, res, run.elapsed(), sense)

    def _result(self, model: Any, res: Any, wall: float, sense: str) -> SolveResult:
        """Pyomo's results as a SolveResult; the status from the numbers (solver_status)."""
        from pyomo.contrib.solver.common.results import SolutionStatus, TerminationCondition

        tc = res.termination_condition
        has_sol = res.solution_status in (SolutionStatus.optimal, SolutionStatus.feasible)
        obj = None
        if has_sol and res.incumbent_objective is not None:
            obj = float(res.incumbent_objective)
        bound = None if res.objective_bound is None else float(res.objective_bound)
        values: dict[str, float] = {}
        if has_sol:
            res.solution_loader.load_vars()
            values = collect_values(model)
        proven = tc == TerminationCondition.convergenceCriteriaSatisfied
        if proven and bound is None and obj is not None:
            bound = obj  # an LP's optimum is its own bound
        infeasible = tc in (
            TerminationCondition.provenInfeasible,
            TerminationCondition.locallyInfeasible,
            TerminationCondition.infeasibleOrUnbounded,
        )
        status = solver_status(
            obj,
            bound,
            sense=sense,
            claimed_optimal=proven,
            infeasible=infeasible,
            hit_limit=tc == TerminationCondition.maxTimeLimit,
        )
        message = "" if status == Status.OPTIMAL else str(tc)
        return SolveResult(
            status, obj, bound, wall, self.name, self.version(), sense, values, message=message
        )
