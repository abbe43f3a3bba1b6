"""The bounds layer: comparisons, resumable sweeps, counterexamples, the paper's claims."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dlsched.bounds import GUARANTEES, compare, register_guarantee, sweep
from dlsched.instances import from_dict, load
from dlsched.models.placement import generate
from dlsched.models.placement.guarantees import empirical_claims


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


def test_empirical_claims_record() -> None:
    rec = empirical_claims(load("placement/liu2024-s4k15-seed0"), seeds=2, samples=10)
    assert rec.optimum_status == "optimal"
    assert rec.has_gap >= -1e-9 and rec.jps_worst_gap >= rec.jps_mean_gap >= -1e-9
    assert rec.paper_jps_gap == 0.0054
