"""Instances and the checker of the hare family (Hare_Sched, seed 002)."""

from __future__ import annotations

import copy
import json

import pytest

from dlsched.errors import InfeasibleSolutionError, InstanceError
from dlsched.instances import bundled, dumps, from_dict, load, loads
from dlsched.models.hare.check import check_schedule
from dlsched.models.hare.instance import HareInstance
from dlsched.models.hare.routes import greedy_schedule
from dlsched.models.hare.solution import TaskSchedule

GOOD = {
    "family": "hare",
    "name": "t",
    "gpus": ["g0", "g1"],
    "jobs": [
        {
            "name": "j1",
            "arrival": 0,
            "weight": 1,
            "rounds": 2,
            "tasks_per_round": 2,
            "train_time": [2, 4],
            "sync_time": [0.5, 1],
        },
        {
            "name": "j2",
            "arrival": 1,
            "weight": 2,
            "rounds": 1,
            "tasks_per_round": 1,
            "train_time": [1, 2],
            "sync_time": [0, 0],
        },
    ],
}


def test_bundled_instances_load_and_round_trip():
    names = [b for b in bundled() if b.startswith("hare/")]
    assert {
        "hare/toy-2gpu",
        "hare/hetero-4gpu-6jobs",
        "hare/theorem4-counterexample",
        "hare/theorem4-counterexample-sync",
    } <= set(names)
    for name in names:
        inst = load(name)
        assert isinstance(inst, HareInstance)
        assert f"hare/{inst.name}" == name  # the file's "name" is its bundled name
        assert inst.num_tasks == sum(j.rounds * j.tasks_per_round for j in inst.jobs)
        again = loads(dumps(inst))
        assert again == inst
        assert check_schedule(inst, greedy_schedule(inst)).objective > 0


def test_alpha_of_lemma3_and_zero_sync():
    data = copy.deepcopy(GOOD)
    data["jobs"][1]["sync_time"] = [0, 0.5]  # sync 0 on one GPU only: alpha is infinite
    assert from_dict(data).alpha() == float("inf")
    data["jobs"][1]["sync_time"] = [0.25, 1.5]  # 6 > 4/2
    assert from_dict(data).alpha() == 6.0
    data["jobs"][1]["sync_time"] = [0.5, 0.5]
    data["jobs"][0]["sync_time"] = [0.5, 0.5]
    assert from_dict(data).alpha() == 2.0  # train 4/2 only
    data["jobs"][0]["train_time"] = [3, 3]
    data["jobs"][1]["train_time"] = [1, 1]
    assert from_dict(data).alpha() == 1.0  # identical GPUs


def test_instance_as_written_in_the_issue():
    inst = from_dict(copy.deepcopy(GOOD))
    assert inst.num_tasks == 5 and inst.num_gpus == 2
    assert inst.tasks[0] == (0, 0, 0) and inst.tasks[-1] == (1, 0, 0)
    assert inst.alpha() == 2.0  # 4/2 train, 1/0.5 sync; j2's all-zero sync counts 1


@pytest.mark.parametrize(
    "path, value, field",
    [
        (("jobs", 0, "train_time"), [2], "jobs[0].train_time"),
        (("jobs", 0, "train_time"), [2, 0], "jobs[0].train_time[1]"),
        (("jobs", 1, "sync_time"), [0, -1], "jobs[1].sync_time[1]"),
        (("jobs", 0, "weight"), 0, "jobs[0].weight"),
        (("jobs", 0, "rounds"), 0, "jobs[0].rounds"),
        (("jobs", 0, "tasks_per_round"), 1.5, "jobs[0].tasks_per_round"),
        (("jobs", 0, "arrival"), -1, "jobs[0].arrival"),
        (("jobs", 1, "name"), "j1", "jobs[1].name"),
        (("gpus",), [], "gpus"),
        (("jobs", 0, "train_time"), "fast", "jobs[0].train_time"),
    ],
)
def test_bad_fields_name_field_and_value(path, value, field):
    data = copy.deepcopy(GOOD)
    target = data
    for p in path[:-1]:
        target = target[p]
    target[path[-1]] = value
    with pytest.raises(InstanceError) as e:
        from_dict(data, "bad.json")
    assert e.value.field == field
    assert e.value.source == "bad.json"
    assert field in str(e.value)


def test_missing_field_and_broken_json(tmp_path):
    data = copy.deepcopy(GOOD)
    del data["jobs"][0]["train_time"]
    with pytest.raises(InstanceError, match="jobs\\[0\\].train_time"):
        from_dict(data)
    f = tmp_path / "broken.json"
    f.write_text(json.dumps(GOOD)[:-5])
    with pytest.raises(InstanceError, match="broken JSON"):
        load(f)


# --- checker ---------------------------------------------------------------------------------

INST = from_dict(GOOD)
# j1 round 0 on both GPUs at 0, round 1 after max(0+2+0.5, 0+4+1) = 5; j2 on g0 at 2.
VALID = {
    (0, 0, 0): (0, 0.0),
    (0, 0, 1): (1, 0.0),
    (0, 1, 0): (0, 5.0),
    (0, 1, 1): (1, 5.0),
    (1, 0, 0): (0, 2.0),
}


def test_checker_evaluates_a_valid_schedule():
    ev = check_schedule(INST, TaskSchedule.from_mapping(VALID))
    assert ev.completion == (10.0, 3.0)  # round 1 on g1: 5 + 4 + 1
    assert ev.objective == 10.0 + 2 * 3.0
    assert ev.busy == (2 + 2 + 1, 4 + 4)


def test_sync_does_not_occupy_the_gpu():
    s = dict(VALID)
    s[(1, 0, 0)] = (0, 2.0)  # starts exactly when (0,0,0)'s training ends, during its sync
    check_schedule(INST, TaskSchedule.from_mapping(s))


@pytest.mark.parametrize(
    "change, match",
    [
        ({(1, 0, 0): (0, 1.5)}, r"\(8\)"),  # overlaps training of (0,0,0) on g0
        ({(0, 1, 0): (0, 4.9)}, r"\(7\)"),  # before round 0 finishes incl. sync (5)
        ({(1, 0, 0): (1, 0.5)}, r"\(4\)|\(8\)"),
        ({(1, 0, 0): (0, 0.5)}, r"\(4\)"),  # before arrival 1
        ({(1, 0, 0): (2, 3.0)}, r"\(5\)"),  # no GPU 2
    ],
)
def test_checker_rejects(change, match):
    s = dict(VALID)
    s.update(change)
    with pytest.raises(InfeasibleSolutionError, match=match):
        check_schedule(INST, TaskSchedule.from_mapping(s))


def test_checker_rejects_missing_and_duplicate_tasks():
    s = dict(VALID)
    del s[(0, 1, 1)]
    with pytest.raises(InfeasibleSolutionError, match="not scheduled"):
        check_schedule(INST, TaskSchedule.from_mapping(s))
    sched = TaskSchedule.from_mapping(VALID)
    dup = TaskSchedule(sched.entries + sched.entries[:1])
    with pytest.raises(InfeasibleSolutionError, match="twice"):
        check_schedule(INST, dup)


def test_schedule_frame_and_json():
    sched = TaskSchedule.from_mapping(VALID)
    df = sched.to_frame(INST)
    assert len(df) == 5 and set(df["gpu"]) == {"g0", "g1"}
    js = sched.to_json(INST)
    assert js["gpus"]["g1"] == ["j1/r0/t1", "j1/r1/t1"]
