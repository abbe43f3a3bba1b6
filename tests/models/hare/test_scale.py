"""R || sum w_j C_j at scale (issue 12): the local search, the pricing DP, the Lagrangian bound
of the column generation and the special route, against brute force and full enumeration."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dlsched.models import MethodOptions, run_method
from dlsched.models.hare.colgen import (
    Pricer,
    column_generation,
    dyadic,
    enumerated_master,
    lagrangian_bound,
    price,
)
from dlsched.models.hare.generate import generate_unrelated
from dlsched.models.hare.localsearch import (
    descend,
    greedy,
    iterated_local_search,
    load_horizon,
    sum_wc_data,
)
from dlsched.solvers import SolveOptions, Status
from dlsched.solvers.deadline import Deadline
from dlsched.solvers.highs import MatrixModel, solve_matrix

SETTINGS = settings(
    max_examples=12, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


def machine_cost(inst, m: int, order: tuple[int, ...]) -> float:
    """sum w_j C_j of ``order`` run back to back on GPU m from the arrival (no Smith rule)."""
    t, total = inst.jobs[0].arrival, 0.0
    for j in order:
        t += inst.tc[j, m]
        total += inst.jobs[j].weight * (t + inst.ts[j, m])
    return total


def best_sequence(inst, m: int, jobs: tuple[int, ...]) -> float:
    return min((machine_cost(inst, m, o) for o in itertools.permutations(jobs)), default=0.0)


def brute_force(inst) -> tuple[float, list[tuple[int, ...]]]:
    """Optimum over every assignment and every order per GPU; the loads of every optimum."""
    n, M = inst.num_jobs, inst.num_gpus
    best, loads = math.inf, []
    for assign in itertools.product(range(M), repeat=n):
        per = [tuple(j for j in range(n) if assign[j] == m) for m in range(M)]
        c = sum(best_sequence(inst, m, per[m]) for m in range(M))
        load = tuple(int(sum(inst.tc[j, m] for j in per[m])) for m in range(M))
        if c < best - 1e-9:
            best, loads = c, [load]
        elif c <= best + 1e-9:
            loads.append(load)
    return best, loads


@st.composite
def tiny(draw, max_jobs: int = 5, max_gpus: int = 3):
    jobs = draw(st.integers(1, max_jobs))
    gpus = draw(st.integers(1, max_gpus))
    return generate_unrelated(jobs, gpus, draw(st.integers(0, 10**6)))


@SETTINGS
@given(tiny(), st.integers(0, 2**31))
def test_lagrangian_bound_holds_for_any_multipliers(inst, seed):
    """The bound is valid for ANY pi (zero, random positive, random of both signs): never
    above the brute-force optimum."""
    data = sum_wc_data(inst)
    opt, _ = brute_force(inst)
    rng = np.random.default_rng(seed)
    for pi in (np.zeros(data.n), rng.uniform(0, 3000, data.n), rng.normal(0, 500, data.n)):
        value, _ = lagrangian_bound(data, dyadic(pi, data), horizon=load_horizon(data.p, data.s))
        assert value <= opt + 1e-9


@SETTINGS
@given(tiny(max_jobs=6), st.integers(0, 2**31))
def test_pricing_is_the_minimum_over_all_job_sets(inst, seed):
    data = sum_wc_data(inst)
    pi = dyadic(np.random.default_rng(seed).uniform(0, 2000, data.n), data)
    for m in range(data.m):
        value, sets = price(data, m, pi, keep=4)
        brute = min(
            best_sequence(inst, m, s) - float(pi[list(s)].sum())
            for r in range(data.n + 1)
            for s in itertools.combinations(range(data.n), r)
        )
        assert value == pytest.approx(min(0.0, brute), abs=1e-6)
        for s in sets:  # every returned set has the negative value it was priced at
            assert best_sequence(inst, m, tuple(s)) - float(pi[s].sum()) < 0


@SETTINGS
@given(tiny(max_jobs=6), st.integers(0, 2**31))
def test_pricing_all_gpus_side_by_side_equals_one_gpu_at_a_time(inst, seed):
    data = sum_wc_data(inst)
    pi = dyadic(np.random.default_rng(seed).uniform(0, 2000, data.n), data)
    pricer = Pricer.of(data, load_horizon(data.p, data.s))
    values, found = pricer(pi, keep=2)
    for m in range(data.m):
        value, sets = price(data, m, pi, keep=2, horizon=load_horizon(data.p, data.s))
        assert values[m] == value
        assert sorted(s.tolist() for g, s in found if g == m) == sorted(s.tolist() for s in sets)


def subsets_within(data, pricer, pi, slack):
    """Brute force: every (GPU, non-empty set within the horizon) of reduced cost <= the
    GPU's pricing minimum + slack."""
    values, _ = pricer(pi)
    return sorted(
        (m, s)
        for m in range(data.m)
        for r in range(1, data.n + 1)
        for s in itertools.combinations(range(data.n), r)
        if data.p[list(s), m].sum() <= pricer.horizon
        and data.gpu_cost(m, np.array(s)) - float(pi[list(s)].sum()) <= values[m] + slack
    )


@SETTINGS
@given(tiny(max_jobs=6), st.integers(0, 2**31), st.floats(0, 3000))
def test_enumeration_lists_exactly_the_columns_within_the_slack(inst, seed, slack):
    data = sum_wc_data(inst)
    pi = dyadic(np.random.default_rng(seed).uniform(0, 2000, data.n), data)
    pricer = Pricer.of(data, load_horizon(data.p, data.s))
    got = pricer.enumerate(pi, slack, limit=10**6)
    assert sorted((m, tuple(s.tolist())) for m, s in got) == subsets_within(data, pricer, pi, slack)
    expected = len(subsets_within(data, pricer, pi, slack))
    if expected > 1:  # over the limit: None, never a partial list
        assert pricer.enumerate(pi, slack, limit=expected - 1) is None


@SETTINGS
@given(tiny(max_jobs=5), st.integers(0, 2**31), st.integers(0, 40))
def test_enumerated_master_bound_holds_for_any_multipliers_and_upper_value(inst, seed, extra):
    """The bound of the MIP over the enumerated columns is never above the brute-force optimum,
    whatever the multipliers (random, far from the LP duals) and the claimed upper value (even
    one below the optimum); with a true upper value it proves the optimum or finds a cheaper
    schedule."""
    data = sum_wc_data(inst)
    opt, _ = brute_force(inst)
    horizon = load_horizon(data.p, data.s)
    rng = np.random.default_rng(seed)
    for pi in (np.zeros(data.n), rng.uniform(0, 3000, data.n), rng.normal(0, 500, data.n)):
        pi = dyadic(pi, data)
        low, _ = lagrangian_bound(data, pi, horizon=horizon)
        for upper in (opt - extra, opt + extra + 1):
            res = enumerated_master(data, pi, low, upper, Deadline.after(20))
            if res.bound is not None:
                assert res.bound <= opt + 1e-9
            if res.assign is not None:
                assert data.cost(res.assign) >= opt - 1e-9
        res = enumerated_master(data, pi, low, opt + 1, Deadline.after(20))
        assert res.bound == opt  # the true optimum + 1 as upper value: a proof


@SETTINGS
@given(tiny(max_jobs=5))
def test_load_horizon_bounds_every_optimal_load(inst):
    data = sum_wc_data(inst)
    _, loads = brute_force(inst)
    assert max(max(load) for load in loads) <= load_horizon(data.p, data.s)


def full_lp(inst) -> float:
    """The set-partitioning LP over EVERY (GPU, non-empty job set) column, solved by HiGHS."""
    n, M = inst.num_jobs, inst.num_gpus
    cols = [
        (m, s)
        for m in range(M)
        for r in range(1, n + 1)
        for s in itertools.combinations(range(n), r)
    ]
    rows, cidx = [], []
    for k, (m, s) in enumerate(cols):
        rows += [*s, n + m]
        cidx += [k] * (len(s) + 1)
    model = MatrixModel(
        cost=np.array([best_sequence(inst, m, s) for m, s in cols]),
        matrix=sp.csc_matrix((np.ones(len(rows)), (rows, cidx)), shape=(n + M, len(cols))),
        row_lower=np.concatenate((np.ones(n), np.full(M, -np.inf))),
        row_upper=np.ones(n + M),
        col_lower=np.zeros(len(cols)),
        col_upper=np.ones(len(cols)),
    )
    res = solve_matrix(model, SolveOptions(time_limit=30))
    assert res.status == Status.OPTIMAL
    return res.objective


@SETTINGS
@given(tiny(max_jobs=6))
def test_column_generation_converges_to_the_full_lp(inst):
    """Without an incumbent to stop at, the master LP reaches the LP over all enumerated
    single-GPU schedules (with load_horizon, whose columns contain an optimum, the LP may only
    be higher), and the certified bound is at most the brute-force optimum."""
    data = sum_wc_data(inst)
    lp = full_lp(inst)
    opt, _ = brute_force(inst)
    cg = column_generation(data, greedy(data), Deadline.after(20))
    assert cg.converged
    assert lp - 1e-6 <= cg.lp_value <= opt + 1e-6
    assert cg.bound <= opt + 1e-9
    assert cg.bound >= lp - 1e-3  # the Lagrangian bound at the last LP duals is the LP value


def test_local_search_reaches_a_local_optimum_of_both_moves():
    inst = generate_unrelated(30, 4, 7)
    data = sum_wc_data(inst)
    start = greedy(data)
    assign = descend(data, start, Deadline.never())
    cost = data.cost(assign)
    assert cost <= data.cost(start)
    for j in range(data.n):  # no relocation improves (recomputed from scratch)
        for h in range(data.m):
            moved = assign.copy()
            moved[j] = h
            assert data.cost(moved) >= cost
    for j, k in itertools.combinations(range(data.n), 2):  # nor any swap
        swapped = assign.copy()
        swapped[j], swapped[k] = assign[k], assign[j]
        assert data.cost(swapped) >= cost
    best, best_cost, _ = iterated_local_search(data, assign, Deadline.after(0.5), seed=1)
    assert best_cost == data.cost(best) <= cost


def test_special_route_schedule_is_checked_and_bound_below_it():
    """4 x 20: the route's schedule passes the checker (run_method verifies it), the column
    generation's certified bound proves it, and the time-indexed MILP forced alone (a second
    route) proves the same optimum."""
    inst = generate_unrelated(20, 4, 3)
    opts = MethodOptions(SolveOptions(time_limit=20))
    out = run_method(inst, "exact", opts)
    assert out.details["route"] == "special"
    assert out.bound <= out.objective + 1e-9
    assert out.details["colgen_bound"] <= out.objective + 1e-9
    assert out.status == Status.OPTIMAL
    from dlsched.models.hare.special import solve_single_task

    other = solve_single_task(
        inst, opts.solve, "time-indexed", deadline=Deadline.after(20)
    ).certified()
    assert other.status == Status.OPTIMAL
    assert other.objective == pytest.approx(out.objective)


def test_generate_unrelated_distribution():
    inst = generate_unrelated(50, 3, 0)
    assert inst.num_tasks == 50
    assert all(j.arrival == 0 and j.rounds == j.tasks_per_round == 1 for j in inst.jobs)
    assert all(1 <= j.weight <= 100 and float(j.weight).is_integer() for j in inst.jobs)
    assert inst.tc.min() >= 1 and inst.tc.max() <= 30 and not inst.ts.any()
    assert generate_unrelated(50, 3, 0) == inst


def test_enumerated_master_decides_when_presolve_fails():
    """4 x 60 seed 1 with slack 7 above the converged Lagrangian value: the restricted MIP is
    infeasible and HiGHS's presolve once returned a row-infeasible point as "optimal" (a solve
    error, bound 0). The MIP is re-solved without presolve: the bound is at least the
    column-generation bound, the slack's cap when infeasible, and below any schedule found."""
    data = sum_wc_data(generate_unrelated(60, 4, 1))
    cg = column_generation(data, greedy(data), Deadline.after(60))
    assert cg.converged
    upper = cg.bound + 8
    res = enumerated_master(data, cg.pi, cg.exact_bound, upper, Deadline.after(30))
    assert res.status in ("optimal", "infeasible")
    assert res.bound >= cg.bound
    if res.status == "infeasible":
        assert res.bound == upper
    if res.assign is not None:
        assert data.cost(res.assign) >= res.bound


def test_a_highs_solve_error_reports_no_bound():
    """The same restricted MIP with HiGHS's presolve on ends in a solve error: solve_matrix
    then reports no bound (HiGHS's own number there was 0, meaningless)."""
    from dlsched.models.hare.colgen import Columns, master

    data = sum_wc_data(generate_unrelated(60, 4, 1))
    cg = column_generation(data, greedy(data), Deadline.after(60))
    slack = float(cg.bound + 8) - 1.0 - cg.exact_bound
    cols = Columns()
    for m, jobs in Pricer.of(data, load_horizon(data.p, data.s)).enumerate(cg.pi, slack, 120_000):
        cols.add(data, m, jobs)
    res = solve_matrix(master(data, cols, integer=True), SolveOptions(time_limit=30, threads=1))
    assert res.status == Status.ERROR
    assert res.bound is None


def plain_dp(data, m: int, pi: np.ndarray, horizon: int) -> float:
    """min(0, least c(S, m) - pi(S) over sets of load <= horizon): the DP over GPU m's Smith
    order written with a dict of load -> least value, every job considered."""
    f = {0: 0.0}
    for j in data.smith_order(m, np.arange(data.n)).tolist():
        p, cost0 = int(data.p[j, m]), float(data.w[j] * (data.a + data.s[j, m]))
        for t, v in sorted(f.items(), reverse=True):
            if t + p <= horizon:
                cand = v + cost0 + float(data.w[j]) * (t + p) - float(pi[j])
                f[t + p] = min(f.get(t + p, math.inf), cand)
    return min(0.0, min(f.values()))


@SETTINGS
@given(tiny(max_jobs=7, max_gpus=3), st.integers(0, 2**31), st.integers(0, 60))
def test_compiled_pricing_agrees_with_a_plain_python_dp(inst, seed, cut):
    """Every GPU's minimum (exact pricing, all candidates), compiled and in numpy, equals the
    plain DP's, with the load horizon and with a tighter one."""
    data = sum_wc_data(inst)
    pi = dyadic(np.random.default_rng(seed).uniform(0, 3000, data.n), data)
    for horizon in (load_horizon(data.p, data.s), max(1, load_horizon(data.p, data.s) - cut)):
        for compiled in (True, False):
            priced = Pricer.of(data, horizon, compiled).solve(pi, keep=3)
            assert priced.exact.all()
            for m in range(data.m):
                least = plain_dp(data, m, pi, min(horizon, int(data.p[:, m].sum())))
                assert priced.values[m] == least


@SETTINGS
@given(
    tiny(max_jobs=9, max_gpus=4),
    st.integers(0, 2**31),
    st.sampled_from(["dyadic", "integer", "equal"]),
    st.integers(1, 4),
    st.integers(1, 9),
)
def test_numpy_pricing_answers_as_the_compiled_one(inst, seed, kind, keep, most):
    """The numpy twin of the compiled pricing returns the same arrays, bit for bit: values,
    exact flags, columns (GPU, reduced cost, jobs in the same order), also among equal values
    (integer and equal multipliers give many) and with the heuristic's ``most`` candidates."""
    from dlsched.models.hare import pricing_array, pricing_core

    data = sum_wc_data(inst)
    rng = np.random.default_rng(seed)
    pi = {
        "dyadic": lambda: dyadic(rng.uniform(0, 3000, data.n), data),
        "integer": lambda: np.floor(rng.uniform(0, 3000, data.n)),
        "equal": lambda: np.full(data.n, float(rng.integers(1, 3000))),
    }[kind]()
    pricer = Pricer.of(data, load_horizon(data.p, data.s))
    args = (pricer.order, pricer.p_seq, pricer.cost0, data.w.astype(float), pi, pricer.horizon)
    for m_most in (most, data.n):
        compiled = pricing_core.price_gpus(*args, keep, m_most)
        array = pricing_array.price_gpus(*args, keep, m_most)
        for a, b in zip(compiled, array, strict=True):
            assert a.dtype == b.dtype and np.array_equal(a, b)


def test_small_instances_price_without_numba() -> None:
    """A run of the exact route on a small R || sum w_j C_j instance prices in numpy: numba is
    not loaded (its import and compiled code cost more than the whole pricing there)."""
    import subprocess
    import sys

    code = (
        "import sys; from dlsched.models import MethodOptions, run_method; "
        "from dlsched.models.hare.generate import generate_unrelated; "
        "from dlsched.solvers import SolveOptions; "
        "out = run_method(generate_unrelated(12, 3, 0), 'exact', MethodOptions(SolveOptions(30))); "
        "print(out.status, 'numba' in sys.modules, out.details.get('colgen_iterations', 0) > 0)"
    )
    got = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert got.stdout.split() == ["optimal", "False", "True"]


@SETTINGS
@given(tiny(max_jobs=7, max_gpus=3), st.integers(0, 2**31), st.integers(1, 4))
def test_heuristic_pricing_columns_have_the_reduced_cost_claimed(inst, seed, most):
    """The heuristic (at most ``most`` candidates per GPU) and the exact pricing return sets of
    exactly the reduced cost they claim, negative; a GPU flagged exact has the exact minimum,
    and the heuristic's value is never below it."""
    data = sum_wc_data(inst)
    pi = dyadic(np.random.default_rng(seed).uniform(0, 3000, data.n), data)
    pricer = Pricer.of(data, load_horizon(data.p, data.s))
    exact = pricer.solve(pi, keep=3)
    for priced in (pricer.solve(pi, keep=3, most=most), exact):
        for (m, jobs), reduced in zip(priced.found, priced.reduced, strict=True):
            assert reduced < 0
            assert data.gpu_cost(m, jobs) - float(pi[jobs].sum()) == reduced
        assert np.all(priced.values >= exact.values)
        assert np.all(priced.values[priced.exact] == exact.values[priced.exact])


@SETTINGS
@given(tiny(max_jobs=6))
def test_lagrangian_ascent_stays_below_the_lp_and_the_optimum(inst):
    """The ascent's best Lagrangian value is at most the full LP, itself at most the brute-force
    optimum; every schedule it offers costs at least the optimum."""
    from dlsched.models.hare.colgen import BoundTrace, lagrangian_ascent
    from dlsched.models.hare.localsearch import marginal_multipliers

    data = sum_wc_data(inst)
    opt, _ = brute_force(inst)
    lp = full_lp(inst)
    offered = []

    def incumbent(assign):
        if assign is not None:
            offered.append(data.cost(assign))
        return min([data.cost(greedy(data)), *offered])

    pricer = Pricer.of(data, load_horizon(data.p, data.s))
    trace = BoundTrace(data)
    lagrangian_ascent(
        pricer, marginal_multipliers(data, greedy(data)), incumbent, Deadline.after(10), trace
    )
    assert trace.best <= lp + 1e-6 <= opt + 2e-6
    assert all(c >= opt - 1e-9 for c in offered)
    assert all(b <= opt / data.unit + 1e-9 for _, b in trace.trajectory)


@SETTINGS
@given(tiny(max_jobs=6))
def test_stabilization_does_not_change_the_converged_lp_value(inst):
    """Column generation converges to the same master LP value without smoothing, with
    Wentges smoothing, and started by the Lagrangian ascent."""
    data = sum_wc_data(inst)
    opt, _ = brute_force(inst)
    start = greedy(data)
    values = []
    for alpha, ascent in ((0.0, None), (0.9, None), (0.5, Deadline.after(5))):
        cg = column_generation(
            data,
            start,
            Deadline.after(20),
            alpha=alpha,
            incumbent=(lambda assign: opt + 1) if ascent is not None else None,
            ascent=ascent,
        )
        assert cg.converged
        values.append(cg.lp_value)
    assert values == pytest.approx([values[0]] * 3, rel=1e-9, abs=1e-6)
