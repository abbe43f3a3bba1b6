"""The placement generator: the paper's evaluation setting, and where its figures come from."""

from __future__ import annotations

from pathlib import Path

import pytest

from dlsched.errors import OptionError
from dlsched.instances import dumps, load, loads
from dlsched.models.placement import generate, heterogeneity_degree
from dlsched.models.placement.generator import (
    P100_PER_V100,
    PROVENANCE,
    TABLE_III,
    gavel_p100_per_v100,
    throughput_table,
)

#: Gavel's measurements are not shipped; they are read from ``shared/data/gavel`` beside the
#: clone (the repository root's parent) when present.
GAVEL = Path(__file__).resolve().parents[3].parent / "shared" / "data" / "gavel"


def test_setting_of_section_vi_a() -> None:
    inst = generate(4, 15, seed=0)
    assert inst.num_jobs == 4 and inst.num_workers == 15
    gpus = [w.gpu for w in inst.workers]
    assert gpus.count("V100") == gpus.count("P100") == gpus.count("T4") == 5  # 1:1:1
    assert len(inst.nodes) == 3  # 5 GPUs per node
    assert inst.intra_node_gbps == 300 and inst.inter_node_gbps == 10
    sizes = {name: (n, e) for name, _d, n, e, *_ in TABLE_III}
    for job in inst.jobs:
        assert (job.dataset_size, job.epochs) == sizes[job.name]
    assert loads(dumps(inst)) == inst
    assert 1 < heterogeneity_degree(inst) < 3


def test_reproducible_and_noisy() -> None:
    assert generate(3, 9, seed=4) == generate(3, 9, seed=4)
    noisy = generate(3, 9, seed=4, noise=0.3)
    assert noisy.throughput != generate(3, 9, seed=4).throughput
    assert generate(7, 9, seed=1).num_jobs == 7  # beyond Table III: sampled with replacement


def test_every_figure_has_a_source() -> None:
    """Each generated throughput is the figure its provenance names: the paper's measurements
    (the bundled motivating instance), V100 x the Gavel ratio, or V100 x the mean T4/V100."""
    motivating = load("placement/liu2024-motivating")
    measured = {}  # (job, gpu) -> samples/s from the reconstruction of eq. (9)
    for job, row in zip(motivating.jobs, motivating.throughput, strict=True):
        for w, rho in zip(motivating.workers, row, strict=True):
            measured[(job.name.replace("-", ""), w.gpu)] = rho
    assert len(measured) == 4
    t4_per_v100 = (275 / 644 + 884 / 1754) / 2
    table = throughput_table()
    assert set(PROVENANCE) == set(table) == {row[0] for row in TABLE_III}
    for name, cells in PROVENANCE.items():
        assert set(cells) == set(table[name]) == {"V100", "P100", "T4"}
        v100 = table[name]["V100"]
        for gpu, source in cells.items():
            value = table[name][gpu]
            if source.startswith("measured"):
                assert value == measured[(name, gpu)], (name, gpu)
            elif gpu == "P100":
                assert "Gavel" in source and value == pytest.approx(v100 * 0.81, abs=0.05)
            elif gpu == "T4":
                assert value == pytest.approx(v100 * t4_per_v100, abs=0.05), name
            else:
                assert source.startswith("estimate") and (name, gpu) not in measured
    # every measured figure of the paper is used, and labelled as such
    assert set(measured) == {
        (n, g) for n, c in PROVENANCE.items() for g, s in c.items() if s.startswith("measured")
    }
    inst = generate(5, 15, seed=2, layout="mixed")
    for job, row in zip(inst.jobs, inst.throughput, strict=True):
        for w, rho in zip(inst.workers, row, strict=True):
            assert rho == table[job.name][w.gpu]


def test_bad_options() -> None:
    with pytest.raises(OptionError, match="--gpus"):
        generate(5, 3)
    with pytest.raises(OptionError, match="layout"):
        generate(2, 4, layout="ring")
    with pytest.raises(OptionError, match="noise"):
        generate(2, 4, noise=1.5)


@pytest.mark.skipif(not (GAVEL / "isolated_throughputs.json").exists(), reason="Gavel data absent")
def test_p100_ratio_matches_gavel_measurements() -> None:
    assert gavel_p100_per_v100(str(GAVEL / "isolated_throughputs.json")) == pytest.approx(
        P100_PER_V100, abs=0.01
    )
