"""The one rule that turns numbers into a status: :func:`certify`.

Every exact route (and every backend) hands its numbers here: the objective of a verified
solution (or None), a lower bound it proved, whether it proved infeasibility, whether it hit its
time limit, and the lattice the objective lives on when the data are integral. Nothing else
decides whether a result is "optimal".

The rule, for minimisation:

- ``optimal``    objective - bound <= tolerance(objective) = :data:`EPSILON` +
  :data:`REL_EPSILON` * |objective| (an absolute epsilon, widened only by the last digits a
  double-precision solver can resolve on large objectives), where an integral objective (all
  values in ``unit * Z``) lets the bound be rounded up to the lattice first:
  ``unit * ceil((bound - tolerance(bound)) / unit)``;
- ``time_limit`` the route stopped at its limit without closing the gap (incumbent or not);
- ``feasible``   the route stopped for another reason (a solver gap tolerance, a heuristic);
- ``infeasible`` proven, and no solution is known;
- ``bound``      a route with no solution by design (a relaxation, a lower bound) that ended
  with its bound proven: :func:`bound_only` (never ``optimal``, which needs an objective).

A proof against a known solution (infeasibility with a verified solution in hand, or a bound
above a verified objective by more than the tolerance) is a bug, not a status:
:class:`ContradictionError` names the instance and the route. A solver's own "optimal" claim is
recorded but never trusted: with ``mip_gap > 0`` it means "within the gap", which the numbers
show.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from dlsched.errors import InternalError
from dlsched.solvers.base import Status, relative_gap

if TYPE_CHECKING:
    from dlsched.solvers.base import SolveResult

#: Absolute tolerance, in objective units, between a verified objective and a proven bound.
EPSILON = 1e-6
#: Relative part of the tolerance: solvers work in double precision, so on an objective of
#: 5e6 s their bounds carry noise of about 1e-3 s (seen with SCIP); 1e-9 covers that and no
#: more (a mip_gap is never accepted: the smallest one solvers take is 1e-6 or so).
REL_EPSILON = 1e-9


def tolerance(objective: float) -> float:
    """How far a proven bound may sit from a verified objective and still close the gap."""
    return EPSILON + REL_EPSILON * abs(objective)


class ContradictionError(InternalError):
    """A proof contradicts a known solution: a bug in a model or a solver, never a status."""

    def __init__(self, instance: str, route: str, what: str) -> None:
        self.instance = instance
        self.route = route
        super().__init__(f"internal error on instance '{instance}', route '{route}': {what}")


@dataclass(frozen=True)
class Proof:
    """What a route proved, in the objective's units.

    ``bound`` must be a valid lower bound by construction (a MIP dual bound, an LP value, a
    sum of sub-optima); ``unit`` is set only when every feasible objective is an integer
    multiple of it (integral data after exact scaling).
    """

    bound: float | None = None
    claimed_optimal: bool = False
    infeasible: bool = False
    hit_limit: bool = False
    unit: float | None = None

    @classmethod
    def of(
        cls, res: SolveResult, *, bound: float | None = None, unit: float | None = None
    ) -> Proof:
        """What a solver's result proves: its dual bound (or ``bound``, when the route knows a
        stronger one), and its own status read as claimed optimal, infeasible or stopped at
        the limit (claims :func:`certify` still checks against the numbers)."""
        return cls(
            bound=res.bound if bound is None else bound,
            claimed_optimal=res.status == Status.OPTIMAL,
            infeasible=res.status == Status.INFEASIBLE,
            hit_limit=res.status == Status.TIME_LIMIT,
            unit=unit,
        )


@dataclass(frozen=True)
class Certificate:
    status: Status
    objective: float | None
    bound: float | None
    gap: float | None


def lattice_bound(bound: float, unit: float | None) -> float:
    """The bound rounded up to the objective's lattice (identity without one). A bound within
    :func:`tolerance` above a lattice point is taken to be that point first: solver feasibility
    tolerances leave bounds that much above the optimum (HiGHS, big-M model: 99.00000044 on an
    optimum of 99.0), and rounding that noise up a whole lattice step would be a false bound."""
    if unit is None or unit <= 0 or not math.isfinite(bound):
        return bound
    return unit * math.ceil((bound - tolerance(bound)) / unit)


def certify(
    objective: float | None, proof: Proof, *, instance: str = "?", route: str = "?"
) -> Certificate:
    """Status, certified bound and gap of a route's result; see the module docstring."""
    if proof.infeasible:
        if objective is not None:
            raise ContradictionError(
                instance, route, f"infeasibility proven, yet a verified solution of {objective}"
            )
        return Certificate(Status.INFEASIBLE, None, None, None)
    bound = proof.bound
    if bound is not None and not math.isfinite(bound):
        bound = None
    if bound is not None:
        bound = lattice_bound(bound, proof.unit)
    if objective is None:
        status = Status.TIME_LIMIT if proof.hit_limit else Status.ERROR
        return Certificate(status, None, bound, None)
    tol = tolerance(objective)
    if bound is not None and bound - objective > tol:
        raise ContradictionError(
            instance, route, f"proven bound {bound!r} exceeds verified objective {objective!r}"
        )
    if bound is not None and objective - bound <= tol:
        bound = min(bound, objective)  # within the tolerance: the bound is the objective
        status = Status.OPTIMAL
    elif proof.hit_limit:
        status = Status.TIME_LIMIT
    else:
        status = Status.FEASIBLE
    return Certificate(status, objective, bound, relative_gap(objective, bound))


def bound_only(status: Status, bound: float | None) -> Status:
    """The status of a route that returns no solution, from the ``status`` of its computation
    (a relaxation solved, a bound computed): ``bound`` when that computation ended (``optimal``)
    with a proven ``bound``, ``error`` when it ended with none; any other status (time_limit,
    no_solution, error) as it is."""
    if status not in (Status.OPTIMAL, Status.BOUND):
        return status
    return Status.BOUND if bound is not None else Status.ERROR


def solver_status(
    objective: float | None,
    bound: float | None,
    *,
    sense: str = "min",
    claimed_optimal: bool = False,
    infeasible: bool = False,
    hit_limit: bool = False,
) -> Status:
    """The status of a backend's raw numbers (no verified solution yet, so no contradiction
    can be proven here; routes certify verified objectives with :func:`certify`)."""
    if infeasible:
        return Status.INFEASIBLE
    if objective is None:
        return Status.TIME_LIMIT if hit_limit else Status.ERROR
    if bound is not None and math.isfinite(bound):
        diff = objective - bound if sense == "min" else bound - objective
        if abs(diff) <= tolerance(objective):
            return Status.OPTIMAL
    return Status.TIME_LIMIT if hit_limit else Status.FEASIBLE


__all__ = [
    "EPSILON",
    "bound_only",
    "REL_EPSILON",
    "tolerance",
    "solver_status",
    "Certificate",
    "ContradictionError",
    "Proof",
    "certify",
    "lattice_bound",
]
