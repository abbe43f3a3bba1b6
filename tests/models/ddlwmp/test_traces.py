"""ddlwmp trace readers (Gavel, PAI 2020) and iteration predictors."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from dlsched.errors import OptionError
from dlsched.models import run_method
from dlsched.models.ddlwmp.check import check_schedule
from dlsched.models.ddlwmp.instance import Cluster, DdlwmpInstance, Job
from dlsched.models.ddlwmp.mapping import alpha_tilde_min
from dlsched.models.ddlwmp.predict import RandomForest, predict
from dlsched.models.ddlwmp.traces import read_gavel, read_pai
from dlsched.online.traces import gavel_dir

CLUSTER = Cluster(servers=4, gpus_per_server=8, inter_gbps=10.0, intra_gbps=2400.0)
GAVEL = gavel_dir(Path(__file__).resolve().parents[3])


def _iterations_match_duration(job: Job, seconds: float, cluster: Cluster = CLUSTER) -> None:
    a = alpha_tilde_min(job, cluster)[0]
    assert job.iterations == max(1, round(seconds * 1000 / a))


def test_pai_tables(tmp_path: Path) -> None:
    jobs = tmp_path / "pai_job_table.csv"
    tasks = tmp_path / "pai_task_table.csv"
    jobs.write_text(
        "job_name,inst_id,user,status,start_time,end_time\n"
        "a,i1,alice,Terminated,100,3700\n"
        "b,i2,bob,Terminated,160.5,760.5\n"
        "c,i3,bob,Running,200,\n"  # no end: skipped
        "d,i4,carol,Terminated,300,400\n"  # CPU only: skipped
    )
    tasks.write_text(
        "a,worker,2,Terminated,100,3700,600,29,100,V100\n"
        "b,tensorflow,1,Terminated,160.5,760.5,600,29,50,T4\n"
        "c,worker,1,Running,200,,600,29,100,V100\n"
        "d,worker,1,Terminated,300,400,600,29,,\n"
    )
    inst = read_pai(jobs, tasks, CLUSTER)
    assert [j.gpus for j in inst.jobs] == [2, 1]  # 2 x 100% and 1 x 50% of a GPU
    assert [j.release for j in inst.jobs] == [0.0, 61.0]  # shifted, rounded up to the slot
    _iterations_match_duration(inst.jobs[0], 3600.0)
    _iterations_match_duration(inst.jobs[1], 600.0)
    assert [j.user for j in inst.jobs] == ["alice", "bob"]


@pytest.mark.skipif(not GAVEL.exists(), reason="Gavel's data is not beside the repository")
def test_gavel_trace_reads_and_schedules() -> None:
    trace = sorted((GAVEL / "msr-traces-seed0").glob("*.trace"))[0]
    inst = read_gavel(trace, GAVEL / "isolated_throughputs.json", CLUSTER)
    lines = [ln for ln in trace.read_text().splitlines() if ln.strip()]
    assert inst.num_jobs == len(lines)
    first = lines[0].split("\t")
    assert int(first[6]) == inst.jobs[0].gpus or inst.jobs[0].gpus <= int(first[6])
    small = DdlwmpInstance("g", CLUSTER, inst.jobs[:200])
    for m in ("a-srpt", "wcs-subtime"):
        out = run_method(small, m)
        assert out.objective == check_schedule(small, out.solution).objective


def _history_instance() -> DdlwmpInstance:
    from dlsched.models.ddlwmp.profiles import stages

    s = stages("ResNet152", (1,))
    # group x: 10, 20, 60 then 30 (test); group y: 5 (train) then 7 (test); z unseen -> 0
    rows = [("x", 10), ("x", 20), ("y", 5), ("x", 60), ("x", 30), ("y", 7), ("z", 9), ("x", 1)]
    jobs = tuple(Job(f"j{k}", float(k), n, s, group=g, user="u") for k, (g, n) in enumerate(rows))
    return DdlwmpInstance("hist", CLUSTER, jobs)


def test_group_mean_and_median_predictors() -> None:
    inst = _history_instance()
    test, err = predict(inst, "group-mean", share=0.5)
    assert [j.predicted for j in test.jobs] == [30, 5, 0, 30]  # mean of 10, 20, 60
    assert err == pytest.approx((0 + 2 + 9 + 29) / 4)
    test, _ = predict(inst, "group-median", share=0.5)
    assert [j.predicted for j in test.jobs] == [20, 5, 0, 20]
    assert test.jobs[0].release == 0.0


def test_predictor_options() -> None:
    with pytest.raises(OptionError, match="predictor"):
        predict(_history_instance(), "oracle")
    with pytest.raises(OptionError, match="train_share"):
        predict(_history_instance(), "group-mean", share=1.0)


def _recurring_jobs(n: int, users: int, seed: int) -> list[Job]:
    from dlsched.models.ddlwmp.profiles import stages

    s = stages("ResNet152", (1,))
    rng = np.random.default_rng(seed)
    groups = rng.integers(0, 30, n)
    return [
        Job(
            f"j{k}",
            float(k),
            int(rng.integers(1, 1000)),
            s,
            group=f"g{groups[k]}",
            user=f"u{groups[k] % users}",
        )
        for k in range(n)
    ]


def test_random_forest_is_scikit_learns_forest_on_the_jobs() -> None:
    """With one user, no split ties between features: the forest fitted on weighted
    (group, user) keys predicts exactly what RandomForestRegressor fitted on every job does."""
    from sklearn.ensemble import RandomForestRegressor

    jobs = _recurring_jobs(200, users=1, seed=3)
    train, test = jobs[:160], jobs[160:]
    rf = RandomForest(seed=5).fit(train)
    codes = {key: code for key, code in rf.codes.items()}
    x = [[codes[(0, j.group)], codes[(1, j.user)]] for j in train]
    ref = RandomForestRegressor(n_estimators=100, random_state=5).fit(
        x, [j.iterations for j in train]
    )
    seen = [j for j in test if j.group in rf.seen]
    want = ref.predict([[codes[(0, j.group)], codes[(1, j.user)]] for j in seen])
    assert rf.predict(seen) == pytest.approx(want, rel=1e-9)
    unseen = Job("new", 0.0, 5, train[0].stages, group="never", user=train[0].user)
    assert rf.predict([unseen])[0] == 0.0  # the paper: 0 iterations for an unseen group


def test_random_forest_is_deterministic_and_within_the_training_range() -> None:
    jobs = _recurring_jobs(300, users=4, seed=1)
    a = RandomForest(seed=2).fit(jobs[:240]).predict(jobs[240:])
    b = RandomForest(seed=2).fit(jobs[:240]).predict(jobs[240:])
    assert list(a) == list(b)
    assert (a >= 1).all() and (a <= 1000).all()  # means of training iterations in [1, 999]


def test_online_policies_take_a_predictor_object() -> None:
    from dlsched.models.ddlwmp.generate import generate
    from dlsched.models.ddlwmp.online import run_policy
    from dlsched.models.ddlwmp.predict import PERFECT

    inst = generate(8, 8, 4, gpus_per_server=4)
    values = [max(1, j.iterations // (k + 1)) for k, j in enumerate(inst.jobs)]

    class Fixed:
        name = "fixed"

        def fit(self, jobs: object) -> Fixed:
            return self

        def predict(self, jobs: object) -> np.ndarray:
            return np.array(values, dtype=float)

    with_field = DdlwmpInstance(
        "f",
        inst.cluster,
        tuple(replace(j, predicted_iterations=v) for j, v in zip(inst.jobs, values, strict=True)),
    )
    for name in ("a-srpt", "spjf", "wcs-workload"):
        got, _ = run_policy(inst, name, predictor=Fixed())
        assert got == run_policy(with_field, name)[0]
    assert (
        run_policy(inst, "a-srpt", predictor=PERFECT)[0] == (run_policy(inst, "a-srpt-perfect")[0])
    )


def test_solve_with_a_predictor_param_uses_held_out_predictions() -> None:
    from dlsched.models import MethodOptions

    inst = _history_instance()
    held_out, err = predict(inst, "group-mean", share=0.5)
    out = run_method(
        inst, "wcs-workload", MethodOptions(params={"predictor": "group-mean", "train_share": 0.5})
    )
    assert out.details["eps_bar_held_out"] == pytest.approx(err)
    assert out.objective == pytest.approx(check_schedule(inst, out.solution).objective)
    perfect = run_method(inst, "a-srpt-perfect", MethodOptions(params={"predictor": "group-mean"}))
    assert perfect.objective == pytest.approx(run_method(inst, "a-srpt-perfect").objective)
    with pytest.raises(OptionError, match="predictor"):
        run_method(inst, "a-srpt", MethodOptions(params={"predictor": "perfect"}))


# --- traces from the command line ---------------------------------------------------------------

GAVEL_LINES = [
    "ResNet-18 (batch size 32)\tcd x && python3 main.py\t--num_steps\t1\t4000\t0.0\t1",
    "ResNet-18 (batch size 32)\tcd x && python3 main.py\t--num_steps\t1\t8000\t30.5\t2",
    "Transformer (batch size 128)\tcd y && python3 train.py\t-step\t1\t1000\t7.000\t4",
]
TPUT = {
    "v100": {"('ResNet-18 (batch size 32)', 1)": 10.0, "('Transformer (batch size 128)', 4)": 2}
}


def _generate(tmp_path: Path, capsys: pytest.CaptureFixture[str], *params: str) -> tuple[int, str]:
    from dlsched.cli import main

    out = tmp_path / "out.json"
    argv = ["generate", "ddlwmp", "--jobs", "1", "--gpus", "16", "-o", str(out)]
    for p in params:
        argv += ["--param", p]
    code = main(argv)
    return code, capsys.readouterr().err


def test_cli_turns_a_gavel_trace_into_an_instance(tmp_path: Path, capsys) -> None:
    from dlsched.instances import load

    trace = tmp_path / "t.trace"
    trace.write_text("\n".join(GAVEL_LINES) + "\n")
    (tmp_path / "isolated_throughputs.json").write_text(json.dumps(TPUT))  # found beside it
    code, err = _generate(tmp_path, capsys, f"trace={trace}", "limit=2")
    assert code == 0, err
    inst = load(str(tmp_path / "out.json"))
    assert inst.num_jobs == 2 and inst.cluster.total_gpus == 16
    assert [j.release for j in inst.jobs] == [0.0, 7.0]  # the first two arrivals, 1 s slots
    _iterations_match_duration(inst.jobs[0], 4000 / 10.0)  # steps / V100 throughput
    _iterations_match_duration(inst.jobs[1], 1000 / 2.0)
    assert inst.jobs[1].gpus == 4


def test_cli_turns_pai_tables_into_an_instance_with_predictions(tmp_path: Path, capsys) -> None:
    from dlsched.instances import load

    jobs, tasks = tmp_path / "pai_job_table.csv", tmp_path / "pai_task_table.csv"
    rows = [
        f"j{k},i{k},u{k % 2},Terminated,{10 * k},{10 * k + 100 + k % 2 * 50}" for k in range(10)
    ]
    jobs.write_text("\n".join(rows) + "\n")
    tasks.write_text("".join(f"j{k},worker,1,Terminated,0,1,600,29,100,V100\n" for k in range(10)))
    code, err = _generate(tmp_path, capsys, f"trace={jobs}", "predictor=group-mean")
    assert code == 0, err
    inst = load(str(tmp_path / "out.json"))
    assert inst.num_jobs == 2  # the last 20%
    # every training job of a user ran the same time: the mean predicts the test jobs exactly
    assert [j.predicted for j in inst.jobs] == [j.iterations for j in inst.jobs]


@pytest.mark.parametrize(
    ("name", "text", "params", "shown"),
    [
        (
            "t.trace",
            GAVEL_LINES[0].replace("4000", "4e3x"),
            (),
            ["line 1, column total_steps", "4e3x"],
        ),
        (
            "t.trace",
            GAVEL_LINES[0].replace("\t0.0\t", "\t-3\t"),
            (),
            ["line 1, column arrival", "-3"],
        ),
        ("t.trace", "only\ttwo\n", (), ["line 1", "expected 7 tab fields"]),
        ("t.trace", GAVEL_LINES[0], ("limit=0",), ["limit", "0"]),
        ("t.trace", GAVEL_LINES[0], ("setting=paper",), ["setting", "paper"]),
        ("t.txt", GAVEL_LINES[0], (), ["format", "t.txt"]),
        ("t.trace", GAVEL_LINES[0], ("format=philly",), ["format", "philly"]),
        ("pai_job_table.csv", "a,i,u,T,5,later\n", (), ["line 1, column end_time", "later"]),
        ("pai_job_table.csv", "a,i,u\n", (), ["line 1, column status", "expected 6 fields"]),
    ],
)
def test_cli_bad_trace_is_one_line_exit_2(tmp_path: Path, capsys, name, text, params, shown):
    (tmp_path / name).write_text(text)
    (tmp_path / "isolated_throughputs.json").write_text(json.dumps(TPUT))
    (tmp_path / "pai_task_table.csv").write_text("a,worker,1,T,0,1,600,29,100,V100\n")
    code, err = _generate(tmp_path, capsys, f"trace={tmp_path / name}", *params)
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert all(s in err for s in shown), err


def test_cli_missing_trace_or_throughputs(tmp_path: Path, capsys) -> None:
    code, err = _generate(tmp_path, capsys, f"trace={tmp_path / 'none.trace'}")
    assert code == 2 and "none.trace" in err and "no such file" in err
    (tmp_path / "t.trace").write_text(GAVEL_LINES[0])
    code, err = _generate(tmp_path, capsys, f"trace={tmp_path / 't.trace'}")
    assert code == 2 and "throughputs" in err


# --- the PAI samples (tests/data/pai) read in place of an instance -----------------------------

PAI = Path(__file__).resolve().parents[2] / "data" / "pai"


def test_pai_sample_is_read_directly_on_the_pai_cluster() -> None:
    from dlsched.instances import load
    from dlsched.models.ddlwmp.traces import CLUSTERS

    inst = load(PAI / "pai_job_table.csv")
    assert inst.cluster == CLUSTERS["pai"] and inst.cluster.total_gpus >= 6500
    assert inst.num_jobs == 20  # of 24: two running (no end_time), two with no GPU
    # 1 x 50%, 1 x 100%, 2 ps + 4 x 100%, 8 x 100%, 1 x 25%, 2 x 100% + 1 x 50% (3: no Table I
    # configuration has 3 GPUs, the largest that fits has 2)
    assert [j.gpus for j in inst.jobs[:6]] == [1, 1, 4, 8, 1, 2]
    assert [j.release for j in inst.jobs[:3]] == [0.0, 125.0, 525.0]  # submissions, shifted
    # from the tasks' launch to the job's end: the 240 s wait of job 1 is not run time
    for k, run in ((0, 20000.0), (1, 1800.0), (2, 7260.0), (3, 600.0)):
        _iterations_match_duration(inst.jobs[k], run, inst.cluster)


def test_pai_manifest_reads_the_tables_on_its_own_cluster(tmp_path: Path) -> None:
    from dlsched.instances import instance_hash, load

    spec = {
        "family": "ddlwmp",
        "name": "pai-sample",
        "cluster": {"servers": 4, "gpus_per_server": 8, "inter_gbps": 10, "intra_gbps": 2400},
        "trace": {"path": str(PAI / "pai_job_table.csv"), "group_tags": "pai_group_tag_table.csv"},
    }
    spec["trace"]["group_tags"] = str(PAI / "pai_group_tag_table.csv")
    (tmp_path / "m.json").write_text(json.dumps(spec))
    inst = load(tmp_path / "m.json")
    direct = read_pai(
        PAI / "pai_job_table.csv",
        PAI / "pai_task_table.csv",
        CLUSTER,
        PAI / "pai_group_tag_table.csv",
    )
    assert inst.jobs == direct.jobs and inst.name == "pai-sample"
    tags = {ln.split(",")[3] for ln in (PAI / "pai_group_tag_table.csv").read_text().splitlines()}
    assert {j.group for j in inst.jobs} <= tags  # the trace's own groups
    written = DdlwmpInstance("pai-sample", CLUSTER, direct.jobs)
    assert instance_hash(inst) == instance_hash(written)
    # paths relative to the manifest's folder
    for name in ("pai_job_table.csv", "pai_task_table.csv", "pai_group_tag_table.csv"):
        (tmp_path / name).write_text((PAI / name).read_text())
    spec["trace"] = {"path": "pai_job_table.csv", "group_tags": "pai_group_tag_table.csv"}
    (tmp_path / "m.json").write_text(json.dumps(spec))
    assert load(tmp_path / "m.json").jobs == direct.jobs


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    from dlsched.cli import main

    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_solve_and_compare_read_a_pai_trace(capsys) -> None:
    trace = str(PAI / "pai_job_table.csv")
    code, out, err = _cli(capsys, "solve", trace, "--method", "a-srpt", "--bound", "--json")
    assert code == 0, err
    got = json.loads(out)
    d = got["details"]
    assert len(got["solution"]["jobs"]) == 20
    assert 0 < d["flow_time_bound_s"] <= d["flow_time_s"]
    assert d["flow_time_gap"] == pytest.approx(1 - d["flow_time_bound_s"] / d["flow_time_s"])
    code, out, err = _cli(capsys, "solve", trace, "--method", "a-srpt", "--bound")
    lines = out.splitlines()
    at = next(k for k, ln in enumerate(lines) if ln.startswith("flow time"))
    assert f"{d['flow_time_s']:.8g}" in lines[at]
    assert lines[at + 2] == f"  gap      {d['flow_time_gap']:.2%}"
    code, out, err = _cli(
        capsys, "compare", trace, "--methods", "a-srpt,wcs-subtime", "--reference", "srpt-bound"
    )
    assert code == 0 and "wcs-subtime" in out, err


def test_solve_reads_a_gavel_trace(tmp_path: Path, capsys) -> None:
    trace = tmp_path / "t.trace"
    trace.write_text("\n".join(GAVEL_LINES) + "\n")
    (tmp_path / "isolated_throughputs.json").write_text(json.dumps(TPUT))
    code, out, err = _cli(capsys, "solve", str(trace), "--method", "wcs-subtime", "--json")
    assert code == 0, err
    assert sorted(json.loads(out)["solution"]["jobs"]) == ["t0", "t1", "t2"]


def _broken_pai(tmp_path: Path, jobs: str, tasks: str) -> str:
    (tmp_path / "pai_job_table.csv").write_text(jobs)
    (tmp_path / "pai_task_table.csv").write_text(tasks)
    return str(tmp_path / "pai_job_table.csv")


_JOB = "j1,i1,u1,Terminated,100.0,700.0\n"
_TASK = "j1,worker,2.0,Terminated,110.0,700.0,600.0,29.3,100.0,V100\n"
_TASK_HEADER = "job_name,task_name,inst_num,status,start_time,end_time,plan_cpu,plan_mem,plan_gpu"


@pytest.mark.parametrize(
    ("jobs", "tasks", "file", "where", "why"),
    [
        # a header without a column the reader needs
        (
            _JOB,
            _TASK_HEADER.replace(",plan_gpu", "") + "\n" + _TASK,
            "task",
            "line 1, column plan_gpu",
            "missing",
        ),
        # a row cut short: its first missing column
        (_JOB, "j1,worker,2.0,Terminated,110.0\n", "task", "line 1, column end_time", "missing"),
        (
            _JOB + "j2,i2,u2,Terminated,1e2x,700\n",
            _TASK,
            "job",
            "line 2, column start_time",
            "1e2x",
        ),
        (_JOB, _TASK.replace("2.0,", "two,", 1), "task", "line 1, column inst_num", "two"),
        (
            _JOB,
            _TASK.replace(",100.0,V100", ",-100.0,V100"),
            "task",
            "line 1, column plan_gpu",
            "-100",
        ),
        (
            _JOB + "j2,i2,u2,Terminated,150.0,900.0\n",
            _TASK,
            "job",
            "line 2, column job_name",
            "no task",
        ),
    ],
)
def test_a_malformed_pai_trace_is_one_line_naming_file_line_and_column(
    tmp_path: Path, capsys, jobs: str, tasks: str, file: str, where: str, why: str
) -> None:
    trace = _broken_pai(tmp_path, jobs, tasks)
    code, _, err = _cli(capsys, "solve", trace, "--method", "a-srpt")
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert f"pai_{file}_table.csv" in err and where in err and why in err, err


def test_a_header_row_may_order_the_columns(tmp_path: Path) -> None:
    from dlsched.instances import load

    header = "end_time,job_name,start_time,user,status,inst_id\n"
    jobs = header + "700.0,j1,100.0,u1,Terminated,i1\n"
    tasks = _TASK_HEADER + ",gpu_type\n" + _TASK
    inst = load(_broken_pai(tmp_path, jobs, tasks))
    assert [(j.gpus, j.user) for j in inst.jobs] == [(2, "u1")]
    _iterations_match_duration(inst.jobs[0], 590.0, inst.cluster)  # 700 - the launch at 110


def test_sweep_reads_a_trace_through_the_generator(tmp_path: Path, capsys) -> None:
    log = tmp_path / "log.jsonl"
    argv = ["sweep", "ddlwmp", "--count", "2", "--jobs", "1", "--gpus", "32", "--processes", "0"]
    argv += ["--param", f"trace={PAI / 'pai_job_table.csv'}", "--param", "limit=12"]
    argv += ["--methods", "a-srpt,wcs-subtime", "--reference", "srpt-bound", "-o", str(log)]
    argv += ["--quiet", "--counterexamples", str(tmp_path / "c")]
    code, _, err = _cli(capsys, *argv)
    assert code == 0, err
    records = [json.loads(ln) for ln in log.read_text().splitlines()]
    # 2 seeds (each draws the groups' models anew) x (the reference and 2 methods)
    assert sorted(r["method"] for r in records) == sorted(
        ["srpt-bound", "a-srpt", "wcs-subtime"] * 2
    )
    assert {r["instance"] for r in records} == {"pai_job_table"}
    assert len({r["instance_hash"] for r in records}) == 2
    code, _, err = _cli(capsys, *argv, "--param", "seed=3")  # seeds come from --first-seed
    assert code == 2 and "seed" in err
