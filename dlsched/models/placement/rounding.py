"""Rounding P1's continuous relaxation into worker counts and a placement (Liu et al., TPDS
2024, seed 000).

The relaxation is P1 (8)/(14) as :func:`~.model.build_p1` states it (counts n_ig of
interchangeable workers, the unary job sizes K_i, node use and ``spans`` for the ring (5)-(6))
with every integer and binary variable continuous, the convex computation term
t_i >= T_i |Pi_i| / V_i kept as supporting lines (``computation="tangents"``), one added at
each LP's V_i where the LP under-estimates the term, until the LP is within :data:`CONVERGED`
of the relaxation's own optimum (Kelley's cutting planes; :mod:`.exact`'s outer approximation
grows its master the same way). Every LP optimum is a lower bound on P1's optimum: the
tangents under-estimate the convex term and the rest only drops integrality. The last one is
reported (``details["lp_value"]``) and certifies the placement (the outcome's ``bound``).

It is not integral. At the LP optimum of the bundled instances (motivating, s3k8-seed1,
s4k12-seed0, s4k15-seed0, s4k30-seed0, s5k100-seed0) 2 of 4, 5 of 6, 6 of 12, 6 of 12, 6 of 24
and 16 of 100 counts n_ig are fractional (``details["fractional_counts"]``), and so are 2, 3,
3, 3, 4 and 5 of the jobs' sizes K_i; ``spans`` takes values of 0.01-0.56, so a ring that must
cross nodes pays a share of the slow link. The LP lies 0.13 %, 0.15 %, 1.3 %, 1.6 %, 3.0 % and
7.4 % below the optimum, and 15 % at K = 200 (benchmarks/rounding_placement.py).

- ``lp-round``: in every worker group g each job keeps floor(n_ig) and the cap_g - sum_i
  floor(n_ig) workers left go to the jobs of largest fractional part (ties: the lower job),
  so each group's workers are all placed (8c)-(8d); then :func:`repair`.
- ``lp-random``: in every worker group, systematic sampling of the fractional parts (one
  uniform draw u: job i gets one more worker for each of u, u + 1, ... in its stretch of the
  parts' running sum, so with probability its fractional part, and the group still places
  cap_g workers); then :func:`repair`; the least average JCT of :data:`RANDOM_SAMPLES` draws
  from a generator seeded by the method's seed.

:func:`repair` gives a job left without a worker (8b) one worker of the group its relaxed
counts favour most, from a job that keeps one. Neither rounding has a guarantee.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from dlsched.models import MethodOptions
from dlsched.models.placement.evaluate import Evaluator
from dlsched.models.placement.heuristics import optimus_lb
from dlsched.models.placement.instance import PlacementInstance
from dlsched.models.placement.model import Groups, add_tangent, build_p1, expand_counts
from dlsched.models.placement.solution import Placement
from dlsched.result import Outcome, verified_outcome
from dlsched.solvers.base import SolverSettings, Status
from dlsched.solvers.certify import Proof
from dlsched.solvers.deadline import Deadline

#: The roundings, by method name.
ROUNDINGS = ("lp-round", "lp-random")
#: Draws of ``lp-random``; the least average JCT is kept.
RANDOM_SAMPLES = 20
#: Most LPs of the cutting-plane loop (each adds the tangents the last one violated).
MAX_LP_ROUNDS = 100
#: The loop ends when the LP's optimum is within this share of the relaxation's own: the LP
#: plus its tangents' violations (the convex term at the LP's V_i) bounds that from above.
CONVERGED = 1e-6
#: A count this far from an integer is fractional.
FRACTIONAL = 1e-6


@dataclass(frozen=True)
class Relaxation:
    """The last LP of the cutting-plane loop: its counts n_ig (jobs x worker groups) and value
    (None when no LP was solved to optimality), and how the loop went."""

    counts: np.ndarray | None
    value: float | None
    groups: Groups
    lps: int
    cuts: int
    #: why the loop ended: "converged" (:data:`CONVERGED`), "rounds", or the last LP's status
    ended: str


def solve_relaxation(
    instance: PlacementInstance, settings: SolverSettings, deadline: Deadline
) -> Relaxation:
    """P1 relaxed, a tangent added at each job's V_i where the LP under-estimates the convex
    term, until the LP is within :data:`CONVERGED` of the relaxation's optimum (at most
    :data:`MAX_LP_ROUNDS` LPs; each LP on HiGHS handed what is left of ``deadline``, the loop
    ends when it has passed)."""
    from dlsched.solvers import solve
    from dlsched.solvers.pyomo_env import pyo

    m = build_p1(instance, computation="tangents")
    pyo.TransformationFactory("core.relax_integer_vars").apply_to(m)
    counts, value, lps, cuts, ended = None, None, 0, 0, "rounds"
    while lps < MAX_LP_ROUNDS:
        if deadline.passed():
            ended = str(Status.TIME_LIMIT)
            break
        res = solve(m, "highs", deadline.solve_options(settings))
        lps += 1
        if res.status != Status.OPTIMAL or res.objective is None:
            ended = str(res.status)
            break
        counts = np.array([[res.values[m.n[i, g].name] for g in m.GROUPS] for i in m.JOBS])
        value = float(res.objective)
        v = np.array([res.values[m.V[i].name] for i in m.JOBS])
        t = np.array([res.values[m.t[i].name] for i in m.JOBS])
        short = np.clip(instance.work / v - t, 0.0, None)  # the convex term left out
        if short.sum() / instance.num_jobs <= CONVERGED * abs(value):
            ended = "converged"
            break
        for i in np.flatnonzero(short > 0):
            add_tangent(m, int(i), float(v[i]))
        cuts += int((short > 0).sum())
    return Relaxation(counts, value, m._groups, lps, cuts, ended)


def largest_remainder(n: np.ndarray, caps: tuple[int, ...]) -> np.ndarray:
    """Per worker group (column), floor(n_ig) and the workers left to the largest fractional
    parts (ties: the lower job): integer counts with the group's cap as column sum."""
    n = np.clip(n, 0.0, None)
    out = np.floor(n + FRACTIONAL).astype(int)
    for g, cap in enumerate(caps):
        left = cap - int(out[:, g].sum())
        order = np.argsort(-(n[:, g] - out[:, g]), kind="stable")
        out[order[:left], g] += 1
    return out


def systematic(n: np.ndarray, caps: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """Per worker group, floor(n_ig) plus systematic sampling of the fractional parts: one
    uniform u, job i gets a worker for each point u + j (j integer) in its stretch of the
    parts' running sum (scaled to the workers left): the group's cap as column sum."""
    n = np.clip(n, 0.0, None)
    out = np.floor(n + FRACTIONAL).astype(int)
    for g, cap in enumerate(caps):
        left = cap - int(out[:, g].sum())
        if left <= 0:
            continue
        parts = np.clip(n[:, g] - out[:, g], 0.0, None)
        total = parts.sum()
        running = np.cumsum(parts) * (left / total) if total > 0 else np.full(len(parts), left)
        running[-1] = left  # exactly: the draws place all of them
        u = rng.random()
        points = np.floor(running - u) - np.floor(np.concatenate(([0.0], running[:-1])) - u)
        out[:, g] += points.astype(int)
    return out


def repair(counts: np.ndarray, n: np.ndarray) -> np.ndarray:
    """``counts`` with every job holding a worker (8b): while job i has none, it takes one
    worker of the group g of largest relaxed n_ig from a job holding two or more (the one
    holding most of g; ties: the lower group, then job). Each step serves one job and leaves
    its donor served; K >= S makes a donor exist."""
    out = counts.copy()
    for i in range(out.shape[0]):
        if out[i].sum() > 0:
            continue
        donors = [
            (j, g)
            for j in range(out.shape[0])
            if out[j].sum() >= 2
            for g in range(out.shape[1])
            if out[j, g] > 0
        ]
        j, g = max(donors, key=lambda jg: (n[i, jg[1]], out[jg], -jg[1], -jg[0]))
        out[j, g] -= 1
        out[i, g] += 1
    return out


def round_counts(
    instance: PlacementInstance,
    relaxation: Relaxation,
    how: str,
    seed: int = 0,
    samples: int = RANDOM_SAMPLES,
) -> tuple[int, ...]:
    """The worker assignment ``how`` (one of :data:`ROUNDINGS`) makes of the relaxed counts."""
    n, grp = relaxation.counts, relaxation.groups
    assert n is not None
    k = instance.num_workers
    if how == "lp-round":
        return expand_counts(grp, repair(largest_remainder(n, grp.cap), n), k)
    rng = np.random.default_rng(seed)
    drawn = [expand_counts(grp, repair(systematic(n, grp.cap, rng), n), k) for _ in range(samples)]
    values = Evaluator(instance).avg_jct(np.array(drawn))
    return drawn[int(np.argmin(values))]  # the first of the least


def fractional_counts(n: np.ndarray) -> int:
    """How many relaxed counts n_ig are not integers."""
    return int((np.abs(n - np.round(n)) > FRACTIONAL).sum())


def run_rounding(instance: PlacementInstance, opts: MethodOptions, how: str) -> Outcome:
    """The relaxation solved in a child under the method's deadline (building P1 and loading
    it into HiGHS cannot stop itself), killed a grace before the limit so the rounding and the
    check fit; killed, or without an LP optimum, Optimus-LB's placement and no bound."""
    deadline = opts.deadline
    child = deadline.for_fork()
    got = child.run(solve_relaxation, instance, opts.solve, child, label="P1 relaxation")
    if got is None or got.counts is None:
        ended = "killed at the time limit" if got is None else got.ended
        return verified_outcome(
            instance,
            how,
            Placement(optimus_lb(instance)),
            wall_time=deadline.elapsed(),
            proof=Proof(hit_limit=got is None or got.ended == str(Status.TIME_LIMIT)),
            details={"lp_value": None, "lp_ended": ended, "returned": "optimus-lb"},
        )
    assignment = round_counts(instance, got, how, opts.solve.seed)
    details: dict[str, Any] = {
        "lp_value": got.value,
        "lp_ended": got.ended,
        "lps": got.lps,
        "tangent_cuts": got.cuts,
        "fractional_counts": fractional_counts(got.counts),
        "relaxed_counts": int(got.counts.size),
    }
    if how == "lp-random":
        details.update(seed=opts.solve.seed, samples=RANDOM_SAMPLES)
    return verified_outcome(
        instance,
        how,
        Placement(assignment),
        wall_time=deadline.elapsed(),
        proof=Proof(bound=got.value, hit_limit=got.ended == str(Status.TIME_LIMIT)),
        details=details,
    )


def run_lp_round(instance: PlacementInstance, opts: MethodOptions) -> Outcome:
    """``lp-round``: the relaxation's counts by largest remainder, repaired."""
    return run_rounding(instance, opts, "lp-round")


def run_lp_random(instance: PlacementInstance, opts: MethodOptions) -> Outcome:
    """``lp-random``: the best of :data:`RANDOM_SAMPLES` seeded systematic samplings."""
    return run_rounding(instance, opts, "lp-random")


__all__ = [
    "MAX_LP_ROUNDS",
    "RANDOM_SAMPLES",
    "ROUNDINGS",
    "Relaxation",
    "fractional_counts",
    "largest_remainder",
    "repair",
    "round_counts",
    "run_lp_random",
    "run_lp_round",
    "solve_relaxation",
    "systematic",
]
