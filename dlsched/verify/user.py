"""The worst-case search of any method (``dlsched search``, :func:`dlsched.search`): a
:class:`~dlsched.verify.theorem.Theorem` made on the fly for (family, method, guarantee), which
``verify --search`` (:mod:`.search`) then attacks with its lanes, moves, CMA-ES, certification,
shrinking, log and resume, as it attacks the papers' claims.

**What the record borrows.** A family's theorems already say how to draw instances its exact
routes certify in a fraction of a second, which exact method is the reference and how to
shrink a counterexample. The record borrows them from one theorem of the family whose
reference is an exact method (:func:`lender`), the first that:

1. measures ``method`` itself by the default measure (method / reference);
2. measures ``method`` itself (a measure of its own);
3. measures any method by the default measure (an online policy against the certified
   offline optimum, a heuristic against the optimum: the comparison the search makes);
4. has an exact reference at all.

Online methods are judged as the families' online claims judge theirs: their objective over
the certified offline optimum of the same objective (``exact``), the only reference the search
scores (a ratio to a flow-time lower bound overstates). A family whose theorems lend nothing
draws from its own generator (:data:`SIZES`) against its first exact method, and is not shrunk.

**What is its own.** Its id (``search-<family>-<method>``, the method made file-safe), the one
method, the measure (the method over the reference, :func:`~.theorem.ratio_measure`) and the
bound: ``guarantee`` None (the worst ratio is reported, per instance size), a number, or a
function of the instance. The lender's assumptions are not borrowed: they are the
conditions of the lender's bound, not of the user's.
"""

from __future__ import annotations

import hashlib
import math
import numbers
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from dlsched import families
from dlsched.errors import OptionError
from dlsched.models import MethodOptions
from dlsched.models import methods as family_methods
from dlsched.verify.theorem import Measurement, Theorem, ratio_measure

#: The draws' size (jobs, GPUs or servers) when no theorem of the family lends its own.
SIZES = {"jobs": 3, "gpus": 2}
#: Longest method part of a record's id (a longer one is cut and ends in a hash of it).
SLUG = 40
#: What a record says of where it comes from (its ``paper``).
ORIGIN = "a user's method (dlsched search)"

Guarantee = float | Callable[[Any], float] | None


def slug(method: str) -> str:
    """``method`` as part of an id and a file name: lower case, every run of other characters
    than letters and digits one ``-``; cut to :data:`SLUG` characters, with a hash of the
    whole, when longer (``examples/rules.py:greedy`` -> ``examples-rules-py-greedy``)."""
    text = re.sub(r"[^a-z0-9]+", "-", method.lower()).strip("-") or "method"
    if len(text) <= SLUG:
        return text
    digest = hashlib.sha256(method.encode()).hexdigest()[:8]
    return f"{text[: SLUG - 9].rstrip('-')}-{digest}"


def record_id(family: str, method: str) -> str:
    return f"search-{family}-{slug(method)}"


def exact_methods(family: str) -> list[str]:
    """The family's methods that certify an optimum, in table order."""
    return [name for name, m in family_methods(family).items() if m.exact]


def lender(family: str, method: str) -> Theorem | None:
    """The theorem of ``family`` whose draws, sizes, reference and shrinking the record of
    ``method`` borrows (the module's rules, in order); None when no theorem of the family has
    an exact method as its reference."""
    exact = set(exact_methods(family))
    usable = [t for t in families.get(family).theorems() if t.reference in exact]
    rules: tuple[Callable[[Theorem], bool], ...] = (
        lambda t: method in t.methods and t.measure is None,
        lambda t: method in t.methods,
        lambda t: t.measure is None,
        lambda t: True,
    )
    for rule in rules:
        hit = next((t for t in usable if rule(t)), None)
        if hit is not None:
            return hit
    return None


def family_draw(family: str, seed: int, jobs: int | None = None, gpus: int | None = None) -> Any:
    """The family's own generator at the draw size (:data:`SIZES` by default)."""
    j, g = jobs or SIZES["jobs"], gpus or SIZES["gpus"]
    return families.get(family).generate(j, g, seed)


def constant(value: float, instance: Any) -> float:
    """The bound of a guarantee given as a number."""
    return value


def bound_of(guarantee: Guarantee) -> Callable[[Any], float] | None:
    """The record's ``bound``: None, a positive number (the same on every instance) or a
    function of the instance; OptionError otherwise."""
    if guarantee is None:
        return None
    if isinstance(guarantee, numbers.Real) and not isinstance(guarantee, bool):
        if not (math.isfinite(guarantee) and guarantee > 0):
            raise OptionError("guarantee", guarantee, "expected a positive number")
        return partial(constant, float(guarantee))
    if callable(guarantee):
        return guarantee
    raise OptionError(
        "guarantee", guarantee, "expected None, a number or a function of the instance"
    )


@dataclass(frozen=True)
class Carried:
    """A user method (a Python object registered here, or a spec): what the search's other
    processes need to run it (:func:`dlsched.usercode.portable`: the object itself, pickled
    with the record, or the spec with its file's absolute path), registered there again before
    its first run."""

    family: str
    name: str
    shipped: tuple[Any, ...]

    def ensure(self) -> None:
        from dlsched import usercode

        usercode.install(self.shipped)


def carried_measure(carried: Carried, theorem: Theorem, instance: Any,
                    options: MethodOptions) -> list[Measurement]:  # fmt: skip
    """:func:`~.theorem.ratio_measure`, the carried method registered here first."""
    carried.ensure()
    return ratio_measure(theorem, instance, options)


def method_theorem(family: str, method: str, guarantee: Guarantee = None,
                   carried: Carried | None = None) -> Theorem:  # fmt: skip
    """The record of ``method`` (a name :func:`dlsched.models.run_method` runs) on ``family``
    against ``guarantee`` (None, a number, a function of the instance), borrowed from
    :func:`lender` (the module's rules); ``carried``: the Python object behind the name, for
    the processes that have not registered it."""
    families.get(family)  # OptionError for an unknown family
    bound = bound_of(guarantee)
    base = lender(family, method)
    measure = partial(carried_measure, carried) if carried is not None else None
    said = "no guarantee: its worst ratio" if bound is None else f"ratio <= {guarantee}"
    own: dict[str, Any] = {
        "id": record_id(family, method),
        "paper": ORIGIN,
        "statement": f"{method} on {family} instances, {said}",
        "methods": (method,),
        "bound": bound,
        "measure": measure,
        "guarantee": None,
    }
    if base is not None:
        shared: dict[str, Any] = {
            "generate": base.generate,
            "sizes": dict(base.sizes),
            "shrink": base.shrink,
        }
        return Theorem(family=family, reference=base.reference,
                       ratio=f"{method} / {base.reference}", **shared, **own)  # fmt: skip
    exact = exact_methods(family)
    if not exact:
        raise OptionError("family", family, "has no exact method to certify a reference")
    return Theorem(family=family, reference=exact[0], ratio=f"{method} / {exact[0]}",
                   generate=partial(family_draw, family), sizes=dict(SIZES), **own)  # fmt: skip


__all__ = [
    "ORIGIN",
    "SIZES",
    "Carried",
    "bound_of",
    "carried_measure",
    "constant",
    "exact_methods",
    "family_draw",
    "lender",
    "method_theorem",
    "record_id",
    "slug",
]
