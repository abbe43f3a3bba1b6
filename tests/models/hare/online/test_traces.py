"""Online hare at trace scale: Gavel's traces read directly (the mapping, the one-line errors),
and the certified lower bounds on flow time and weighted completion time of every online
result, against brute force and the certified optimum."""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import pytest
from fake_clock import FakeClock
from gavel_sample import (
    LINES,
    check_below_optimum,
    cli,
    solve_each,
    sweep_trace,
    write_trace,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from dlsched.errors import InstanceError
from dlsched.instances import load
from dlsched.models import MethodOptions, run_method
from dlsched.models.hare.instance import HareInstance, HareJob
from dlsched.models.hare.online.bounds import flow_bound, round_floor
from dlsched.models.hare.online.traces import read_gavel
from dlsched.online.bounds import srpt_total, wspt_bound
from dlsched.online.traces import gavel_dir
from dlsched.solvers.deadline import Deadline

GAVEL = gavel_dir(Path(__file__).resolve().parents[4])
#: The online policies of the family whose results carry the flow-time bound.
POLICIES = ("hlas", "hlas-p", "online-fifo", "2d-las", "sched-homo-unit", "sched-allox-unit")


# --- the mapping ----------------------------------------------------------------------------
def test_trace_jobs_run_their_measured_time_on_each_gpu_type(tmp_path: Path) -> None:
    inst = read_gavel(write_trace(tmp_path), tmp_path / "isolated_throughputs.json", None, 100.0)
    assert inst.num_gpus == 108 and inst.gpus[0] == "v100-0" and inst.gpus[-1] == "k80-35"
    v, p, k = 0, 36, 72  # one GPU of each type
    a, b, c = inst.jobs
    assert [j.arrival for j in inst.jobs] == [0.0, 30.5, 60.0]  # less the first arrival
    assert [j.tasks_per_round for j in inst.jobs] == [1, 2, 3]
    # a: 4000 steps on one GPU: 400 s on a V100 (4 rounds of 100 s), 800 on a P100, 2000 on a K80
    assert a.rounds == 4 and a.train_time[v] == 100.0 and a.train_time[p] == 200.0
    assert a.train_time[k] == 500.0 and a.sync_time[v] == 0.0
    # b: 8000 steps on 2 V100s at 16/s: 500 s, 5 rounds of 100 s; each worker trains 800 steps
    # at 10/s (80 s) and the all-reduce is the rest; P100s scale perfectly; the K80's figure
    # for 2 is 0: its steps are per GPU, 1600 a round at 2/s on each
    assert b.rounds == 5
    assert (b.train_time[v], b.sync_time[v]) == pytest.approx((80.0, 20.0))
    assert (b.train_time[p], b.sync_time[p]) == pytest.approx((160.0, 0.0))
    assert (b.train_time[k], b.sync_time[k]) == pytest.approx((800.0, 0.0))
    # c: A3C has no figure for 3 GPUs: 600 steps per worker, 300 s on a V100: 3 rounds of 100
    assert c.rounds == 3 and c.train_time[v] == 100.0 and c.train_time[p] == 50.0


def test_the_cluster_rounds_and_limit_are_parameters(tmp_path: Path) -> None:
    from dlsched.api import generate

    trace = write_trace(tmp_path)
    inst = generate("hare", 1, 7, 0, trace=str(trace), round_s=1000.0, limit=2)
    assert inst.gpus == ("v100-0", "v100-1", "v100-2", "p100-0", "p100-1", "k80-0", "k80-1")
    assert inst.num_jobs == 2 and [j.rounds for j in inst.jobs] == [1, 1]
    three = generate("hare", 1, 7, 0, trace=str(trace), cluster="1:0:2")
    assert three.gpus == ("v100-0", "k80-0", "k80-1")


def test_a_manifest_names_the_trace_relative_to_itself(tmp_path: Path) -> None:
    from dlsched.api import generate

    write_trace(tmp_path)
    spec = {"family": "hare", "name": "m", "trace": {"path": "t.trace", "cluster": "2:2:2"}}
    (tmp_path / "m.json").write_text(json.dumps(spec))
    inst = load(tmp_path / "m.json")
    assert inst.name == "m" and inst.num_gpus == 6 and inst.num_jobs == 3
    same = generate("hare", 1, 6, 0, trace=str(tmp_path / "t.trace"))  # 2 GPUs of each type
    assert inst.jobs == same.jobs
    spec["trace"]["round_s"] = -1
    (tmp_path / "m.json").write_text(json.dumps(spec))
    with pytest.raises(InstanceError, match=r"trace\.round_s"):
        load(tmp_path / "m.json")


@pytest.mark.parametrize(
    ("line", "where", "shown"),
    [
        ("\t".join(LINES[0].split("\t")[:6]), "line 2", "expected 7 tab fields"),  # a column gone
        (LINES[0].replace("\t4000\t", "\t4e3x\t"), "line 2, column total_steps", "4e3x"),
        (LINES[0].replace("\t10.0\t", "\tsoon\t"), "line 2, column arrival", "soon"),
        (LINES[0][:-1] + "-2", "line 2, column scale_factor", "-2"),  # negative GPUs
        (LINES[0][:-1] + "0", "line 2, column scale_factor", "0"),
    ],
)
def test_a_malformed_trace_is_one_line_naming_file_line_and_column(
    tmp_path: Path, capsys, line: str, where: str, shown: str
) -> None:
    trace = write_trace(tmp_path, [LINES[1], line])
    code, out, err = cli(capsys, "solve", f"hare:{trace}", "--method", "2d-las")
    assert code == 2 and out == "", err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert "t.trace" in err and where in err and shown in err, err


def test_missing_files_and_other_families_are_one_line_errors(tmp_path: Path, capsys) -> None:
    code, _, err = cli(capsys, "solve", f"hare:{tmp_path / 'none.trace'}", "--method", "hlas")
    assert code == 2 and "no such trace file" in err and len(err.strip().splitlines()) == 1
    trace = tmp_path / "t.trace"
    trace.write_text(LINES[0] + "\n")  # no throughputs beside it
    code, _, err = cli(capsys, "solve", f"hare:{trace}", "--method", "hlas")
    assert code == 2 and "isolated_throughputs.json" in err
    code, _, err = cli(capsys, "solve", f"placement:{trace}", "--method", "has")
    assert code == 2 and "reads no trace" in err


# --- the bounds -------------------------------------------------------------------------------
@settings(max_examples=60)
@given(
    st.lists(st.tuples(st.integers(1, 5), st.integers(0, 3)), min_size=1, max_size=3),
    st.integers(1, 5),
)
def test_the_round_floor_is_the_best_sharing_of_a_rounds_tasks(gpus, tasks):
    """Brute force: every way of sharing the tasks among the GPUs, the round ends when the
    last GPU's last task has trained and synchronized."""
    train, sync = [float(c) for c, _ in gpus], [float(s) for _, s in gpus]
    best = math.inf
    for counts in itertools.product(range(tasks + 1), repeat=len(gpus)):
        if sum(counts) == tasks:
            end = max(c * t + s for c, t, s in zip(counts, train, sync, strict=True) if c)
            best = min(best, end)
    assert round_floor(train, sync, tasks) == best


@settings(max_examples=60)
@given(
    st.lists(
        st.tuples(st.integers(0, 8), st.integers(1, 6), st.integers(1, 4)), min_size=1, max_size=5
    )
)
def test_goemans_bound_is_below_every_order_and_smith_without_releases(jobs):
    rel = [float(r) for r, _, _ in jobs]
    size = [float(p) for _, p, _ in jobs]
    w = [float(x) for _, _, x in jobs]
    bound = wspt_bound(rel, size, w)
    best = math.inf  # the non-preemptive optimum: the best order, each job as early as it can
    for order in itertools.permutations(range(len(jobs))):
        now, total = 0.0, 0.0
        for j in order:
            now = max(now, rel[j]) + size[j]
            total += w[j] * now
        best = min(best, total)
    assert bound <= best + 1e-9
    assert wspt_bound(rel, size, [1.0] * len(jobs)) <= srpt_total(rel, size) + 1e-9
    zero = [0.0] * len(jobs)
    smith = sorted(range(len(jobs)), key=lambda j: size[j] / w[j])
    ends = list(itertools.accumulate(size[j] for j in smith))
    smith_sum = sum(w[j] * e for j, e in zip(smith, ends, strict=True))
    assert wspt_bound(zero, size, w) == pytest.approx(smith_sum)


def _instances() -> list[HareInstance]:
    from dlsched.api import generate

    out = [load("hare/tcc2024-fig12"), load("hare/toy-2gpu")]
    for seed in range(4):
        out.append(generate("hare", 3, 3, seed, arrival_span=4.0))
    return out


@pytest.mark.parametrize("inst", _instances(), ids=lambda i: i.name)
def test_the_bounds_are_below_the_certified_optimum(inst: HareInstance) -> None:
    check_below_optimum(inst, flow_bound, 30)


@st.composite
def crowded(draw: st.DrawFn) -> HareInstance:
    """Up to 7 jobs of unrelated speeds arriving together on 1-3 GPUs: the pooled bound, not
    the per-job one, is the larger."""
    gpus = draw(st.integers(1, 3))
    jobs = []
    for n in range(draw(st.integers(2, 7))):
        train = tuple(float(draw(st.integers(1, 6))) for _ in range(gpus))
        sync = tuple(float(draw(st.integers(0, 2))) for _ in range(gpus))
        rounds, tasks = draw(st.integers(1, 3)), draw(st.integers(1, 3))
        arrival, weight = float(draw(st.integers(0, 3))), float(draw(st.integers(1, 4)))
        jobs.append(HareJob(f"j{n}", arrival, weight, rounds, tasks, train, sync))
    return HareInstance("crowded", tuple(f"g{k}" for k in range(gpus)), tuple(jobs))


@settings(max_examples=40, deadline=None)
@given(crowded())
def test_no_online_schedule_is_below_the_bounds(inst: HareInstance) -> None:
    b = flow_bound(inst)
    for method in POLICIES:
        out = run_method(inst, method, MethodOptions(bound=True))
        assert out.details["flow_time_bound_s"] == b.flow
        assert b.flow <= out.details["flow_time_s"] * (1 + 1e-9), method
        assert b.weighted_completion <= out.objective * (1 + 1e-9), method


@pytest.mark.parametrize("method", POLICIES)
def test_every_online_result_reports_flow_time_bound_and_gap(method: str) -> None:
    inst = load("hare/tcc2024-fig12")
    out = run_method(inst, method, MethodOptions(bound=True))
    d = out.details
    flow = sum(c - j.arrival for c, j in zip(out.evaluation.completion, inst.jobs, strict=True))
    assert d["flow_time_s"] == pytest.approx(flow)
    assert 0 < d["flow_time_bound_s"] <= flow + 1e-9
    assert d["flow_time_gap"] == pytest.approx(1 - d["flow_time_bound_s"] / flow)
    assert d["weighted_completion_bound"] <= out.objective + 1e-9


def test_a_bound_cut_by_its_deadline_is_weaker_and_still_valid() -> None:
    from dlsched.api import generate

    inst = generate("hare", 40, 6, 1, arrival_span=2.0)
    full = flow_bound(inst)
    clock = FakeClock()
    late = Deadline.after(1.0, clock=clock)
    clock.advance(2.0)  # passed before the search of weights starts
    cut = flow_bound(inst, late)
    assert cut.alone == full.alone and cut.flow <= full.flow + 1e-9
    assert cut.pooled <= full.pooled + 1e-9  # one weighting tried, not the search


# --- Gavel's own traces (beside the repository; skipped when absent) ---------------------------
@pytest.mark.skipif(not GAVEL.exists(), reason="Gavel's data is not beside the repository")
def test_solve_and_compare_read_a_gavel_trace_directly(capsys) -> None:
    trace = f"hare:{GAVEL / 'msr-traces-seed0' / '925e2b.trace'}"
    for d in solve_each(capsys, trace, POLICIES):
        assert 0 < d["flow_time_bound_s"] <= d["flow_time_s"] * (1 + 1e-9)
    code, out, err = cli(capsys, "compare", trace, "--methods", "online-fifo,2d-las")
    assert code == 0 and "2d-las" in out, err


@pytest.mark.skipif(not GAVEL.exists(), reason="Gavel's data is not beside the repository")
def test_sweep_reads_a_gavel_trace(tmp_path: Path, capsys) -> None:
    trace = GAVEL / "msr-traces-seed0" / "795a4c.trace"
    records = sweep_trace(capsys, tmp_path / "s.jsonl", "hare", trace, 9, "2d-las", "online-fifo")
    assert {r["method"] for r in records} == {"2d-las", "online-fifo"}
    assert all(r["jobs"] == 3 for r in records)
