"""Heuristics of Liu et al. (TPDS 2024) and the baselines it compares against.

- :func:`matching_market` -- Algorithm 2's pricing loop for one category (lines 2-16).
- :func:`has` -- HAS, Algorithm 2 over every category of Psi (Algorithm 1's order).
- :func:`jps` -- JPS, Algorithm 3 (job prioritising + sampling of the rear of Psi).
- :func:`optimus`, :func:`optimus_lb` -- the greedy of Peng et al. (EuroSys'18) as described
  in Section VI-A, without / with proportional load balancing.
- :func:`exhaustive` -- all S^K worker selections (the paper's "exhaustive search").

The LAS baseline is a MILP and lives in :mod:`dlsched.models.placement.methods`.
Each function returns plain data (assignments, per-category records); the method layer turns
them into verified outcomes.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import maximum_bipartite_matching

from dlsched.errors import DlschedError, OptionError
from dlsched.models.placement.categories import algorithm1, num_categories, unrank
from dlsched.models.placement.evaluate import Evaluator
from dlsched.models.placement.instance import PlacementInstance
from dlsched.models.placement.metrics import fairness_degree
from dlsched.solvers.deadline import NEVER, Deadline


class PricingDidNotTerminate(DlschedError):
    """The pricing loop exceeded Theorem 1's bound P_max: a counterexample to Theorem 1."""


class TimeUp(Exception):
    """A heuristic passed its deadline; ``results`` are the categories it finished before
    (possibly none)."""

    def __init__(self, results: list[CategoryResult] | None = None) -> None:
        super().__init__("deadline passed")
        self.results = list(results or [])


@dataclass(frozen=True)
class MarketResult:
    assignment: tuple[int, ...]
    rounds: int  # iterations of the while loop (lines 5-15)
    p_max: float  # Theorem 1's bound (28)
    prices: tuple[float, ...]


def _top_sum(row: np.ndarray, n: int) -> float:
    return float(np.sort(row)[::-1][:n].sum())


def p_max(rho: np.ndarray, sizes: tuple[int, ...]) -> float:
    """Theorem 1's bound (28) on the pricing rounds of the category ``sizes``."""
    return sum(_top_sum(rho[i], sizes[i]) for i in range(len(sizes)))


def _preferred_literal(gamma: np.ndarray, sizes: tuple[int, ...]) -> list[np.ndarray]:
    # preferred_graph as printed: each job picks its K_i workers of largest payoff, ties to
    # the lower worker index (stable sort).
    return [np.argsort(-gamma[i], kind="stable")[: sizes[i]] for i in range(len(sizes))]


def _market_step(
    gamma: np.ndarray, sizes: tuple[int, ...], tol: float = 0.0
) -> tuple[tuple[int, ...] | None, list[int], list[int]]:
    """Preferred graph with ties and its constricted set (Easley & Kleinberg, ch. 10).

    Job i strictly prefers the workers whose payoff exceeds its K_i-th largest payoff theta_i
    and is indifferent among those equal to theta_i. Each job becomes K_i slots: one slot per
    strictly preferred worker (edge to that worker only) and K_i - |strict| slots joined to
    every tied worker. A perfect matching of slots is a conflict-free preferred allocation;
    otherwise the slots reachable from an unmatched slot by alternating paths and their
    neighbours form a constricted set (Hall's condition fails on them).
    Returns (assignment or None, constricted jobs, constricted workers).
    """
    s, k = gamma.shape
    indptr, cols, slot_job = [0], [], []
    for i in range(s):
        theta = np.sort(gamma[i])[::-1][sizes[i] - 1]
        strict = np.flatnonzero(gamma[i] > theta + tol)
        tied = np.flatnonzero(np.abs(gamma[i] - theta) <= tol)
        for kk in strict:
            cols.append(int(kk))
            indptr.append(len(cols))
            slot_job.append(i)
        for _ in range(sizes[i] - len(strict)):
            cols.extend(int(kk) for kk in tied)
            indptr.append(len(cols))
            slot_job.append(i)
    n_slots = len(slot_job)
    graph = csr_matrix(
        (np.ones(len(cols)), np.array(cols, dtype=np.int32), np.array(indptr, dtype=np.int32)),
        shape=(n_slots, k),
    )
    match = maximum_bipartite_matching(graph, perm_type="column")  # slot -> worker or -1
    if (match >= 0).all():
        assignment = [-1] * k
        for r, kk in enumerate(match):
            assignment[int(kk)] = slot_job[r]
        return tuple(assignment), [], []
    owner = {int(kk): r for r, kk in enumerate(match) if kk >= 0}
    seen_slots = {int(r) for r in np.flatnonzero(match < 0)[:1]}
    frontier = list(seen_slots)
    seen_workers: set[int] = set()
    while frontier:
        nxt = []
        for r in frontier:
            for col in graph.indices[graph.indptr[r] : graph.indptr[r + 1]]:
                w = int(col)
                if w not in seen_workers:
                    seen_workers.add(w)
                    r2 = owner.get(w)
                    if r2 is not None and r2 not in seen_slots:
                        seen_slots.add(r2)
                        nxt.append(r2)
        frontier = nxt
    return None, sorted({slot_job[r] for r in seen_slots}), sorted(seen_workers)


def _clearing_step(
    gamma: np.ndarray, sizes: tuple[int, ...], jobs_c: list[int], workers_c: list[int], tol: float
) -> float:
    """Smallest price rise of every worker of K_c that changes some constricted job's
    preferences: the first time a K_c worker in job i's preferred set meets the payoff of a
    worker outside K_c (the dual step of the Hungarian method)."""
    inside = np.zeros(gamma.shape[1], dtype=bool)
    inside[workers_c] = True
    best = float("inf")
    for i in jobs_c:
        theta = np.sort(gamma[i])[::-1][sizes[i] - 1]
        pref_in = gamma[i][inside & (gamma[i] >= theta - tol)]
        outside = gamma[i][~inside]
        if not len(pref_in) or not len(outside):
            continue
        for g in pref_in:
            lower = outside[outside < g - tol]
            if len(lower):
                best = min(best, float(g - lower.max()))
    return best


def matching_market(
    rho: np.ndarray,
    sizes: tuple[int, ...],
    ties: str = "market",
    pricing: str = "clearing",
    max_rounds: float | None = None,
    deadline: Deadline = NEVER,
) -> MarketResult:
    """Algorithm 2, lines 2-16, for the category ``sizes`` = (K_1, ..., K_S).

    Prices start at 0; while the constricted set is non-empty, its lowest-indexed worker k
    raises its price by max{1, max_i (V_i - V_i^k)} over the constricted jobs i (22), and
    payoffs become rho - p (23).

    ``pricing="clearing"`` (default) raises *every* worker of K_c by the smallest step that
    changes a constricted job's preferences (Easley & Kleinberg's procedure with the unit step
    replaced by the exact one, i.e. the Hungarian method's dual update); it ends in market-
    clearing prices, so the allocation maximises total throughput (Theorem 2 by LP duality).
    ``pricing="paper"`` is rule (22) as printed: only the lowest-indexed worker of K_c rises.

    ``ties="market"`` builds the preferred graph with ties and finds constricted sets by Hall's
    condition, as in the matching markets of the paper's reference [21].
    ``ties="index"`` is the printed reading: top-K_i workers with ties to the lower index and
    "constricted" = chosen by two or more jobs. It can cycle forever on identical workers (the
    paper's own Section IV-A example); the loop then stops after Theorem 1's P_max rounds and
    raises :class:`PricingDidNotTerminate`.

    Past ``deadline`` the loop raises :class:`TimeUp`.
    """
    _check_market_options(ties, pricing)
    s, k = rho.shape
    if sum(sizes) != k:
        raise OptionError("category", sizes, f"must sum to K = {k}")
    most = p_max(rho, sizes)  # (28)
    limit = most + 1 if max_rounds is None else max_rounds
    prices = np.zeros(k)
    gamma = rho.astype(float).copy()
    # payoffs are differences of throughputs: compare them up to rounding noise
    tol = 1e-9 * max(1.0, float(np.abs(rho).max()))
    rounds = 0
    while True:
        step = _market_step if ties == "market" else _literal_step
        assignment, jobs_c, workers_c = step(gamma, sizes, tol)
        if assignment is not None:
            break
        rounds += 1
        if deadline.passed():
            raise TimeUp()
        if rounds > limit:
            raise PricingDidNotTerminate(
                f"pricing for category {sizes} ran {rounds} rounds (P_max = {most:g}, "
                f"Theorem 1; ties={ties!r}, pricing={pricing!r})"
            )
        if pricing == "clearing":
            rise = _clearing_step(gamma, sizes, jobs_c, workers_c, tol)
            if not np.isfinite(rise):  # cannot happen while Hall fails; guard the loop anyway
                rise = 1.0
            prices[workers_c] += rise
        else:
            kk = workers_c[0]
            workers_c = [kk]
            prices[kk] += _paper_rise(gamma, sizes, jobs_c, kk, tol)  # (22)
        gamma[:, workers_c] = rho[:, workers_c] - prices[workers_c]  # (23)
    return MarketResult(tuple(assignment), rounds, most, tuple(prices.tolist()))


def _check_market_options(ties: str, pricing: str) -> None:
    if ties not in ("market", "index"):
        raise OptionError("ties", ties, "must be 'market' or 'index'")
    if pricing not in ("clearing", "paper"):
        raise OptionError("pricing", pricing, "must be 'clearing' or 'paper'")
    if ties == "index" and pricing == "clearing":
        raise OptionError("pricing", pricing, "needs ties='market' (Hall constricted sets)")


def _literal_step(
    gamma: np.ndarray, sizes: tuple[int, ...], tol: float
) -> tuple[tuple[int, ...] | None, list[int], list[int]]:
    """The printed reading: each job prefers its top-K_i workers (ties to the lower index);
    a worker chosen by two or more jobs is constricted. (assignment when none is, constricted
    jobs of the lowest constricted worker, constricted workers)."""
    pref = _preferred_literal(gamma, sizes)
    owners: dict[int, list[int]] = {}
    for i, ks in enumerate(pref):
        for kk in ks:
            owners.setdefault(int(kk), []).append(i)
    workers_c = sorted(kk for kk, js in owners.items() if len(js) > 1)
    if workers_c:
        return None, owners[workers_c[0]], workers_c
    a = [-1] * gamma.shape[1]
    for i, ks in enumerate(pref):
        for kk in ks:
            a[int(kk)] = i
    return tuple(a), [], []


def _paper_rise(
    gamma: np.ndarray, sizes: tuple[int, ...], jobs_c: list[int], kk: int, tol: float
) -> float:
    """Rule (22): max{1, max_i (V_i - V_i^k)} over the constricted jobs, (20)-(21)."""
    gains = []
    for i in jobs_c:
        v_i = _top_sum(gamma[i], sizes[i])  # (20)
        v_ik = _top_sum(np.delete(gamma[i], kk), sizes[i])  # (21)
        gains.append(v_i - v_ik if v_i - v_ik > tol else 0.0)
    return max(1.0, max(gains))


@dataclass(frozen=True)
class CategoryResult:
    index: int  # 0-based position in Algorithm 1's order
    category: tuple[int, ...]  # K_i indexed by job (after any prioritising permutation)
    assignment: tuple[int, ...]
    avg_jct: float
    fairness: float
    throughput: float  # P3 objective attained
    rounds: int
    p_max: float


VARIANTS = {  # name -> (ties, pricing, max_rounds as a multiple of P_max or None = P_max + 1)
    "clearing": ("market", "clearing", None),
    "paper": ("market", "paper", None),
    "literal": ("index", "paper", None),
}


def _run_category(
    inst: PlacementInstance,
    ev: Evaluator,
    index: int,
    sizes: tuple[int, ...],
    variant: str = "clearing",
    deadline: Deadline = NEVER,
) -> CategoryResult:
    ties, pricing, mult = VARIANTS[variant]
    rho = np.asarray(inst.rho)
    cap = (
        None if mult is None else mult * sum(_top_sum(rho[i], sizes[i]) for i in range(len(sizes)))
    )
    market = matching_market(rho, sizes, ties, pricing, cap, deadline)
    a = np.array(market.assignment)
    comp, comm = ev.per_job(a)
    jct = (comp + comm)[0]
    tput = float(sum(inst.rho[a[k], k] for k in range(inst.num_workers)))
    return CategoryResult(
        index,
        sizes,
        market.assignment,
        float(jct.mean()),
        fairness_degree(inst, jct),
        tput,
        market.rounds,
        market.p_max,
    )


def has(
    instance: PlacementInstance,
    only: tuple[int, ...] | None = None,
    variant: str = "clearing",
    deadline: Deadline = NEVER,
) -> tuple[CategoryResult, list[CategoryResult]]:
    """HAS: Algorithm 2 over Psi (or over the single category ``only``); lowest avg JCT wins
    (line 17: strict improvement, so the earliest category wins ties). Past ``deadline``
    raises :class:`TimeUp` with the categories finished."""
    ev = Evaluator(instance)
    cats: Iterable[tuple[int, tuple[int, ...]]]
    if only is not None:
        cats = [(0, tuple(only))]
    else:  # lazily: Psi has C(K-1, S-1) categories (3.8 million for S=5, K=100)
        cats = enumerate(algorithm1(instance.num_workers, instance.num_jobs))
    results = _run_categories(instance, ev, cats, variant, deadline)
    return lowest_jct(results), results


def _run_categories(
    instance: PlacementInstance,
    ev: Evaluator,
    cats: Iterable[tuple[int, tuple[int, ...]]],
    variant: str,
    deadline: Deadline = NEVER,
) -> list[CategoryResult]:
    """Algorithm 2 on each (index, category) in turn; :class:`TimeUp` with those finished when
    ``deadline`` passes before the last one is."""
    results: list[CategoryResult] = []
    for idx, c in cats:
        try:
            if deadline.passed():
                raise TimeUp()
            results.append(_run_category(instance, ev, idx, c, variant, deadline))
        except TimeUp:
            raise TimeUp(results) from None
    return results


def lowest_jct(results: list[CategoryResult]) -> CategoryResult:
    """Algorithm 2 line 17: the lowest average JCT, the earliest category on ties."""
    best = results[0]
    for r in results[1:]:
        if r.avg_jct < best.avg_jct:
            best = r
    return best


def job_priority(instance: PlacementInstance) -> np.ndarray:
    """Algorithm 3 line 1: jobs sorted by T_i |Pi_i| / (S sum_k rho_ik), ascending."""
    key = instance.work / (instance.num_jobs * instance.rho.sum(axis=1))
    return np.argsort(key, kind="stable")


def jps(
    instance: PlacementInstance,
    alpha: float = 0.7,
    beta: float = 1.0,
    samples: int = 20,
    rng: np.random.Generator | None = None,
    deadline: Deadline = NEVER,
) -> tuple[CategoryResult, list[CategoryResult]]:
    """JPS, Algorithm 3. Category position j is given to the j-th job in priority order, so the
    rear of Psi (large K_S) favours the computationally heaviest jobs. Past ``deadline``
    raises :class:`TimeUp` with the categories finished."""
    if not 0 <= alpha < 1:
        raise OptionError("alpha", alpha, "must lie in [0, 1)")
    if not 0 <= beta <= 1:
        raise OptionError("beta", beta, "must lie in [0, 1]")
    if samples < 1:
        raise OptionError("samples", samples, "must be at least 1")
    rng = rng if rng is not None else np.random.default_rng(0)
    s, k = instance.num_jobs, instance.num_workers
    pool = jps_pool(instance, alpha)
    start = num_categories(k, s) - pool
    picks = [start + p for p in _sample(rng, pool, min(samples, pool))]
    order = job_priority(instance)

    def prioritised(idx: int) -> tuple[int, tuple[int, ...]]:
        cat = unrank(idx, k, s)
        sizes = [0] * s
        for pos, job in enumerate(order):
            sizes[int(job)] = cat[pos]
        return idx, tuple(sizes)

    cats = (prioritised(idx) for idx in picks)  # lazily: up to the whole rear of Psi
    results = _run_categories(instance, Evaluator(instance), cats, "clearing", deadline)
    return jps_choice(results, beta), results


def jps_pool(instance: PlacementInstance, alpha: float) -> int:
    """How many categories JPS samples from: the rear Psi[alpha C(K-1,S-1), C(K-1,S-1)]."""
    total = num_categories(instance.num_workers, instance.num_jobs)
    try:
        return total - int(alpha * total)
    except OverflowError:  # more categories than a float holds (S = 500, K = 2,000)
        return total - int(Fraction(alpha) * total)


def _sample(rng: np.random.Generator, pool: int, count: int) -> list[int]:
    """``count`` distinct positions of ``range(pool)``, sorted; a pool beyond 64-bit integers
    (C(399, 49) categories for S = 50, K = 400) is sampled by Python's generator, seeded
    from ``rng``."""
    if pool <= np.iinfo(np.int64).max:
        return [int(p) for p in np.sort(rng.choice(pool, size=count, replace=False))]
    draw = random.Random(int(rng.integers(2**63)))
    picked: set[int] = set()
    while len(picked) < count:  # a repeat among 2^63 or more is all but impossible
        picked.add(draw.randrange(pool))
    return sorted(picked)


def jps_choice(results: list[CategoryResult], beta: float) -> CategoryResult:
    """Algorithm 3's pick among the examined categories: the largest score (34)."""
    best_jct = min(r.avg_jct for r in results)
    score = [beta * best_jct / r.avg_jct + (1 - beta) * r.fairness for r in results]  # (34)
    return results[int(np.argmax(score))]


def _greedy(instance: PlacementInstance, balance: str) -> tuple[int, ...]:
    """Optimus as described in Section VI-A: one worker per job first (each job, in index
    order, takes its fastest free worker), then repeatedly the job with the largest marginal
    JCT reduction gets its fastest free worker, until every worker is used (8c)."""
    ev = Evaluator(instance)
    s, k = instance.num_jobs, instance.num_workers
    # each job's workers fastest first, ties to the lower index (a stable sort)
    prefer = np.argsort(-np.asarray(instance.rho), axis=1, kind="stable").tolist()
    seen = [0] * s  # prefer[i][:seen[i]] are taken
    taken = [False] * k
    mine: list[list[int]] = [[] for _ in range(s)]
    gains: dict[int, tuple[int, float]] = {}  # job -> (its fastest free worker, the gain)

    def fastest_free(i: int) -> int:
        while taken[prefer[i][seen[i]]]:
            seen[i] += 1
        return int(prefer[i][seen[i]])

    def take(i: int, kk: int) -> None:
        mine[i].append(kk)
        taken[kk] = True
        gains.pop(i, None)

    def gain(i: int) -> tuple[int, float]:
        kk = fastest_free(i)
        if gains.get(i, (-1, 0.0))[0] != kk:
            after = ev.job_jct(i, mine[i] + [kk], balance)
            gains[i] = (kk, ev.job_jct(i, mine[i], balance) - after)
        return gains[i]

    for i in range(s):
        take(i, fastest_free(i))
    for _ in range(k - s):
        best_gain, best_i, best_k = -float("inf"), -1, -1
        for i in range(s):
            kk, g = gain(i)
            if g > best_gain:
                best_gain, best_i, best_k = g, i, kk
        take(best_i, best_k)
    assignment = [-1] * k
    for i, ks in enumerate(mine):
        for kk in ks:
            assignment[kk] = i
    return tuple(assignment)


def optimus(instance: PlacementInstance) -> tuple[int, ...]:
    return _greedy(instance, "equal")


def optimus_lb(instance: PlacementInstance) -> tuple[int, ...]:
    return _greedy(instance, "proportional")


EXHAUSTIVE_LIMIT = 60_000_000


def exhaustive(instance: PlacementInstance, chunk: int = 1 << 18) -> tuple[tuple[int, ...], int]:
    """Every assignment of K workers to S jobs (S^K of them), vectorised in chunks; returns the
    best surjective assignment and the number of feasible ones examined."""
    best, feasible, _ = exhaustive_search(instance, NEVER, chunk)
    assert best is not None
    return best, feasible


def exhaustive_search(
    instance: PlacementInstance, deadline: Deadline = NEVER, chunk: int = 1 << 18
) -> tuple[tuple[int, ...] | None, int, bool]:
    """:func:`exhaustive` until ``deadline`` (checked between chunks): (best assignment so far
    or None, feasible ones examined, whether every assignment was examined)."""
    s, k = instance.num_jobs, instance.num_workers
    total = s**k
    if total > EXHAUSTIVE_LIMIT:
        digits = k * math.log10(s)  # S = 50, K = 400: too many for a float
        size = f"{total:.3g}" if digits < 300 else f"1e{digits:.0f}"
        raise OptionError(
            "--method",
            "exhaustive",
            f"S^K = {s}^{k} = {size} assignments exceeds {EXHAUSTIVE_LIMIT:.0e}; "
            "use --method exact",
        )
    ev = Evaluator(instance)
    powers = s ** np.arange(k, dtype=np.int64)
    best_val, best = float("inf"), None
    feasible = 0
    for lo in range(0, total, chunk):
        if deadline.passed():
            return best, feasible, False
        codes = np.arange(lo, min(lo + chunk, total), dtype=np.int64)
        a = (codes[:, None] // powers[None, :]) % s
        ok = np.ones(len(codes), dtype=bool)
        for i in range(s):
            ok &= (a == i).any(axis=1)
        a = a[ok]
        if not len(a):
            continue
        feasible += len(a)
        vals = ev.avg_jct(a)
        j = int(np.argmin(vals))
        if vals[j] < best_val:
            best_val, best = float(vals[j]), tuple(int(x) for x in a[j])
    return best, feasible, True
