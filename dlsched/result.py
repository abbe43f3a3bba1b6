"""The record every method returns: a verified solution with status, objective, bound, gap."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from time import perf_counter
from typing import TYPE_CHECKING, Any, TextIO

from dlsched.errors import AgreementError, OptionError
from dlsched.solvers.base import SolveResult, Status, relative_gap
from dlsched.solvers.certify import Proof, bound_only, certify

if TYPE_CHECKING:
    import pandas as pd

    from dlsched.solvers.deadline import Clock

#: Relative agreement demanded between a producer's own objective and the checker's.
AGREEMENT = 1e-6


@dataclass(frozen=True)
class Outcome:
    """A method's answer on one instance.

    ``objective`` is always the checker's re-evaluation of ``solution`` (never a solver's own
    number); ``bound`` is a certified lower bound (minimization) or None; ``status`` is
    decided by :func:`~dlsched.solvers.certify.certify` from those numbers. Build it with
    :func:`verified_outcome`, never directly. It keeps the instance it answers
    (``instance_object``, for :meth:`plot`; ``instance`` is its name), never written by
    :meth:`to_json`.
    """

    method: str
    instance: str
    instance_hash: str
    status: Status
    objective: float | None
    bound: float | None
    wall_time: float
    solution: Any = None
    evaluation: Any = None
    solver: SolveResult | None = None
    details: Mapping[str, Any] = field(default_factory=dict)
    instance_object: Any = field(default=None, repr=False, compare=False)

    @property
    def gap(self) -> float | None:
        """(objective - bound) / objective, from the numbers (None when either is unknown)."""
        return relative_gap(self.objective, self.bound)

    def to_json(self, instance: Any = None) -> dict[str, Any]:
        sol = None
        if self.solution is not None:
            sol = self.solution.to_json(instance) if instance is not None else repr(self.solution)
        out: dict[str, Any] = {
            "method": self.method,
            "instance": self.instance,
            "instance_hash": self.instance_hash,
            "status": str(self.status),
            "objective": self.objective,
            "bound": self.bound,
            "gap": self.gap,
            "wall_time": self.wall_time,
            "checked": self.solution is not None,
            "solution": sol,
        }
        if self.solver is not None:
            out["solver"] = self.solver.summary()
        if self.details:
            out["details"] = dict(self.details)
        return out

    def to_frame(self) -> pd.DataFrame:
        """One row: method, instance, status, objective, bound, gap, wall_time, then the
        details, nested ones flattened (``jct.ResNet-18``); a detail named like one of the
        first columns is ``details.<name>``.

        >>> import dlsched
        >>> row = dlsched.solve("hare/toy-2gpu", "exact", time_limit=30).to_frame()
        >>> row[["method", "status", "objective", "gap"]].to_dict("records")
        [{'method': 'exact', 'status': 'optimal', 'objective': 13.5, 'gap': 0.0}]
        """
        import pandas as pd

        head = {
            "method": self.method,
            "instance": self.instance,
            "status": str(self.status),
            "objective": self.objective,
            "bound": self.bound,
            "gap": self.gap,
            "wall_time": self.wall_time,
        }
        details = _flatten(self.details)
        flat = {(f"details.{k}" if k in head else k): v for k, v in details.items()}
        return pd.DataFrame([{**head, **flat}])

    def plot(self, ax: Any = None) -> Any:
        """The family's picture of the solution (a Gantt chart of a schedule, the workers of a
        placement) drawn on ``ax`` (a new figure if None) and its matplotlib Axes: in Jupyter
        it shows inline; nothing is saved (``ax.figure.savefig(...)`` does). OptionError for a
        method that returns nothing to draw (a lower bound).

        >>> import dlsched
        >>> ax = dlsched.solve("hare/toy-2gpu", "hare").plot()
        >>> ax.get_title()
        'toy-2gpu / hare: feasible, objective 16, bound 11.5, gap 28.13%'
        """
        from dlsched import families
        from dlsched.plotting import draw_chart

        if self.instance_object is None:
            raise OptionError("plot", self.method, "the outcome keeps no instance to draw")
        draw = families.of(self.instance_object).drawing(self.method)
        return draw_chart(draw, self.instance_object, self, ax)


def verified_outcome(
    instance: Any,
    method: str,
    solution: Any,
    *,
    wall_time: float,
    proof: Proof | None = None,
    status: Status | None = None,
    claimed: float | None = None,
    claimed_is_upper: bool = False,
    solver: SolveResult | None = None,
    details: Mapping[str, Any] | None = None,
) -> Outcome:
    """The one way a method's answer becomes an :class:`Outcome`.

    ``solution`` (or None) is re-checked by the instance's family checker, whose objective is
    the one reported. ``claimed`` is the producer's own objective: it must agree with the
    checker within :data:`AGREEMENT` (relative), or bound it from above when
    ``claimed_is_upper`` (an epigraph model whose incumbent need not be tight); it is kept in
    ``details['claimed_objective']``. ``proof`` carries the bound and proof flags, and
    :func:`certify` decides the status. Outcomes without a solution (relaxations) pass the
    ``status`` of the bound's computation, which :func:`bound_only` turns into theirs (a
    relaxation solved to the end: ``bound``).
    """
    from dlsched import families
    from dlsched.instances import instance_hash

    family = families.of(instance)
    proof = proof or Proof()
    evaluation = objective = None
    extra: dict[str, Any] = {}
    if solution is not None:
        evaluation = family.check(instance, solution)
        objective = float(evaluation.objective)
        if claimed is not None:
            _agree(instance.name, method, claimed, objective, claimed_is_upper)
            extra["claimed_objective"] = claimed
        extra.update(family.outcome_details(instance, solution, evaluation))
    cert = certify(objective, proof, instance=instance.name, route=method)
    if solution is None and status is not None and cert.status != Status.INFEASIBLE:
        final = bound_only(status, cert.bound)
    else:
        final = cert.status
    return Outcome(
        method=method,
        instance=instance.name,
        instance_hash=instance_hash(instance),
        status=final,
        objective=objective,
        bound=cert.bound,
        wall_time=wall_time,
        solution=solution,
        evaluation=evaluation,
        solver=solver,
        details={**extra, **dict(details or {})},
        instance_object=instance,
    )


def on_request(
    outcome: Outcome, wanted: bool, bounded: Callable[[], Outcome], clock: Clock = perf_counter
) -> Outcome:
    """A heuristic's ``outcome`` as its own run made it, unless a bound is ``wanted``
    (:attr:`dlsched.models.MethodOptions.bound`): then ``bounded()``, the outcome with its
    bound in the details, and ``details["bound_time"]``, the seconds ``bounded`` took on
    ``clock`` (about 0 when a method run before it on the same instance computed the bound);
    ``wall_time`` stays the run's own."""
    if not wanted:
        return outcome
    start = clock()
    out = bounded()
    return replace(out, details={**out.details, "bound_time": clock() - start})


def no_solution(
    instance: Any,
    method: str,
    reason: str,
    *,
    wall_time: float,
    hit_limit: bool = False,
    details: Mapping[str, Any] | None = None,
) -> Outcome:
    """A method that ends with no solution and no proof, ``reason`` in ``details["reason"]``:
    status time_limit when its time limit cut it (``hit_limit``), else no_solution."""
    return verified_outcome(
        instance,
        method,
        None,
        wall_time=wall_time,
        proof=Proof(hit_limit=hit_limit),
        status=Status.TIME_LIMIT if hit_limit else Status.NO_SOLUTION,
        details={**dict(details or {}), "reason": reason},
    )


def failed(
    instance: Any,
    method: str,
    *,
    wall_time: float,
    details: Mapping[str, Any] | None = None,
) -> Outcome:
    """A method that failed (a user's method that raised or answered wrongly): status error,
    no solution, no bound, why in ``details``."""
    return verified_outcome(
        instance,
        method,
        None,
        wall_time=wall_time,
        status=Status.ERROR,
        details=details,
    )


def _agree(name: str, method: str, claimed: float, objective: float, upper: bool) -> None:
    tol = AGREEMENT * max(1.0, abs(objective))
    ok = claimed >= objective - tol if upper else abs(claimed - objective) <= tol
    if not ok:
        relation = "<" if upper else "!="
        raise AgreementError(
            f"internal error on instance '{name}', method '{method}': producer's objective "
            f"{claimed!r} {relation} checker's {objective!r} for the same solution"
        )


def _flatten(details: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested mappings as one level, keys joined by dots."""
    out: dict[str, Any] = {}
    for key, value in details.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            out.update(_flatten(value, f"{name}."))
        else:
            out[name] = value
    return out


#: Levels of containers :func:`write_json` writes item by item (the outcome, its solution, the
#: solution's jobs, one job's entry); deeper ones (a job's placement) are written whole.
STREAM_DEPTH = 4


def write_json(value: Any, out: TextIO, depth: int = STREAM_DEPTH) -> None:
    """``value`` written to ``out`` as ``json.dumps(json_safe(value), indent=1)`` writes it,
    to the byte, but as it goes: a mapping or list down to ``depth`` levels item by item, each
    deeper value made plain JSON (:func:`json_safe`) and written alone, so that a large answer
    (a schedule of 150,000 jobs) never stands whole in memory as JSON or as text. A deeper
    container met again (the same object: equal placements shared by a schedule's jobs) is
    written from its first text."""
    _write(value, out, depth, 0, {})


def _write(
    value: Any, out: TextIO, depth: int, level: int, seen: dict[tuple[int, int], Any]
) -> None:
    """:func:`write_json` of ``value`` nested ``level`` deep (its lines' indent); ``seen``:
    (id, level) -> (container, its text) of the deeper containers written so far."""
    if value is None or isinstance(value, str | int | float):  # no indent to a number
        out.write(json.dumps(json_safe(value)))
        return
    pad = " " * level
    if depth > 0 and isinstance(value, Mapping | list | tuple) and value:
        mapping = isinstance(value, Mapping)
        out.write("{" if mapping else "[")
        pairs = value.items() if isinstance(value, Mapping) else enumerate(value)
        for k, (key, item) in enumerate(pairs):
            out.write(f"{',' if k else ''}\n{pad} ")
            if mapping:
                out.write(json.dumps(str(key)) + ": ")
            _write(item, out, depth - 1, level + 1, seen)
        out.write(f"\n{pad}{'}' if mapping else ']'}")
        return
    container = isinstance(value, Mapping | list | tuple)
    if container and (id(value), level) in seen:
        out.write(seen[id(value), level][1])
        return
    text = json.dumps(json_safe(value), indent=1)
    text = text.replace("\n", "\n" + pad) if level else text
    if container:
        seen[id(value), level] = (value, text)  # the container kept: its id is not reused
    out.write(text)


def json_safe(x: Any) -> Any:
    """``x`` as plain JSON: NaN and infinities become None (null), numpy scalars and arrays
    Python numbers and lists, tuples lists, mapping keys strings; nested containers throughout."""
    if isinstance(x, float):
        return x if math.isfinite(x) else None
    if isinstance(x, Mapping):
        return {str(k): json_safe(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [json_safe(v) for v in x]
    if callable(getattr(x, "tolist", None)):  # numpy scalars and arrays
        return json_safe(x.tolist())
    return x
