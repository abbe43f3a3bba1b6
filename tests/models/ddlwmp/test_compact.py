"""ddlwmp at trace scale: the compact and Parquet forms, the instance hash across forms, the
pooled cluster, and the certified flow-time bound of the online policies."""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dlsched.errors import InfeasibleSolutionError, InstanceError, OptionError
from dlsched.instances import dumps, from_dict, instance_hash, load, loads, save, to_dict
from dlsched.models import MethodOptions, run_method
from dlsched.models.ddlwmp.bounds import alpha_floor, flow_time_bound, srpt_bound
from dlsched.models.ddlwmp.check import check_schedule
from dlsched.models.ddlwmp.columnar import COMPACT_FROM, canonical_chunks, to_compact
from dlsched.models.ddlwmp.flowlp import compute_flow_bound
from dlsched.models.ddlwmp.generate import generate
from dlsched.models.ddlwmp.instance import Cluster, DdlwmpInstance, Job, Stage
from dlsched.models.ddlwmp.online import POLICIES, run_policy
from dlsched.models.ddlwmp.profiles import PROFILES, stages
from dlsched.models.ddlwmp.solution import pooled
from dlsched.solvers import SolveOptions

SMALL = Cluster(servers=2, gpus_per_server=4, inter_gbps=10.0, intra_gbps=2400.0, slot_s=10.0)


def _reference_hash(inst: DdlwmpInstance) -> str:
    """The instance hash as defined: SHA-256 of the full form's canonical JSON."""
    canon = json.dumps(to_dict(inst), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canon.encode()).hexdigest()[:16]


# --- the canonical JSON, piece by piece ---------------------------------------------------------

_TEXT = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=6)
_STAGES = st.sampled_from(
    [stages(m, c) for m in ("ResNet152", "VGG19", "GPT-175B") for c in PROFILES[m].configs[:2]]
    + [(Stage(1, 0.1, 1e-6, 0.0, 3.5, 1e9),)]
)


@st.composite
def _instances(draw: st.DrawFn) -> DdlwmpInstance:
    jobs = []
    for k in range(draw(st.integers(0, 6))):
        jobs.append(
            Job(
                draw(_TEXT) + f"#{k}",
                draw(st.sampled_from([0.0, 3.0, 1e11, 0.1 + 0.2, 7])),
                draw(st.integers(1, 10**12)),
                draw(_STAGES),
                draw(st.sampled_from(["ring", "tree"])),
                draw(_TEXT),
                draw(_TEXT),
                draw(st.none() | st.integers(0, 10**12)),
                draw(st.sampled_from(["", "VGG19", 'we"ird\\'])),
            )
        )
    occupied = draw(st.sampled_from([(), (1, 0)]))
    cluster = replace(SMALL, occupied=occupied, slot_s=draw(st.sampled_from([1.0, 0.5, 10])))
    return DdlwmpInstance(draw(_TEXT) or "x", cluster, tuple(jobs), draw(_TEXT))


@settings(max_examples=200, deadline=None)
@given(_instances())
def test_canonical_chunks_are_the_canonical_json(inst: DdlwmpInstance) -> None:
    canon = json.dumps(to_dict(inst), sort_keys=True, separators=(",", ":"))
    assert "".join(canonical_chunks(inst)) == canon
    assert instance_hash(inst) == _reference_hash(inst)


# --- the forms ----------------------------------------------------------------------------------


def _paper(jobs: int) -> DdlwmpInstance:
    return generate(jobs, 64, 5, setting="paper", load=0.9)


def test_full_compact_and_parquet_hold_the_same_jobs(tmp_path: Path) -> None:
    inst = _paper(COMPACT_FROM + 200)
    inst = replace(  # predictions on some jobs: a column with nulls
        inst,
        jobs=tuple(
            replace(j, predicted_iterations=k % 7 if k % 3 else None)
            for k, j in enumerate(inst.jobs)
        ),
    )
    paths = {}
    for form, name in (("full", "f.json"), (None, "c.json"), (None, "p.parquet")):
        paths[name] = save(inst, tmp_path / name, form)
    assert isinstance(json.loads((tmp_path / "f.json").read_text())["jobs"], list)
    assert isinstance(json.loads((tmp_path / "c.json").read_text())["jobs"], dict)  # large
    assert (tmp_path / "p.parquet").read_bytes()[:4] == b"PAR1"
    assert (tmp_path / "c.json").stat().st_size * 5 < (tmp_path / "f.json").stat().st_size
    loaded = {name: load(path) for name, path in paths.items()}
    for got in loaded.values():
        assert got == inst
        assert instance_hash(got) == _reference_hash(inst)
    # one stage table per profile, shared by its jobs (the memory a large instance saves)
    for got in loaded.values():
        by_model: dict[tuple, tuple] = {}
        for j in got.jobs:
            assert by_model.setdefault(j.stages, j.stages) is j.stages


def test_small_instances_stay_in_the_full_form(tmp_path: Path) -> None:
    inst = _paper(20)
    save(inst, tmp_path / "s.json")
    assert (tmp_path / "s.json").read_text() == dumps(inst)
    assert loads(dumps(inst, "compact")) == inst  # the compact form on demand


def test_the_checker_says_the_same_on_every_form(tmp_path: Path) -> None:
    inst = _paper(COMPACT_FROM)
    compact = load(save(inst, tmp_path / "c.json"))
    full = load(save(inst, tmp_path / "f.json", "full"))
    for name in ("a-srpt", "wcs-subtime"):
        sched, _ = run_policy(compact, name)
        assert sched == run_policy(full, name)[0]
        assert check_schedule(compact, sched) == check_schedule(full, sched)


def test_save_writes_parquet_by_suffix(tmp_path: Path) -> None:
    """What ``dlsched generate -o FILE.parquet`` writes: the form comes from the path."""
    inst = generate(30, 64, 2, setting="paper")
    out = save(inst, tmp_path / "w.parquet")
    assert out.read_bytes()[:4] == b"PAR1"
    assert load(out) == inst


def _compact_dict() -> dict:
    return to_compact(_paper(5))


@pytest.mark.parametrize(
    ("change", "field", "shown"),
    [
        (lambda d: d["jobs"]["release"].__setitem__(2, -1.0), "jobs.release[2]", "-1.0"),
        (lambda d: d["jobs"]["release"].__setitem__(1, "7"), "jobs.release[1]", "'7'"),
        (lambda d: d["jobs"]["iterations"].__setitem__(3, 2.5), "jobs.iterations[3]", "2.5"),
        (lambda d: d["jobs"]["iterations"].__setitem__(0, True), "jobs.iterations[0]", "True"),
        (lambda d: d["jobs"]["profile"].__setitem__(4, 99), "jobs.profile[4]", "99"),
        (lambda d: d["jobs"]["name"].__setitem__(4, ""), "jobs.name[4]", "''"),
        (lambda d: d["jobs"]["release"].pop(), "jobs.release", "expected 5 entries"),
        (lambda d: d["jobs"].__setitem__("speed", [1] * 5), "jobs.speed", "unknown"),
        (lambda d: d.pop("profiles"), "profiles", "missing"),
        (lambda d: d["profiles"][0].__setitem__("allreduce", "mesh"), "allreduce", "mesh"),
        (lambda d: d["profiles"][0]["stages"][0].pop("forward_ms"), "forward_ms", "missing"),
        (lambda d: d["jobs"]["name"].__setitem__(1, d["jobs"]["name"][0]), "name", "duplicate"),
    ],
)
def test_a_bad_compact_instance_names_column_and_row(change, field: str, shown: str) -> None:
    data = _compact_dict()
    change(data)
    with pytest.raises(InstanceError) as e:
        from_dict(data, "w.json")
    msg = str(e.value)
    assert msg.startswith("w.json: ") and field in msg and shown in msg, msg


def test_a_bad_parquet_file_is_one_line_exit_2(tmp_path: Path, capsys) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from dlsched.cli import main

    cases = {}
    (tmp_path / "text.parquet").write_text("not columns\n")
    cases["text.parquet"] = "not a readable Parquet file"
    pq.write_table(pa.table({"release": [1.0]}), tmp_path / "bare.parquet")
    cases["bare.parquet"] = "no instance in the Parquet metadata"
    data = _compact_dict()
    data["jobs"]["release"][1] = -5.0
    from dlsched.instances.parquet import to_bytes

    (tmp_path / "neg.parquet").write_bytes(to_bytes(data))
    cases["neg.parquet"] = "jobs.release[1]"
    for name, why in cases.items():
        code = main(["solve", str(tmp_path / name), "--method", "a-srpt"])
        err = capsys.readouterr().err
        assert code == 2 and len(err.strip().splitlines()) == 1, err
        assert name in err and why in err, err


# --- the pooled cluster ---------------------------------------------------------------------------


def _one_job_stage(gpus: int, iterations: int, name: str, release: float = 0.0) -> Job:
    # data parallel, no parameters: alpha = forward + backward = 2 ms wherever it runs
    return Job(name, release, iterations, (Stage(gpus, 1.0, 1.0, 0.0, 0.0, 0.0),))


def test_pooled_schedules_are_checked_against_the_pool() -> None:
    cluster = Cluster(servers=2, gpus_per_server=2, inter_gbps=10.0, intra_gbps=2400.0)
    # 3 + 1 GPUs: no server holds the 3, the pool of 4 holds both at once
    jobs = (_one_job_stage(3, 5000, "a"), _one_job_stage(1, 5000, "b"))
    inst = DdlwmpInstance("pool", cluster, jobs)
    ev = check_schedule(inst, pooled((0.0, 0.0)))
    # completions count the first slot (1 s) as the paper's [T] = {1, ..., T}; flow times do not
    assert ev.completions == (11.0, 11.0) and ev.objective == 22.0 and ev.flow_time == 20.0
    big = DdlwmpInstance("pool", cluster, (_one_job_stage(3, 5000, "a"), _one_job_stage(2, 1, "c")))
    with pytest.raises(InfeasibleSolutionError, match="5 > 4"):
        check_schedule(big, pooled((0.0, 9.0)))  # 3 + 2 GPUs in slot 9
    assert check_schedule(big, pooled((0.0, 10.0))).objective == pytest.approx(11.0 + 11.002)
    with pytest.raises(InfeasibleSolutionError, match="off the"):
        check_schedule(inst, pooled((0.0, 0.5)))


def test_pooled_and_placement_aware_agree_on_one_server() -> None:
    """With one server the pool is that server and Heavy-Edge's placement is alpha~^min's."""
    one = Cluster(servers=1, gpus_per_server=8, inter_gbps=10.0, intra_gbps=2400.0)
    inst = generate(40, 8, 3, setting="paper", load=1.5)
    inst = replace(inst, cluster=one)
    for name in POLICIES:
        placed, _ = run_policy(inst, name)
        pool, stats = run_policy(inst, name, pooled=True)
        assert pool.starts == placed.starts and stats["cluster"] == "pooled"
        assert check_schedule(inst, pool).objective == pytest.approx(
            check_schedule(inst, placed).objective, rel=1e-12
        )


def test_pooled_param_on_the_command_line(tmp_path: Path, capsys) -> None:
    from dlsched.cli import main

    path = save(generate(30, 16, 1, setting="paper", load=1.2), tmp_path / "g.json")
    argv = ["solve", str(path), "--method", "spjf", "--param", "pooled=true", "--bound"]
    code = main([*argv, "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    got = json.loads(out)
    assert got["solution"]["cluster"] == "pooled" and got["details"]["cluster"] == "pooled"
    assert got["details"]["flow_time_bound_s"] <= got["details"]["flow_time_s"]
    code = main(["solve", str(path), "--method", "spjf", "--param", "pooled=3"])
    err = capsys.readouterr().err
    assert code == 2 and "pooled" in err and len(err.strip().splitlines()) == 1


# --- the flow-time bound ---------------------------------------------------------------------


@pytest.mark.parametrize("model", ["ResNet152", "VGG19", "BERT-large", "GPT-175B"])
def test_alpha_floor_is_below_every_placement(model: str) -> None:
    from dlsched.models.ddlwmp.alpha import alpha_ms
    from dlsched.models.ddlwmp.mapping import all_placements

    for g in (1, 2, 4):
        cluster = Cluster(servers=4, gpus_per_server=g, inter_gbps=10.0, intra_gbps=2400.0)
        for config in PROFILES[model].configs:
            if sum(config) > min(4, 4 * g):
                continue
            job = Job("j", 0.0, 1, stages(model, config))
            floor = alpha_floor(job, cluster)
            best = min(alpha_ms(job, cluster, p) for p in all_placements(job, (g,) * 4))
            assert 0 < floor <= best * (1 + 1e-12)
            if sum(config) == 1:
                assert floor == best  # one replica: nothing but computation


@pytest.mark.parametrize("seed", range(2, 6))
def test_flow_bound_is_below_the_optimum_and_every_policy(seed: int) -> None:
    inst = generate(6, 8, seed, gpus_per_server=4)
    releases = math.fsum(j.release + inst.cluster.first_slot_s for j in inst.jobs)  # in (8)
    bound = compute_flow_bound(inst).flow  # Lemma 1's or the interval LP's, the larger
    assert bound >= flow_time_bound(srpt_bound(inst), inst)
    exact = run_method(inst, "exact", MethodOptions(SolveOptions(time_limit=20.0)))
    assert str(exact.status) == "optimal"
    assert bound <= exact.objective - releases + 1e-6
    for name in POLICIES:
        for pool in (False, True):
            out = run_method(inst, name, MethodOptions(params={"pooled": pool}, bound=True))
            d = out.details
            assert d["flow_time_s"] == pytest.approx(out.objective - releases)
            assert d["flow_time_bound_s"] == pytest.approx(bound)
            assert bound <= d["flow_time_s"] + 1e-6
            assert d["flow_time_gap"] == pytest.approx(
                (d["flow_time_s"] - bound) / d["flow_time_s"]
            )


def test_flow_bound_without_probes_still_holds(monkeypatch) -> None:
    """A probe cut by the deadline proves nothing (0); alpha_floor keeps the bound useful."""
    from dlsched.models.ddlwmp import bounds

    inst = generate(30, 16, 4, setting="paper", load=1.2)
    full = flow_time_bound(srpt_bound(inst), inst)
    monkeypatch.setattr(bounds, "alpha_min_lower", lambda *a, **k: 0.0)
    cut = flow_time_bound(bounds.srpt_bound(inst), inst)
    assert 0 < cut <= full
    flow = min(check_schedule(inst, run_policy(inst, n)[0]).flow_time for n in POLICIES)
    assert full <= flow


def test_method_options_reject_unknown_pooled_values() -> None:
    inst = generate(4, 8, 1, gpus_per_server=4)
    with pytest.raises(OptionError, match="pooled"):
        run_method(inst, "a-srpt", MethodOptions(params={"pooled": "yes"}))
