"""``solve(model, backend, options) -> SolveResult`` over a small registry of backends.

Backends are looked up by name; nothing is imported or probed until a backend is used.

=========  ===========================================  =============================
name       what                                          model classes
=========  ===========================================  =============================
highs      HiGHS 1.13 through Pyomo                      LP, MILP
scip       SCIP through Pyomo (pyscipopt)                LP, MILP, MINLP (global)
cpsat      OR-Tools CP-SAT through a Pyomo bridge        integer linear (exact scaling)
=========  ===========================================  =============================
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dlsched.errors import OptionError
from dlsched.solvers.base import (
    SolveOptions,
    SolveResult,
    SolverSettings,
    Status,
    relative_gap,
)
from dlsched.solvers.certify import EPSILON, Proof, certify


@dataclass(frozen=True)
class Backend:
    name: str
    module: str  # the Python package the backend needs
    features: frozenset[str]
    run: Callable[[Any, SolveOptions], SolveResult]

    def available(self) -> bool:
        return importlib.util.find_spec(self.module) is not None


def _pyomo_run(name: str) -> Callable[[Any, SolveOptions], SolveResult]:
    def run(model: Any, options: SolveOptions) -> SolveResult:
        from dlsched.solvers.pyomo_backend import PyomoSolver

        return PyomoSolver(name).solve(model, options)

    return run


def _cpsat_run(model: Any, options: SolveOptions) -> SolveResult:
    from dlsched.solvers.cpsat_bridge import solve_cpsat

    return solve_cpsat(model, options)


#: What a Pyomo model and its HiGHS solve import. A pool's workers import them once, before
#: their first task: work forked under a deadline (:meth:`Deadline.run`) that builds a model
#: would otherwise import them anew in every child (seconds each, against milliseconds of
#: solving on the small instances of ``verify`` and ``sweep``).
MODEL_MODULES = (
    "pyomo.environ",
    "pyomo.gdp",
    "pyomo.contrib.solver.solvers.highs",
    "highspy",
    "dlsched.solvers.highs",
    "dlsched.solvers.pyomo_backend",
)

BACKENDS: dict[str, Backend] = {
    "highs": Backend("highs", "highspy", frozenset({"lp", "milp"}), _pyomo_run("highs")),
    "scip": Backend("scip", "pyscipopt", frozenset({"lp", "milp", "minlp"}), _pyomo_run("scip")),
    "cpsat": Backend("cpsat", "ortools", frozenset({"ilp"}), _cpsat_run),
}


def solve(model: Any, backend: str = "highs", options: SolveOptions | None = None) -> SolveResult:
    """Solve a Pyomo model with the named backend. Never mutates the result into the model's
    bookkeeping beyond Pyomo variable values; the returned result carries everything."""
    if backend not in BACKENDS:
        raise OptionError("backend", backend, f"unknown backend (known: {', '.join(BACKENDS)})")
    b = BACKENDS[backend]
    if not b.available():
        raise OptionError("backend", backend, f"not installed (needs the '{b.module}' package)")
    return b.run(model, options or SolveOptions())


__all__ = [
    "BACKENDS",
    "EPSILON",
    "MODEL_MODULES",
    "Proof",
    "Backend",
    "SolveOptions",
    "SolverSettings",
    "SolveResult",
    "Status",
    "certify",
    "relative_gap",
    "solve",
]
