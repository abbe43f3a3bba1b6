"""Hostile instance files: every one is refused with a one-line InstanceError naming the file,
the field and the value, never a traceback and never silently accepted."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dlsched.cli import main
from dlsched.errors import InstanceError
from dlsched.instances import bundled, dumps, from_dict, load

DEL = object()  # an edit that removes the key
DEEP = "[" * 1000 + "]" * 1000
BASE = {"placement": "placement/liu2024-motivating", "hare": "hare/toy-2gpu"}


def _document(family: str, edits: dict[str, Any]) -> str:
    """The bundled base instance of ``family`` with ``edits``: dotted path -> DEL, or the JSON
    text to write there verbatim (so that NaN, 1e400 or 10^400 reach the parser as written)."""
    data = json.loads(dumps(load(BASE[family])))
    raw = {}
    for n, (path, text) in enumerate(edits.items()):
        *parents, last = [int(p) if p.isdigit() else p for p in path.split(".")]
        target = data
        for p in parents:
            target = target[p]
        if text is DEL:
            del target[last]
        else:
            target[last] = f"@{n}@"
            raw[f'"@{n}@"'] = text
    doc = json.dumps(data)
    for placeholder, text in raw.items():
        doc = doc.replace(placeholder, text)
    return doc


CASES = [
    # 1. tracebacks: unhashable family, integers too large for a float, deep nesting
    ("placement", {"family": '["placement"]'}, "family", "['placement']"),
    ("placement", {"family": '"placment"'}, "family", "did you mean 'placement'?"),
    ("placement", {"jobs.0.dataset_size": "1" + "0" * 400}, "jobs[0].dataset_size", "inf"),
    ("placement", {"jobs.0.epochs": "1" + "0" * 5000}, "jobs[0].epochs", "inf"),
    ("placement", {"jobs.0.epochs": "1" + "0" * 25}, "jobs[0].epochs", "1e+25"),
    ("placement", {"jobs.0.dataset_size": "1e400"}, "jobs[0].dataset_size", "inf"),
    ("hare", {"jobs.0.rounds": "1" + "0" * 400}, "jobs[0].rounds", "inf"),
    (
        "placement",
        {"jobs.0.throughput": DEEP},
        "jobs[0].throughput[0][0][0][0][0]...",
        "'[[[[",
    ),
    ("hare", {"description": DEEP}, "description[0][0][0][0][0][0][0]...", "'[[[["),
    # 2. wrong data silently accepted: magnitudes, null node, unknown keys
    ("placement", {"jobs.0.epochs": "1e20"}, "jobs[0].epochs", "1e+20"),
    ("placement", {"jobs.1.epochs": "1000001"}, "jobs[1].epochs", "1000001"),
    ("placement", {"jobs.0.dataset_size": "1e300"}, "jobs[0].dataset_size", "1e+300"),
    ("placement", {"jobs.0.throughput.1": "1e-300"}, "jobs[0].throughput[1]", "1e-300"),
    ("placement", {"jobs.0.model_size_mb": "1e9"}, "jobs[0].model_size_mb", "1000000000.0"),
    (
        "placement",
        {"network.intra_node_gbps": "1e12"},
        "network.intra_node_gbps",
        "1000000000000.0",
    ),
    ("placement", {"workers.0.node": "null"}, "workers[0].node", "None"),
    ("placement", {"workers.2.node": "3"}, "workers[2].node", "3"),
    ("placement", {"description": "7"}, "description", "7"),
    ("placement", {"jobs.0.epochs": DEL, "jobs.0.epoch": "3"}, "jobs[0].epoch", "'epochs'?"),
    ("placement", {"netwrk": "{}"}, "netwrk", "did you mean 'network'?"),
    ("placement", {"network.intra_gbps": "100"}, "network.intra_gbps", "'intra_node_gbps'?"),
    ("placement", {"workers.1.gpu_type": '"T4"'}, "workers[1].gpu_type", "'T4'"),
    (
        "placement",
        {"jobs.0.throughput": '{"T4": 275, "V100": 644, "v100": 600}'},
        "jobs[0].throughput.v100",
        "did you mean 'V100'?",
    ),
    ("hare", {"jobs.0.arrival": DEL, "jobs.0.arival": "5"}, "jobs[0].arival", "'arrival'?"),
    ("hare", {"descripton": '"x"'}, "descripton", "did you mean 'description'?"),
    ("hare", {"gpus.0": '{"name": "fast", "speed": 2}'}, "gpus[0].speed", "2"),
    ("hare", {"jobs.0.rounds": "1e9"}, "jobs[0].rounds", "1000000000.0"),
    ("hare", {"jobs.1.tasks_per_round": "1e300"}, "jobs[1].tasks_per_round", "1e+300"),
    ("hare", {"jobs.0.weight": "1e300"}, "jobs[0].weight", "1e+300"),
    ("hare", {"jobs.1.arrival": "2e9"}, "jobs[1].arrival", "2000000000.0"),
    ("hare", {"jobs.0.train_time.0": "1e-9"}, "jobs[0].train_time[0]", "1e-09"),
    ("hare", {"jobs.0.rounds": "1000", "jobs.0.tasks_per_round": "1001"}, "jobs[0].rounds", "1000"),
    (
        "hare",
        {"jobs.0.sync_time": '{"fast": 1, "slow": 1, "slw": 1}'},
        "jobs[0].sync_time.slw",
        "did you mean 'slow'?",
    ),
    # 3. non-finite numbers
    ("placement", {"jobs.0.dataset_size": "NaN"}, "jobs[0].dataset_size", "nan"),
    ("placement", {"jobs.1.throughput.3": "Infinity"}, "jobs[1].throughput[3]", "inf"),
    ("placement", {"jobs.0.model_size_mb": "-Infinity"}, "jobs[0].model_size_mb", "-inf"),
    ("placement", {"network.inter_node_gbps": "NaN"}, "network.inter_node_gbps", "nan"),
    ("placement", {"jobs.0.epochs": "NaN"}, "jobs[0].epochs", "nan"),
    ("hare", {"jobs.0.arrival": "NaN"}, "jobs[0].arrival", "nan"),
    ("hare", {"jobs.1.sync_time.0": "Infinity"}, "jobs[1].sync_time[0]", "inf"),
    ("hare", {"jobs.0.train_time.1": "-Infinity"}, "jobs[0].train_time[1]", "-inf"),
    ("hare", {"jobs.1.weight": "Infinity"}, "jobs[1].weight", "inf"),
    ("placement", {"workers.0.node": "NaN"}, "workers[0].node", "nan"),
    ("hare", {"description": "Infinity"}, "description", "inf"),
]
IDS = [f"{family}:{field}" for family, _, field, _ in CASES]
#: One case of each kind, run through the command line.
CLI_CASES = [CASES[i] for i in (0, 2, 7, 9, 15, 23, -2)]


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "bad.json"
    path.write_text(text)
    return path


@pytest.mark.parametrize(("family", "edits", "field", "shown"), CASES, ids=IDS)
def test_bad_document_names_file_field_and_value(
    tmp_path: Path, family: str, edits: dict[str, Any], field: str, shown: str
) -> None:
    path = _write(tmp_path, _document(family, edits))
    with pytest.raises(InstanceError) as err:
        load(path)
    msg = str(err.value)
    assert err.value.field == field
    assert msg.startswith(f"{path}: field '{field}' = ")
    assert shown in msg
    assert "\n" not in msg


@pytest.mark.parametrize("case", CLI_CASES, ids=lambda c: f"{c[0]}:{c[2]}")
def test_cli_reports_one_line_and_exits_2(tmp_path: Path, capsys, case) -> None:
    family, edits, field, shown = case
    path = _write(tmp_path, _document(family, edits))
    method = "greedy" if family == "hare" else "has"
    assert main(["solve", str(path), "--method", method]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert str(path) in err and f"'{field}'" in err and shown in err


def test_python_values_beyond_a_float_are_refused_without_overflow() -> None:
    data = json.loads(dumps(load(BASE["placement"])))
    data["jobs"][0]["dataset_size"] = 10**400
    with pytest.raises(InstanceError, match=r"jobs\[0\]\.dataset_size.*from 1 to 1e\+09"):
        from_dict(data, "mem")
    data["jobs"][0]["dataset_size"] = 1000
    data["jobs"][0]["throughput"] = [10**400] * 4
    with pytest.raises(InstanceError, match=r"jobs\[0\]\.throughput\[0\]"):
        from_dict(data, "mem")


def test_every_bundled_instance_still_loads_and_round_trips() -> None:
    for name in bundled():
        inst = load(name)
        assert from_dict(json.loads(dumps(inst)), name) == inst


def test_placement_whose_objective_exceeds_solver_precision_is_refused() -> None:
    from dlsched.instances import from_dict, load, to_dict

    d = to_dict(load("placement/liu2024-motivating"))
    d["jobs"][0]["dataset_size"], d["jobs"][0]["epochs"] = 1e9, 1_000_000
    with pytest.raises(InstanceError, match=r"jobs\[0\]\.epochs.*cannot be solved to precision"):
        from_dict(d, "big.json")


def test_hare_instance_beyond_64_bit_scaling_is_refused_by_the_exact_route() -> None:
    from dlsched.models import run_method
    from dlsched.models.hare.instance import HareInstance, HareJob

    jobs = tuple(HareJob(f"j{n}", 0.0, 1.000001, 1, 1, (1e9 - 0.000001,), (0.5,)) for n in range(3))
    inst = HareInstance("huge", ("g0",), jobs)
    with pytest.raises(InstanceError, match="64-bit"):
        run_method(inst, "exact-cpsat")
