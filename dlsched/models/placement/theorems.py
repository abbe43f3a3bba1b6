"""The claims of seed 000 (Liu et al., TPDS 2024) as :class:`~dlsched.verify.Theorem` records,
checked by ``dlsched verify``.

- 000-thm1: the pricing loop of Algorithm 2 ends within P_max rounds (28); the ratio is the
  most rounds any category took over its P_max (<= 1), for each reading of the pricing rule.
- 000-thm2: in every category Algorithm 2 attains the P3 optimum (18); the ratio is the largest
  P3 optimum / market throughput over the categories (= 1).
- 000-has, 000-jps: the paper's empirical claims (HAS equals the optimum, Fig. 9; JPS within
  0.54% / 2.04% at K = 15 / 30, Section VI-B), measured against the certified optimum of P1 on
  small instances; no per-instance bound is stated, so the worst ratio is reported.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from functools import partial

from dlsched.models import MethodOptions
from dlsched.models.placement.categories import categories
from dlsched.models.placement.generator import generate
from dlsched.models.placement.instance import PlacementInstance
from dlsched.verify.theorem import Measurement, Paper, Theorem, at_most_one, replaced, timed

PAPER = "seed 000: Liu, Wang, Huang, Pan, Sampling-Based Multi-Job Placement, IEEE TPDS 2024"
VARIANTS = ("clearing", "paper", "literal")


def small(seed: int, jobs: int | None = None, gpus: int | None = None) -> PlacementInstance:
    """Table III jobs on a mixed cluster (worker k has type k mod 3, two GPUs a node)."""
    return generate(jobs or 2, gpus or 4, seed, layout="mixed", gpus_per_node=2)


def _worst_category(inst: PlacementInstance, theorem: int, variant: str) -> Measurement:
    """The category of the largest ratio: rounds / P_max (Theorem 1) or P3 optimum / market
    throughput (Theorem 2), infinite where the pricing loop did not end."""
    from dlsched.models.placement.exact import solve_p3  # Pyomo: on first measure
    from dlsched.models.placement.guarantees import market

    worst, at = -math.inf, None
    for cat in categories(inst.num_workers, inst.num_jobs):
        tput, rounds, most = market(inst, tuple(cat), variant)
        if theorem == 1:
            r = math.inf if rounds is None else rounds / most
            ref: float = most
        else:
            ref = solve_p3(inst, tuple(cat))[0]
            r = math.inf if not tput else ref / tput
        if r > worst:
            worst, at = r, (tuple(cat), tput, rounds, ref)
    assert at is not None
    cat, tput, rounds, ref = at
    value: float | None = rounds if theorem == 1 else tput
    kind = "exact" if theorem == 1 else "optimum"
    note = "" if rounds is not None else "the pricing loop did not end"
    return Measurement(
        f"algorithm2-{variant}", value, ref, kind, worst, 1.0, "",
        note=note, details={"category": ",".join(map(str, cat))},
    )  # fmt: skip


def _per_variant(inst: PlacementInstance, theorem: int) -> list[Measurement]:
    return [timed(partial(_worst_category, inst, theorem, v)) for v in VARIANTS]


def theorem1_measure(
    theorem: Theorem, inst: PlacementInstance, options: MethodOptions
) -> list[Measurement]:
    """Rounds of the pricing loop over P_max, the worst category, per reading."""
    return _per_variant(inst, 1)


def theorem2_measure(
    theorem: Theorem, inst: PlacementInstance, options: MethodOptions
) -> list[Measurement]:
    """P3 optimum over the market's throughput, the worst category, per reading."""
    return _per_variant(inst, 2)


def shrink(inst: PlacementInstance) -> Iterator[PlacementInstance]:
    """A job removed (with its throughput row), or a worker removed (with its column)."""
    for i, _ in enumerate(inst.jobs):
        cand = replaced(
            inst,
            jobs=inst.jobs[:i] + inst.jobs[i + 1 :],
            throughput=inst.throughput[:i] + inst.throughput[i + 1 :],
        )
        if cand is not None and inst.num_jobs > 1:
            yield cand
    for k, _ in enumerate(inst.workers):
        cand = replaced(
            inst,
            workers=inst.workers[:k] + inst.workers[k + 1 :],
            throughput=tuple(row[:k] + row[k + 1 :] for row in inst.throughput),
        )
        if cand is not None:
            yield cand


SEED_000 = Paper(PAPER, "placement", small, {"jobs": 2, "gpus": 4}, shrink)
ALGORITHM2 = [f"algorithm2-{v}" for v in VARIANTS]


def _empirical(method: str, statement: str) -> Theorem:
    """A claim of the evaluation with no bound stated: ``method`` against the certified
    optimum (exhaustive search), its worst ratio reported."""
    ratio = f"{method.upper()} / optimum"
    return SEED_000.theorem(f"000-{method}", statement, [method], "exhaustive", ratio)


THEOREMS: list[Theorem] = [
    SEED_000.theorem(
        "000-thm1",
        "Theorem 1: The pricing process in Algorithm 2 must come to an end within a limited "
        "number of steps.",
        ALGORITHM2,
        "P_max of (28)",
        "rounds / P_max (worst category)",
        bound=at_most_one,  # rounds <= P_max
        measure=theorem1_measure,
    ),
    SEED_000.theorem(
        "000-thm2",
        "Theorem 2: Algorithm 2 yields the highest training throughput.",
        ALGORITHM2,
        "P3 optimum (HiGHS) of each category",
        "P3 optimum / market throughput (worst category)",
        bound=at_most_one,  # the market reaches the P3 optimum
        measure=theorem2_measure,
    ),
    _empirical(
        "has",
        "HAS 'incurs the same average JCT as exhaustive search but with a much lower ART' "
        "(Section VI, Fig. 9).",
    ),
    _empirical(
        "jps",
        "JPS (N = 60) is within 0.54% (K = 15) and 2.04% (K = 30) of the optimum (Section VI-B).",
    ),
]

__all__ = ["THEOREMS", "shrink", "theorem1_measure", "theorem2_measure"]
