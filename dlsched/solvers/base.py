"""Solver-independent option and result types."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from dlsched.errors import OptionError

if TYPE_CHECKING:
    import numpy as np


class Status(StrEnum):
    OPTIMAL = "optimal"  # objective - bound <= certify.tolerance(objective)
    FEASIBLE = "feasible"  # an incumbent, optimality not proven (stopped for another reason)
    TIME_LIMIT = "time_limit"  # stopped by the time limit; incumbent may be None
    INFEASIBLE = "infeasible"  # proven infeasible
    ERROR = "error"  # the solver failed
    #: a heuristic ended without a solution and proved nothing (why: ``details["reason"]``)
    NO_SOLUTION = "no_solution"
    #: a bound-only method (a relaxation) ended: no solution, a proven lower bound; a success
    BOUND = "bound"

    def __str__(self) -> str:
        return self.value


#: Seconds an exact method may run unless told otherwise (``time_limit=None``: no limit).
DEFAULT_TIME_LIMIT = 300.0


def check_time_limit(time_limit: float | None) -> None:
    """A time limit is None (no limit) or a positive number of seconds."""
    if time_limit is not None and not (time_limit > 0):
        raise OptionError("time_limit", time_limit, "must be a positive number of seconds")


@dataclass(frozen=True)
class SolverSettings:
    """What a solver is told besides its time limit: a small typed config plus a pass-through
    dict of backend-specific options. Routes receive these beside the method's
    :class:`~dlsched.solvers.deadline.Deadline`; the deadline alone turns them into a solver
    call's :class:`SolveOptions` (:meth:`Deadline.solve_options`)."""

    #: relative gap at which a solver may stop; "optimal" is still decided by the numbers
    mip_gap: float = 0.0
    seed: int = 0
    threads: int = 1
    extra: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not (0 <= self.mip_gap < 1):
            raise OptionError("mip_gap", self.mip_gap, "must lie in [0, 1)")
        if self.threads < 1:
            raise OptionError("threads", self.threads, "must be at least 1")

    def with_(self, **changes: Any) -> SolverSettings:
        return replace(self, **changes)

    def limited(self, time_limit: float | None) -> SolveOptions:
        """These settings with a time limit: the options of one solver call."""
        return SolveOptions(time_limit, self.mip_gap, self.seed, self.threads, self.extra)


@dataclass(frozen=True)
class SolveOptions:
    """Settings plus a time limit: what a user hands a method (the limit starts the method's
    deadline) and what one solver call receives (:func:`dlsched.solvers.solve`)."""

    time_limit: float | None = DEFAULT_TIME_LIMIT
    #: relative gap at which a solver may stop; "optimal" is still decided by the numbers
    mip_gap: float = 0.0
    seed: int = 0
    threads: int = 1
    extra: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        check_time_limit(self.time_limit)
        self.settings  # noqa: B018  (validates the rest)

    @property
    def settings(self) -> SolverSettings:
        """These options without their time limit."""
        return SolverSettings(self.mip_gap, self.seed, self.threads, self.extra)

    def with_(self, **changes: Any) -> SolveOptions:
        return replace(self, **changes)


def relative_gap(objective: float | None, bound: float | None, sense: str = "min") -> float | None:
    """(incumbent - bound) / max(|incumbent|, 1e-10) for minimization; None if unknown."""
    if objective is None or bound is None:
        return None
    if not (math.isfinite(objective) and math.isfinite(bound)):
        return None
    diff = objective - bound if sense == "min" else bound - objective
    return max(diff, 0.0) / max(abs(objective), 1e-10)


@dataclass(frozen=True)
class SolveResult:
    """What a backend returns. Values are keyed by the Pyomo variable name (e.g. ``n[0,3]``)."""

    status: Status
    objective: float | None
    bound: float | None
    wall_time: float
    backend: str
    backend_version: str
    sense: str = "min"
    values: Mapping[str, float] = field(default_factory=dict, repr=False)
    message: str = ""
    info: Mapping[str, Any] = field(default_factory=dict)
    #: matrix backends (dlsched.solvers.highs): primal column values, and for LPs the row and
    #: column duals (HiGHS signs: c = A^T row_dual + col_dual); None when not available
    col_value: np.ndarray | None = field(default=None, repr=False, compare=False)
    row_dual: np.ndarray | None = field(default=None, repr=False, compare=False)
    col_dual: np.ndarray | None = field(default=None, repr=False, compare=False)

    @property
    def gap(self) -> float | None:
        return relative_gap(self.objective, self.bound, self.sense)

    @property
    def has_solution(self) -> bool:
        return self.objective is not None and bool(self.values)

    def value(self, var: Any) -> float:
        """Value of a Pyomo variable (data object) in this result."""
        return self.values[var.name]

    def summary(self) -> dict[str, Any]:
        return {
            "status": str(self.status),
            "objective": self.objective,
            "bound": self.bound,
            "gap": self.gap,
            "wall_time": self.wall_time,
            "backend": self.backend,
            "backend_version": self.backend_version,
            **({"message": self.message} if self.message else {}),
            **dict(self.info),
        }
