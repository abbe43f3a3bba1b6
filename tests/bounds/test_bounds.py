"""The bounds layer: comparisons, resumable sweeps, counterexamples, the paper's claims."""

from __future__ import annotations

import fcntl
import json
from pathlib import Path

import pytest
from cli_run import count_runs

from dlsched.bounds import GUARANTEES, compare, register_guarantee, sweep
from dlsched.cli import main
from dlsched.errors import DlschedError
from dlsched.instances import from_dict, load
from dlsched.models import MethodOptions
from dlsched.models.placement import generate
from dlsched.solvers.base import SolveOptions


def test_compare_ratios_against_the_certified_optimum() -> None:
    rows = compare(load("placement/liu2024-motivating"), ["has", "las"])
    ref = rows[0]
    assert ref.method == "exact" and ref.reference_kind == "optimum" and ref.ratio == 1
    for r in rows[1:]:
        assert r.ratio == pytest.approx(r.objective / ref.objective)
        assert r.ratio >= 1


def test_relaxation_is_compared_as_a_bound() -> None:
    rows = compare(load("hare/toy-2gpu"), ["relaxation", "hare"])
    rel = next(r for r in rows if r.method == "relaxation")
    assert rel.value_kind == "bound" and rel.ratio <= 1 + 1e-9
    alg = next(r for r in rows if r.method == "hare")
    assert alg.guarantee is not None and alg.holds is True


def test_sweep_resumes_and_saves_counterexamples(tmp_path: Path) -> None:
    instances = [generate(2, 4, seed) for seed in range(2)]
    log = tmp_path / "sweep.jsonl"
    key = ("placement", "optimus")
    saved = GUARANTEES.get(key)
    register_guarantee("placement", "optimus", "test: impossible guarantee", lambda inst: 0.5)
    try:
        first = sweep(instances, ["optimus"], log, counterexamples=tmp_path / "cx")
    finally:
        if saved is None:
            GUARANTEES.pop(key)
        else:
            GUARANTEES[key] = saved
    lines = log.read_text().splitlines()
    assert len(first) == len(lines) == 4
    assert sweep(instances, ["optimus"], log) == []  # resumed: nothing left to do
    assert log.read_text().splitlines() == lines
    files = sorted((tmp_path / "cx").glob("*.json"))
    assert len(files) == 2  # ratio >= 1 > 0.5 on both: kept, never hidden
    payload = json.loads(files[0].read_text())
    assert from_dict(payload["instance"]).family == "placement"
    assert payload["record"]["holds"] is False


def test_sweep_rerun_with_an_added_method_runs_only_that_method(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    instances = [generate(2, 4, seed) for seed in range(2)]
    log = tmp_path / "sweep.jsonl"
    sweep(instances, ["optimus"], log)
    before = log.read_text().splitlines()
    calls = count_runs(monkeypatch)
    new = sweep(instances, ["optimus", "has"], log)
    assert [r.method for r in new] == ["has", "has"]
    assert sorted(m for _, m in calls) == ["exact", "exact", "has", "has"]  # reference once each
    lines = log.read_text().splitlines()
    assert lines[:4] == before and len(lines) == 6
    calls.clear()
    assert sweep(instances, ["has", "optimus", "exact"], log) == [] and calls == []


def test_sweep_reruns_under_other_options(tmp_path: Path) -> None:
    instances = [generate(2, 4, 0)]
    log = tmp_path / "sweep.jsonl"
    assert len(sweep(instances, ["optimus"], log)) == 2
    limited = MethodOptions(solve=SolveOptions(time_limit=30.0))
    assert len(sweep(instances, ["optimus"], log, options=limited)) == 2
    assert sweep(instances, ["optimus"], log, options=limited) == []
    assert len(sweep(instances, ["optimus"], log, options=MethodOptions(SolveOptions(seed=1)))) == 2
    assert len(log.read_text().splitlines()) == 6


def test_sweep_records_keep_their_key_fields(tmp_path: Path) -> None:
    log = tmp_path / "sweep.jsonl"
    opts = MethodOptions(solve=SolveOptions(time_limit=30.0, seed=3))
    rows = sweep([generate(2, 4, 0)], ["optimus"], log, options=opts)
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert [r["method"] for r in records] == ["exact", "optimus"]
    for rec, row in zip(records, rows, strict=True):
        assert rec["instance_hash"] == row.instance_hash
        assert rec["reference_method"] == "exact"
        assert rec["time_limit"] == 30.0 and rec["seed"] == 3


def test_sweep_repairs_a_torn_last_line_and_keeps_complete_records(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    instances = [generate(2, 4, seed) for seed in range(2)]
    log = tmp_path / "sweep.jsonl"
    sweep(instances, ["optimus"], log)
    full = log.read_bytes()
    lines = full.decode().splitlines()
    # killed halfway through writing the last record
    log.write_bytes(full[: len(full) - len(lines[-1]) // 2])
    new = sweep(instances, ["optimus"], log)
    assert [(r.instance_hash, r.method) for r in new] == [
        (json.loads(lines[-1])["instance_hash"], "optimus")
    ]
    repaired = log.read_text().splitlines()
    assert repaired[:3] == lines[:3] and len(repaired) == 4
    assert all(json.loads(line) for line in repaired)
    assert capsys.readouterr().err.count("torn last line") == 1
    log.write_bytes(log.read_bytes()[:-1])  # only the newline lost: the record is whole
    assert sweep(instances, ["optimus"], log) == []
    assert log.read_text().splitlines() == repaired


def test_sweep_names_a_corrupt_line(tmp_path: Path) -> None:
    log = tmp_path / "sweep.jsonl"
    log.write_text("not json\n")
    with pytest.raises(DlschedError, match="sweep.jsonl:1: not a sweep record"):
        sweep([generate(2, 4, 0)], ["optimus"], log)


def test_second_sweep_on_a_locked_file_fails_at_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "sweep.jsonl"
    argv = ["sweep", "placement", "--count", "1", "--jobs", "2", "--gpus", "4"]
    with log.open("a") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)  # another sweep is running
        with pytest.raises(DlschedError, match=r"sweep\.jsonl is in use by another sweep"):
            sweep([generate(2, 4, 0)], ["optimus"], log)
        assert main([*argv, "--methods", "optimus", "-o", str(log)]) == 2
    err = capsys.readouterr().err
    assert err == f"dlsched: error: {log} is in use by another sweep\n"
    assert log.read_text() == ""
    assert len(sweep([generate(2, 4, 0)], ["optimus"], log)) == 2  # released: runs now


def test_empirical_claims_through_the_verify_runner() -> None:
    """HAS and JPS against the certified optimum (the paper's empirical claims, 000-has and
    000-jps): no bound stated, so the ratios are reported and never judged."""
    import dataclasses

    from dlsched.verify.check import check, theorem_of

    both = dataclasses.replace(theorem_of("000-has"), methods=("has", "jps"))
    rows = {r["method"]: r for r in check(both, load("placement/liu2024-s3k8-seed1"))}
    assert rows["exhaustive"]["status"] == "optimal"
    for m in ("has", "jps"):
        assert rows[m]["reference_kind"] == "optimum" and rows[m]["ratio"] >= 1 - 1e-9
        assert rows[m]["bound"] is None and rows[m]["holds"] is None


def test_an_unbounded_guarantee_reads_inf_in_the_table_not_blank() -> None:
    # a job on every GPU makes Theorem 1's bound infinite: blank would read "no guarantee"
    from dlsched.bounds import format_table
    from dlsched.models.ddlwmp.generate import generate

    rows = compare(generate(4, 8, 1), ["a-srpt"], "exact", MethodOptions())
    row = next(r for r in rows if r.method == "a-srpt")
    assert row.guarantee == float("inf") and row.holds is True
    assert " inf " in format_table([row]) and row.to_json()["guarantee"] is None


def test_json_safe_gives_strict_json_for_numpy_and_non_finite_numbers() -> None:
    import numpy as np

    from dlsched.result import json_safe

    raw = {"a": np.float32("inf"), 1: (np.int64(3), float("nan")), "b": np.array([1.5, -np.inf])}
    safe = json_safe(raw)
    assert safe == {"a": None, "1": [3, None], "b": [1.5, None]}
    assert type(safe["1"][0]) is int
    json.dumps(safe, allow_nan=False)  # raises on any NaN or infinity left


def test_the_reference_runs_under_the_callers_time_limit(monkeypatch) -> None:
    """compare's and verify's reference get the caller's limit, not the default one (its
    settings and its limit travel apart since SolverSettings carry none)."""
    from dlsched.bounds import comparisons
    from dlsched.instances import load
    from dlsched.models import MethodOptions
    from dlsched.verify import theorem as theorem_module

    seen: list[tuple[str, float | None]] = []
    real = comparisons.run_method

    def spy(instance, method, options):
        seen.append((method, options.time_limit))
        return real(instance, method, options)

    monkeypatch.setattr(comparisons, "run_method", spy)
    monkeypatch.setattr(theorem_module, "run_method", spy)
    inst = load("hare/toy-2gpu")
    comparisons.compare(inst, ["hare"], "exact", MethodOptions(time_limit=7.0))
    assert seen == [("exact", 7.0), ("hare", 7.0)]
    seen.clear()
    t = theorem_module.registry()["002-thm4"]  # its reference (exact-cpsat) and method
    theorem_module.ratio_measure(t, inst, MethodOptions(time_limit=9.0))
    assert seen and all(limit == 9.0 for _, limit in seen)
