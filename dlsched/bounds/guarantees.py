"""The guarantee of a method: the bound a theorem gives its ratio to the optimum.

A family's guarantees come from its theorems (:meth:`dlsched.families.Family.guarantees`);
:func:`register_guarantee` adds one at run time (a user's conjecture, a test's), ahead of them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dlsched import families
from dlsched.families import Guarantee

#: Relative slack before a measured ratio counts as violating a guarantee (solver tolerances).
SLACK = 1e-6

#: (family, method) -> guarantee registered at run time (a user's conjecture, a test's);
#: these take precedence over the family's own theorems.
GUARANTEES: dict[tuple[str, str], Guarantee] = {}


def register_guarantee(family: str, method: str, name: str, fn: Callable[[Any], float]) -> None:
    GUARANTEES[(family, method)] = Guarantee(name, fn)


def guarantee_for(family: str, method: str) -> Guarantee | None:
    """The guarantee bounding ``method``'s ratio to the optimum on ``family``, if any."""
    return GUARANTEES.get((family, method)) or families.get(family).guarantees().get(method)


__all__ = ["GUARANTEES", "SLACK", "guarantee_for", "register_guarantee"]
