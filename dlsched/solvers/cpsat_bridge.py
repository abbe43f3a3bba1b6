"""CP-SAT through a bridge from a Pyomo model.

The bridge reads every active constraint and the objective with Pyomo's
``generate_standard_repn`` and rebuilds them in ``ortools.sat.python.cp_model``. CP-SAT is an
integer solver: every variable must be integer or binary with finite bounds, and every
constraint must be linear. Float coefficients are scaled row by row by the smallest power of
ten that makes them integral (up to 1e9); the objective scale is recorded in ``info``. A model
that cannot be represented exactly raises :class:`BridgeError` instead of being rounded.
"""

from __future__ import annotations

import math
from typing import Any

from dlsched.errors import DlschedError
from dlsched.solvers.base import SolveOptions, SolveResult
from dlsched.solvers.certify import solver_status
from dlsched.solvers.cpsat import run_cpsat
from dlsched.solvers.deadline import Deadline

MAX_SCALE = 10**9


class BridgeError(DlschedError):
    """The Pyomo model cannot be given to CP-SAT exactly."""


def integer_scale(numbers: list[float], what: str) -> int:
    """Smallest power of ten s <= 1e9 with every s * x within 1e-6 of an integer."""
    scale = 1
    while scale <= MAX_SCALE:
        if all(abs(x * scale - round(x * scale)) <= 1e-6 for x in numbers):
            return scale
        scale *= 10
    bad = next(x for x in numbers if abs(x * MAX_SCALE - round(x * MAX_SCALE)) > 1e-6)
    raise BridgeError(f"{what}: coefficient {bad!r} has no exact integer scaling up to 1e9")


class _Translator:
    """Pyomo variables to CP-SAT integer variables, one each, with finite integer bounds."""

    def __init__(self) -> None:
        from ortools.sat.python import cp_model

        self.cp = cp_model.CpModel()
        self.cvars: dict[int, Any] = {}
        self.names: dict[str, Any] = {}

    def var(self, v: Any) -> Any:
        key = id(v)
        if key not in self.cvars:
            if not (v.is_integer() or v.is_binary()):
                raise BridgeError(
                    f"variable {v.name} is continuous; CP-SAT needs integer variables"
                )
            lb, ub = v.bounds
            if v.is_fixed():
                lb = ub = v.value
            if lb is None or ub is None:
                raise BridgeError(
                    f"variable {v.name} needs finite bounds for CP-SAT, has {(lb, ub)}"
                )
            cv = self.cp.new_int_var(math.ceil(lb - 1e-9), math.floor(ub + 1e-9), v.name)
            self.cvars[key] = self.names[v.name] = cv
        return self.cvars[key]

    def linear(self, coefs: list[float], variables: Any, scale: int) -> Any:
        return sum(
            int(round(c * scale)) * self.var(v) for c, v in zip(coefs, variables, strict=True)
        )

    def constraint(self, con: Any) -> None:
        """lo <= body <= hi, scaled to integer coefficients (exactly, or a BridgeError)."""
        from pyomo.repn.standard_repn import generate_standard_repn

        from dlsched.solvers.pyomo_env import pyo

        repn = generate_standard_repn(con.body, quadratic=False)
        if not repn.is_linear():
            raise BridgeError(
                f"constraint {con.name} is nonlinear; CP-SAT bridge takes linear models"
            )
        coefs = [float(c) for c in repn.linear_coefs]
        lo = None if con.lower is None else float(pyo.value(con.lower)) - float(repn.constant)
        hi = None if con.upper is None else float(pyo.value(con.upper)) - float(repn.constant)
        scale = integer_scale(coefs + [x for x in (lo, hi) if x is not None], con.name)
        expr = self.linear(coefs, repn.linear_vars, scale)
        if lo is not None and hi is not None and lo == hi:
            self.cp.add(expr == int(round(lo * scale)))
            return
        if lo is not None:
            self.cp.add(expr >= math.ceil(lo * scale - 1e-9))
        if hi is not None:
            self.cp.add(expr <= math.floor(hi * scale + 1e-9))

    def objective(self, obj: Any) -> tuple[int, float, str]:
        """(integer scale, constant, "min" or "max") of the one objective."""
        from pyomo.repn.standard_repn import generate_standard_repn

        from dlsched.solvers.pyomo_env import pyo

        repn = generate_standard_repn(obj.expr, quadratic=False)
        if not repn.is_linear():
            raise BridgeError("objective is nonlinear; CP-SAT bridge takes linear models")
        coefs = [float(c) for c in repn.linear_coefs]
        oscale = integer_scale(coefs, "objective")
        oexpr = self.linear(coefs, repn.linear_vars, oscale)
        sense = "max" if obj.sense == pyo.maximize else "min"
        if sense == "max":
            self.cp.maximize(oexpr)
        else:
            self.cp.minimize(oexpr)
        return oscale, float(repn.constant), sense


def _to_cpsat(model: Any) -> tuple[Any, dict[str, Any], int, float, str]:
    from dlsched.solvers.pyomo_env import pyo

    t = _Translator()
    for con in model.component_data_objects(pyo.Constraint, active=True):
        t.constraint(con)
    objs = list(model.component_data_objects(pyo.Objective, active=True))
    if len(objs) != 1:
        raise BridgeError(f"model must have exactly one active objective, found {len(objs)}")
    oscale, constant, sense = t.objective(objs[0])
    for v in model.component_data_objects(pyo.Var, active=True):
        t.var(v)  # variables that appear nowhere still need a value
    return t.cp, t.names, oscale, constant, sense


def solve_cpsat(model: Any, options: SolveOptions | None = None) -> SolveResult:
    from importlib.metadata import version

    options = options or SolveOptions()
    deadline = Deadline.after(options.time_limit)  # the translation counts against the limit
    cp, names, oscale, offset, sense = _to_cpsat(model)
    run = run_cpsat(cp, deadline.solve_options(options))
    wall = deadline.elapsed()
    obj = run.objective / oscale + offset if run.objective is not None else None
    bound = run.bound / oscale + offset if run.bound is not None else None
    values = {n: float(run.value(v)) for n, v in names.items()} if run.has_solution else {}
    status = solver_status(
        obj,
        bound,
        sense=sense,
        claimed_optimal=run.proven_optimal,
        infeasible=run.infeasible,
        hit_limit=run.hit_limit,
    )
    return SolveResult(
        status,
        obj,
        bound,
        wall,
        "cpsat",
        version("ortools"),
        sense,
        values,
        message=run.status_name,
        info={"objective_scale": oscale},
    )
