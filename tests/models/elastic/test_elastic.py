"""The elastic family (seed 003): instance format, checker, exact route against brute force,
column generation against the full LP, exact pricing against enumeration."""

from __future__ import annotations

import itertools
import json
from dataclasses import replace

import numpy as np
import pytest

from dlsched.errors import InfeasibleSolutionError, InstanceError, OptionError
from dlsched.instances import dumps, load, loads
from dlsched.models import MethodOptions, run_method
from dlsched.models.elastic.check import check_schedule, usage
from dlsched.models.elastic.colgen import column_generation, full_lp
from dlsched.models.elastic.enumerate import EnumerationTooLarge, enumerate_all
from dlsched.models.elastic.exact import all_columns
from dlsched.models.elastic.generate import generate
from dlsched.models.elastic.pricing import Pricer, price_job
from dlsched.models.elastic.solution import ElasticSchedule, JobSchedule
from dlsched.solvers import SolverSettings, Status
from dlsched.solvers.base import DEFAULT_TIME_LIMIT
from dlsched.solvers.deadline import Deadline

INTRO = "elastic/intro-cifar10"


def _intro_dict() -> dict:
    return json.loads(dumps(load(INTRO)))


# --- the introduction's example --------------------------------------------------------------


def test_intro_exact_is_25_slots_against_30() -> None:
    inst = load(INTRO)
    out = run_method(inst, "exact")
    assert out.status == Status.OPTIMAL
    assert out.objective == 25.0 and out.objective / inst.num_jobs == 12.5
    assert sorted(out.evaluation.completion) == [10, 15]
    # "two GPUs each, one after the other": 10 + 20 = 30
    two_each = ElasticSchedule.of(
        [
            JobSchedule(0, 0, 10, 0, 0, (1, 1, 0), (1, 0, 0)),
            JobSchedule(1, 10, 10, 0, 0, (1, 1, 0), (1, 0, 0)),
        ]
    )
    assert check_schedule(inst, two_each).objective == 30.0


def test_intro_step_times_follow_eq1() -> None:
    inst = load(INTRO)
    one_gpu = JobSchedule(0, 0, 15, 0, 0, (1, 0, 0), (1, 0, 0))  # colocated: 15 ms a step
    two_gpu = JobSchedule(1, 0, 10, 0, 0, (0, 1, 1), (0, 1, 0))  # remote PS link: 20 ms
    assert check_schedule(inst, ElasticSchedule.of([one_gpu, two_gpu])).objective == 25.0
    too_short = replace(one_gpu, duration=14)
    with pytest.raises(InfeasibleSolutionError, match=r"\(2f\)"):
        check_schedule(inst, ElasticSchedule.of([too_short, two_gpu]))
    remote_ps = replace(one_gpu, ps=(0, 0, 1))  # q = 0: 20 ms a step, 15 slots are too few
    with pytest.raises(InfeasibleSolutionError, match=r"\(2f\)"):
        check_schedule(inst, ElasticSchedule.of([remote_ps, two_gpu]))


# --- checker ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("change", "equation"),
    [
        (lambda a, b: (a, replace(b, workers=(1, 0, 0), ps=(1, 0, 0))), r"\(2h\)"),
        (lambda a, b: (replace(a, ps=(0, 0, 0)), b), r"\(2e\)"),
        (lambda a, b: (replace(a, workers=(1, 1, 1)), b), r"\(2g\)"),
        (lambda a, b: (replace(a, start=-1), b), r"\(2j\)"),
        (lambda a, b: (replace(a, start=25), b), r"\(2a\)"),
        (lambda a, b: (a, replace(b, ps=(0, 0, 1))), r"\(2f\)"),
        (lambda a, b: (a, a), r"twice \(2a\)"),
        (lambda a, b: (replace(a, workers=(0, 1, 1), ps=(1, 0, 0)), b), r"\(2i\)"),
        (lambda a, b: (replace(a, workers=(0, 1, 1), ps=(0, 0, 1)), b), r"\(2h\)"),
    ],
)
def test_checker_names_the_violated_constraint(change, equation) -> None:
    inst = load(INTRO)
    a = JobSchedule(0, 0, 10, 0, 0, (1, 0, 1), (1, 0, 0))
    b = JobSchedule(1, 0, 15, 0, 0, (0, 1, 0), (0, 1, 0))
    with pytest.raises(InfeasibleSolutionError, match=equation):
        check_schedule(inst, ElasticSchedule(tuple(change(a, b))))


def test_checker_bandwidth_reservation_2i() -> None:
    data = _intro_dict()
    data["ps_types"][0]["bandwidth"] = 1_000_000  # a PS covers a quarter of a remote worker
    inst = loads(json.dumps(data))
    a = JobSchedule(0, 0, 10, 0, 0, (1, 0, 1), (1, 0, 0))
    b = JobSchedule(1, 0, 15, 0, 0, (0, 1, 0), (0, 1, 0))
    with pytest.raises(InfeasibleSolutionError, match=r"\(2i\)"):
        check_schedule(inst, ElasticSchedule.of([a, b]))
    four = replace(a, ps=(4, 0, 0))  # four PSs on s1 cover the remote worker
    assert check_schedule(inst, ElasticSchedule.of([four, b])).objective == 25.0


# --- instance format --------------------------------------------------------------------------


def test_round_trip_and_bundled() -> None:
    inst = load(INTRO)
    assert loads(dumps(inst)) == inst
    ring = load("elastic/ring-2jobs")
    assert ring.architecture == "ring" and loads(dumps(ring)) == ring


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        (lambda d: d.update(architecture="tree"), "architecture"),
        (lambda d: d["jobs"][0].pop("epochs"), "jobs[0].epochs"),
        (lambda d: d["jobs"][0]["minibatch_time"].pop("gpu-worker"), "jobs[0].minibatch_time"),
        (lambda d: d["jobs"][0].update(arrival=30), "jobs[0].arrival"),
        (lambda d: d["jobs"][0].update(reduce_time=1.0), "jobs[0].reduce_time"),
        (lambda d: d["servers"][0]["capacity"].pop("cpu"), "servers[0].capacity"),
        (lambda d: d["worker_types"][0]["demand"].update(disk=1), "worker_types[0].demand.disk"),
        (lambda d: d["jobs"][1].update(name="cifar10-a"), "jobs[1].name"),
        (lambda d: d.update(horizon=0), "horizon"),
        (lambda d: d["jobs"][0].update(weight=-1), "jobs[0].weight"),
        (lambda d: d["jobs"][0].update(chunks=2.5), "jobs[0].chunks"),
    ],
)
def test_bad_instances_name_field_and_value(mutate, field) -> None:
    data = _intro_dict()
    mutate(data)
    with pytest.raises(InstanceError) as err:
        loads(json.dumps(data))
    assert err.value.field == field


def test_generator_options_are_checked() -> None:
    with pytest.raises(OptionError, match="setting"):
        generate(2, 2, 0, setting="huge")
    with pytest.raises(OptionError, match="architecture"):
        generate(2, 2, 0, architecture="tree")
    with pytest.raises(OptionError, match="colour"):
        generate(2, 2, 0, colour=1)
    assert generate(3, 2, 5) == generate(3, 2, 5)


def test_paper_setting_ranges() -> None:
    inst = generate(40, 30, 1, setting="paper", horizon=300)
    assert inst.num_servers == 30 and inst.horizon == 300
    assert len(inst.worker_types) == 8 and len(inst.ps_types) == 10
    for j in inst.jobs:
        assert 200 <= j.weight <= 5000 and 50 <= j.epochs <= 100
        assert 5 <= j.chunks <= 50 and 10 <= j.minibatches_per_chunk <= 50
        assert 30 <= j.gradient_mb <= 575 and max(j.minibatch_time) <= 0.05
    assert loads(dumps(inst)) == inst


# --- exact route against brute force -----------------------------------------------------------


def _alone_feasible(inst, j: int) -> list[JobSchedule]:
    """Every schedule of job j feasible on the empty cluster, by the checker alone (no
    dominance, every duration and PS placement up to 2 per server)."""
    sub = replace(inst, jobs=(inst.jobs[j],))
    h = inst.num_servers
    ps_range = range(3) if inst.is_ps else range(1)
    out = []
    for m, p in itertools.product(range(len(inst.worker_types)), inst.ps_choices()):
        for y in itertools.product(range(inst.jobs[j].chunks + 1), repeat=h):
            for s in itertools.product(ps_range, repeat=h):
                for d in range(1, inst.horizon + 1):
                    for t in range(inst.horizon - d + 1):
                        e = JobSchedule(0, t, d, m, p, y, s)
                        try:
                            check_schedule(sub, ElasticSchedule((e,)))
                        except InfeasibleSolutionError:
                            continue
                        out.append(replace(e, job=j))
    return out


def _brute_force(inst) -> float | None:
    per_job = [_alone_feasible(inst, j) for j in range(inst.num_jobs)]
    cap = np.array([s.capacity for s in inst.servers])
    best = None
    for combo in itertools.product(*per_job):
        cost = sum(inst.jobs[e.job].weight * e.end for e in combo)
        if best is not None and cost >= best:
            continue
        load_ = np.zeros((inst.horizon, *cap.shape))
        for e in combo:
            load_[e.start : e.end] += usage(inst, e)
        if (load_ <= cap + 1e-9).all():
            best = cost
    return best


def _tiny(seed: int, arch: str):
    inst = generate(2, 2, seed, architecture=arch, horizon=5)
    jobs = tuple(replace(j, chunks=min(j.chunks, 2)) for j in inst.jobs)
    return replace(inst, jobs=jobs, name=f"tiny-{arch}-{seed}")


@pytest.mark.parametrize(("seed", "arch"), [(s, a) for a in ("ps", "ring") for s in range(4)])
def test_exact_equals_brute_force_on_tiny_instances(seed: int, arch: str) -> None:
    inst = _tiny(seed, arch)
    brute = _brute_force(inst)
    out = run_method(inst, "exact")
    if brute is None:
        assert out.status == Status.INFEASIBLE
    else:
        assert out.status == Status.OPTIMAL
        assert out.objective == pytest.approx(brute)


def test_enumeration_explosion_is_a_clear_error() -> None:
    inst = generate(2, 6, 0, setting="paper", horizon=100)
    with pytest.raises(EnumerationTooLarge, match="lp-bound"):
        enumerate_all(inst, max_configs=1000)
    with pytest.raises(OptionError, match="max_configs"):
        run_method(inst, "exact", MethodOptions(params={"max_configs": 0}))


# --- column generation and pricing -------------------------------------------------------------


@pytest.mark.parametrize(("seed", "arch"), [(1, "ps"), (2, "ps"), (0, "ring"), (3, "ring")])
def test_colgen_reaches_the_full_lp_and_stays_below_exact(seed: int, arch: str) -> None:
    inst = generate(4, 3, seed, architecture=arch)
    lp = full_lp(inst, all_columns(inst, enumerate_all(inst)))
    cg = column_generation(inst, SolverSettings(), Deadline.after(DEFAULT_TIME_LIMIT))
    assert cg.converged and cg.bound is not None
    assert cg.bound == pytest.approx(lp, abs=1e-6)
    assert cg.bound <= lp + 1e-6  # never above the LP it bounds
    exact = run_method(inst, "exact")
    assert exact.status == Status.OPTIMAL
    out = run_method(inst, "lp-bound")
    assert out.bound is not None and out.bound <= exact.objective + 1e-6


@pytest.mark.parametrize("arch", ["ps", "ring"])
def test_exact_pricing_equals_enumeration_under_random_prices(arch: str) -> None:
    inst = generate(3, 3, 7, architecture=arch)
    columns = all_columns(inst, enumerate_all(inst))
    rng = np.random.default_rng(1)
    shape = (inst.horizon, inst.num_servers, len(inst.resources))
    for _ in range(4):
        prices = rng.random(shape) * (rng.random(shape) < 0.5)
        pr = Pricer(inst, prices)
        for j in range(inst.num_jobs):
            got = price_job(pr, j)
            enum = min(
                c.cost(inst)
                + float(prices[c.start : c.end].sum(axis=0).ravel() @ c.config.usage.ravel())
                for c in columns
                if c.job == j
            )
            assert got.cost == pytest.approx(enum, abs=1e-9)
            assert got.config is not None
            end = got.start + got.config.duration
            own = inst.jobs[j].weight * end + float(
                (prices[got.start : end].sum(axis=0) * got.config.usage).sum()
            )
            assert own == pytest.approx(got.cost, abs=1e-9)  # the schedule costs what it says
            sub = replace(inst, jobs=(inst.jobs[j],))
            alone = replace(got.config.at(got.start), job=0)
            check_schedule(sub, ElasticSchedule((alone,)))  # the priced schedule is feasible


def test_lp_bound_reports_iterations_and_columns() -> None:
    out = run_method(load(INTRO), "lp-bound")
    assert out.status == Status.BOUND and out.bound == pytest.approx(25.0)
    assert out.details["iterations"] >= 1 and out.details["columns_generated"] >= 2
    hist = out.details["history"]
    assert all(lb <= master + 1e-6 for master, lb in hist)


def _packing_optimum(inst, columns, relax: bool) -> float:
    from dlsched.models.elastic.exact import build_packing
    from dlsched.solvers import solve

    res = solve(build_packing(inst, columns, relax=relax), "highs")
    assert res.status == Status.OPTIMAL and res.objective is not None
    return res.objective


@pytest.mark.parametrize("arch", ["ps", "ring"])
def test_dominance_keeps_the_optimum(arch: str) -> None:
    """ILP (8)/(17) and its LP over every generated configuration equal those over the
    configurations dominance keeps, and ``exact`` returns that optimum."""
    from dlsched.models.elastic.enumerate import MAX_CONFIGS, Gamma, _raw_configs

    inst = generate(3, 3, 7, architecture=arch)
    kept = enumerate_all(inst)
    raw = [Gamma(j, tuple(_raw_configs(inst, j, MAX_CONFIGS)), 0) for j in range(inst.num_jobs)]
    assert [g.generated for g in kept] == [len(g.configs) for g in raw]
    assert sum(len(g.configs) for g in kept) < sum(len(g.configs) for g in raw)  # it removes
    every, pareto = all_columns(inst, raw), all_columns(inst, kept)
    ilp = _packing_optimum(inst, pareto, relax=False)
    assert ilp == pytest.approx(_packing_optimum(inst, every, relax=False), abs=1e-6)
    lp = _packing_optimum(inst, pareto, relax=True)
    assert lp == pytest.approx(_packing_optimum(inst, every, relax=True), abs=1e-6)
    out = run_method(inst, "exact")
    assert out.status == Status.OPTIMAL and out.objective == pytest.approx(ilp, abs=1e-6)


# --- command line -------------------------------------------------------------------------------


def test_cli_solve_generate_and_bad_input(capsys, tmp_path) -> None:
    from dlsched.cli import main

    assert main(["solve", INTRO, "--method", "exact", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["status"] == "optimal" and out["objective"] == 25.0
    path = tmp_path / "paper.json"
    args = ["generate", "elastic", "--jobs", "5", "--gpus", "4", "--seed", "1"]
    assert main([*args, "--param", "setting=paper", "-o", str(path)]) == 0
    assert load(str(path)).num_servers == 4
    assert main([*args, "--param", "setting=huge", "-o", str(path)]) == 2
    err = capsys.readouterr().err
    assert "setting" in err and "Traceback" not in err
    data = _intro_dict()
    data["jobs"][0]["epochs"] = 0
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    assert main(["solve", str(bad), "--method", "exact"]) == 2
    err = capsys.readouterr().err
    assert "jobs[0].epochs" in err and len(err.strip().splitlines()) == 1
