"""The family-neutral rows of dlsched.online: tiny Gavel and PAI files written here, read into
rows field by field, with the one-line errors naming the file, the line and the column; and the
trace parameters the online families share."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from dlsched.errors import InstanceError, OptionError
from dlsched.online.params import GavelReader, beside, file_param, parse_cluster, trace_files
from dlsched.online.traces import (
    GPU_TYPES,
    GavelJob,
    PaiJob,
    gavel_jobs,
    gavel_trace,
    pai_jobs,
)

#: (job type, scale factor) -> steps per second on each GPU type: "A" has figures for 1 and 2
#: GPUs (2 GPUs run it 1.6 times as fast on a V100, twice on a P100), "B" for 1 GPU only, and
#: the K80 cannot run "A" on 2 GPUs (0: the single-GPU figure stands in).
TPUT = {
    "v100": {"('A', 1)": 10.0, "('A', 2)": 16.0, "('B', 1)": 4.0},
    "p100": {"('A', 1)": 5.0, "('A', 2)": 10.0, "('B', 1)": 2.0},
    "k80": {"('A', 1)": 2.0, "('A', 2)": 0.0, "('B', 1)": 1.0},
}


def _gavel(folder: Path, lines: list[str]) -> tuple[Path, Path]:
    trace = folder / "t.trace"
    trace.write_text("\n".join(lines) + "\n")
    tput = folder / "isolated_throughputs.json"
    tput.write_text(json.dumps(TPUT))
    return trace, tput


LINES = [
    "A\tcd x && python3 main.py\t--num_steps\t1\t800\t50.5\t2",
    "",
    "B\tcd y && python3 main.py\t--max-steps\t1\t300\t20\t3",
    "A\tcd x && python3 main.py\t--num_steps\t1\t100\t70\t1",
]


def test_gavel_lines_become_rows_in_file_order(tmp_path: Path) -> None:
    trace, _ = _gavel(tmp_path, LINES)
    rows = gavel_jobs(trace)
    assert rows == [
        GavelJob(line=1, job_type="A", steps=800, arrival=50.5, scale=2),
        GavelJob(line=3, job_type="B", steps=300, arrival=20.0, scale=3),
        GavelJob(line=4, job_type="A", steps=100, arrival=70.0, scale=1),
    ]
    with pytest.raises(dataclasses.FrozenInstanceError):
        rows[0].steps = 1  # type: ignore[misc]


def test_gavel_trace_sorts_by_arrival_and_gives_each_job_its_speeds(tmp_path: Path) -> None:
    trace, tput = _gavel(tmp_path, LINES)
    rows = gavel_trace(trace, tput)
    assert [g.line for g, _ in rows] == [3, 1, 4]
    (_, b), (_, a2), (_, a1) = rows
    # A on 2 GPUs: its own figure where positive, phi = rate / (2 x single rate) at most 1
    assert a2.scaled == {"v100": 1 / 16, "p100": 1 / 10, "k80": 1 / 2}
    assert a2.one == {"v100": 1 / 10, "p100": 1 / 5, "k80": 1 / 2}
    assert a2.phi == {"v100": 0.8, "p100": 1.0, "k80": 1.0}  # K80: no figure of its own
    # B has no figure for 3 GPUs: the single-GPU one, the steps per GPU (phi = 1)
    assert b.scaled == b.one == {"v100": 1 / 4, "p100": 1 / 2, "k80": 1.0}
    assert set(b.phi.values()) == {1.0} and tuple(a1.phi) == GPU_TYPES
    assert [g.line for g, _ in gavel_trace(trace, tput, limit=2)] == [3, 1]


@pytest.mark.parametrize(
    ("line", "where"),
    [
        ("A\tc\ts\t1\tmany\t0\t1", "line 1, column total_steps"),
        ("A\tc\ts\t1\t10\t-3\t1", "line 1, column arrival"),
        ("A\tc\ts\t1\t10\t0\t0", "line 1, column scale_factor"),
        ("A\tc\ts\t1\t10\t0", "line 1"),
    ],
)
def test_a_bad_gavel_line_is_one_error_naming_its_column(
    tmp_path: Path, line: str, where: str
) -> None:
    trace, tput = _gavel(tmp_path, [line])
    with pytest.raises(InstanceError) as e:
        gavel_trace(trace, tput)
    assert e.value.field == where and str(trace) in str(e.value)


def test_a_job_type_without_throughput_names_the_trace_line(tmp_path: Path) -> None:
    trace, tput = _gavel(tmp_path, ["A\tc\ts\t1\t10\t0\t1", "C\tc\ts\t1\t10\t0\t1"])
    with pytest.raises(InstanceError, match="no positive v100 throughput") as e:
        gavel_trace(trace, tput)
    assert e.value.source == str(trace) and e.value.field == "line 2, column job_type"
    assert tput.name in e.value.reason


def _pai(folder: Path, jobs: str, tasks: str, tags: str | None = None) -> tuple[Path, ...]:
    out = [folder / "pai_job_table.csv", folder / "pai_task_table.csv"]
    out[0].write_text(jobs)
    out[1].write_text(tasks)
    if tags is not None:
        out.append(folder / "pai_group_tag_table.csv")
        out[2].write_text(tags)
    return tuple(out)


def test_pai_tables_become_the_usable_jobs(tmp_path: Path) -> None:
    job_table, task_table, tag_table = _pai(
        tmp_path,
        # a header row in another order; c is running, d has no GPU, e has no positive run
        "user,job_name,inst_id,status,start_time,end_time\n"
        "alice,a,i1,Terminated,100,3700\n"
        "bob,b,i2,Terminated,160.5,760.5\n"
        "bob,c,i3,Running,200,\n"
        "carol,d,i4,Terminated,300,400\n"
        "carol,e,i5,Terminated,500,500\n",
        "a,worker,2,Terminated,130,3700,600,29,100,V100\n"
        "a,ps,1,Terminated,100,3700,600,29,,\n"
        "b,tensorflow,3,Terminated,,760.5,600,29,50,T4\n"
        "c,worker,1,Running,200,,600,29,100,V100\n"
        "d,worker,1,Terminated,300,400,600,29,,\n"
        "e,worker,1,Terminated,500,500,600,29,100,V100\n",
        "i2,bob,T4,g7,bert\n",
    )
    rows = pai_jobs(job_table, task_table)
    assert rows == [
        # the run from the tasks' first launch (100, the ps's) to the end; 2 x 100% of a GPU
        PaiJob(line=2, group="alice|ps+worker", user="alice", release=100.0, run=3600.0, gpus=2),
        # no task launch: the job's own start; 3 x 50% of a GPU is 2 GPUs
        PaiJob(line=3, group="bob|tensorflow", user="bob", release=160.5, run=600.0, gpus=2),
    ]
    tagged = pai_jobs(job_table, task_table, tag_table)
    assert [r.group for r in tagged] == ["alice|ps+worker", "g7"]


def test_a_pai_job_without_tasks_is_an_error_naming_its_line(tmp_path: Path) -> None:
    job_table, task_table = _pai(
        tmp_path, "a,i1,u,Terminated,0,10\nz,i2,u,Terminated,0,10\n", "a,w,1,T,0,10,6,2,100,V\n"
    )
    with pytest.raises(InstanceError, match="no task of this job") as e:
        pai_jobs(job_table, task_table)
    assert e.value.field == "line 2, column job_name"


def test_trace_parameters(tmp_path: Path) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    trace, tput = _gavel(tmp_path / "a" / "b", ["A\tc\ts\t1\t10\t0\t1"])
    moved = tmp_path / "isolated_throughputs.json"
    tput.rename(moved)
    assert beside(trace, "isolated_throughputs.json", 3) == moved  # two folders up
    assert beside(trace, "isolated_throughputs.json", 2) is None
    assert trace_files({"trace": str(trace)}, ("trace", "throughputs")) == (trace, moved)
    assert file_param({}, "trace") is None
    for bad in ({"trace": str(tmp_path / "none.trace")}, {"trace": 3}):
        with pytest.raises(OptionError):
            file_param(bad, "trace")
    with pytest.raises(OptionError, match="not with trace="):
        trace_files({"trace": str(trace), "round": 1}, ("trace", "throughputs"))
    assert parse_cluster("1:2:3", None) == {"v100": 1, "p100": 2, "k80": 3}
    assert parse_cluster(None, 7) == {"v100": 3, "p100": 2, "k80": 2}
    with pytest.raises(OptionError):
        parse_cluster("1:2", None)


@dataclasses.dataclass(frozen=True)
class _Read:
    name: str
    description: str
    params: tuple[tuple[str, object], ...]


def test_a_gavel_reader_gives_load_trace_and_read_manifest(tmp_path: Path) -> None:
    def from_params(size: int | None, params: dict) -> _Read:
        if params.get("limit") == 0:
            raise OptionError("limit", 0, "expected a positive integer")
        return _Read("trace", "read", tuple(sorted(params.items())) + (("size", size),))

    reader = GavelReader(("trace", "limit"), from_params)
    assert reader.load_trace(Path("x.trace")).params == (("trace", "x.trace"), ("size", None))
    source = tmp_path / "inst.json"
    source.write_text("{}")
    data = {"family": "f", "name": "mine", "trace": {"path": "t.trace", "limit": 5}}
    got = reader.read_manifest(data, str(source))
    assert (got.name, got.description) == ("mine", "read")  # the file's name kept
    assert dict(got.params)["trace"] == str(tmp_path / "t.trace")  # beside the file
    data["trace"] = {"path": "t.trace", "limit": 0}
    with pytest.raises(InstanceError) as e:
        reader.read_manifest(data, str(source))
    assert e.value.field == "trace.limit"
