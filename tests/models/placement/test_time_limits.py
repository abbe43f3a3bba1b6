"""Placement methods keep --time-limit: HAS and JPS stop at the limit and report the best
placement of the categories they finished (status time_limit; no placement before any);
exhaustive search proves nothing when cut; LAS, P3 and the exact routes hand their solvers what
is left of the method's deadline, and a forked exact route stopped at the limit returns a
placement without a bound. Time passes on an injected clock (tests/fake_clock.py), never by
waiting for it, so the tests do not depend on the machine's speed or load."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest
from fake_clock import FakeClock, record_time_limits, takes_time

from dlsched.instances import load
from dlsched.models import MethodOptions, run_method
from dlsched.models.placement import columns, exact, heuristics, routes
from dlsched.models.placement.categories import algorithm1
from dlsched.models.placement.check import check_placement
from dlsched.models.placement.evaluate import Evaluator
from dlsched.models.placement.solution import Placement
from dlsched.solvers import SolveOptions, SolverSettings, Status
from dlsched.solvers.deadline import NEVER, Deadline

#: 3654 categories: HAS over all of them takes several times the limits used here.
LARGE = "placement/liu2024-s4k30-seed0"
SMALL = "placement/liu2024-s4k12-seed0"


def tick_per_category(monkeypatch, clock: FakeClock) -> None:
    """One second passes on ``clock`` each time a category's pricing ends."""
    takes_time(monkeypatch, clock, 1.0, heuristics, "_run_category")


def options(limit: float, clock: FakeClock, params: dict | None = None) -> MethodOptions:
    return MethodOptions(SolveOptions(time_limit=limit), params or {}, clock=clock)


@pytest.mark.parametrize("method", ["has", "has-paper"])
def test_has_stops_at_the_limit_with_the_best_category_it_finished(monkeypatch, method):
    clock = FakeClock()
    tick_per_category(monkeypatch, clock)
    inst = load(LARGE)
    out = run_method(inst, method, options(5.5, clock))
    assert out.status == Status.TIME_LIMIT
    # the limit passes during the sixth category: it ends, and no seventh starts
    assert out.details["categories_examined"] == 6 < out.details["categories_total"]
    # the placement is the best of the finished prefix of Algorithm 1's order, run uncut
    variant = "clearing" if method == "has" else "paper"
    cats = list(enumerate(algorithm1(inst.num_workers, inst.num_jobs)))[:6]
    redo = heuristics._run_categories(inst, Evaluator(inst), cats, variant)
    assert out.objective == pytest.approx(min(r.avg_jct for r in redo), rel=1e-9)


def test_has_reports_the_limit_with_no_placement_when_it_comes_before_any_category():
    clock = FakeClock(step=1.0)  # the limit has passed at the first look
    out = run_method(load(LARGE), "has", options(0.5, clock))
    assert out.status == Status.TIME_LIMIT
    assert out.objective is None and out.solution is None
    assert "time limit" in out.details["reason"]
    assert out.details["categories_examined"] == 0


def test_a_market_that_goes_on_past_the_deadline_stops_between_rounds():
    """The printed tie rule cycles forever on the paper's example (Theorem 1's bound, raised
    here as unbounded, would never end it): the deadline does, after its third round."""
    rho = np.asarray(load("placement/liu2024-motivating").rho)
    clock = FakeClock(step=1.0)  # a second per look at the clock, one look per round
    with pytest.raises(heuristics.TimeUp):
        heuristics.matching_market(
            rho, (3, 1), "index", "paper", math.inf, deadline=Deadline.after(2.5, clock)
        )
    assert clock.reads == 4  # the start, then rounds at 1, 2 and 3 s


def test_jps_cut_by_the_limit_reports_time_limit(monkeypatch):
    clock = FakeClock()
    tick_per_category(monkeypatch, clock)
    out = run_method(load(LARGE), "jps", options(2.5, clock, {"samples": 10**8}))
    assert out.status == Status.TIME_LIMIT
    assert out.details["categories_examined"] == 3 < out.details["samples_drawn"]


def test_jps_that_examines_all_its_samples_is_not_cut():
    out = run_method(load(SMALL), "jps", MethodOptions(SolveOptions(time_limit=None)))
    assert out.status == Status.FEASIBLE
    assert out.details["categories_examined"] == out.details["samples_drawn"]


def surjections(s: int, k: int) -> int:
    """Assignments of k workers onto all s jobs, by inclusion-exclusion."""
    return sum((-1) ** i * math.comb(s, i) * (s - i) ** k for i in range(s + 1))


def surjective_codes(s: int, k: int, stop: int) -> int:
    """How many of the assignments coded 0 .. stop - 1 (base s, worker 0 the lowest digit)
    use every job: counted one by one."""
    codes = np.arange(stop, dtype=np.int64)
    digits = (codes[:, None] // s ** np.arange(k, dtype=np.int64)[None, :]) % s
    jobs_used = sum((digits == i).any(axis=1).astype(int) for i in range(s))
    return int((jobs_used == s).sum())


def test_exhaustive_cut_by_the_limit_proves_nothing(monkeypatch):
    inst = load(SMALL)  # 4^12 assignments in 64 chunks
    clock = FakeClock()

    class Ticking(Evaluator):  # a second passes with each chunk evaluated
        def avg_jct(self, *args, **kwargs):  # type: ignore[no-untyped-def]
            clock.advance(1.0)
            return super().avg_jct(*args, **kwargs)

    monkeypatch.setattr(heuristics, "Evaluator", Ticking)
    out = run_method(inst, "exhaustive", options(2.5, clock))
    assert out.status == Status.TIME_LIMIT
    assert out.bound is None
    # three chunks examined, no fourth
    chunk = 1 << 18
    examined = out.details["assignments_examined"]
    assert examined == surjective_codes(inst.num_jobs, inst.num_workers, 3 * chunk)
    assert examined < surjections(inst.num_jobs, inst.num_workers)


def test_exhaustive_examines_every_surjection_when_it_ends():
    inst = load("placement/liu2024-s3k8-seed1")
    out = run_method(inst, "exhaustive", MethodOptions(SolveOptions(time_limit=60.0)))
    assert out.status == Status.OPTIMAL
    assert out.details["assignments_examined"] == surjections(inst.num_jobs, inst.num_workers)


def test_exhaustive_refuses_a_search_too_large_to_count_in_a_float():
    from dlsched.errors import OptionError
    from dlsched.models.placement.generator import generate

    with pytest.raises(OptionError, match=r"50\^400 = 1e680"):
        heuristics.exhaustive_search(generate(50, 400, 0))


@pytest.mark.parametrize(("method", "params"), [("has", {}), ("jps", {"samples": 10**8})])
def test_the_categories_of_a_large_instance_are_not_listed_before_the_search(
    monkeypatch, method, params
):
    inst = load("placement/liu2024-s5k100-seed0")  # |Psi| = C(99, 4) = 3.8 million
    clock = FakeClock()
    tick_per_category(monkeypatch, clock)
    listed = []
    real_next, real_unrank = heuristics.algorithm1, heuristics.unrank

    def algorithm1_spy(*args):  # type: ignore[no-untyped-def]
        for cat in real_next(*args):
            listed.append(cat)
            yield cat

    def unrank_spy(*args):  # type: ignore[no-untyped-def]
        listed.append(args)
        return real_unrank(*args)

    monkeypatch.setattr(heuristics, "algorithm1", algorithm1_spy)
    monkeypatch.setattr(heuristics, "unrank", unrank_spy)
    out = run_method(inst, method, options(1.5, clock, params))
    assert out.status == Status.TIME_LIMIT
    assert out.details["categories_examined"] == 2
    assert len(listed) <= 3  # those examined and at most the next one


def test_jps_samples_a_rear_of_psi_beyond_64_bit_integers():
    from dlsched.models.placement.generator import generate

    inst = generate(50, 400, 0)  # C(399, 49) = 1.3e62 categories
    pool = heuristics.jps_pool(inst, 0.7)
    assert pool > 2**63
    picks = heuristics._sample(np.random.default_rng(0), pool, 5)
    assert picks == sorted(set(picks)) and len(picks) == 5
    assert all(0 <= p < pool for p in picks)
    assert picks == heuristics._sample(np.random.default_rng(0), pool, 5)  # seeded


def test_las_hands_each_lp_what_is_left(monkeypatch):
    """LAS solves two LPs: the second gets the limit less what the first took."""
    clock = FakeClock()
    handed = record_time_limits(monkeypatch, routes, "solve")
    takes_time(monkeypatch, clock, 3.0, routes, "solve")
    out = run_method(load(SMALL), "las", options(10.0, clock))
    assert handed == [10.0, 7.0]
    assert out.status == Status.FEASIBLE


def test_las_whose_first_lp_takes_the_whole_limit_keeps_its_placement(monkeypatch):
    """The second LP (the sum at the max-min ratio) starts only when time is left for it."""
    clock = FakeClock()
    handed = record_time_limits(monkeypatch, routes, "solve")
    takes_time(monkeypatch, clock, 10.0, routes, "solve")
    out = run_method(load(SMALL), "las", options(10.0, clock))
    assert handed == [10.0]
    assert out.status == Status.FEASIBLE and out.details["las_max_min_ratio"] > 0


def test_p3_hands_its_lp_what_is_left(monkeypatch):
    clock = FakeClock()
    handed = record_time_limits(monkeypatch, exact, "solve")
    out = run_method(load(SMALL), "p3", options(10.0, clock, {"category": (3, 3, 3, 3)}))
    assert handed == [10.0]
    assert out.status == Status.FEASIBLE


def test_p3_whose_lp_is_cut_by_the_limit_reports_the_limit_not_a_bad_category(monkeypatch):
    from dlsched.solvers.base import SolveResult

    def cut(*_args, **_kw):
        return SolveResult(Status.TIME_LIMIT, None, None, 0.0, "highs", "test")

    monkeypatch.setattr(exact, "solve", cut)
    out = run_method(load(SMALL), "p3", options(10.0, FakeClock(), {"category": (3, 3, 3, 3)}))
    assert out.status == Status.TIME_LIMIT and out.solution is None
    assert "P3's LP" in out.details["reason"]


def test_outer_approximation_stops_between_masters_at_the_deadline(monkeypatch):
    """Each master HiGHS run takes 4 s on the clock: with 7 s the route hands its masters 7
    and 3 s, then stops (status time_limit; it needs three masters to close) with a checked
    placement and the bound of its masters."""
    clock = FakeClock()
    handed = []
    real = exact.PyomoSolver

    class Timed(real):  # type: ignore[misc, valid-type]
        def solve(self, model, options=None):  # type: ignore[no-untyped-def]
            handed.append(options.time_limit)
            out = super().solve(model, options)
            clock.advance(4.0)
            return out

    monkeypatch.setattr(exact, "PyomoSolver", Timed)
    inst = load("placement/liu2024-s4k15-seed0")
    out = exact._outer_approximation(inst, None, SolverSettings(), Deadline.after(7.0, clock))
    assert handed == [7.0, 3.0]
    assert out.status == Status.TIME_LIMIT
    assert out.details["iterations"] == 3  # the third found the limit passed
    assert out.bound is not None and out.bound <= out.objective
    assert out.objective == pytest.approx(check_placement(inst, out.solution).avg_jct)


def _stuck(*args):  # type: ignore[no-untyped-def]
    time.sleep(60)


@pytest.mark.parametrize(
    ("route", "stuck"),
    [("columns", (columns, "run")), ("highs", (exact, "_outer_approximation"))],
)
def test_a_forked_route_killed_at_the_limit_returns_its_start_placement(monkeypatch, route, stuck):
    """A route whose work cannot stop itself runs in a child, killed at the limit and its
    grace: the method returns the placement it started from, no bound, status time_limit."""
    monkeypatch.setattr(*stuck, _stuck)
    inst = load(SMALL)
    out = exact.solve_exact(inst, route=route, deadline=Deadline.after(0.2))
    assert out.status == Status.TIME_LIMIT
    assert out.bound is None
    assert out.details["returned"] == "optimus-lb"
    assert "overran" in out.details["stopped"]
    start = Placement(heuristics.optimus_lb(inst))
    assert out.objective == pytest.approx(check_placement(inst, start).avg_jct)


def test_the_column_route_prices_one_round_before_it_stops(monkeypatch):
    """The limit passes once the first round has priced its columns: the route still reports
    that round's Lagrangian bound, below the proven optimum, and the start incumbent."""
    from dlsched.models.placement.generator import generate

    inst = generate(6, 150, 0)
    full = exact.solve_exact(inst, route="columns", deadline=NEVER)
    assert full.status == Status.OPTIMAL
    clock = FakeClock()
    real = columns.best_columns

    def best_then_late(*args):  # type: ignore[no-untyped-def]
        clock.advance(100.0)
        return real(*args)

    monkeypatch.setattr(columns, "best_columns", best_then_late)
    early = exact.solve_exact(inst, route="columns", deadline=Deadline.after(10.0, clock))
    assert early.status == Status.TIME_LIMIT
    assert early.details["pricing_rounds"] == 1
    assert early.objective == pytest.approx(check_placement(inst, early.solution).avg_jct)
    assert early.objective >= full.objective * (1 - 1e-9)
    assert 0 < early.bound <= full.objective * (1 + 1e-9)
    assert early.gap == pytest.approx((early.objective - early.bound) / early.objective)
    start = Placement(heuristics.optimus_lb(inst))
    assert full.objective <= early.objective <= check_placement(inst, start).avg_jct
