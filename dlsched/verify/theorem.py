"""A theorem (or an empirical claim) of a paper, as something a computer can check.

A :class:`Theorem` says which family it speaks of, how to draw small instances with certified
references (``generate``), when it applies (``assumptions``: the reason it does not, or None),
and how to measure it on one instance (``measure``: :class:`Measurement` rows whose ``ratio``
the theorem bounds by ``bound``). The default measure runs the theorem's methods and its
reference method (a certified optimum, or a certified lower bound when the exact route stops
at its limit) and reports method / reference. A theorem with a ``guarantee`` name is also
its methods' guarantee in ``dlsched compare``: one record serves both.

Families list their theorems in ``dlsched/models/<family>/theorems.py``, each built by a
:class:`Paper` (what the theorems of one paper share), and expose them through
``Family.theorems()``; the core finds them with :func:`registry`.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from dlsched import families
from dlsched.bounds import SLACK, reference_of, reference_options, verdict
from dlsched.errors import DlschedError, OptionError
from dlsched.models import MethodOptions, run_method


@dataclass(frozen=True)
class Measurement:
    """One comparison on one instance: ``ratio`` (= value / reference, oriented so that the
    claim reads ratio <= bound) against ``bound`` (None: an empirical claim)."""

    method: str
    value: float | None
    reference: float | None
    reference_kind: str  # "optimum" | "lower bound" | "none" | what the theorem compares with
    ratio: float | None
    bound: float | None
    status: str = ""
    case: str = ""  # a sub-case of the instance (category, price draw, ...), part of the key
    wall_time: float = 0.0
    note: str = ""
    details: Mapping[str, Any] = field(default_factory=dict)  # what a reader needs to replay

    def verdict(self, applies: bool) -> bool | None:
        """:func:`dlsched.bounds.verdict` of the ratio and the bound; None also when the theorem
        does not apply (a violation outside the assumptions proves nothing)."""
        return verdict(self.ratio, self.bound, self.reference_kind) if applies else None


Generator = Callable[..., Any]
Measure = Callable[["Theorem", Any, MethodOptions], list[Measurement]]
#: replay(theorem, instance, case, details, options): the measurements of one recorded sub-case
#: (a row's ``case`` and ``details``) taken again on ``instance``.
Replay = Callable[["Theorem", Any, str, Mapping[str, Any], MethodOptions], list[Measurement]]
#: shrink_case(instance, details): smaller (instance, details) pairs of one recorded sub-case.
ShrinkCase = Callable[[Any, Mapping[str, Any]], Iterable[tuple[Any, Mapping[str, Any]]]]


def _always(instance: Any) -> str | None:
    return None


@dataclass(frozen=True)
class Theorem:
    """A checkable claim of a paper about one family."""

    id: str  # "<seed>-<name>", e.g. "002-thm4"
    paper: str  # the seed and the paper, one line
    statement: str  # the claim, quoted from the paper
    family: str
    methods: tuple[str, ...]  # what is measured
    reference: str  # the reference method ("exact"), or what the custom measure compares with
    generate: Generator  # generate(seed, jobs=None, gpus=None) -> a small instance
    bound: Callable[[Any], float] | None = None  # the guarantee; None: an empirical claim
    assumptions: Callable[[Any], str | None] = _always  # why the theorem does not apply
    measure: Measure | None = None  # default: methods / reference (:func:`ratio_measure`)
    shrink: Callable[[Any], Iterable[Any]] | None = None  # smaller candidates of an instance
    # A theorem whose sub-cases are drawn from the instance (a measure that draws prices from
    # its hash) shrinks the instance together with the violating case, kept fixed:
    replay: Replay | None = None
    shrink_case: ShrinkCase | None = None
    ratio: str = "method / optimum"  # what the ratio is, for the report
    sizes: Mapping[str, int] = field(default_factory=dict)  # default jobs, gpus
    #: The bound's name as ``dlsched compare`` prints it: a theorem that has one is its methods'
    #: guarantee there (:meth:`dlsched.families.Family.guarantees`), with this same ``bound``.
    guarantee: str | None = None

    def applies(self, instance: Any) -> bool:
        return self.assumptions(instance) is None

    def why_not(self, instance: Any) -> str | None:
        return self.assumptions(instance)

    def run(self, instance: Any, options: MethodOptions) -> list[Measurement]:
        return (self.measure or ratio_measure)(self, instance, options)

    @property
    def shrinkable(self) -> bool:
        return self.shrink is not None or (self.replay is not None and self.shrink_case is not None)

    def instance(self, seed: int, jobs: int | None = None, gpus: int | None = None) -> Any:
        """The instance of ``seed`` (named after the theorem and the seed)."""
        jobs = self.sizes.get("jobs") if jobs is None else jobs
        gpus = self.sizes.get("gpus") if gpus is None else gpus
        inst = self.generate(seed, jobs=jobs, gpus=gpus)
        return dataclasses.replace(inst, name=f"{self.id}-s{seed}")


def at_most_one(instance: Any) -> float:
    """The bound of a claim whose ratio is at most 1 (an algorithm that is exact, a loop that
    ends within its limit)."""
    return 1.0


@dataclass(frozen=True)
class Paper:
    """What the theorems of one paper about one family share. :meth:`theorem` builds each
    record from what is its own (a shared field given there is overridden)."""

    paper: str  # the seed and the paper, one line
    family: str
    generate: Generator
    sizes: Mapping[str, int]
    shrink: Callable[[Any], Iterable[Any]] | None = None

    def theorem(
        self, id: str, statement: str, methods: Iterable[str], reference: str, ratio: str,
        **own: Any,
    ) -> Theorem:  # fmt: skip
        """The theorem ``id``: its ``statement``, the ``methods`` measured against
        ``reference``, what the ``ratio`` is, and any other :class:`Theorem` field."""
        shared = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        mine = {"statement": statement, "methods": tuple(methods), "reference": reference}
        return Theorem(id=id, ratio=ratio, **{**shared, **mine, **own})


def ratio_measure(theorem: Theorem, instance: Any, options: MethodOptions) -> list[Measurement]:
    """Each method's verified objective over the reference method's certified optimum (or its
    certified lower bound), against the theorem's bound on the instance."""
    ref = run_method(instance, theorem.reference, reference_options(options))
    value, kind = reference_of(ref)
    bound = theorem.bound(instance) if theorem.bound is not None else None
    rows = [Measurement(theorem.reference, ref.objective, value, kind, None, None,
                        str(ref.status), wall_time=ref.wall_time)]  # fmt: skip
    for m in theorem.methods:
        out = run_method(instance, m, options)
        ratio = None
        if out.objective is not None and value is not None and value > 0:
            ratio = out.objective / value
        rows.append(
            Measurement(
                m,
                out.objective,
                value,
                kind,
                ratio,
                bound,
                str(out.status),
                wall_time=out.wall_time,
            )  # fmt: skip
        )
    return rows


def timed(fn: Callable[[], Measurement]) -> Measurement:
    """``fn()`` with its wall time filled in."""
    t0 = time.perf_counter()
    m = fn()
    return dataclasses.replace(m, wall_time=time.perf_counter() - t0)


# --- shrinking helpers: candidates one element smaller ----------------------------------------


def drop_each(instance: Any, attr: str, keep: int = 1) -> Iterator[Any]:
    """``instance`` without each element of its tuple ``attr`` in turn (never below ``keep``)."""
    items = getattr(instance, attr)
    if len(items) <= keep:
        return
    for i in range(len(items)):
        cand = replaced(instance, **{attr: items[:i] + items[i + 1 :]})
        if cand is not None:
            yield cand


def replaced(instance: Any, **changes: Any) -> Any | None:
    """``dataclasses.replace(instance, **changes)``, or None when the result is not a valid
    instance (its constructor or its family's validation refuses it)."""
    try:
        cand = dataclasses.replace(instance, **changes)
    except (DlschedError, ValueError, IndexError, KeyError):
        return None
    return cand if valid(cand) else None


def valid(instance: Any) -> bool:
    """Whether ``instance`` survives its family's validation (to_dict -> from_dict)."""
    fam = families.of(instance)
    try:
        fam.from_dict(fam.to_dict(instance), "shrink")
    except (DlschedError, ValueError, IndexError, KeyError):
        return False
    return True


# --- the registry --------------------------------------------------------------------------


def registry() -> dict[str, Theorem]:
    """Every family's theorems, by id, in registry order."""
    out: dict[str, Theorem] = {}
    for name in families.names():
        fam = families.get(name)
        listed = getattr(fam, "theorems", None)
        for t in listed() if listed is not None else ():
            out[t.id] = t
    return out


def select(ids: Sequence[str]) -> list[Theorem]:
    """The theorems named by ``ids``, all of them when ``ids`` is empty. Each key selects the
    theorem with exactly that id when there is one; otherwise every theorem of the family of
    that name, or whose id starts with the key and a dash (a seed prefix such as "002" picks
    all of that paper's theorems). OptionError naming an unknown one."""
    table = registry()
    if not ids:
        return list(table.values())
    chosen: dict[str, Theorem] = {}
    for key in ids:
        exact = table.get(key)
        hits = (
            [exact]
            if exact is not None
            else [t for t in table.values() if key == t.family or t.id.startswith(f"{key}-")]
        )
        if not hits:
            raise OptionError("THEOREM", key, f"unknown theorem (known: {', '.join(table)})")
        chosen.update((t.id, t) for t in hits)
    return list(chosen.values())


__all__ = [
    "SLACK",
    "Measurement",
    "Paper",
    "Replay",
    "ShrinkCase",
    "Theorem",
    "at_most_one",
    "drop_each",
    "ratio_measure",
    "registry",
    "replaced",
    "select",
    "timed",
    "valid",
]
