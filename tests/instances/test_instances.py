"""Instance loading, validation and saving."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dlsched.errors import InstanceError
from dlsched.instances import bundled, dumps, instance_hash, load, loads, save

MOTIVATING = "placement/liu2024-motivating"


def _motivating_dict() -> dict:
    return json.loads(dumps(load(MOTIVATING)))


def test_bundled_instances_all_load() -> None:
    names = bundled()
    assert MOTIVATING in names
    for name in names:
        inst = load(name)
        assert inst.name


def test_load_by_path_and_name_agree(tmp_path: Path) -> None:
    inst = load(MOTIVATING)
    path = save(inst, tmp_path / "m.json")
    again = load(path)
    assert again == inst
    assert instance_hash(again) == instance_hash(inst)


def test_throughput_by_gpu_type_expands_to_workers() -> None:
    inst = load(MOTIVATING)
    assert inst.throughput[0] == (275.0, 275.0, 644.0, 644.0)
    assert inst.throughput[1] == (884.0, 884.0, 1754.0, 1754.0)


def _write(tmp_path: Path, data) -> Path:
    p = tmp_path / "bad.json"
    p.write_text(data if isinstance(data, str) else json.dumps(data))
    return p


@pytest.mark.parametrize(
    ("mutate", "field", "value_fragment"),
    [
        (lambda d: d["jobs"][0].pop("epochs"), "jobs[0].epochs", "None"),
        (lambda d: d["jobs"][1].update(epochs="many"), "jobs[1].epochs", "'many'"),
        (lambda d: d["jobs"][0]["throughput"].__setitem__(2, -5), "jobs[0].throughput[2]", "-5"),
        (lambda d: d["jobs"][0]["throughput"].__setitem__(0, 0), "jobs[0].throughput[0]", "0"),
        (lambda d: d["jobs"][1].update(dataset_size=0), "jobs[1].dataset_size", "0"),
        (lambda d: d["jobs"][0]["throughput"].pop(), "jobs[0].throughput", "[275"),
        (lambda d: d.update(workers=d["workers"][:1]), "workers", "1"),
        (lambda d: d.update(family="nonsense"), "family", "'nonsense'"),
        (lambda d: d.pop("family"), "family", "None"),
        (lambda d: d["network"].update(inter_node_gbps=500), "network.inter_node_gbps", "500"),
        (lambda d: d["jobs"][1].update(name="ResNet-18"), "jobs[1].name", "'ResNet-18'"),
        (lambda d: d["jobs"][0].update(model_size_mb=-1), "jobs[0].model_size_mb", "-1"),
        (lambda d: d["jobs"][0].update(epochs=True), "jobs[0].epochs", "True"),
    ],
)
def test_bad_files_name_file_field_and_value(tmp_path, mutate, field, value_fragment) -> None:
    d = _motivating_dict()
    mutate(d)
    p = _write(tmp_path, d)
    with pytest.raises(InstanceError) as err:
        load(p)
    msg = str(err.value)
    assert str(p) in msg
    assert f"'{field}'" in msg
    assert value_fragment in msg
    assert err.value.field == field


def test_broken_json_is_a_clear_error(tmp_path: Path) -> None:
    p = _write(tmp_path, '{"family": "placement", "name": ')
    with pytest.raises(InstanceError, match="broken JSON"):
        load(p)


def test_top_level_must_be_object() -> None:
    with pytest.raises(InstanceError, match="JSON object"):
        loads("[1, 2]")


def test_unknown_reference() -> None:
    with pytest.raises(InstanceError, match="no such file or bundled instance"):
        load("placement/does-not-exist")
    with pytest.raises(InstanceError, match="no such file"):
        load("missing.json")


def test_save_is_atomic_and_keeps_existing_file(tmp_path: Path) -> None:
    inst = load(MOTIVATING)
    target = tmp_path / "keep.json"
    target.write_text("precious")
    with pytest.raises(InstanceError):
        save(inst, tmp_path / "no-such-dir" / "x.json")
    assert target.read_text() == "precious"
    assert list(tmp_path.iterdir()) == [target]


def test_instance_hash_is_per_content_and_cached_per_object():
    from dataclasses import replace

    a, b = load("hare/toy-2gpu"), load("hare/toy-2gpu")
    assert a is not b and instance_hash(a) == instance_hash(b) == instance_hash(a)
    c = replace(a, jobs=a.jobs[:-1])
    assert instance_hash(c) != instance_hash(a)
