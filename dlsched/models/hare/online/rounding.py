"""Rounding GPU_Grouping's LP relaxation into a grouping (Chen et al., IEEE TCC 2024, Section
IV-C, (4)-(6); seed 004).

The relaxation is the paper's binary program as :func:`~.grouping.build_grouping_model` states
it (z_mu, the epigraph of (5)-(6), every group non-empty, groups ordered by their lowest GPU,
identical GPUs in order) with 0 <= z_mu <= 1. Its optimum is a lower bound on the optimal
spread: the ordering rows keep one labelling of every partition (docs/errata.md, Seed 004,
GPU_Grouping 5). Without those rows the bound would be 0 on every instance (z_mu = 1/|U|
gives every group the same speed for every job); with them it is positive only through the
first GPUs, which the ordering pins to the first groups: 0.03-0.29 where the optimum is
0.59-1.0 on clusters of distinct GPUs, and 0 on the generator's clusters of the paper's four
GPU types (benchmarks/rounding_hare_online.py). A rounding starts from that weak guide:

- ``lp-round``: every GPU to the group of its largest z_mu (ties: the lowest group), then
  :func:`repair`;
- ``lp-random``: every GPU to group u with probability z_mu, independently, then
  :func:`repair`; the best (least spread) of :data:`RANDOM_SAMPLES` draws, from a generator
  seeded by the method's seed (the same seed gives the same grouping).

Neither has a guarantee. The spread reported is :func:`~.grouping.spread`'s, certified against
the LP value (a rounding is optimal only when it meets that bound).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from dlsched.errors import OptionError
from dlsched.models.hare.instance import HareInstance
from dlsched.solvers.base import SolveResult, SolverSettings, Status
from dlsched.solvers.certify import Proof, certify
from dlsched.solvers.deadline import Deadline

from .grouping import (
    GroupingResult,
    Groups,
    as_groups,
    build_grouping_model,
    check_groups,
    default_groups,
    greedy_grouping,
    speed_matrix,
    spread,
)

#: The roundings, by the name ``grouping=`` takes.
ROUNDINGS = ("lp-round", "lp-random")
#: Draws of ``lp-random``; the least spread is kept.
RANDOM_SAMPLES = 20
#: What the relaxation rounds and what is guaranteed (the method table shows them).
RELAXATION = "LP relaxation of GPU_Grouping (4)-(6), 0 <= z_mu <= 1 (TCC 2024, Section IV-C)"
GUARANTEE = "none"
#: ``info["lp_status"]`` of a relaxation killed at its deadline (the greedy grouping follows).
KILLED = "killed at the time limit"


def relaxed_grouping_model(s: np.ndarray, groups: int) -> Any:
    """:func:`~.grouping.build_grouping_model` with every z_mu in [0, 1]."""
    from dlsched.solvers.pyomo_env import pyo

    m = build_grouping_model(s, groups)
    pyo.TransformationFactory("core.relax_integer_vars").apply_to(m)
    return m


def largest_value(z: np.ndarray) -> list[int]:
    """Each GPU's group of largest z (ties: the lowest group)."""
    return [int(np.argmax(row)) for row in z]


def drawn(z: np.ndarray, rng: np.random.Generator) -> list[int]:
    """Each GPU's group drawn with probability z (its row, clipped at 0 and normalized)."""
    p = np.clip(z, 0.0, None)
    cumulative = (p / p.sum(axis=1, keepdims=True)).cumsum(axis=1)
    below = (cumulative <= rng.random((z.shape[0], 1))).sum(axis=1)
    return [int(u) for u in np.minimum(below, z.shape[1] - 1)]


def repair(member: Sequence[int], z: np.ndarray) -> list[int]:
    """``member`` with every group non-empty: while group v is empty, the GPU of largest z[g, v]
    among those whose group holds two or more moves to v (ties: the lowest GPU). Each step
    fills one group and empties none, so at most |U| GPUs move."""
    out = list(member)
    groups = z.shape[1]
    for v in range(groups):
        sizes = np.bincount(out, minlength=groups)
        if sizes[v] > 0:
            continue
        movable = [g for g in range(len(out)) if sizes[out[g]] > 1]
        out[max(movable, key=lambda g: (z[g, v], -g))] = v
    return out


def round_z(
    s: np.ndarray,
    z: np.ndarray,
    how: str,
    seed: int = 0,
    samples: int = RANDOM_SAMPLES,
    deadline: Deadline | None = None,
) -> Groups:
    """The grouping ``how`` (one of :data:`ROUNDINGS`) makes of the fractional z (GPUs x
    groups); ``lp-random`` stops drawing once ``deadline`` has passed (after one draw)."""
    groups = z.shape[1]
    if how == "lp-round":
        return as_groups(repair(largest_value(z), z), groups)
    rng = np.random.default_rng(seed)
    best: tuple[float, Groups] | None = None
    for k in range(samples):
        if k and deadline is not None and deadline.passed():
            break
        g = as_groups(repair(drawn(z, rng), z), groups)
        val = spread(s, g)
        if best is None or val < best[0]:
            best = (val, g)
    assert best is not None  # samples >= 1
    return best[1]


def solve_grouping_lp(
    s: np.ndarray, groups: int, settings: SolverSettings, deadline: Deadline
) -> tuple[SolveResult, np.ndarray | None]:
    """The relaxation's solver result (without its values) and its z (None without a
    solution), HiGHS handed what is left of ``deadline``."""
    from dlsched.solvers import solve

    m = relaxed_grouping_model(s, groups)
    res = solve(m, "highs", deadline.solve_options(settings))
    z = None
    if res.has_solution and res.status == Status.OPTIMAL:
        z = np.array([[res.value(m.z[g, u]) for u in m.GROUPS] for g in m.GPUS])
    return replace(res, values={}), z


def _relaxation(
    s: np.ndarray, u: int, settings: SolverSettings, deadline: Deadline
) -> tuple[str, float | None, np.ndarray | None]:
    """The relaxation's status (as ``info["lp_status"]`` says it), value and z (None unless
    solved to optimality), in a child killed a grace past ``deadline``; one group needs no
    solver (z = 1 is the only solution, spread 0)."""
    if u == 1:
        return str(Status.OPTIMAL), 0.0, np.ones((s.shape[1], 1))
    got = deadline.run(solve_grouping_lp, s, u, settings, deadline, label="grouping LP")
    if got is None:
        return KILLED, None, None
    res, z = got
    return str(res.status), None if z is None else res.objective, z


def lp_grouping(
    instance: HareInstance,
    groups: int | None = None,
    how: str = "lp-round",
    settings: SolverSettings | None = None,
    *,
    deadline: Deadline,
) -> GroupingResult:
    """GPU_Grouping's LP relaxation solved (built and solved in a child killed a grace past
    ``deadline``: neither stops itself) and rounded by ``how``, seeded by ``settings.seed``.
    Killed, or stopped without an optimal LP, the greedy grouping is returned (``method``
    "greedy", ``info["lp_status"]`` says why)."""
    t0 = time.perf_counter()
    if how not in ROUNDINGS:
        raise OptionError("grouping", how, f"expected {' or '.join(ROUNDINGS)}")
    u = default_groups(instance.num_gpus) if groups is None else groups
    u = check_groups(instance.num_gpus, u)
    settings = settings or SolverSettings()
    s = speed_matrix(instance)
    status, value, z = _relaxation(s, u, settings, deadline)
    info: dict[str, Any] = {"lp_status": status, "lp_value": value}
    if z is None:  # no LP optimum to round
        g, method = greedy_grouping(s, u), "greedy"
        proof = Proof(bound=0.0, hit_limit=status in (KILLED, str(Status.TIME_LIMIT)))
    else:
        g, method = round_z(s, z, how, settings.seed, deadline=deadline), how
        proof = Proof(bound=value)
        if how == "lp-random":
            info.update(seed=settings.seed, samples=RANDOM_SAMPLES)
    val = spread(s, g)
    cert = certify(val, proof, instance=instance.name, route=f"grouping {how}")
    return GroupingResult(g, val, cert, method, time.perf_counter() - t0, info)


__all__ = [
    "GUARANTEE",
    "RANDOM_SAMPLES",
    "RELAXATION",
    "ROUNDINGS",
    "drawn",
    "largest_value",
    "lp_grouping",
    "relaxed_grouping_model",
    "repair",
    "round_z",
    "solve_grouping_lp",
]
