"""The elastic family's fast pricing oracle against the exact one and against Algorithms 4-7
as written; A_online's fallback on short horizons; hypothesis properties of every method."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dlsched.errors import OptionError
from dlsched.models import MethodOptions, run_method
from dlsched.models.elastic.algorithms import Ledger, a_maxweight, lam
from dlsched.models.elastic.check import check_schedule
from dlsched.models.elastic.colgen import full_lp
from dlsched.models.elastic.enumerate import enumerate_all
from dlsched.models.elastic.exact import all_columns
from dlsched.models.elastic.fastprice import FastOracle, fill_table, job_shapes
from dlsched.models.elastic.generate import generate
from dlsched.models.elastic.mincost import paper_mincost
from dlsched.models.elastic.pricing import Pricer, price_job
from dlsched.solvers import Status

HEURISTICS = ("a-online", "a-dual", "a-maxweight", "fifo", "drf", "tiresias", "antman")


def _case(seed: int, arch: str, jobs: int = 3, servers: int = 3, horizon: int = 12):
    """A small instance with random prices, random free capacity and a random window."""
    inst = generate(jobs, servers, seed, architecture=arch, horizon=horizon)
    rng = np.random.default_rng(seed)
    cap = np.array([s.capacity for s in inst.servers])
    shape = (inst.horizon, inst.num_servers, len(inst.resources))
    prices = rng.random(shape) * (rng.random(shape) < 0.6) * 3
    free = np.maximum(cap - rng.integers(0, 3, shape) * (rng.random(shape) < 0.4), 0)
    lo = int(rng.integers(0, 4))
    hi = int(rng.integers(lo + 3, inst.horizon + 1))
    return inst, prices, free, (lo, hi)


def _same(a: float, b: float) -> bool:
    return (math.isinf(a) and math.isinf(b)) or math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)


@pytest.mark.parametrize("arch", ["ps", "ring"])
def test_fast_exact_mode_equals_exact_pricing(arch: str) -> None:
    """FastOracle(exact=True) (pruned shapes, window caches, cut starts) against the
    reference exact pricing of (12)/(20), with and without the completion term."""
    for seed in range(12):
        inst, prices, free, window = _case(seed, arch)
        fast = FastOracle(inst, exact=True)
        for j in range(inst.num_jobs):
            for w in (0.0, 1.0):
                ref = price_job(Pricer(inst, prices, free, window), j, weight=w)
                got = fast(inst, j, prices, free, window, weight=w)
                assert _same(ref.cost, got.cost), (seed, j, w, ref.cost, got.cost)


@pytest.mark.parametrize("arch", ["ps", "ring"])
def test_fast_equals_algorithms_4_to_7_as_written(arch: str) -> None:
    """The vectorised algorithms give the cost of the as-written loops of :mod:`.mincost`."""
    for seed in range(12):
        inst, prices, free, window = _case(seed, arch)
        fast = FastOracle(inst)
        for j in range(inst.num_jobs):
            ref = paper_mincost(inst, j, prices, free, window)
            got = fast(inst, j, prices, free, window)
            assert _same(ref.cost, got.cost), (seed, j, ref.cost, got.cost)


def test_fast_equals_exact_under_ring_allreduce_and_never_beats_it_under_ps() -> None:
    """Theorem 6 (A_RAmincost1/2 optimal) holds for the whole oracle; under PS, Algorithm 4
    may cost more than the optimum (Theorem 1 fails) but never less."""
    for seed in range(16):
        for arch in ("ps", "ring"):
            inst, prices, free, window = _case(seed, arch, jobs=2, horizon=10)
            fast, exact = FastOracle(inst), FastOracle(inst, exact=True)
            for j in range(inst.num_jobs):
                a = fast(inst, j, prices, free, window)
                b = exact(inst, j, prices, free, window)
                assert a.cost >= b.cost - 1e-9
                if arch == "ring":
                    assert _same(a.cost, b.cost)


def test_a_whole_oracle_counterexample_to_theorem_1() -> None:
    """Random prices on small-ps-j2-h3-s244 (docs/errata.md): the cheaper of
    Algorithms 4 and 5 misses the exact minimum of (12) for job j0."""
    rng = np.random.default_rng(244)
    inst = generate(2, 3, 244, architecture="ps", horizon=10)
    cap = np.array([s.capacity for s in inst.servers])
    shape = (inst.horizon, inst.num_servers, len(inst.resources))
    prices = rng.random(shape) * (rng.random(shape) < 0.6) * 3
    free = np.maximum(cap - rng.integers(0, 3, shape) * (rng.random(shape) < 0.4), 0)
    window = (0, inst.horizon)
    paper = paper_mincost(inst, 0, prices, free, window)
    exact = price_job(Pricer(inst, prices, free, window), 0, weight=0.0)
    assert paper.cost > exact.cost + 0.1
    assert FastOracle(inst)(inst, 0, prices, free, window).cost == pytest.approx(paper.cost)


def test_fill_table_is_the_sum_of_the_k_cheapest_units() -> None:
    rng = np.random.default_rng(1)
    alpha = rng.random((5, 4)).round(2)
    caps = rng.integers(0, 3, (5, 4))
    table = fill_table(alpha, caps, 6)
    for t in range(5):
        units = sorted(a for a, c in zip(alpha[t], caps[t], strict=True) for _ in range(c))
        for k in range(7):
            want = sum(units[:k]) if k <= len(units) else math.inf
            assert _same(table[t, k], want)


def test_shapes_keep_only_the_fewest_workers_of_each_duration() -> None:
    inst = generate(3, 3, 5)
    for j in range(inst.num_jobs):
        seen = set()
        for m, p, _, q, d in job_shapes(inst, j).tolist():
            assert (m, p, q, d) not in seen
            seen.add((m, p, q, d))


def test_limit_does_not_change_what_a_maxweight_schedules() -> None:
    """A_maxweight passes w_j as the oracle's limit: the same jobs, starts and placements as
    the exact oracle without one whenever the fast oracle is exact (Ring-AllReduce)."""
    inst = generate(6, 3, 2, architecture="ring", horizon=20)
    _, lam_value = lam(inst)
    jobs = list(range(inst.num_jobs))
    fast = a_maxweight(inst, jobs, (0, 20), Ledger(inst), lam_value, FastOracle(inst))
    slow = a_maxweight(inst, jobs, (0, 20), Ledger(inst), lam_value)
    assert [(j, t) for j, _, t in fast] == [(j, t) for j, _, t in slow]


@pytest.mark.parametrize("arch", ["ps", "ring"])
def test_a_online_falls_back_on_short_horizons(arch: str) -> None:
    """alpha tau_1 = alpha >= T: no interval of Algorithm 1 starts before the horizon, yet
    every job gets a verified schedule (each at its earliest completion)."""
    inst = generate(4, 3, 1, architecture=arch, horizon=12)
    out = run_method(inst, "a-online", MethodOptions(params={"alpha": 12}))
    assert out.evaluation is not None and len(out.solution.entries) == inst.num_jobs
    assert sorted(out.details["fallback_jobs"]) == sorted(j.name for j in inst.jobs)


# --- hypothesis properties ----------------------------------------------------------------


@settings(max_examples=5, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    arch=st.sampled_from(["ps", "ring"]),
    jobs=st.integers(1, 3),
    servers=st.integers(1, 2),
)
def test_every_method_is_checked_and_bounded_by_exact(seed, arch, jobs, servers) -> None:
    """On random small instances: every heuristic's schedule passes the checker and costs no
    less than the certified optimum (or, when its greedy commitments leave a job no room
    before T, it returns no schedule and names the jobs); lp-bound <= exact; column
    generation's bound equals the LP over every enumerated column."""
    inst = generate(jobs, servers, seed, architecture=arch, horizon=12)
    exact = run_method(inst, "exact")
    if exact.status != Status.OPTIMAL:  # a job that cannot finish by T: (2) is infeasible
        assert exact.status == Status.INFEASIBLE
        return
    for name in HEURISTICS:
        out = run_method(inst, name)
        if out.solution is None:  # greedy commitments that block a job
            assert out.status == Status.NO_SOLUTION and out.details["unscheduled_jobs"], name
            continue
        assert check_schedule(inst, out.solution).objective == out.objective, name
        assert out.objective >= exact.objective - 1e-9, name
    lp = run_method(inst, "lp-bound")
    assert lp.bound is not None and lp.bound <= exact.objective + 1e-6
    assert lp.details["converged"]
    full = full_lp(inst, all_columns(inst, enumerate_all(inst)))
    assert lp.bound == pytest.approx(full, rel=1e-6, abs=1e-6)


def test_plot_draws_every_job_on_every_server_it_uses(tmp_path) -> None:
    from dlsched.instances import load
    from dlsched.models.elastic import FAMILY
    from dlsched.models.elastic.gantt import lanes

    inst = generate(4, 2, 3, horizon=16)
    out = run_method(inst, "a-online")
    path = FAMILY.plot(inst, out, tmp_path / "gantt.png")
    assert path.stat().st_size > 0
    for h in range(inst.num_servers):  # jobs in one lane never overlap in time
        here = [e for e in out.solution.entries if e.workers[h] or e.ps[h]]
        lane_of, _ = lanes(here)
        for a in range(len(here)):
            for b in range(a):
                if lane_of[a] == lane_of[b]:
                    assert here[a].end <= here[b].start or here[b].end <= here[a].start
    with pytest.raises(OptionError, match="no schedule"):
        FAMILY.plot(load("elastic/intro-cifar10"), run_method(inst, "lp-bound"), tmp_path / "x.png")


def test_theorem_sweeps_report_assumptions_and_resume(tmp_path) -> None:
    """Theorems 5 and 3 on the family's small instances through the verify runner: the ratio
    beside the guarantee, judged only where Section 5.1's assumptions hold; a second run
    resumes the log instead of solving again."""
    from dlsched.models.elastic.algorithms import alpha_theorem5, lam
    from dlsched.models.elastic.guarantees import assumptions
    from dlsched.models.elastic.theorems import maxweight_by
    from dlsched.verify.check import sample

    def small(seed: int, jobs: int | None = None, gpus: int | None = None):  # type: ignore[no-untyped-def]
        return generate(3, 2, seed, horizon=12)

    rows, _ = sample("003-thm5", 2, generate=small, directory=tmp_path)
    online = [r for r in rows if r["method"] == "a-online"]
    assert [r["instance"] for r in online] == ["003-thm5-s0", "003-thm5-s1"]
    for r, seed in zip(online, (0, 1), strict=True):
        inst = small(seed)
        assert r["reference_kind"] == "optimum" and r["ratio"] >= 1 - 1e-9
        assert r["bound"] == 4 * alpha_theorem5(inst, lam(inst)[1])
        judged = r["ratio"] <= r["bound"] if r["applies"] else None
        assert r["holds"] is judged and r["applies"] is (r["why_not"] is None)
        f_value, lam_value = lam(inst)
        met = assumptions(inst, lam_value, f_value)
        assert r["applies"] is (met["small_demand"] and met["weight_at_least_consumption"])
    log = (tmp_path / "verify.jsonl").read_text()
    again, _ = sample("003-thm5", 2, generate=small, directory=tmp_path)
    assert again == rows and (tmp_path / "verify.jsonl").read_text() == log  # resumed
    (row,) = sample(maxweight_by(6), 1, generate=small, directory=tmp_path)[0]
    assert row["value"] <= row["reference"] + 1e-9 and row["details"]["tau"] == 6


@pytest.mark.parametrize(
    ("arch", "pair"),
    [("ps", ("a-mincost1", "a-mincost2")), ("ring", ("a-ramincost1", "a-ramincost2"))],
)
def test_each_algorithm_alone_and_the_cheaper_of_the_two(arch: str, pair) -> None:
    """``--param oracle=a-mincost1`` ... prices with one of Algorithms 4-7 alone (one
    colocation q); the paper oracle is the cheaper of the architecture's two; the other
    architecture's algorithm is refused in one line; A_maxweight runs with each."""
    from dlsched.models.elastic.algorithms import one_algorithm_oracle

    for seed in range(4):
        inst, prices, free, window = _case(seed, arch)
        one, two = (one_algorithm_oracle(inst, name) for name in pair)
        for j in range(inst.num_jobs):
            a, b = one(inst, j, prices, free, window), two(inst, j, prices, free, window)
            both = paper_mincost(inst, j, prices, free, window)
            assert _same(both.cost, min(a.cost, b.cost)), (seed, j)
            colocated = b if arch == "ps" else a  # A_mincost2 / A_RAmincost1: q = 1
            if colocated.config is not None:  # every worker (and its PS) on one server
                assert np.count_nonzero(colocated.config.usage.any(axis=1)) == 1
    inst = generate(3, 2, 1, architecture=arch)
    for name in pair:
        out = run_method(inst, "a-maxweight", MethodOptions(params={"oracle": name}))
        assert out.evaluation is not None or out.details["unscheduled_jobs"]
    wrong = "a-ramincost1" if arch == "ps" else "a-mincost1"
    with pytest.raises(OptionError, match="oracle"):
        run_method(inst, "a-online", MethodOptions(params={"oracle": wrong}))
