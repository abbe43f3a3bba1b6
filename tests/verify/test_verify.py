"""dlsched verify: the theorem registry, the runner (serial and on a real Dask LocalCluster),
resuming after a SIGKILL with nothing lost or duplicated, shrinking, the report, the CLI."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dlsched import families
from dlsched.cli import main
from dlsched.instances import from_dict, instance_hash
from dlsched.runner import Batcher, fork_server
from dlsched.solvers import SolveOptions
from dlsched.verify import registry, select
from dlsched.verify.report import summarize, write_report
from dlsched.verify.runner import KEY, VerifyOptions, read_log, row_key, run, worker_modules

SO = SolveOptions(time_limit=30)


def serial(count: int, **kw: object) -> VerifyOptions:
    return VerifyOptions(count=count, solve=SO, processes=0, progress=False, **kw)  # type: ignore[arg-type]


def comparable(rows: list[dict]) -> list[dict]:
    """Rows without their timings, in key order."""
    return sorted(
        ({k: v for k, v in r.items() if k != "wall_time"} for r in rows),
        key=lambda r: json.dumps([r[k] for k in KEY]),
    )


def test_every_paper_has_its_theorems_and_instances_are_reproducible() -> None:
    table = registry()
    seeds = {tid.split("-")[0] for tid in table}
    assert seeds == {"000", "001", "002", "003", "004"}
    expected = {"000-thm1", "000-thm2", "000-has", "000-jps", "001-thm1", "002-thm4"}
    expected |= {"002-lemma2", "003-thm1", "003-thm3", "003-thm5", "003-thm6", "004-online"}
    assert expected <= set(table)
    for t in table.values():
        assert t.family in families.names() and t.statement and t.methods
        a, b = t.instance(5), t.instance(5)
        assert instance_hash(a) == instance_hash(b) and a.family == t.family
        assert instance_hash(t.instance(6)) != instance_hash(a)
    assert [t.id for t in select(["002"])] == ["002-thm4", "002-lemma2"]
    assert {t.id for t in select(["elastic"])} == {"003-thm1", "003-thm3", "003-thm5", "003-thm6"}


def test_a_guarantee_compare_prints_is_the_theorem_verify_checks() -> None:
    """Each method's guarantee in ``compare`` is the one theorem record that names it: the same
    name and the same bound, and no guarantee without such a record."""
    table = registry()
    printed = {}
    for name in families.names():
        for method, g in families.get(name).guarantees().items():
            named = [t for t in table.values() if t.family == name and t.guarantee]
            (t,) = [t for t in named if method in t.methods]
            assert g.name == t.guarantee and g.bound is t.bound
            printed[(name, method)] = g.name
    assert printed == {
        ("hare", "hare"): "Theorem 4: alpha(2+alpha)",
        ("ddlwmp", "a-srpt"): "Theorem 1 (tau=1)",
        ("ddlwmp", "a-srpt-perfect"): "Theorem 1 (tau=1, exact predictions)",
        ("elastic", "a-online"): "Theorem 5: 4 alpha",
    }


@settings(max_examples=60, deadline=None)
@given(
    kinds=st.lists(st.sampled_from("abc"), max_size=60),
    processes=st.integers(1, 4),
    times=st.lists(st.floats(1e-4, 1.0), min_size=1, max_size=7),
    target=st.sampled_from([0.0, 0.05, 0.3]),
)
def test_tasks_group_consecutive_calls_of_one_kind_each_once(kinds, processes, times, target):
    """Every call in exactly one task, in order; a task holds calls of one kind only, one call
    until that kind was timed, never more than target / (fastest time seen) calls nor more than
    1 / (2 x processes) of the calls left."""
    b = Batcher(kinds, processes, target)
    taken: list[int] = []
    seen: dict[str, list[float]] = {}
    while picked := b.take():
        kind = kinds[picked[0]]
        assert picked == list(range(picked[0], picked[0] + len(picked)))
        assert {kinds[i] for i in picked} == {kind}
        if len(picked) > 1:
            assert target > 0 and kind in seen
            assert len(picked) * min(seen[kind]) <= target
            assert len(picked) <= (len(kinds) - picked[0]) // (2 * processes)
        for i in picked:
            b.observe(kind, times[i % len(times)])
            seen.setdefault(kind, []).append(times[i % len(times)])
        taken += picked
    assert taken == list(range(len(kinds)))


def test_rows_on_dask_equal_a_serial_run_on_its_own_cluster_and_by_address(
    tmp_path: Path,
) -> None:
    """The runner's own LocalCluster (processes, 2 workers), then ``--scheduler ADDRESS``: a
    LocalCluster started apart (processes, 2 workers, Dask's default daemonic ones) reached by
    its address only. Both give a serial run's rows. (The second cluster's
    workers come from the fork server the first one started, only to start faster.)"""
    import logging

    import dask
    from distributed import LocalCluster

    theorems = select(["000-has", "001-thm1-perfect"])  # the latter forks (deadline.py)
    run(theorems, tmp_path / "serial", serial(3))
    rows = read_log(tmp_path / "serial" / "verify.jsonl")
    assert len({row_key(r) for r in rows}) == len(rows)  # no key twice
    assert len(rows) == 18  # the reference and the method on each instance (two numberings of
    # the slots for 001-thm1-perfect)
    assert not [r for r in rows if r["status"] == "error"]
    for r in rows:  # a heuristic never beats the certified optimum
        if r["method"] == "has":
            assert r["ratio"] >= 1 - 1e-9 and r["reference_kind"] == "optimum"
    own = VerifyOptions(count=3, solve=SO, processes=2, progress=False)
    run(theorems, tmp_path / "dask", own)
    assert comparable(read_log(tmp_path / "dask" / "verify.jsonl")) == comparable(rows)

    fork_server(["distributed", "dlsched.runner", *worker_modules(theorems)])
    config = {"distributed.worker.multiprocessing-method": "forkserver"}
    with (
        dask.config.set(config),
        LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                     silence_logs=logging.ERROR) as cluster,
    ):  # fmt: skip
        by_address = VerifyOptions(count=3, solve=SO, scheduler=cluster.scheduler_address,
                                   progress=False)  # fmt: skip
        summary = run(theorems, tmp_path / "remote", by_address)
        assert summary.tasks == 6 and len(cluster.scheduler.workers) == 2
    assert comparable(read_log(tmp_path / "remote" / "verify.jsonl")) == comparable(rows)


@pytest.mark.parametrize("processes", ["0", "2"])
def test_a_run_killed_midway_resumes_with_nothing_lost_or_duplicated(
    tmp_path: Path, processes: str
) -> None:
    """Killed (SIGKILL) in one process or on a Dask LocalCluster of 2 workers, then resumed
    serially: the rows equal a clean serial run's, none lost, none twice."""
    out = tmp_path / "killed"
    argv = [sys.executable, "-m", "dlsched.cli", "verify", "002-lemma2", "--count", "15",
            "--processes", processes, "--quiet", "--time-limit", "30", "-o", str(out)]  # fmt: skip
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    log = out / "verify.jsonl"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        if log.exists() and log.read_bytes().count(b"\n") >= 3:
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    before = log.read_bytes().count(b"\n")
    assert 3 <= before < 15  # killed midway
    with log.open("ab") as f:  # and as if killed in the middle of a write
        f.write(b'{"theorem": "002-lemma2", "case": "", "instance_ha')
    summary = run(select(["002-lemma2"]), out, serial(15))
    assert summary.skipped >= before and summary.tasks == 15 - summary.skipped
    run(select(["002-lemma2"]), tmp_path / "clean", serial(15))
    clean = read_log(tmp_path / "clean" / "verify.jsonl")
    resumed = read_log(log)
    assert comparable(resumed) == comparable(clean)
    assert len({row_key(r) for r in resumed}) == len(resumed) == 15


def test_violations_are_saved_shrunk_and_reported(tmp_path: Path) -> None:
    """Algorithm 2 with the printed tie rule ('literal') can cycle: Theorem 1 fails on some
    instances. Each failure is saved, shrunk to an instance on which it still fails, and the
    report names it."""
    theorems = select(["000-thm1"])
    summary = run(theorems, tmp_path, serial(3, shrink=1, shrink_budget=12))
    bad = [r for r in summary.violations if r["method"] == "algorithm2-literal"]
    assert bad and all(r["ratio_infinite"] for r in bad)
    assert not [r for r in summary.violations if r["method"] != "algorithm2-literal"]
    rows = read_log(tmp_path / "verify.jsonl")
    clearing = [r for r in rows if r["method"] == "algorithm2-clearing"]
    assert len(clearing) == 3 and all(r["ratio"] <= 1 and r["holds"] for r in clearing)
    assert len(summary.minimal) == 1
    payload = json.loads(summary.minimal[0].read_text())
    small, record = from_dict(payload["instance"]), payload["record"]
    assert record["holds"] is False and record["method"] == "algorithm2-literal"
    original = next(r for r in bad if r["instance_hash"] == record["shrunk_from"])
    big = from_dict(json.loads((tmp_path / "counterexamples" /
                                f"000-thm1-{original['instance_hash']}-algorithm2-literal.json"
                                ).read_text())["instance"])  # fmt: skip
    assert small.num_jobs * small.num_workers <= big.num_jobs * big.num_workers
    md, page = write_report(tmp_path)
    text = md.read_text()
    assert "| 000-thm1 | algorithm2-literal | 3 | 3 | 3 | inf |" in text
    assert summary.minimal[0].name in text
    assert "data:image/png;base64," in page.read_text()
    line = summarize(read_log(tmp_path / "verify.jsonl"), tmp_path)[0]
    assert line.methods["algorithm2-literal"].violations == len(bad)


def test_a_theorem1_violation_of_seed_003_is_shrunk_with_its_case_kept(tmp_path: Path) -> None:
    """Theorems 1 and 6 of seed 003 draw their cases (prices, free capacity, m', p', n, q) from
    the instance's hash; shrinking keeps the violating case fixed while servers (with their
    prices), jobs and workers are removed. The bundled counterexample (A_mincost1 pays 30, the
    MILP of (13) 10.01), padded with a second job and an expensive third server, shrinks to one
    job on the two servers (q = 0 needs two) with one worker (A_mincost1 pays 10, the MILP 0)."""
    from dlsched.instances import load
    from dlsched.models.elastic.theorems import mincost_replay, mincost_shrink
    from dlsched.verify.check import check

    base = load("elastic/theorem1-counterexample")
    spare = dataclasses.replace(base.servers[1], name="spare")
    big = dataclasses.replace(
        base, servers=(*base.servers, spare),
        jobs=(*base.jobs, dataclasses.replace(base.jobs[0], name="other")),
    )  # fmt: skip
    details = {"m": 0, "p": 0, "n": 3, "q": False, "prices": [[0, 0], [0.01, 10], [5, 5]],
               "free": [[3, 8], [3, 8], [3, 8]]}  # fmt: skip
    (theorem,) = select(["003-thm1"])
    assert theorem.shrinkable
    padded = dataclasses.replace(
        theorem, generate=lambda seed, jobs=None, gpus=None: big,
        measure=lambda t, inst, o: mincost_replay(t, inst, "case0", details, o),
    )  # fmt: skip
    summary = run([padded], tmp_path, serial(1, shrink=1))
    assert [r["method"] for r in summary.violations] == ["A_mincost1"]
    (path,) = summary.minimal
    payload = json.loads(path.read_text())
    small, record = from_dict(payload["instance"]), payload["record"]
    case = record["details"]
    assert (small.num_jobs, small.num_servers, case["n"]) == (1, 2, 1)
    assert record["holds"] is False and record["case"] == "case0"

    def violated(inst, c) -> bool:  # type: ignore[no-untyped-def]
        return any(r["holds"] is False for r in check(theorem, inst, case="case0", details=c))

    assert violated(big, details) and violated(small, case)
    assert not [c for c in mincost_shrink(small, case) if violated(*c)]  # no smaller one left


def test_an_instance_outside_the_assumptions_is_never_a_violation(tmp_path: Path) -> None:
    """Theorems 3 and 5 of seed 003 assume w_j >= consumption and small demands; the family's
    small generated instances break them, so their ratios are reported but never judged (the
    theorems' own generator scales instances until the assumptions hold)."""
    from dlsched.models.elastic.theorems import ps

    (theorem,) = select(["003-thm5"])
    assert theorem.applies(theorem.instance(0))
    run([dataclasses.replace(theorem, generate=ps)], tmp_path, serial(2))
    rows = read_log(tmp_path / "verify.jsonl")
    assert rows and all(not r["applies"] and r["holds"] is None for r in rows)
    assert all(r["why_not"] for r in rows)


BAD = [
    (["verify", "002-thm4", "--count", "0", "-o", "{tmp}/v"], "--count"),
    (["verify", "000-has", "--scheduler", "nonsense://", "-o", "{tmp}/v"], "--scheduler"),
    (["verify", "002-thm4", "--processes", "-1", "-o", "{tmp}/v"], "--processes"),
    (["verify", "002-thm4", "--workers", "2", "-o", "{tmp}/v"], "--workers is now --gpus"),
    (["verify", "002-thm4", "--time-limit", "0", "-o", "{tmp}/v"], "--time-limit"),
    (["verify", "no-such-theorem", "-o", "{tmp}/v"], "THEOREM"),
    (["verify", "002-thm4"], "-o"),
    (["verify", "001-thm1", "--gpus", "3", "-o", "{tmp}/v"], "--jobs/--gpus"),
    (["verify", "000-has", "--jobs", "5", "--gpus", "2", "-o", "{tmp}/v"], "--jobs/--gpus"),
    (["verify", "002-thm4", "-o", "{tmp}/missing/v"], "-o"),
    (["verify", "002-thm4", "-o", "{tmp}/" + "a" * 300], "-o"),
]


@pytest.mark.parametrize(("argv", "fragment"), BAD)
def test_bad_verify_command_lines_exit_2_with_one_line(capsys, tmp_path, argv, fragment) -> None:
    code = main([a.replace("{tmp}", str(tmp_path)) for a in argv])
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert code == 2 and "Traceback" not in err
    assert lines[-1].startswith("dlsched") and fragment in lines[-1]
    if not lines[0].startswith("usage:"):
        assert len(lines) == 1
    assert not list(tmp_path.iterdir())


def test_an_output_that_is_a_file_is_refused(capsys, tmp_path: Path) -> None:
    f = tmp_path / "f"
    f.write_text("x")
    assert main(["verify", "002-thm4", "-o", str(f)]) == 2
    assert "is not a folder" in capsys.readouterr().err


def test_cli_runs_lists_and_resumes(capsys, tmp_path: Path) -> None:
    assert main(["verify", "--list"]) == 0
    assert "002-thm4" in capsys.readouterr().out
    argv = ["verify", "000-has", "--count", "2", "--processes", "0", "--quiet", "-o", str(tmp_path)]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert out.startswith("2 instances run (0 already in the log), 4 rows appended")
    assert main(argv) == 0
    assert capsys.readouterr().out.startswith("0 instances run (2 already in the log), 0 rows")
    assert (tmp_path / "report.md").exists() and (tmp_path / "report.html").exists()


def test_a_failed_instance_is_recorded_then_measured_on_resume(tmp_path: Path) -> None:
    (theorem,) = select(["000-has"])

    def broken(t, inst, options):  # type: ignore[no-untyped-def]
        raise RuntimeError("worker lost")

    first = run([dataclasses.replace(theorem, measure=broken)], tmp_path, serial(2))
    rows = read_log(tmp_path / "verify.jsonl")
    assert first.tasks == 2 and [r["status"] for r in rows] == ["error", "error"]
    assert "RuntimeError: worker lost" in rows[0]["note"]
    again = run([theorem], tmp_path, serial(2))
    assert again.tasks == 2 and again.rows == 4
    assert run([theorem], tmp_path, serial(2)).tasks == 0
    (line,) = summarize(read_log(tmp_path / "verify.jsonl"), tmp_path)
    assert line.errors == [] and line.methods["has"].rows == 2


def test_seed_003_mincost_theorems_on_one_server_give_rows_not_errors(tmp_path: Path) -> None:
    """On one server the spread case q = 0 of problem (13)/(21) is infeasible: the record says
    so (no reference, the algorithm's placement noted as excluded) instead of an error row."""
    summary = run(select(["003-thm1", "003-thm6"]), tmp_path, serial(2, gpus=1))
    rows = read_log(tmp_path / "verify.jsonl")
    assert summary.tasks == 4 and rows
    assert not [r for r in rows if r["status"] == "error"], rows
