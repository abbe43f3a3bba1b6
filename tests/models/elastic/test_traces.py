"""Elastic jobs at trace scale: Gavel's traces read directly (the mapping, the one-line errors),
and the certified lower bounds on flow time and weighted completion time of every heuristic's
result, against enumeration and the certified optimum."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
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

from dlsched.api import generate
from dlsched.instances import load
from dlsched.models import MethodOptions, run_method
from dlsched.models.elastic.enumerate import enumerate_all
from dlsched.models.elastic.flowbound import flow_bound, least_use
from dlsched.models.elastic.instance import ElasticInstance, duration, most_workers
from dlsched.models.elastic.traces import read_gavel
from dlsched.online.traces import gavel_dir

GAVEL = gavel_dir(Path(__file__).resolve().parents[3])
#: The heuristics whose results carry the flow-time bound.
POLICIES = ("a-online", "a-dual", "a-maxweight", "fifo", "drf", "tiresias", "antman")


# --- the mapping ----------------------------------------------------------------------------
def test_k_colocated_v100_workers_run_the_measured_time(tmp_path: Path) -> None:
    tput = tmp_path / "isolated_throughputs.json"
    inst = read_gavel(write_trace(tmp_path), tput, None, slot_s=100.0)
    assert inst.architecture == "ring" and inst.resources == ("v100", "p100", "k80")
    assert len(inst.servers) == 27 and inst.servers[0].capacity == (4.0, 0.0, 0.0)
    assert [j.arrival for j in inst.jobs] == [0, 1, 1]  # 0, 30.5, 60 s in slots, rounded up
    assert [j.chunks for j in inst.jobs] == [1, 2, 3]  # at most the trace's scale factor
    assert [j.minibatches for j in inst.jobs] == [4000, 8000, 1800]  # A3C: steps per worker
    v, p, k = 0, 1, 2
    # a: 400 s on a V100, 800 on a P100, 2000 on a K80
    assert [duration(inst, 0, m, None, 1, True) for m in (v, p, k)] == [4, 8, 20]
    # b: 8000 steps at 16/s on 2 V100s, 500 s; one V100 alone at 10/s: 800 s
    assert duration(inst, 1, v, None, 2, True) == 5 and duration(inst, 1, v, None, 1, True) == 8
    assert inst.jobs[1].reduce_time == pytest.approx(0.05 / 100)  # 0.1 s (1 / 0.8 - 1) 2 / 1
    # c: no figure for 3 GPUs: 600 steps on each worker at 2/s, 300 s
    assert duration(inst, 2, v, None, 3, True) == 3 and inst.jobs[2].reduce_time == 0.0
    assert inst.horizon >= 2 * (1 + 3)  # twice the last arrival and the longest least duration


def test_steps_beyond_one_count_are_split_into_epochs(tmp_path: Path) -> None:
    line = LINES[0].replace("\t4000\t", "\t5000001\t")
    inst = read_gavel(write_trace(tmp_path, [line]), tmp_path / "isolated_throughputs.json")
    job = inst.jobs[0]
    assert job.epochs == 6 and job.minibatches_per_chunk <= 10**6
    assert 5_000_001 <= job.minibatches < 5_000_001 + job.epochs


def test_servers_slots_and_horizon_are_parameters(tmp_path: Path) -> None:
    trace = write_trace(tmp_path)
    inst = generate("elastic", 1, 6, 0, trace=str(trace), gpus_per_server=2, slot_s=50.0)
    assert [s.name for s in inst.servers] == [
        f"{t}-{h}" for t in ("v100", "p100", "k80") for h in (0, 1)
    ]
    assert inst.slot_seconds == 50.0 and [j.arrival for j in inst.jobs] == [0, 1, 2]
    fixed = generate("elastic", 1, 6, 0, trace=str(trace), horizon=500, limit=1)
    assert fixed.horizon == 500 and fixed.num_jobs == 1


def test_a_late_arrival_is_one_line_naming_file_line_and_column(tmp_path: Path, capsys) -> None:
    write_trace(tmp_path)
    spec = {"family": "elastic", "name": "m", "trace": {"path": "t.trace", "slot_s": 1.0}}
    spec["trace"]["horizon"] = 30  # the second job arrives 30.5 s after the first
    (tmp_path / "m.json").write_text(json.dumps(spec))
    code, out, err = cli(capsys, "solve", str(tmp_path / "m.json"), "--method", "fifo")
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1, err
    assert "t.trace" in err and "line 2, column arrival" in err and "horizon" in err
    spec["trace"]["horizon"] = 0
    (tmp_path / "m.json").write_text(json.dumps(spec))
    code, _, err = cli(capsys, "solve", str(tmp_path / "m.json"), "--method", "fifo")
    assert code == 2 and "trace.horizon" in err


def test_a_malformed_trace_is_one_line(tmp_path: Path, capsys) -> None:
    trace = write_trace(tmp_path, [LINES[0], LINES[1].replace("\t8000\t", "\t8k\t")])
    code, out, err = cli(capsys, "solve", f"elastic:{trace}", "--method", "a-online")
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1, err
    assert "t.trace" in err and "line 2, column total_steps" in err and "8k" in err


# --- the bounds -------------------------------------------------------------------------------
SMALL = [generate("elastic", 4, 3, s, architecture=a) for a in ("ring", "ps") for s in range(3)]


@pytest.mark.parametrize("inst", SMALL, ids=lambda i: i.name)
def test_least_use_is_below_every_configuration(inst: ElasticInstance) -> None:
    """Enumeration (every configuration feasible on the empty cluster): none is shorter than
    the least duration, none uses fewer worker-slots of its type than the least use (both
    take every worker colocated and leave the PSs out, so they may be below)."""
    most = most_workers(inst)
    for gamma in enumerate_all(inst, 100_000):
        shortest, use = least_use(inst, gamma.job, most)
        assert 1 <= shortest <= min(c.duration for c in gamma.configs)
        for c in gamma.configs:
            assert use[c.worker_type] <= sum(c.workers) * c.duration


@pytest.mark.parametrize("inst", SMALL, ids=lambda i: i.name)
def test_the_bounds_are_below_the_certified_optimum(inst: ElasticInstance) -> None:
    check_below_optimum(inst, flow_bound, 60)


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 10_000), st.sampled_from(["ps", "ring"]), st.integers(3, 8))
def test_no_heuristic_schedule_is_below_the_bounds(seed: int, arch: str, jobs: int) -> None:
    inst = generate("elastic", jobs, 2, seed, architecture=arch, horizon=30)
    b = flow_bound(inst)
    for method in POLICIES:
        out = run_method(inst, method, MethodOptions(bound=True))
        if out.evaluation is None:  # no room before the horizon
            continue
        d = out.details
        assert d["flow_time_bound_s"] == pytest.approx(b.flow * inst.slot_seconds)
        assert d["flow_time_bound_s"] <= d["flow_time_s"] * (1 + 1e-9), method
        assert d["weighted_completion_bound"] <= out.objective + 1e-9, method


@pytest.mark.parametrize("method", POLICIES)
def test_every_heuristic_result_reports_flow_time_bound_and_gap(method: str) -> None:
    inst = load("elastic/intro-cifar10")
    out = run_method(inst, method, MethodOptions(bound=True))
    d = out.details
    done = out.evaluation.completion
    slots = sum(c - j.arrival for c, j in zip(done, inst.jobs, strict=True))
    assert d["flow_time_s"] == pytest.approx(slots * inst.slot_seconds)
    assert 0 < d["flow_time_bound_s"] <= d["flow_time_s"]
    assert d["flow_time_gap"] == pytest.approx(1 - d["flow_time_bound_s"] / d["flow_time_s"])
    assert d["weighted_completion_gap"] == pytest.approx(
        1 - d["weighted_completion_bound"] / out.objective
    )


# --- Gavel's own traces (beside the repository; skipped when absent) ---------------------------
@pytest.mark.skipif(not GAVEL.exists(), reason="Gavel's data is not beside the repository")
def test_solve_reads_a_gavel_trace_directly(capsys) -> None:
    trace = f"elastic:{GAVEL / 'msr-traces-seed0' / '23dbec.trace'}"
    for d in solve_each(capsys, trace, POLICIES):
        assert 0 < d["flow_time_bound_s"] <= d["flow_time_s"]


@pytest.mark.skipif(not GAVEL.exists(), reason="Gavel's data is not beside the repository")
def test_sweep_reads_a_gavel_trace(tmp_path: Path, capsys) -> None:
    trace = GAVEL / "msr-traces-seed0" / "925e2b.trace"
    records = sweep_trace(capsys, tmp_path / "s.jsonl", "elastic", trace, 6, "a-online", "fifo")
    assert {r["method"] for r in records} == {"a-online", "fifo"}
    assert all(r["jobs"] == 4 for r in records)
