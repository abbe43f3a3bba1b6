"""Methods measured against a reference on one instance: :class:`Comparison` records.

The reference is a certified optimum, or a certified lower bound when the exact route stops at
its limit (``reference_kind`` says which); the method's guarantee stands beside its ratio. This
is the one module of :mod:`dlsched.bounds` that runs methods.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

from dlsched.bounds.guarantees import guarantee_for, verdict
from dlsched.errors import UserCodeError
from dlsched.models import MethodOptions, find_method, run_method
from dlsched.result import Outcome, failed, json_safe
from dlsched.solvers.base import Status


@dataclass(frozen=True)
class Comparison:
    instance: str
    instance_hash: str
    family: str
    method: str
    status: str
    objective: float | None
    wall_time: float
    reference_method: str
    reference: float | None  # optimum, or a certified lower bound
    reference_kind: str  # "optimum" | "lower bound" | "none"
    value_kind: str  # "objective" (a verified solution) | "bound" (a relaxation's) | "none"
    ratio: float | None  # value / reference (>= 1 for a heuristic, <= 1 for a relaxation)
    gap: float | None  # ratio - 1
    guarantee_name: str | None
    guarantee: float | None
    holds: bool | None  # ratio <= guarantee (None when unknown)
    jobs: int | None = None  # the instance's size, what ratios are drawn against
    #: with a bound asked for (:attr:`MethodOptions.bound`): an online heuristic's flow time's
    #: gap to the certified flow-time bound, and the seconds the method spent on the bound
    #: (apart from ``wall_time``; the first method to ask computes it, the others share it)
    flow_time_gap: float | None = None
    bound_time: float | None = None
    #: a user's method that failed (status error): its one-line message, and the traceback
    #: of the user's own code (:class:`dlsched.errors.UserCodeError`)
    error: str | None = None
    traceback: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The record as plain JSON; the bound's two fields only when a bound was given, the
        error's only for a failed user method."""
        out: dict[str, Any] = json_safe(asdict(self))
        for name in (*BOUND_FIELDS, *ERROR_FIELDS):
            if out[name] is None:
                del out[name]
        return out


#: The fields of a :class:`Comparison` that a bound asked for fills.
BOUND_FIELDS = ("flow_time_gap", "bound_time")
#: The fields of a :class:`Comparison` of a user's method that failed.
ERROR_FIELDS = ("error", "traceback")


def reference_of(out: Outcome) -> tuple[float | None, str]:
    """A reference run's value and kind: its proven optimum, else its certified lower bound."""
    if out.status == Status.OPTIMAL and out.objective is not None:
        return out.objective, "optimum"
    if out.bound is not None:
        return out.bound, "lower bound"
    return None, "none"


def comparison(instance: Any, out: Outcome, ref: Outcome) -> Comparison:
    value, kind = reference_of(ref)
    ratio = gap = None
    mine, value_kind = out.objective, "objective"
    if mine is None:
        mine, value_kind = (out.bound, "bound") if out.bound is not None else (None, "none")
    if value is not None and value > 0 and mine is not None:
        ratio = mine / value
        gap = ratio - 1
    g = guarantee_for(instance.family, out.method)
    bound = g.bound(instance) if g else None
    holds = verdict(ratio, bound, kind) if value_kind == "objective" else None
    return Comparison(
        instance=out.instance,
        instance_hash=out.instance_hash,
        family=instance.family,
        method=out.method,
        status=str(out.status),
        objective=out.objective,
        wall_time=out.wall_time,
        reference_method=ref.method,
        reference=value,
        reference_kind=kind,
        value_kind=value_kind,
        ratio=ratio,
        gap=gap,
        guarantee_name=g.name if g else None,
        guarantee=bound,
        holds=holds,
        jobs=getattr(instance, "num_jobs", None),
        flow_time_gap=out.details.get("flow_time_gap"),
        bound_time=out.details.get("bound_time"),
        error=out.details.get("error") if out.status == Status.ERROR else None,
        traceback=out.details.get("traceback") or None if out.status == Status.ERROR else None,
    )


def check_methods(family: str, methods: Sequence[str], reference: str) -> None:
    """OptionError naming the first of ``methods`` (``--methods``) or ``reference``
    (``--reference``) that ``family`` does not have: checked before anything is run or written."""
    for option, names in (("--reference", [reference]), ("--methods", list(methods))):
        for name in names:
            find_method(family, name, option)


def reference_options(options: MethodOptions) -> MethodOptions:
    """What a reference runs under: the caller's settings, time limit and clock, without the
    methods' parameters (the one rule for compare, sweep and verify)."""
    return replace(options, params={})


def against_reference(
    instance: Any,
    methods: Iterable[str],
    reference: str,
    options: MethodOptions,
    with_reference: bool = True,
) -> Iterator[Comparison]:
    """Run ``reference`` once, then each of ``methods`` (the reference itself skipped), each
    record yielded as soon as it is run: first the reference's own (when ``with_reference``).
    Every outcome is checker-verified (the method layer guarantees it). The reference runs
    without the methods' parameters. With ``options.bound``, the instance's bound is computed
    by the first run that asks for it and shared by the others (the families keep it per
    instance object)."""
    ref = run_judged(instance, reference, reference_options(options))
    if with_reference:
        yield comparison(instance, ref, ref)
    for m in methods:
        if m != reference:
            yield comparison(instance, run_judged(instance, m, options), ref)


def run_judged(instance: Any, method: str, options: MethodOptions) -> Outcome:
    """:func:`~dlsched.models.run_method`, a user's method that fails (it raised, returned a
    wrong form or an infeasible answer: :class:`~dlsched.errors.UserCodeError`) as an
    outcome of status error with its message and traceback (``details["error"]``,
    ``details["traceback"]``), so that the other methods' records are still made."""
    start = options.clock()
    try:
        return run_method(instance, method, options)
    except UserCodeError as e:
        details = {"error": str(e), "traceback": e.user_traceback}
        return failed(instance, method, wall_time=options.clock() - start, details=details)


def compare(
    instance: Any,
    methods: Sequence[str],
    reference: str = "exact",
    options: MethodOptions | None = None,
) -> list[Comparison]:
    """Run ``reference`` and every method on ``instance``: the reference's record, then one
    per method."""
    check_methods(instance.family, methods, reference)
    return list(against_reference(instance, methods, reference, options or MethodOptions()))


def to_frame(rows: Iterable[Comparison]):  # type: ignore[no-untyped-def]
    """The records as a DataFrame (an unbounded guarantee stays inf, unlike in JSON)."""
    import pandas as pd

    return pd.DataFrame([asdict(r) for r in rows])


__all__ = [
    "BOUND_FIELDS",
    "ERROR_FIELDS",
    "Comparison",
    "against_reference",
    "check_methods",
    "compare",
    "comparison",
    "reference_of",
    "reference_options",
    "run_judged",
    "to_frame",
]
