"""The guarantee of a method: the bound a theorem gives its ratio to the optimum, and the one
rule (:func:`verdict`, with :data:`SLACK`) by which a measured ratio holds or violates it, in
``dlsched compare`` and ``dlsched verify`` alike.

A family's guarantees come from its theorems (:meth:`dlsched.families.Family.guarantees`);
:func:`register_guarantee` adds one at run time (a user's conjecture, a test's), ahead of them.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from dlsched import families
from dlsched.families import Guarantee

#: Slack before a measured ratio counts as violating its bound (solver tolerances): relative
#: and absolute (:func:`within`); the package's only one.
SLACK = 1e-6


def within(value: float, bound: float) -> bool:
    """``value`` <= ``bound`` up to :data:`SLACK` (relative and absolute); an infinite bound
    holds everything."""
    return not math.isfinite(bound) or value <= bound * (1 + SLACK) + SLACK


def verdict(ratio: float | None, bound: float | None, reference_kind: str) -> bool | None:
    """Whether ``ratio`` (oriented so that the claim reads ratio <= bound) holds: None when
    either is unknown, and when it exceeds the bound against a mere lower bound (that proves
    nothing); False, a violation, only against a certified optimum (or an exact value)."""
    if bound is None or ratio is None:
        return None
    if within(ratio, bound):
        return True
    return False if reference_kind in ("optimum", "exact") else None


#: (family, method) -> guarantee registered at run time (a user's conjecture, a test's);
#: these take precedence over the family's own theorems.
GUARANTEES: dict[tuple[str, str], Guarantee] = {}


def register_guarantee(family: str, method: str, name: str, fn: Callable[[Any], float]) -> None:
    GUARANTEES[(family, method)] = Guarantee(name, fn)


def guarantee_for(family: str, method: str) -> Guarantee | None:
    """The guarantee bounding ``method``'s ratio to the optimum on ``family``, if any: one
    registered here, the family's theorem's, or the one a user's method was registered with
    (:mod:`dlsched.usercode`)."""
    from dlsched import usercode

    return (
        GUARANTEES.get((family, method))
        or families.get(family).guarantees().get(method)
        or usercode.guarantee(family, method)
    )


__all__ = ["GUARANTEES", "SLACK", "guarantee_for", "register_guarantee", "verdict", "within"]
