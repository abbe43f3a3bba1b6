"""The ddlwmp family (seed 001): alpha model, validation, checker, mapping, exact, bounds."""

from __future__ import annotations

import itertools
import json
import math
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from dlsched.errors import InfeasibleSolutionError, InstanceError, OptionError
from dlsched.instances import load
from dlsched.models import MethodOptions, run_method
from dlsched.models.ddlwmp.alpha import alpha_max_ms, alpha_ms
from dlsched.models.ddlwmp.check import busy_slots, check_schedule, run_seconds
from dlsched.models.ddlwmp.forms import ddlwmp_from_dict
from dlsched.models.ddlwmp.generate import generate
from dlsched.models.ddlwmp.instance import Cluster, DdlwmpInstance, Job, Stage, ddlwmp_to_dict
from dlsched.models.ddlwmp.mapping import all_placements, heavy_edge, job_graph
from dlsched.models.ddlwmp.mapping_methods import exact_mapping
from dlsched.models.ddlwmp.online import POLICIES, run_policy
from dlsched.models.ddlwmp.solution import Schedule
from dlsched.online.bounds import srpt_total
from dlsched.solvers import SolveOptions, SolverSettings
from dlsched.solvers.deadline import Deadline

CLUSTER = Cluster(servers=2, gpus_per_server=4, inter_gbps=10.0, intra_gbps=2400.0)
# stage 0: 2 replicas, p = 10 + 20 ms, d_out 5 MB, h 100 MB; stage 1: 1 replica, p = 15 + 30,
# d_in 10 MB (k_0 d_out_0 = 2 x 5 = 10 = k_1 d_in_1), h 50 MB
JOB = Job(
    "j",
    0.0,
    1000,
    (Stage(2, 10.0, 20.0, 0.0, 5.0, 100.0), Stage(1, 15.0, 30.0, 10.0, 0.0, 50.0)),
)


# --- alpha, eq. (4)-(7), by hand ----------------------------------------------------------------


def test_alpha_split_pipeline_by_hand() -> None:
    # stage 1 alone on server 1: comp 45 + NIC 2 x 10 MB x g=4 x 8 ms / 10 Gbps = 64 -> 109
    # stage 0 on server 0: comp 30 + NIC 2 x 5 x 4 x 8 / 10 = 32 + AllReduce (x = k: NVLink)
    # 2 (2-1) 100 / 2 x 8 / 2400 = 1/3 -> 62.33; alpha = max = 109
    assert alpha_ms(JOB, CLUSTER, ((0, (2, 0)), (1, (0, 1)))) == pytest.approx(109.0)


def test_alpha_colocated_by_hand() -> None:
    # stage 0: 30 + 2 x 5 x 8 / 2400 + 1/3; stage 1: 45 + 2 x 10 x 8 / 2400
    assert alpha_ms(JOB, CLUSTER, ((0, (2, 1)),)) == pytest.approx(45 + 160 / 2400)


def test_alpha_replicas_split_pay_allreduce_over_the_nic() -> None:
    # stage 0 replica alone on its server: AllReduce 100 MB x 8 / (1/4 x 10 Gbps) = 320 ms
    # (with its successor on server 0: + 2 x 5 x 8 / 2400)
    a = alpha_ms(JOB, CLUSTER, ((0, (1, 1)), (1, (1, 0))))
    assert a == pytest.approx(30 + 320 + 32)  # the replica on server 1 sends over the NIC


def test_alpha_max_is_the_spread_placement() -> None:
    # each replica alone with 1/g of the NIC: stage 0: 30 + 32 + 320; stage 1: 45 + 64
    assert alpha_max_ms(JOB, CLUSTER) == pytest.approx(382.0)


# --- instances ----------------------------------------------------------------------------------


def _toy_dict() -> dict:
    return ddlwmp_to_dict(load("ddlwmp/toy-2x4"))


def test_round_trip() -> None:
    inst = load("ddlwmp/toy-2x4")
    assert ddlwmp_from_dict(json.loads(json.dumps(ddlwmp_to_dict(inst))), "x") == inst


@pytest.mark.parametrize(
    ("mutate", "field", "value"),
    [
        (lambda d: d["jobs"][0].update(release=5.0), "jobs[0].release", "5.0"),
        (lambda d: d["jobs"][1].update(allreduce="star"), "jobs[1].allreduce", "'star'"),
        (lambda d: d["jobs"][0].update(iterations=0), "jobs[0].iterations", "0"),
        (lambda d: d["cluster"].update(inter_gbps=-1), "cluster.inter_gbps", "-1"),
        (lambda d: d["cluster"].update(occupied=[4, 4]), "cluster.occupied", "[4, 4]"),
        (lambda d: d["jobs"][2]["stages"][0].update(replicas=9), "jobs[2].stages", "12"),
        (lambda d: d["jobs"][1]["stages"][1].update(activation_in_mb=1.0), "activation_in", "1.0"),
        (lambda d: d["jobs"][0].update(gpu=1), "jobs[0].gpu", "1"),
    ],
)
def test_bad_input_names_field_and_value(mutate, field, value) -> None:
    d = _toy_dict()
    mutate(d)
    with pytest.raises(InstanceError) as err:
        ddlwmp_from_dict(d, "bad.json")
    assert "bad.json" in str(err.value) and field in str(err.value) and value in str(err.value)


def test_cli_bad_file_is_one_line_exit_2(tmp_path: Path) -> None:
    d = _toy_dict()
    d["jobs"][0]["release"] = 3
    p = tmp_path / "bad.json"
    p.write_text(json.dumps(d))
    cli = Path(sys.executable).parent / "dlsched"
    out = subprocess.run([str(cli), "solve", str(p), "--method", "a-srpt"], capture_output=True)
    assert out.returncode == 2
    assert b"Traceback" not in out.stderr and b"jobs[0].release" in out.stderr


# --- the checker --------------------------------------------------------------------------------


def _one_server(jobs: list[Job]) -> DdlwmpInstance:
    return DdlwmpInstance("t", replace(CLUSTER, servers=1), tuple(jobs))


def test_checker_counts_busy_slots_and_completions() -> None:
    inst = _one_server([JOB, replace(JOB, name="k")])
    p = ((0, (2, 1)),)
    a = 45 + 160 / 2400
    run = 1000 * a / 1000  # 45.07 s -> 46 busy slots of 1 s
    ev = check_schedule(inst, Schedule((0.0, 46.0), (p, p)))
    # the paper's [T] = {1, ..., T}: a start in the first slot is t_i = 1 (one slot of 1 s)
    assert ev.objective == pytest.approx((1 + run) + (1 + 46 + run))
    assert ev.completions == pytest.approx((1 + run, 1 + 46 + run))
    assert ev.flow_time == pytest.approx(run + 46 + run)  # releases move with the numbering
    from_0 = replace(inst, cluster=replace(inst.cluster, slots="from-0"))
    ev0 = check_schedule(from_0, Schedule((0.0, 46.0), (p, p)))
    assert ev0.objective == pytest.approx(run + 46 + run) and ev0.flow_time == ev.flow_time
    with pytest.raises(InfeasibleSolutionError, match="server 0 hosts 6"):
        check_schedule(inst, Schedule((0.0, 45.0), (p, p)))


@pytest.mark.parametrize(
    ("starts", "places", "match"),
    [
        ((-1.0,), (((0, (2, 1)),),), "before release"),
        ((0.5,), (((0, (2, 1)),),), "off the"),
        ((0.0,), (((0, (1, 1)),),), "stage 0 has 1 of 2"),
        ((0.0,), (((3, (2, 1)),),), "bad or repeated server"),
    ],
)
def test_checker_rejects(starts, places, match) -> None:
    with pytest.raises(InfeasibleSolutionError, match=match):
        check_schedule(_one_server([JOB]), Schedule(starts, places))


# --- mapping ------------------------------------------------------------------------------------


def test_heavy_edge_figure2_example() -> None:
    # three stages of two replicas; stage 0's ring edge (20 MB) is the heaviest, inter-stage
    # edges 1 MB: the 4-GPU server gets stages 0 and 1, the 1-GPU servers stage 2
    st_ = (
        Stage(2, 1.0, 1.0, 0.0, 1.0, 20.0),
        Stage(2, 1.0, 1.0, 1.0, 1.0, 2.0),
        Stage(2, 1.0, 1.0, 1.0, 0.0, 2.0),
    )
    job = Job("fig2", 0.0, 1, st_)
    _, w = job_graph(job)
    assert w.max() == pytest.approx(20.0)
    assert heavy_edge(job, [(0, 4), (1, 1), (2, 1)]) == (
        (0, (2, 2, 0)),
        (1, (0, 0, 1)),
        (2, (0, 0, 1)),
    )


@st.composite
def small_jobs(draw):
    k = draw(st.lists(st.integers(1, 3), min_size=1, max_size=3))
    act = draw(st.floats(0.0, 50.0))
    stages = tuple(
        Stage(
            kk,
            draw(st.floats(1.0, 50.0)),
            draw(st.floats(0.0, 50.0)),
            act / kk if s > 0 else 0.0,
            act / kk if s < len(k) - 1 else 0.0,
            draw(st.floats(0.0, 500.0)),
        )
        for s, kk in enumerate(k)
    )
    gpus = sum(k)
    free = draw(  # the job fits the free GPUs (about half of the raw draws do)
        st.lists(st.integers(0, 4), min_size=2, max_size=3).filter(lambda f: sum(f) >= gpus)
    )
    kind = draw(st.sampled_from(["ring", "tree"]))
    return Job("h", 0.0, 1, stages, kind), free


@settings(max_examples=15, derandomize=True, deadline=None)
@given(small_jobs())
def test_mapping_milp_equals_brute_force_and_bounds_heavy_edge(case) -> None:
    job, free = case
    assume(sum(free) >= job.gpus)  # small_jobs draws only such cases: 15 of them run
    cluster = replace(CLUSTER, servers=len(free))
    brute = min(alpha_ms(job, cluster, p) for p in all_placements(job, free))
    for solver in ("highs", "cpsat"):
        limit = Deadline.after(20)
        place, bound, hit = exact_mapping(
            job, cluster, tuple(free), SolverSettings(), limit, solver
        )
        assert place is not None and not hit
        assert alpha_ms(job, cluster, place) == pytest.approx(brute, rel=1e-7, abs=1e-7)
        assert bound is not None and brute - 1e-6 <= bound <= brute + 1e-9 * brute
    caps, left = [], job.gpus
    for m in sorted(range(len(free)), key=lambda m: -free[m]):
        caps.append((m, min(free[m], left)))
        left -= caps[-1][1]
    he = heavy_edge(job, caps)
    assert alpha_ms(job, cluster, he) >= brute - 1e-9


@pytest.mark.parametrize("name", ["ddlwmp/toy-2x4", "ddlwmp/fragmented-8x8"])
def test_mapping_methods_certify_and_compare(name) -> None:
    inst = load(name)
    ex = run_method(inst, "mapping-exact")
    hi = run_method(inst, "mapping-exact", MethodOptions(params={"solver": "highs"}))
    he = run_method(inst, "heavy-edge")
    assert str(ex.status) == "optimal" and str(hi.status) == "optimal"
    assert ex.objective == pytest.approx(hi.objective, rel=1e-9)
    assert he.objective >= ex.objective - 1e-6
    assert set(ex.details["alpha_ms"]) == {j.name for j in inst.jobs}


@pytest.mark.parametrize(
    ("model", "config", "free"),
    [
        ("VGG19", (4, 2, 1, 1), (1, 0, 1, 1, 1, 2, 2, 0)),
        ("VGG19", (4, 2, 1, 1), (2, 0, 0, 2, 0, 4, 0, 0)),
        ("GPT-175B", (1,) * 16, (2, 4, 1, 3, 1, 0, 3, 2)),
        ("ResNet152", (2, 2), (8, 8, 8, 8)),  # a case CP-SAT's presolve got wrong
    ],
)
def test_cpsat_and_highs_placement_models_agree_on_table2_cases(model, config, free) -> None:
    from dlsched.models.ddlwmp.profiles import stages

    cluster = Cluster(servers=len(free), gpus_per_server=8, inter_gbps=10.0, intra_gbps=2400.0)
    job = Job(model, 0.0, 1, stages(model, config))
    got = {
        solver: exact_mapping(job, cluster, free, SolverSettings(), Deadline.after(20), solver)
        for solver in ("cpsat", "highs")
    }
    alphas = {s: alpha_ms(job, cluster, p) for s, (p, _, _) in got.items()}
    assert alphas["cpsat"] == pytest.approx(alphas["highs"], rel=1e-9)
    for s, (_, bound, hit) in got.items():
        assert not hit and alphas[s] - 1e-6 <= bound <= alphas[s] * (1 + 1e-9)


def test_mapping_solver_option_is_validated() -> None:
    with pytest.raises(OptionError, match="solver"):
        run_method(load("ddlwmp/toy-2x4"), "mapping-exact", MethodOptions(params={"solver": "x"}))


# --- exact, bounds, online ----------------------------------------------------------------------


def _ssgs_optimum(inst: DdlwmpInstance) -> float:
    """Brute force: every start order and placement, each job at its earliest feasible slot
    (serial generation: an optimal schedule of a regular objective is among these)."""
    c = inst.cluster
    places = [list(all_placements(j, [c.gpus_per_server] * c.servers)) for j in inst.jobs]
    best = math.inf
    for order in itertools.permutations(range(inst.num_jobs)):
        for choice in itertools.product(*(places[i] for i in order)):
            load_: dict[tuple[int, int], int] = {}
            total = 0.0
            for i, p in zip(order, choice, strict=True):
                run = run_seconds(inst.jobs[i], alpha_ms(inst.jobs[i], c, p))
                d = busy_slots(run, c.slot_s)
                t = inst.slot_of(inst.jobs[i].release)
                while any(
                    load_.get((m, tau), 0) + sum(r) > c.gpus_per_server
                    for m, r in p
                    for tau in range(t, t + d)
                ):
                    t += 1
                for m, r in p:
                    for tau in range(t, t + d):
                        load_[m, tau] = load_.get((m, tau), 0) + sum(r)
                total += (t + 1) * c.slot_s + run  # t_i numbered in [T] = {1, ..., T}
            best = min(best, total)
    return best


@settings(max_examples=6, derandomize=True, deadline=None)
@given(st.integers(0, 10_000))
def test_exact_equals_brute_force_on_tiny_instances(seed) -> None:
    inst = generate(3, 4, seed, gpus_per_server=2)
    out = run_method(inst, "exact")
    assert str(out.status) == "optimal"
    assert out.objective == pytest.approx(_ssgs_optimum(inst), rel=1e-9)


@settings(max_examples=6, derandomize=True, deadline=None)
@given(st.integers(0, 10_000))
def test_unscaled_srpt_bound_sits_below_the_optimum_and_above_lemma1(seed) -> None:
    """srpt-bound's single-machine SRPT on sizes (g_i / G) n_i alpha_i^min, not divided by rho
    (docs/errata.md E22), against the brute-force optimum; with alpha^min proven (the placement
    MILP closes on these jobs) it is at least Lemma 1's OPT_A1(alpha~^min) / rho."""
    from dlsched.models.ddlwmp.bounds import srpt_bound

    inst = generate(3, 4, seed, gpus_per_server=2)
    opt = _ssgs_optimum(inst)
    b = srpt_bound(inst)
    assert max(b.srpt, b.release_plus_run, b.paper_form) <= opt + 1e-6
    assert b.srpt >= b.paper_form - 1e-9


def test_exact_certifies_toy_and_bounds_sit_below() -> None:
    inst = load("ddlwmp/toy-2x4")
    opt = run_method(inst, "exact")
    assert str(opt.status) == "optimal"
    for m in ("lp-bound", "srpt-bound"):
        assert run_method(inst, m).bound <= opt.objective + 1e-6
    for m in POLICIES:
        assert run_method(inst, m).objective >= opt.objective - 1e-6


def test_exact_cut_by_its_limit_keeps_an_online_incumbent_and_lemma1() -> None:
    # 60 jobs: the MILP does not finish in 2 s; before, the route reported nothing at all
    inst = generate(60, 16, 1)
    out = run_method(inst, "exact", MethodOptions(SolveOptions(time_limit=2.0)))
    assert str(out.status) == "time_limit"
    online = min(run_method(inst, m).objective for m in POLICIES)
    assert out.objective is not None and out.objective <= online + 1e-6
    lemma1 = run_method(inst, "srpt-bound").bound
    assert out.bound is not None and lemma1 - 1e-6 <= out.bound <= out.objective


def test_srpt_total_by_hand() -> None:
    # job 0 (size 3) runs 0-1, job 1 (size 1) preempts at 1 and ends at 2, job 0 ends at 4
    assert srpt_total([0.0, 1.0], [3.0, 1.0]) == pytest.approx(6.0)
    assert srpt_total([5.0], [2.0]) == pytest.approx(7.0)


@settings(max_examples=8, derandomize=True, deadline=None)
@given(st.integers(0, 10_000), st.integers(4, 25))
def test_every_policy_schedule_passes_the_checker(seed, jobs) -> None:
    inst = generate(jobs, 16, seed, gpus_per_server=4)
    for name in POLICIES:
        sched, _ = run_policy(inst, name)
        ev = check_schedule(inst, sched)
        assert all(t >= j.release for t, j in zip(sched.starts, inst.jobs, strict=True))
        assert ev.objective >= sum(j.release for j in inst.jobs)


def test_wcs_subtime_is_fifo_list_scheduling_on_single_gpu_jobs() -> None:
    # four 1-GPU jobs on one 2-GPU server: FIFO gives each the earliest free GPU
    jobs = [
        replace(JOB, name=f"q{i}", release=float(r), iterations=n, stages=(JOB.stages[1],))
        for i, (r, n) in enumerate([(0, 1000), (0, 2000), (1, 1000), (2, 1000)])
    ]
    inst = DdlwmpInstance("fifo", replace(CLUSTER, servers=1, gpus_per_server=2), tuple(jobs))
    sched, _ = run_policy(inst, "wcs-subtime")
    # runs: 45 s, 90 s, 45 s, 45 s: q0 [0,45), q1 [0,90), q2 [45,90), q3 [90,135)
    assert sched.starts == (0.0, 0.0, 45.0, 90.0)


def test_tau_option_is_validated() -> None:
    with pytest.raises(OptionError, match="tau"):
        run_method(load("ddlwmp/toy-2x4"), "a-srpt", MethodOptions(params={"tau": -1}))


def test_generator_paper_setting_and_bad_params() -> None:
    inst = generate(300, 2000, 1, setting="paper")
    c = inst.cluster
    assert (c.servers, c.gpus_per_server, c.inter_gbps, c.intra_gbps) == (250, 8, 10.0, 2400.0)
    single = sum(j.gpus == 1 for j in inst.jobs) / inst.num_jobs
    assert 0.4 < single <= 1.0
    assert len({j.group for j in inst.jobs}) < inst.num_jobs  # groups recur
    with pytest.raises(OptionError, match="workers"):
        generate(3, 10, 0)
    with pytest.raises(OptionError, match="setting"):
        generate(3, 8, 0, setting="huge")


def test_theorem1_by_hand_on_single_gpu_jobs() -> None:
    from dlsched.models.ddlwmp.guarantees import theorem1

    one = (Stage(1, 10.0, 20.0, 0.0, 0.0, 100.0),)
    two = (Stage(1, 15.0, 30.0, 0.0, 0.0, 100.0),)
    jobs = (
        Job("a", 0.0, 100, one, predicted_iterations=90),
        Job("b", 0.0, 100, two, predicted_iterations=100),
    )
    rec = theorem1(DdlwmpInstance("t1", CLUSTER, jobs), tau=1.0)
    # alpha^max = alpha^min on one GPU: rho = 1, rho_bar = 45 / 30, G = 8, g_max = 1, eps_bar 5
    share = 8 / 7
    expected = (2 + 1 + share) * 1 + 2 * 1 * 1 * 1.5 * (1 + 1 + 2 * share) * 5
    assert (rec.rho, rec.rho_bar, rec.eps_bar) == pytest.approx((1.0, 1.5, 5.0))
    assert rec.bound == pytest.approx(expected)


class _Table:
    """A predictor that returns one instance's ``predicted_iterations``, job by job."""

    name = "table"

    def __init__(self, inst: DdlwmpInstance) -> None:
        self.values = [j.predicted for j in inst.jobs]

    def fit(self, jobs: object) -> _Table:
        return self

    def predict(self, jobs: object) -> np.ndarray:
        return np.array(self.values, dtype=float)


def test_theorem1_rows_against_the_certified_optimum() -> None:
    from dlsched.models.ddlwmp.guarantees import theorem1
    from dlsched.models.ddlwmp.theorems import noisy_predictions
    from dlsched.verify.check import check

    inst = noisy_predictions(generate(4, 8, 3, gpus_per_server=4), 0.5, np.random.default_rng(1))
    rows = {(r["method"], r["case"]): r for r in check("001-thm1", inst)}
    assert set(rows) == {(m, c) for m in ("exact", "a-srpt") for c in ("from-1", "from-0")}
    # slots from 0: the same schedules, each completion one slot (10 s) earlier
    early = rows["a-srpt", "from-0"]
    assert early["details"] == {"slots": "from-0"} and early["bound"] == theorem1(inst).bound
    row = rows["a-srpt", "from-1"]  # the paper's [T] = {1, ..., T}, the instance's default
    shift = inst.num_jobs * inst.cluster.slot_s
    assert early["value"] == pytest.approx(row["value"] - shift)
    assert early["reference"] == pytest.approx(row["reference"] - shift)
    assert early["ratio"] >= row["ratio"] - 1e-9
    opt = run_method(inst, "exact")
    assert row["reference_kind"] == "optimum" and row["reference"] == pytest.approx(opt.objective)
    assert row["value"] == run_method(inst, "a-srpt").objective
    assert row["ratio"] == pytest.approx(row["value"] / opt.objective) and row["ratio"] >= 1 - 1e-9
    rec = theorem1(inst)
    assert row["bound"] == rec.bound and rec.eps_bar > 0
    assert row["holds"] is (row["ratio"] <= rec.bound * (1 + 1e-6) + 1e-6)
    # a predictor object in place of the field: the same eps_bar, the same policy run
    plain = replace(inst, jobs=tuple(replace(j, predicted_iterations=None) for j in inst.jobs))
    assert theorem1(plain, predicted=_Table(inst).predict(plain.jobs)) == rec
    schedule, _ = run_policy(plain, "a-srpt", 1.0, _Table(inst))
    assert check_schedule(plain, schedule).objective == pytest.approx(row["value"])
    # without the optimum the reference is a certified lower bound: the ratio can only grow
    # and a ratio above the bound proves nothing (holds None, never False)
    from dlsched.models.ddlwmp.bounds import srpt_bound
    from dlsched.verify.theorem import Measurement

    lower = srpt_bound(inst).bound
    assert lower <= opt.objective + 1e-9 and row["value"] / lower >= row["ratio"] - 1e-9
    assert Measurement("a-srpt", 1, lower, "lower bound", 9.0, 1.0).verdict(True) is None


def test_theorem1_sweep_saves_every_violation(tmp_path: Path) -> None:
    """A guarantee of 0.5 fails against any optimum: the runner saves every row as a
    counterexample, and each rechecks (with the theorem's own bound, it holds)."""
    from dlsched.instances import loads
    from dlsched.models.ddlwmp.theorems import THEOREMS, noisy_predictions, sweep
    from dlsched.verify.check import load_counterexample, recheck, sample

    def draw(s: int, jobs: int | None = None, gpus: int | None = None) -> DdlwmpInstance:
        return noisy_predictions(
            generate(3, 8, s, gpus_per_server=4), 0.5, np.random.default_rng(s)
        )

    rows, saved = [], []
    for t in THEOREMS:
        half = replace(t, bound=lambda inst: 0.5)
        got, files = sample(half, 1, 7, generate=draw, directory=tmp_path)
        rows += [r for r in got if r["method"] in t.methods]
        saved += files
    assert [r["holds"] for r in rows] == [False] * 4  # two theorems, two numberings each
    assert sorted(p.name for p in saved) == sorted(
        f"{r['theorem']}-{r['instance_hash']}-{r['method']}-{r['case']}.json" for r in rows
    )
    inst, record = load_counterexample(saved[0])
    assert record["ratio"] > 0.5 and record["bound"] == 0.5 and inst.num_jobs == 3
    assert recheck(saved[0])["holds"] is True  # the registered theorem's own bound
    data = json.loads(saved[0].read_text())
    assert loads(json.dumps(data["instance"])).num_jobs == 3
    # the family's sweep: both theorems on noisy predictions, against the certified optimum
    rows, saved = sweep(1, 7, jobs=3, workers=8)
    assert {r["theorem"] for r in rows} == {t.id for t in THEOREMS} and saved == []
    assert all(r["reference_kind"] == "optimum" for r in rows)


def _virtual_completions(inst: DdlwmpInstance) -> list[float]:
    """Preemptive SRPT on one machine, sizes (g_i / G) n~_i alpha~_i^min, stepped event by
    event (written apart from the policy's incremental machine)."""
    from dlsched.models.ddlwmp.mapping import alpha_tilde_min

    big_g = inst.cluster.total_gpus
    left = {
        i: j.gpus / big_g * j.predicted * alpha_tilde_min(j, inst.cluster)[0] / 1000
        for i, j in enumerate(inst.jobs)
    }
    done: dict[int, float] = {}
    now = 0.0
    while left:
        ready = [i for i in left if inst.jobs[i].release <= now]
        future = [inst.jobs[i].release for i in left if inst.jobs[i].release > now]
        if not ready:
            now = min(future)
            continue
        i = min(ready, key=lambda k: (left[k], k))
        step = min([left[i], *(t - now for t in future)])
        now += step
        left[i] -= step
        if left[i] <= 1e-12:
            done[i] = now
            del left[i]
    return [done[i] for i in range(inst.num_jobs)]


@settings(max_examples=6, derandomize=True, deadline=None)
@given(st.integers(0, 10_000))
def test_a_srpt_starts_jobs_in_virtual_srpt_completion_order(seed) -> None:
    inst = generate(12, 16, seed, gpus_per_server=4)
    sched, _ = run_policy(inst, "a-srpt")
    done = _virtual_completions(inst)
    for a in range(inst.num_jobs):
        assert sched.starts[a] >= done[a] - 1e-9  # never before its virtual completion
        for b in range(inst.num_jobs):
            if done[a] < done[b] - 1e-9:
                assert sched.starts[a] <= sched.starts[b]


def _vgg_data_parallel() -> DdlwmpInstance:
    from dlsched.models.ddlwmp.profiles import stages

    job = Job("h", 0.0, 100, stages("VGG19", (4,)))
    return DdlwmpInstance("dp", CLUSTER, (job,))


@pytest.mark.parametrize("tau", [0.0, 1.0])
def test_a_srpt_delays_a_communication_heavy_job_until_one_server_frees(tau) -> None:
    from dlsched.models.ddlwmp.online import ASRPT, COMM_HEAVY
    from dlsched.simulate import Simulator

    inst = _vgg_data_parallel()
    pol = ASRPT(inst, tau=tau)
    sim = Simulator(pol.capacity())
    info = pol.info[0]
    assert info.alpha_max / info.alpha_tilde >= COMM_HEAVY  # AllReduce of 576 MB over the NIC
    for m in (0, 1):  # two GPUs busy on each server: only a 2 + 2 split fits
        pol._take(m, -2)
    pol.total_free -= 4
    pol.pending.append(0)
    out: list = []
    pol._head(0.0, out, sim)
    if tau == 0:  # no delay allowed: starts at once on the split placement
        assert [a.usage for a in out] == [{0: 2, 1: 2}]
        return
    assert pol.delayed is not None and not out and len(sim._events) == 1  # a wake-up, no job
    pol._take(0, 2)  # server 0 frees its two GPUs
    pol.total_free += 2
    out = []
    assert pol._retry(1.0, out)
    assert [a.usage for a in out] == [{0: 4}]


def test_group_draws_equal_per_job_choice() -> None:
    from dlsched.models.ddlwmp.generate import _draw

    for seed in range(5):
        w = np.random.default_rng(100 + seed).zipf(1.5, 40).astype(float)
        p = w / w.sum()
        a, b = np.random.default_rng(seed), np.random.default_rng(seed)
        assert _draw(a, p, 300) == [int(b.choice(len(p), p=p)) for _ in range(300)]
        assert a.random() == b.random()  # the stream continues from the same point


@pytest.mark.parametrize(
    ("name", "from_0", "from_1"),
    [
        ("ddlwmp/theorem1-slot-one-job", 6.3915, 1.8435),
        ("ddlwmp/theorem1-slot-counterexample", 9.1971, 1.8913),
    ],
)
def test_theorem1_fails_by_the_slot_wait_only_with_slots_from_0(name, from_0, from_1) -> None:
    """The bundled counterexamples of docs/errata.md V-11 (slots numbered from 0): A-SRPT
    starts every job one slot late, above Theorem 1's 4.2; with the paper's numbering from 1
    the same schedules keep the bound (001-thm1-perfect measures both)."""
    from dlsched.instances import load
    from dlsched.verify.check import check

    inst = load(name)
    assert inst.cluster.slots == "from-0"
    rows = {r["case"]: r for r in check("001-thm1-perfect", inst) if r["method"] != "exact"}
    early, paper = rows["from-0"], rows["from-1"]
    assert early["bound"] == paper["bound"] == pytest.approx(4.2)
    assert early["reference_kind"] == paper["reference_kind"] == "optimum"
    assert early["ratio"] == pytest.approx(from_0, abs=1e-4) and early["holds"] is False
    assert paper["ratio"] == pytest.approx(from_1, abs=1e-4) and paper["holds"] is True
    shift = inst.num_jobs * inst.cluster.slot_s  # one slot per job: the same schedules
    assert paper["value"] - early["value"] == pytest.approx(shift)
    assert paper["reference"] - early["reference"] == pytest.approx(shift)
