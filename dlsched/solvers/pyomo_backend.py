"""Pyomo models solved by HiGHS and SCIP.

HiGHS (highspy, linked statically in 1.13.1 so it coexists with OR-Tools) solves LPs and MILPs:
the model is compiled to a matrix (Pyomo's linear standard form) and solved by the project's own
matrix route (:func:`dlsched.solvers.highs.solve_matrix`). SCIP (pyscipopt) also solves MINLPs
with nonlinear constraints to global optimality, through Pyomo's interface
(``pyomo.contrib.solver``) with its output hidden.

Neither captures the solver's output with ``pyomo.common.tee``: that capture redirects the
process's file descriptors 1 and 2 through a pipe read by a thread, and in a process running
several threads (a Dask worker) or forking (:mod:`dlsched.solvers.deadline`) it could block a
solve for ever (one thread waiting for the capture's lock, another joining a reader thread whose
pipe never ended).
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import scipy.sparse as sp

from dlsched.solvers.base import SolveOptions, SolveResult, Status
from dlsched.solvers.certify import EPSILON, solver_status
from dlsched.solvers.deadline import Deadline
from dlsched.solvers.highs import MatrixModel, solve_matrix

_PYOMO_NAMES = {"highs": "highs", "scip": "scip_direct"}


def _factory(name: str) -> Any:
    import dlsched.solvers.pyomo_env  # noqa: F401  (the new factory needs the environment registered)

    if name == "highs":
        return None  # solved as a matrix (solve_highs)
    return quiet_scip()


def quiet_scip() -> Any:
    """Pyomo's SCIP interface with SCIP's output hidden instead of captured (its ``solve``
    without ``pyomo.common.tee``'s capture, which is all it changes)."""
    import datetime

    from pyomo.common.timing import HierarchicalTimer
    from pyomo.contrib.solver.solvers.scip.scip_direct import ScipDirect
    from pyomo.core.staleflag import StaleFlagManager

    class QuietScip(ScipDirect):  # type: ignore[misc]
        def solve(self, model: Any, **kwds: Any) -> Any:
            start = datetime.datetime.now(datetime.UTC)
            config = self.config(value=kwds, preserve_implicit=True)
            StaleFlagManager.mark_all_as_stale()
            config.timer = timer = config.timer or HierarchicalTimer()
            scip_model, loader, has_obj = self._create_solver_model(model, config)
            scip_model.hideOutput(quiet=True)
            for key, value in (("lp/threads", config.threads),
                               ("limits/time", config.time_limit),
                               ("limits/gap", config.rel_gap),
                               ("limits/absgap", config.abs_gap)):  # fmt: skip
                if value is not None:
                    scip_model.setParam(key, value)
            if config.warmstart_discrete_vars:
                self._mipstart()
            for key, option in config.solver_options.items():
                scip_model.setParam(key, option)
            timer.start("optimize")
            scip_model.optimize()
            timer.stop("optimize")
            results = self._populate_results(scip_model, loader, has_obj, config)
            results.solver_log = ""
            end = datetime.datetime.now(datetime.UTC)
            results.timing_info.start_timestamp = start
            results.timing_info.wall_time = (end - start).total_seconds()
            results.timing_info.timer = timer
            return results

    return QuietScip()


#: The absolute gap at which a solver stops: a tenth of the certified EPSILON, so a solver's
#: "optimal" is also optimal under certify().
ABS_GAP = EPSILON / 10


def _scip_options(options: SolveOptions) -> dict[str, Any]:
    return {
        "randomization/randomseedshift": options.seed,
        "parallel/maxnthreads": options.threads,
        "limits/absgap": ABS_GAP,
        **options.extra,
    }


def _objective_sense(model: Any) -> str:
    from dlsched.solvers.pyomo_env import pyo

    objs = list(model.component_data_objects(pyo.Objective, active=True))
    if len(objs) != 1:
        raise ValueError(f"model must have exactly one active objective, found {len(objs)}")
    return "max" if objs[0].sense == pyo.maximize else "min"


def collect_values(model: Any) -> dict[str, float]:
    from dlsched.solvers.pyomo_env import pyo

    return {
        v.name: float(v.value)
        for v in model.component_data_objects(pyo.Var, active=True)
        if v.value is not None
    }


#: Pyomo's words for HiGHS's model statuses (its interface's termination conditions), so a
#: result's message reads as it did when HiGHS ran through that interface.
_TERMINATION = {
    "kOptimal": "convergenceCriteriaSatisfied",
    "kInfeasible": "provenInfeasible",
    "kUnboundedOrInfeasible": "infeasibleOrUnbounded",
    "kUnbounded": "unbounded",
    "kObjectiveBound": "objectiveLimit",
    "kObjectiveTarget": "objectiveLimit",
    "kTimeLimit": "maxTimeLimit",
    "kIterationLimit": "iterationLimit",
    "kSolutionLimit": "iterationLimit",
    "kInterrupt": "interrupted",
    "kLoadError": "error",
    "kModelError": "error",
    "kPresolveError": "error",
    "kSolveError": "error",
    "kPostsolveError": "error",
}
_INFEASIBLE = ("provenInfeasible", "infeasibleOrUnbounded")


@functools.cache
def _status_names() -> dict[str, str]:
    """HiGHS's status strings (as :func:`solve_matrix` reports them) to the statuses' names."""
    import highspy

    h = highspy.Highs()
    return {h.modelStatusToString(s): n for n, s in highspy.HighsModelStatus.__members__.items()}


def to_matrix(model: Any) -> tuple[MatrixModel, list[Any]]:
    """A linear Pyomo model (one active objective) as a :class:`MatrixModel` to minimise (a
    maximised objective negated) and the variables of its columns. The matrix is the one
    Pyomo's HiGHS interface passes: one row per active constraint, in order; a column per
    variable in the order the constraints, then the objective, first name it; a fixed variable
    a column fixed at its value. ValueError on a nonlinear constraint or objective."""
    from pyomo.contrib.solver.common.util import collect_vars_and_named_exprs
    from pyomo.repn import generate_standard_repn

    from dlsched.solvers.pyomo_env import pyo

    index: dict[int, int] = {}
    columns: list[Any] = []

    def linear(expr: Any, what: str) -> Any:
        for v in collect_vars_and_named_exprs(expr)[1]:
            if id(v) not in index:
                index[id(v)] = len(columns)
                columns.append(v)
        repn = generate_standard_repn(expr, quadratic=False, compute_values=False)
        if repn.nonlinear_expr is not None:
            raise ValueError(f"{what} is not linear: HiGHS solves linear models")
        pairs = zip(repn.linear_vars, repn.linear_coefs, strict=True)
        terms = [(index[id(v)], pyo.value(c)) for v, c in pairs]
        return terms, pyo.value(repn.constant)

    starts, cols, coefs, lower, upper = [0], [], [], [], []
    for con in model.component_data_objects(pyo.Constraint, descend_into=True, active=True):
        terms, constant = linear(con.body, f"constraint {con.name}")
        cols += [j for j, _ in terms]
        coefs += [c for _, c in terms]
        starts.append(len(cols))
        lower.append(pyo.value(con.lower) - constant if con.has_lb() else -np.inf)
        upper.append(pyo.value(con.upper) - constant if con.has_ub() else np.inf)
    obj = next(model.component_data_objects(pyo.Objective, active=True))
    terms, constant = linear(obj.expr, f"objective {obj.name}")
    sign = -1.0 if obj.sense == pyo.maximize else 1.0
    cost = np.zeros(len(columns))
    for j, c in terms:
        cost[j] += sign * c
    bounds = [(v.value, v.value) if v.fixed else v.bounds for v in columns]
    integer = np.array([v.is_integer() for v in columns], dtype=bool)
    shape = (len(lower), len(columns))
    matrix = MatrixModel(
        cost=cost,
        matrix=sp.csr_matrix((np.array(coefs, dtype=float), cols, starts), shape=shape),
        row_lower=np.array(lower, dtype=float),
        row_upper=np.array(upper, dtype=float),
        col_lower=np.array([-np.inf if lo is None else lo for lo, _ in bounds], dtype=float),
        col_upper=np.array([np.inf if up is None else up for _, up in bounds], dtype=float),
        integrality=integer if integer.any() else None,
        offset=sign * constant,
    )
    return matrix, columns


def solve_highs(model: Any, options: SolveOptions, sense: str) -> SolveResult:
    """A linear Pyomo model solved by HiGHS as a matrix (:func:`to_matrix`,
    :func:`solve_matrix`), the values loaded into its variables; the numbers, status and
    message as HiGHS through Pyomo's interface gave them (an LP's bound is its optimum when
    HiGHS claims one; a MIP's, HiGHS's dual bound). HiGHS times its search (as through Pyomo's
    interface: compiling the model does not count); the options ``extra`` are HiGHS's, on the
    minimised objective."""
    run = Deadline.after(options.time_limit)
    matrix, columns = to_matrix(model)
    extra = {"mip_abs_gap": ABS_GAP, **options.extra}
    res = solve_matrix(matrix, options.with_(extra=extra))
    flip = -1.0 if sense == "max" else 1.0
    obj = None if res.objective is None else flip * res.objective
    condition = _TERMINATION.get(_status_names().get(str(res.message), ""), "unknown")
    proven = condition == "convergenceCriteriaSatisfied"
    if matrix.is_mip:
        bound = None if res.bound is None else flip * res.bound
    else:
        bound = obj if proven else None
    values: dict[str, float] = {}
    if res.col_value is not None and obj is not None:
        for v, x in zip(columns, res.col_value, strict=True):
            v.set_value(float(x), skip_validation=True)
        values = collect_values(model)
    status = solver_status(obj, bound, sense=sense, claimed_optimal=proven,
                           infeasible=condition in _INFEASIBLE,
                           hit_limit=condition == "maxTimeLimit")  # fmt: skip
    message = "" if status == Status.OPTIMAL else f"TerminationCondition.{condition}"
    return SolveResult(status, obj, bound, run.elapsed(), "highs", res.backend_version, sense,
                       values, message=message)  # fmt: skip


class PyomoSolver:
    """A solver of Pyomo models: ``highs`` (as a matrix, :func:`solve_highs`) or ``scip``
    (Pyomo's interface, :func:`quiet_scip`)."""

    def __init__(self, name: str) -> None:
        if name not in _PYOMO_NAMES:
            raise ValueError(name)
        self.name = name
        self._opt = _factory(name)

    def version(self) -> str:
        if self._opt is None:
            import highspy

            return str(highspy.Highs().version())
        v = self._opt.version()
        return ".".join(str(x) for x in v) if isinstance(v, tuple) else str(v)

    def solve(self, model: Any, options: SolveOptions | None = None) -> SolveResult:
        """``model`` solved under ``options`` (one solver call). The solver times only its
        search: a route whose model is large builds
        and solves it forked under its deadline
        (:meth:`~dlsched.solvers.deadline.Deadline.run`), killed a grace past it."""
        options = options or SolveOptions()
        sense = _objective_sense(model)
        run = Deadline.after(options.time_limit)
        try:
            if self.name == "highs":
                return solve_highs(model, options, sense)
            return self._solve_scip(model, options, sense)
        except Exception as e:  # solver crash: an explicit status, never a silent pass
            return SolveResult(
                Status.ERROR, None, None, run.elapsed(), self.name, self.version(), sense,
                message=f"{type(e).__name__}: {e}",
            )  # fmt: skip

    def _solve_scip(self, model: Any, options: SolveOptions, sense: str) -> SolveResult:
        kwargs: dict[str, Any] = {
            "load_solutions": False,
            "raise_exception_on_nonoptimal_result": False,
            "rel_gap": options.mip_gap,
            "solver_options": _scip_options(options),
        }
        if options.time_limit is not None:
            kwargs["time_limit"] = options.time_limit
        run = Deadline.after(options.time_limit)
        res = self._opt.solve(model, **kwargs)
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
