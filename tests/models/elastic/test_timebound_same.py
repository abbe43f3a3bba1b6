"""The elastic time-indexed bound (dlsched/models/elastic/timebound.py) priced in blocks of
groups and computed for both weightings in one pass gives exactly what the former pricing (one
group at a time, each suffix minimum and each job's run built apart) and the former greedy
start gave, each weighting alone: the same cheapest runs at any prices, the same first runs, the
same bounds. The former code is kept here, only as the reference."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import astuple, replace

import numpy as np
import pytest

from dlsched.api import generate
from dlsched.models.elastic.flowbound import flow_bound, preemptive_bound
from dlsched.models.elastic.instance import ElasticInstance
from dlsched.models.elastic.timebound import (
    MAX_ITERATIONS,
    REDUCED_TOL,
    Master,
    Pricing,
    Shapes,
    TimeBound,
    greedy_runs,
    shapes,
    time_indexed_bound,
    time_indexed_bounds,
)
from dlsched.solvers.deadline import NEVER

# --- the former code, as it was ---------------------------------------------------------------


def _suffix_min(cost: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    rev = cost[::-1]
    low = np.minimum.accumulate(rev)
    pos = np.where(rev <= low, np.arange(len(rev)), -1)
    last = np.maximum.accumulate(pos)
    return low[::-1], (len(rev) - 1 - last)[::-1]


def reference_cheapest(
    p: Pricing, shape: Shapes, lam: np.ndarray
) -> tuple[float, np.ndarray, np.ndarray]:
    """The former ``Pricing.cheapest``: one group (m, n, d, w) at a time."""
    groups: dict[tuple[int, int, int, float], list[int]] = {}
    for j, runs in enumerate(shape.of):
        for m, n, d in runs:
            groups.setdefault((m, n, d, float(p.weights[j])), []).append(j)
    per_worker = p.demand @ lam
    prefix = np.concatenate([np.zeros((len(per_worker), 1)), per_worker.cumsum(axis=1)], 1)
    best = np.full(p.inst.num_jobs, np.inf)
    run = np.zeros((p.inst.num_jobs, 4), dtype=np.int64)
    for (m, n, d, w), members in groups.items():
        jobs = np.array(members, dtype=np.int64)
        s = np.arange(p.horizon - d + 1)
        low, at = _suffix_min(w * (s + d) + n * (prefix[m, s + d] - prefix[m, s]))
        a = p.arrival[jobs]
        better = low[a] < best[jobs]
        take = jobs[better]
        best[take] = low[a][better]
        run[take] = np.stack(
            [np.full(len(take), m), np.full(len(take), n), np.full(len(take), d), at[a][better]],
            axis=1,
        )
    if any(not runs for runs in shape.of):
        return -math.inf, best, run
    paid = float((lam * p.supply[:, None]).sum())
    total = math.fsum(best.tolist()) - paid
    return total - (1e-9 * (float(np.abs(best).sum()) + paid) + 1e-9), best, run


def reference_greedy(p: Pricing, shape: Shapes) -> list[tuple[int, int, int, int, int]]:
    """The former ``greedy_runs``: each run of each job tried in turn."""
    inst, demand = p.inst, p.demand
    left = np.repeat(p.supply[:, None], inst.horizon, axis=1)
    out = []
    for j in sorted(range(inst.num_jobs), key=lambda k: (inst.jobs[k].arrival, k)):
        a, best = inst.jobs[j].arrival, None
        for m, n, d in shape.of[j]:
            fits = (left[:, a:] >= n * demand[m][:, None] - 1e-9).all(axis=0)
            bad = np.concatenate([[0], np.cumsum(~fits)])
            if d > len(fits):
                continue
            ok = np.flatnonzero(bad[d:] - bad[:-d] == 0)
            if len(ok) and (best is None or a + ok[0] + d < best[4] + best[3]):
                best = (j, m, n, d, a + int(ok[0]))
        if best is not None:
            _, m, n, d, s = best
            left[:, s : s + d] -= n * demand[m][:, None]
            out.append(best)
    return out


def reference_bound(inst: ElasticInstance, weights: Sequence[float]) -> TimeBound:
    """The former ``time_indexed_bound`` (no deadline), one weighting, its own pass."""
    shape = shapes(inst)
    pricing = Pricing(inst, shape, weights)
    zero = np.zeros((len(pricing.supply), inst.horizon))
    best, _, first = reference_cheapest(pricing, shape, zero)
    if any(not runs for runs in shape.of):
        return TimeBound(best, None, 0, False)
    master = Master(pricing, NEVER)
    master.add(reference_greedy(pricing, shape))
    master.add([(j, *(int(x) for x in first[j])) for j in range(inst.num_jobs)])  # type: ignore[misc]
    value, iterations = None, 0
    while iterations < MAX_ITERATIONS:
        got = master.solve()
        if got is None:
            break
        iterations += 1
        pi, lam = got
        value = float(master.h.getInfo().objective_function_value)
        bound, cost, run = reference_cheapest(pricing, shape, lam)
        best = max(best, bound)
        new = np.flatnonzero(cost - pi < -REDUCED_TOL)
        if master.add([(int(j), *(int(x) for x in run[j])) for j in new]) == 0:  # type: ignore[misc]
            return TimeBound(best, value, iterations, True)
    return TimeBound(best, value, iterations, False)


# --- the tests --------------------------------------------------------------------------------

#: (jobs, servers, horizon, architecture, setting) of the seeded instances.
CASES = [
    (8, 2, 20, "ring", "default"),
    (12, 3, 30, "ps", "default"),
    (30, 5, 40, "ps", "default"),
    (40, 6, 60, "ring", "default"),
    (40, 10, 100, "ps", "paper"),
]


def _instance(case: tuple[int, int, int, str, str], seed: int) -> ElasticInstance:
    jobs, servers, horizon, arch, setting = case
    extra = {"setting": "paper"} if setting == "paper" else {"architecture": arch}
    inst: ElasticInstance = generate("elastic", jobs, servers, seed, horizon=horizon, **extra)
    return inst


def _weightings(inst: ElasticInstance) -> list[list[float]]:
    return [[1.0] * inst.num_jobs, [j.weight for j in inst.jobs]]


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("seed", [0, 1])
def test_the_same_cheapest_runs_at_any_prices(case, seed: int) -> None:
    """At zero prices (many ties between runs ending together) and at random sparse prices,
    every job's cheapest cost and run, and L, are the former ones, to the bit."""
    inst = _instance(case, seed)
    shape = shapes(inst)
    rng = np.random.default_rng(seed)
    for weights in _weightings(inst):
        pricing = Pricing(inst, shape, weights)
        size = (len(pricing.supply), inst.horizon)
        for lam in (np.zeros(size), rng.exponential(0.3, size) * (rng.random(size) < 0.3)):
            new, old = pricing.cheapest(lam), reference_cheapest(pricing, shape, lam)
            assert new[0] == old[0]
            assert np.array_equal(new[1], old[1])
            assert np.array_equal(new[2], old[2])


@pytest.mark.parametrize("case", CASES)
def test_the_same_first_runs(case) -> None:
    inst = _instance(case, 0)
    shape = shapes(inst)
    pricing = Pricing(inst, shape, [1.0] * inst.num_jobs)
    assert greedy_runs(pricing, shape) == reference_greedy(pricing, shape)


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("seed", [0, 1])
def test_one_pass_gives_each_weighting_its_former_bound(case, seed: int) -> None:
    """Both weightings in one pass: each bound (value, master LP, iterations, converged) is
    the one the former code computed for it alone, and :func:`time_indexed_bound` too."""
    inst = _instance(case, seed)
    weightings = _weightings(inst)
    both = time_indexed_bounds(inst, weightings)
    expected = [reference_bound(inst, w) for w in weightings]
    assert [astuple(b) for b in both] == [astuple(b) for b in expected]
    assert astuple(time_indexed_bound(inst)) == astuple(expected[1])
    assert expected[0].iterations >= 1  # the master LP ran: not a trivial comparison


def test_a_job_with_no_run_stops_both_weightings_at_once() -> None:
    """A horizon too short for some job: no run, both values -inf (no master LP), and the
    flow bound is the preemptive one."""
    inst = _instance((8, 2, 20, "ring", "default"), 0)
    short = replace(inst, horizon=min(j.arrival for j in inst.jobs) + 1)
    assert not all(shapes(short).of)
    got = time_indexed_bounds(short, _weightings(short))
    assert [(b.value, b.iterations) for b in got] == [(-math.inf, 0), (-math.inf, 0)]
    assert flow_bound(short) == preemptive_bound(short)
