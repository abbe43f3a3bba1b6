"""GPU_Grouping (4)-(6) of Chen et al., *Non-Clairvoyant Scheduling of Distributed Machine
Learning ...*, IEEE TCC 2024, Section IV-C (seed 004): split the GPUs into |U| groups so that
every job sees groups of similar speed,

    min_z max_n (p_n^max - p_n^min),   sum_u z_mu = 1 (4),
    p_n^max = max_u sum_m z_mu s_nm (5),  p_n^min = min_u sum_m z_mu s_nm (6),

with s_nm = 1 / (T^c_nm + T^s_nm) (tasks per unit time; the paper says "proportional to").
Jobs with identical speed rows count once. Every group must hold a GPU (a group without GPUs
could serve nothing; docs/errata.md).

Two exact Pyomo MILPs (epigraph of the max), solved with HiGHS:

- :func:`build_grouping_model`: the paper's binary z_mu, group symmetry broken by ordering the
  groups by their lowest GPU index (GPU m may join group u only if group u - 1 holds a GPU
  below m; every partition has exactly one such labelling), and identical GPUs taken in
  order of group index;
- :func:`build_pooled_model`: GPUs with identical speed columns pooled into classes, x_tu =
  how many GPUs of class t group u holds (exactly the same partitions up to swapping identical
  GPUs); groups ordered lexicographically by their class counts.

:func:`greedy_grouping` is the heuristic beside them: GPUs by decreasing normalized speed to
the group of least normalized speed, then single moves and swaps while the spread falls.
:func:`spread` re-evaluates any grouping from the raw speeds; that value is the one reported and
certified (:func:`dlsched.solvers.certify`) against the MILP's bound.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from dlsched.errors import OptionError
from dlsched.models.hare.instance import HareInstance
from dlsched.models.program import symmetry_breaking
from dlsched.solvers.base import SolveResult, SolverSettings, Status
from dlsched.solvers.certify import Certificate, Proof, certify
from dlsched.solvers.deadline import Deadline

#: The paper's simulation uses 40 groups for 160 GPUs (Fig. 25): four GPUs a group.
GPUS_PER_GROUP = 4
#: Largest coefficient allowed in the pooled model's lexicographic ordering rows.
MAX_LEX_COEFF = 1e6

Groups = tuple[tuple[int, ...], ...]


def default_groups(num_gpus: int) -> int:
    """|U| = ceil(|M| / 4), the paper's 160 GPUs in 40 groups."""
    return max(1, math.ceil(num_gpus / GPUS_PER_GROUP))


def speed_matrix(instance: HareInstance) -> np.ndarray:
    """s[n, m] = 1 / (T^c + T^s), one row per distinct job profile."""
    s = 1.0 / (instance.tc + instance.ts)
    return np.unique(s, axis=0)


def gpu_classes(s: np.ndarray) -> list[tuple[int, ...]]:
    """GPUs with identical speed columns, in order of first GPU."""
    by_col: dict[bytes, list[int]] = {}
    for m in range(s.shape[1]):
        by_col.setdefault(s[:, m].tobytes(), []).append(m)
    return [tuple(v) for v in by_col.values()]


def group_speeds(s: np.ndarray, groups: Groups) -> np.ndarray:
    """P[n, u] = sum_{m in u} s[n, m]."""
    return np.stack([s[:, list(g)].sum(axis=1) for g in groups], axis=1)


def spread(s: np.ndarray, groups: Groups) -> float:
    """max_n (p_n^max - p_n^min) of a grouping, after checking it is a partition into
    non-empty groups of the GPUs (4). ValueError otherwise."""
    seen = sorted(m for g in groups for m in g)
    if seen != list(range(s.shape[1])) or any(not g for g in groups):
        raise ValueError(f"not a partition of the {s.shape[1]} GPUs into non-empty groups")
    p = group_speeds(s, groups)
    return float((p.max(axis=1) - p.min(axis=1)).max())


def check_groups(num_gpus: int, groups: Any, name: str = "groups") -> int:
    ok = isinstance(groups, int) and not isinstance(groups, bool)
    if not ok or not 1 <= groups <= num_gpus:
        raise OptionError(name, groups, f"expected an integer from 1 to {num_gpus} (the GPUs)")
    return int(groups)


# --- the exact models ----------------------------------------------------------------------
#: The equation each component of :func:`build_grouping_model` states (its ``doc``).
GROUPING_EQUATIONS = {
    "one_group": "(4): every GPU in exactly one group",
    "max_speed": "(5): p_n^max >= the speed of job n in every group",
    "min_speed": "(6): p_n^min <= the speed of job n in every group",
    "spread_epigraph": "objective of GPU_Grouping, with (4): spread >= p_n^max - p_n^min",
    "non_empty": "not in the paper ((4)-(6) allow an empty group): every group holds a GPU "
    "(docs/errata.md)",
    "lowest_gpu_order": symmetry_breaking("(4)-(6)", "groups in order of their lowest GPU"),
    "identical_order": symmetry_breaking(
        "(4)-(6)", "of identical GPUs the lower is in the lower group"
    ),
    "objective": "objective of GPU_Grouping, with (4)-(6): min max_n (p_n^max - p_n^min)",
}


def build_grouping_model(s: np.ndarray, groups: int) -> Any:
    """The paper's GPU_Grouping with binary z_mu, epigraph variables and symmetry breaking."""
    from dlsched.solvers.pyomo_env import pyo

    n_jobs, n_gpus = s.shape
    m = pyo.ConcreteModel(name="gpu_grouping")
    m.JOBS = pyo.RangeSet(0, n_jobs - 1)
    m.GPUS = pyo.RangeSet(0, n_gpus - 1)
    m.GROUPS = pyo.RangeSet(0, groups - 1)
    m.z = pyo.Var(m.GPUS, m.GROUPS, domain=pyo.Binary)

    def speed(m: Any, n: int, u: int) -> Any:
        return sum(float(s[n, g]) * m.z[g, u] for g in m.GPUS)

    _epigraph(m, s, speed)
    _gpu_in_one_group(m)
    _groups_non_empty(m, lambda m, u: sum(m.z[g, u] for g in m.GPUS))
    _groups_ordered_by_lowest_gpu(m)
    _identical_gpus_ordered(m, gpu_classes(s))
    return m


def build_pooled_model(s: np.ndarray, classes: Sequence[Sequence[int]], groups: int) -> Any:
    """GPU_Grouping on classes of identical GPUs: integer counts x_tu (exact reformulation)."""
    from dlsched.solvers.pyomo_env import pyo

    n_jobs = s.shape[0]
    rep = [c[0] for c in classes]
    sizes = [len(c) for c in classes]
    m = pyo.ConcreteModel(name="gpu_grouping_pooled")
    m.JOBS = pyo.RangeSet(0, n_jobs - 1)
    m.CLASSES = pyo.RangeSet(0, len(classes) - 1)
    m.GROUPS = pyo.RangeSet(0, groups - 1)
    m.x = pyo.Var(m.CLASSES, m.GROUPS, domain=pyo.NonNegativeIntegers, bounds=_count_bounds(sizes))

    def speed(m: Any, n: int, u: int) -> Any:
        return sum(float(s[n, rep[t]]) * m.x[t, u] for t in m.CLASSES)

    _epigraph(m, s, speed)

    @m.Constraint(m.CLASSES)
    def class_split(m: Any, t: int) -> Any:  # (4) for every GPU of class t
        return sum(m.x[t, u] for u in m.GROUPS) == sizes[t]

    _groups_non_empty(m, lambda m, u: sum(m.x[t, u] for t in m.CLASSES))
    _groups_ordered_lexicographically(m, sizes)
    return m


def _count_bounds(sizes: Sequence[int]) -> Any:
    return lambda m, t, u: (0, sizes[t])


def _epigraph(m: Any, s: np.ndarray, speed: Any) -> None:
    """p_max >= every group speed (5), p_min <= every group speed (6), spread >= p_max - p_min."""
    from dlsched.solvers.pyomo_env import pyo

    total = s.sum(axis=1)
    m.p_max = pyo.Var(m.JOBS, bounds=lambda m, n: (0.0, float(total[n])))
    m.p_min = pyo.Var(m.JOBS, bounds=lambda m, n: (0.0, float(total[n])))
    m.spread = pyo.Var(bounds=(0.0, float(total.max())))

    @m.Constraint(m.JOBS, m.GROUPS, doc=GROUPING_EQUATIONS["max_speed"])
    def max_speed(m: Any, n: int, u: int) -> Any:  # (5)
        return m.p_max[n] >= speed(m, n, u)

    @m.Constraint(m.JOBS, m.GROUPS, doc=GROUPING_EQUATIONS["min_speed"])
    def min_speed(m: Any, n: int, u: int) -> Any:  # (6)
        return m.p_min[n] <= speed(m, n, u)

    @m.Constraint(m.JOBS, doc=GROUPING_EQUATIONS["spread_epigraph"])
    def spread_epigraph(m: Any, n: int) -> Any:  # objective of GPU_Grouping
        return m.spread >= m.p_max[n] - m.p_min[n]

    m.objective = pyo.Objective(
        expr=m.spread, sense=pyo.minimize, doc=GROUPING_EQUATIONS["objective"]
    )


def _gpu_in_one_group(m: Any) -> None:
    @m.Constraint(m.GPUS, doc=GROUPING_EQUATIONS["one_group"])
    def one_group(m: Any, g: int) -> Any:  # (4)
        return sum(m.z[g, u] for u in m.GROUPS) == 1


def _groups_non_empty(m: Any, size: Any) -> None:
    @m.Constraint(m.GROUPS, doc=GROUPING_EQUATIONS["non_empty"])
    def non_empty(m: Any, u: int) -> Any:  # a group must hold a GPU (errata)
        return size(m, u) >= 1


def _groups_ordered_by_lowest_gpu(m: Any) -> None:
    """min GPU of group u-1 < min GPU of group u: GPU g joins group u > 0 only if group u - 1
    holds a GPU below g (symmetry breaking, exact: one labelling per partition)."""
    from dlsched.solvers.pyomo_env import pyo

    @m.Constraint(m.GPUS, m.GROUPS, doc=GROUPING_EQUATIONS["lowest_gpu_order"])
    def lowest_gpu_order(m: Any, g: int, u: int) -> Any:
        if u == 0:
            return pyo.Constraint.Skip
        if u > g:
            return m.z[g, u] == 0
        return m.z[g, u] <= sum(m.z[h, u - 1] for h in range(g))


def _identical_gpus_ordered(m: Any, classes: Sequence[Sequence[int]]) -> None:
    """Of two identical GPUs g < h (same speed for every job), g's group index is at most h's.
    Valid with the lowest-GPU ordering: the labelled partition whose vector of group indices
    (GPU by GPU) is lexicographically smallest satisfies both, since swapping an out-of-order
    pair and relabelling the groups after the swapped one makes that vector smaller."""
    pairs = [(c[i], c[i + 1]) for c in classes for i in range(len(c) - 1)]
    m.IDENTICAL = list(range(len(pairs)))

    @m.Constraint(m.IDENTICAL, doc=GROUPING_EQUATIONS["identical_order"])
    def identical_order(m: Any, p: int) -> Any:
        g, h = pairs[p]
        return sum(u * m.z[g, u] for u in m.GROUPS) <= sum(u * m.z[h, u] for u in m.GROUPS)


def _groups_ordered_lexicographically(m: Any, sizes: Sequence[int]) -> None:
    """Groups in non-increasing lexicographic order of their class counts, encoded in base
    max(size) + 1 (exact); when the code would exceed :data:`MAX_LEX_COEFF`, only the first
    class's count is ordered (still valid, weaker)."""
    base = max(sizes) + 1
    weights = [float(base ** (len(sizes) - 1 - t)) for t in range(len(sizes))]
    if weights[0] * base > MAX_LEX_COEFF:
        weights = [1.0] + [0.0] * (len(sizes) - 1)

    @m.Constraint(m.GROUPS)
    def lex_order(m: Any, u: int) -> Any:
        from dlsched.solvers.pyomo_env import pyo

        if u == 0:
            return pyo.Constraint.Skip
        prev = sum(weights[t] * m.x[t, u - 1] for t in m.CLASSES)
        return prev >= sum(weights[t] * m.x[t, u] for t in m.CLASSES)


# --- the heuristic --------------------------------------------------------------------------
def greedy_grouping(s: np.ndarray, groups: int, max_passes: int = 200) -> Groups:
    """Two starts, each followed by improving moves and swaps (first improvement, at most
    ``max_passes``); the better grouping is returned. GPUs are taken by decreasing normalized
    speed; the first start puts each on the group of least normalized speed so far (LPT, ties:
    lowest group), the second deals them 0, 1, .., |U|-1, |U|-1, .., 0 (snake)."""
    n_gpus = s.shape[1]
    norm = (s / s.sum(axis=1, keepdims=True)).sum(axis=0)
    order = sorted(range(n_gpus), key=lambda g: (-norm[g], g))
    load = np.zeros(groups)
    lpt = [0] * n_gpus
    for g in order:
        u = int(np.argmin(load))
        lpt[g] = u
        load[u] += norm[g]
    snake = [0] * n_gpus
    for i, g in enumerate(order):
        lap, pos = divmod(i, groups)
        snake[g] = pos if lap % 2 == 0 else groups - 1 - pos
    starts = [as_groups(_improve(s, m, groups, max_passes), groups) for m in (lpt, snake)]
    return min(starts, key=lambda g: (spread(s, g), g))


def as_groups(member: Sequence[int], groups: int) -> Groups:
    """The grouping of a membership list (GPU g in group member[g]), ordered by lowest GPU."""
    out = tuple(tuple(g for g, u in enumerate(member) if u == v) for v in range(groups))
    return tuple(sorted(out))  # canonical: ordered by lowest GPU


def _improve(s: np.ndarray, member: list[int], groups: int, max_passes: int) -> list[int]:
    """Local search on the spread: move one GPU of a class to another group, or swap GPUs of
    two classes between groups, while it strictly lowers the spread."""
    classes = gpu_classes(s)
    cls_of = {g: t for t, c in enumerate(classes) for g in c}
    cols = np.stack([s[:, c[0]] for c in classes], axis=1)  # speed of one GPU of each class
    count = np.zeros((len(classes), groups), dtype=int)
    for g, u in enumerate(member):
        count[cls_of[g], u] += 1
    p = cols @ count
    best = _spread_of(p)
    for _ in range(max_passes):
        step = _first_improving(cols, count, p, best)
        if step is None:
            break
        count, p, best = step
    return _members_from_counts(classes, count)


def _spread_of(p: np.ndarray) -> float:
    return float((p.max(axis=1) - p.min(axis=1)).max())


def _first_improving(
    cols: np.ndarray, count: np.ndarray, p: np.ndarray, best: float
) -> tuple[np.ndarray, np.ndarray, float] | None:
    """The first move or swap that lowers the spread. Only group pairs that involve the
    fastest or the slowest group of the critical job can lower it, so only those are tried."""
    if best <= 0:
        return None
    n_cls, groups = count.shape
    crit = int(np.argmax(p.max(axis=1) - p.min(axis=1)))
    hi, lo = int(np.argmax(p[crit])), int(np.argmin(p[crit]))
    pairs = [(hi, v) for v in range(groups) if v != hi] + [
        (u, lo) for u in range(groups) if u != lo
    ]
    sizes = count.sum(axis=0)
    for u, v in pairs:
        rest = np.delete(p, [u, v], axis=1)
        rest_hi = rest.max(axis=1) if rest.shape[1] else np.full(p.shape[0], -np.inf)
        rest_lo = rest.min(axis=1) if rest.shape[1] else np.full(p.shape[0], np.inf)
        for t, t2 in _exchanges(count, sizes, u, v):
            delta = cols[:, t] if t2 is None else cols[:, t] - cols[:, t2]
            pu, pv = p[:, u] - delta, p[:, v] + delta
            top = np.maximum(rest_hi, np.maximum(pu, pv))
            bottom = np.minimum(rest_lo, np.minimum(pu, pv))
            val = float((top - bottom).max())
            if val < best - 1e-12:
                c = count.copy()
                c[t, u] -= 1
                c[t, v] += 1
                if t2 is not None:
                    c[t2, v] -= 1
                    c[t2, u] += 1
                q = p.copy()
                q[:, u], q[:, v] = pu, pv
                return c, q, val
    return None


def _exchanges(
    count: np.ndarray, sizes: np.ndarray, u: int, v: int
) -> list[tuple[int, int | None]]:
    """(class moved u -> v, class moved back v -> u or None for a plain move)."""
    out: list[tuple[int, int | None]] = []
    for t in range(count.shape[0]):
        if count[t, u] == 0:
            continue
        if sizes[u] > 1:
            out.append((t, None))
        out.extend((t, t2) for t2 in range(count.shape[0]) if t2 != t and count[t2, v] > 0)
    return out


def _members_from_counts(classes: Sequence[Sequence[int]], count: np.ndarray) -> list[int]:
    member = [0] * sum(len(c) for c in classes)
    for t, c in enumerate(classes):
        pool = list(c)
        for u in range(count.shape[1]):
            for _ in range(int(count[t, u])):
                member[pool.pop(0)] = u
    return member


# --- the exact route ------------------------------------------------------------------------
@dataclass(frozen=True)
class GroupingResult:
    """A grouping, its spread (re-evaluated from the speeds), and what was proved."""

    groups: Groups
    spread: float
    certificate: Certificate
    method: str
    wall_time: float
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def status(self) -> Status:
        return self.certificate.status

    @property
    def bound(self) -> float | None:
        return self.certificate.bound

    @property
    def gap(self) -> float | None:
        return self.certificate.gap


def group_gpus(
    instance: HareInstance,
    groups: int | None = None,
    method: str = "exact",
    settings: SolverSettings | None = None,
    pooled: bool | None = None,
    *,
    deadline: Deadline,
) -> GroupingResult:
    """GPU_Grouping on the instance's job profiles: ``method`` "exact" (MILP on HiGHS within
    ``deadline``, told ``settings``; the greedy grouping as fallback if the solver returns
    none) or "greedy"; ``pooled`` None picks the pooled model when some GPUs are
    identical."""
    t0 = time.perf_counter()
    u = default_groups(instance.num_gpus) if groups is None else groups
    u = check_groups(instance.num_gpus, u)
    s = speed_matrix(instance)
    if method == "greedy":
        g = greedy_grouping(s, u)
        val = spread(s, g)
        cert = certify(val, Proof(bound=0.0), instance=instance.name, route="grouping")
        return GroupingResult(g, val, cert, "greedy", time.perf_counter() - t0)
    if method != "exact":
        raise OptionError("grouping", method, "expected exact or greedy")
    settings = settings or SolverSettings()
    return _solve_exact(instance.name, s, u, settings, pooled, deadline, t0)


def _solve_exact(
    name: str,
    s: np.ndarray,
    u: int,
    settings: SolverSettings,
    pooled: bool | None,
    deadline: Deadline,
    t0: float,
) -> GroupingResult:
    """The MILP built and solved in a child killed a grace past ``deadline`` (building and
    handing it to HiGHS cannot stop: 0.6 s on 1,000 jobs), the greedy grouping when it is
    killed, finds none or finds a worse one. Unless ``pooled`` names a MILP, a cluster small
    enough to list every grouping (:mod:`.enumerate_groups`) is proven by exhaustion instead,
    with no solver."""
    from .enumerate_groups import best_grouping

    listed = best_grouping(s, u) if pooled is None else None
    if listed is not None:
        best, count = listed
        val = spread(s, best)
        cert = certify(val, Proof(bound=val), instance=name, route="grouping")
        info = {"route": "enumeration", "partitions": count}
        return GroupingResult(best, val, cert, "exact", time.perf_counter() - t0, info)
    classes = gpu_classes(s)
    use_pooled = len(classes) < s.shape[1] if pooled is None else pooled
    got = deadline.run(_milp, s, classes, u, use_pooled, settings, deadline, label="grouping")
    fallback = greedy_grouping(s, u)
    res, g = got if got is not None else (None, None)
    if g is None or spread(s, fallback) < spread(s, g):
        g = fallback
    val = spread(s, g)
    proof = Proof(bound=0.0, hit_limit=True) if res is None else Proof.of(res)
    cert = certify(val, proof, instance=name, route="grouping")
    status = "killed at the time limit" if res is None else str(res.status)
    info = {"pooled": use_pooled, "solver_status": status, "classes": len(classes)}
    return GroupingResult(g, val, cert, "exact", time.perf_counter() - t0, info)


def _milp(
    s: np.ndarray,
    classes: Sequence[Sequence[int]],
    u: int,
    pooled: bool,
    settings: SolverSettings,
    deadline: Deadline,
) -> tuple[SolveResult, Groups | None]:
    """The MILP's solver result (without its values) and grouping (None without a solution),
    HiGHS handed what is left of ``deadline``."""
    from dlsched.solvers import solve

    model = build_pooled_model(s, classes, u) if pooled else build_grouping_model(s, u)
    res = solve(model, "highs", deadline.solve_options(settings))
    g = _decode(model, res, classes, u, pooled) if res.has_solution else None
    return replace(res, values={}), g


def _decode(model: Any, res: Any, classes: Sequence[Sequence[int]], u: int, pooled: bool) -> Groups:
    if pooled:
        count = np.array(
            [[round(res.value(model.x[t, v])) for v in range(u)] for t in range(len(classes))]
        )
        return as_groups(_members_from_counts(classes, count), u)
    n_gpus = sum(len(c) for c in classes)
    member = [max(range(u), key=lambda v: res.value(model.z[g, v])) for g in range(n_gpus)]
    return as_groups(member, u)


__all__ = [
    "GPUS_PER_GROUP",
    "GroupingResult",
    "as_groups",
    "build_grouping_model",
    "build_pooled_model",
    "check_groups",
    "default_groups",
    "gpu_classes",
    "greedy_grouping",
    "group_gpus",
    "group_speeds",
    "speed_matrix",
    "spread",
]
