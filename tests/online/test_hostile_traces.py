"""Hostile trace files: every malformed Gavel trace (read by each family that reads them:
ddlwmp, hare, elastic), Gavel throughput file and PAI 2020 table is refused by the command
line with exit status 2 and one line naming the file (and the line and column where there is
one), never a traceback and never silently accepted; and with ``skip_bad_rows=true`` the bad
rows are skipped, their count by reason reported on the standard error and in the instance's
description. The files are written here; the command line runs in-process (a few cases in a
subprocess)."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from gavel_sample import LINES, TPUT

from dlsched.cli import main
from dlsched.online.traces import GAVEL_COLS, LIMITS

ROOT = Path(__file__).resolve().parents[2]
FAMILIES = ("ddlwmp", "hare", "elastic")
_RN = "('ResNet-18 (batch size 32)', 1)"


def line(base: str = LINES[0], **cells: str) -> str:
    """A Gavel line: ``base`` with the named columns replaced."""
    f = base.split("\t")
    for col, text in cells.items():
        f[GAVEL_COLS.index(col)] = text
    return "\t".join(f)


def text(*lines: str) -> bytes:
    """Lines as a file's bytes, each ended by a newline."""
    return "".join(f"{ln}\n" for ln in lines).encode()


def run(capsys: Any, *argv: str) -> tuple[int, str, str]:
    """``dlsched ARGV`` in-process: (exit status, stdout, stderr), never a traceback."""
    try:
        code = main(list(argv))
    except SystemExit as e:  # pragma: no cover (main returns its status)
        code = e.code if isinstance(e.code, int) else 2
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


def generate(capsys: Any, tmp_path: Path, family: str, *params: str) -> tuple[int, str, str]:
    """``dlsched generate FAMILY --param P ... -o out.json``."""
    argv = ["generate", family, "--jobs", "1", "--gpus", "16", "-o", str(tmp_path / "out.json")]
    for p in params:
        argv += ["--param", p]
    return run(capsys, *argv)


def refused(code: int, err: str, *shown: str) -> None:
    """Exit status 2 and one line on the standard error holding each of ``shown``."""
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1, err
    assert err.startswith("dlsched: error: ") and all(s in err for s in shown), err


# --- Gavel traces, read by every family that reads them -------------------------------------

JUNK = bytes(range(256))[::-7] * 3  # not UTF-8, control characters, no newline
GAVEL: list[tuple[str, bytes, str]] = [
    # numbers out of their range (LIMITS: the compact form's) or not numbers at all
    ("arrival-1e308", text(LINES[0], line(arrival="1e308")), "line 2, column arrival"),
    ("arrival-1e13", text(LINES[0], line(arrival="1e13")), "line 2, column arrival"),
    ("arrival-nan", text(line(arrival="nan")), "line 1, column arrival"),
    ("arrival-inf", text(line(arrival="inf")), "line 1, column arrival"),
    ("arrival-negative", text(LINES[0], line(arrival="-1")), "line 2, column arrival"),
    ("arrival-word", text(line(arrival="soon")), "line 1, column arrival"),
    ("arrival-empty", text(line(arrival="")), "line 1, column arrival"),
    ("steps-10^400", text(line(total_steps="1" + "0" * 400)), "line 1, column total_steps"),
    ("steps-10^5000", text(line(total_steps="1" + "0" * 5000)), "line 1, column total_steps"),
    ("steps-1e400", text(line(total_steps="1e400")), "line 1, column total_steps"),
    ("steps-negative", text(line(total_steps="-1")), "line 1, column total_steps"),
    ("steps-zero", text(line(total_steps="0")), "line 1, column total_steps"),
    ("steps-fraction", text(line(total_steps="2.5")), "line 1, column total_steps"),
    ("steps-word", text(line(total_steps="many")), "line 1, column total_steps"),
    ("scale-zero", text(line(scale_factor="0")), "line 1, column scale_factor"),
    ("scale-huge", text(line(scale_factor=str(10**7))), "line 1, column scale_factor"),
    ("scale-word", text(line(scale_factor="two")), "line 1, column scale_factor"),
    # rows of the wrong shape, files with no row
    ("missing-column", text(LINES[0], LINES[1].rsplit("\t", 1)[0]), "line 2"),
    ("extra-column", text(LINES[0] + "\t9"), "line 1"),
    ("spaces-not-tabs", text(LINES[0].replace("\t", " ")), "line 1"),
    ("empty-file", b"", "'jobs'"),
    ("blank-lines", b"\n \n\t\n", "'jobs'"),
    # junk bytes, byte order mark, control characters
    ("not-utf8", text(LINES[0]).replace(b"cd x", b"cd \xff"), "line 1, column command"),
    ("latin-1-type", LINES[0].encode() + b"\nCaf\xe9\tc\ts\t1\t10\t0\t1\n", "column job_type"),
    ("nul-byte", text(LINES[0].replace("cd x", "cd\0x")), "line 1, column command"),
    ("carriage-return", text(LINES[0].replace("cd x", "cd\rx")), "line 1, column command"),
    ("binary-junk", JUNK, "line 1"),
    ("bom", b"\xef\xbb\xbf" + text(*LINES), "line 1, column job_type"),
    ("bom-utf16", "\ufeff".encode("utf-16-le") + text(LINES[0]), "line 1"),
    # jobs the throughputs do not know, repeated, cut short
    ("unknown-job-type", text(LINES[0], line(job_type="Nope")), "line 2, column job_type"),
    ("empty-job-type", text(line(job_type="")), "line 1, column job_type"),
    ("duplicate-line", text(LINES[0], LINES[1], LINES[0]), "line 3"),
    ("cut-mid-row", text(*LINES) + LINES[0][:30].encode(), "line 4"),
    ("cut-mid-number", text(LINES[0]) + LINES[1][:-2].encode(), "line 2"),
    ("cut-after-tab", text(LINES[0]) + LINES[1][:-1].encode(), "line 2, column scale_factor"),
]


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize(("data", "where"), [c[1:] for c in GAVEL], ids=[c[0] for c in GAVEL])
def test_a_hostile_gavel_trace_is_one_line(
    tmp_path: Path, capsys: Any, family: str, data: bytes, where: str
) -> None:
    trace = tmp_path / "t.trace"
    trace.write_bytes(data)
    (tmp_path / "isolated_throughputs.json").write_text(json.dumps(TPUT))
    code, _, err = generate(capsys, tmp_path, family, f"trace={trace}")
    refused(code, err, str(trace), where)
    assert not (tmp_path / "out.json").exists()


def _tput(value: Any) -> str:
    """Gavel's throughputs with the V100 figure of one job replaced by ``value`` (JSON)."""
    return json.dumps({**TPUT, "v100": {**TPUT["v100"], _RN: value}})


TPUTS: list[tuple[str, str, str]] = [
    ("nan", _tput(math.nan), f"v100.{_RN}"),
    ("infinity", _tput(math.inf), f"v100.{_RN}"),
    ("1e308", _tput(1e308), f"v100.{_RN}"),
    ("negative", _tput(-3.0), f"v100.{_RN}"),
    ("string", _tput("fast"), f"v100.{_RN}"),
    ("boolean", _tput(True), f"v100.{_RN}"),
    ("not-json", "{", "not JSON"),
    ("no-gpu-type", json.dumps({"p100": TPUT["p100"], "k80": TPUT["k80"]}), "'v100'"),
]


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize(("tput", "where"), [c[1:] for c in TPUTS], ids=[c[0] for c in TPUTS])
def test_a_hostile_throughput_file_is_one_line_naming_it(
    tmp_path: Path, capsys: Any, family: str, tput: str, where: str
) -> None:
    trace = tmp_path / "t.trace"
    trace.write_bytes(text(*LINES))
    (tmp_path / "isolated_throughputs.json").write_text(tput)
    code, _, err = generate(capsys, tmp_path, family, f"trace={trace}")
    refused(code, err, "isolated_throughputs.json", where)


#: Rows within the trace's ranges that a family's own ranges refuse: (family, lines, the V100
#: figure of ResNet-18 on one GPU, where, why).
FAMILY_RANGES = [
    # 1e12 steps at 1e-6 per second: 1e18 s, beyond ddlwmp's 1e12 iterations
    ("ddlwmp", [line(total_steps=str(10**12))], 1e-6, "line 1, column total_steps", "iterations"),
    # ... and beyond hare's 10^6 rounds of an hour
    ("hare", [line(total_steps=str(10**12))], 1e-6, "line 1, column total_steps", "1e+06"),
    # arrivals 2e9 s apart: beyond hare's 1e9 s, after elastic's horizon of 10,000 slots
    ("hare", [LINES[0], line(arrival="2e9")], 10.0, "line 2, column arrival", "1e+09"),
    ("elastic", [LINES[0], line(arrival="2e9")], 10.0, "line 2, column arrival", "horizon"),
    # 1e9 steps per second: a mini-batch below elastic's 1e-9 slots
    ("elastic", [LINES[0]], 1e9, "line 1, column job_type", "1e-09"),
]


@pytest.mark.parametrize(("family", "lines", "rate", "where", "why"), FAMILY_RANGES)
def test_a_row_out_of_a_familys_range_is_one_line_naming_the_trace(
    tmp_path: Path, capsys: Any, family: str, lines: list[str], rate: float, where: str, why: str
) -> None:
    trace = tmp_path / "t.trace"
    trace.write_bytes(text(*lines))
    (tmp_path / "isolated_throughputs.json").write_text(_tput(rate))
    code, _, err = generate(capsys, tmp_path, family, f"trace={trace}")
    refused(code, err, str(trace), where, why)


# --- PAI 2020 tables (ddlwmp) ---------------------------------------------------------------

JOBS = ["j1,i1,u1,Terminated,100.0,700.0", "j2,i2,u2,Terminated,150.0,900.0"]
TASKS = [
    "j1,worker,2.0,Terminated,110.0,700.0,600.0,29.3,100.0,V100",
    "j2,worker,1.0,Terminated,160.0,900.0,600.0,29.3,50.0,V100",
]
TAGS = ["i1,u1,V100,g1,bert", "i2,u2,V100,g2,resnet"]
_HEADER = "job_name,inst_id,user,status,start_time"


def _job(k: int, **cells: str) -> str:
    """Job row ``k`` with the named cells replaced."""
    cols = ("job_name", "inst_id", "user", "status", "start_time", "end_time")
    f = JOBS[k].split(",")
    for col, value in cells.items():
        f[cols.index(col)] = value
    return ",".join(f)


def _task(k: int, **cells: str) -> str:
    """Task row ``k`` with the named cells replaced."""
    cols = ("job_name", "task_name", "inst_num", "status", "start_time", "end_time")
    cols += ("plan_cpu", "plan_mem", "plan_gpu", "gpu_type")
    f = TASKS[k].split(",")
    for col, value in cells.items():
        f[cols.index(col)] = value
    return ",".join(f)


#: (name, {table: bytes}, the table named, where): tables not given are the good ones.
PAI: list[tuple[str, dict[str, bytes], str, str]] = [
    (
        "end-1e300",
        {"job": text(_job(0, end_time="1e300"), JOBS[1])},
        "job",
        "line 1, column end_time",
    ),
    (
        "start-nan",
        {"job": text(JOBS[0], _job(1, start_time="nan"))},
        "job",
        "line 2, column start_time",
    ),
    ("end-inf", {"job": text(_job(0, end_time="inf"))}, "job", "line 1, column end_time"),
    ("start-negative", {"job": text(_job(0, start_time="-1"))}, "job", "line 1, column start_time"),
    (
        "start-date",
        {"job": text(_job(0, start_time="2020-07-01"))},
        "job",
        "line 1, column start_time",
    ),
    (
        "negative-duration",
        {"job": text(_job(0, end_time="50.0"))},
        "job",
        "line 1, column end_time",
    ),
    (
        "task-launched-after-job-ended",
        {"task": text(TASKS[0], _task(1, start_time="1000.0", end_time="1200.0"))},
        "job",
        "line 2, column end_time",
    ),
    (
        "task-end-before-start",
        {"task": text(_task(0, end_time="1.0"))},
        "task",
        "line 1, column end_time",
    ),
    (
        "task-start-1e308",
        {"task": text(_task(0, start_time="1e308"))},
        "task",
        "line 1, column start_time",
    ),
    (
        "inst-num-1e400",
        {"task": text(_task(0, inst_num="1e400"))},
        "task",
        "line 1, column inst_num",
    ),
    (
        "inst-num-negative",
        {"task": text(_task(0, inst_num="-1"))},
        "task",
        "line 1, column inst_num",
    ),
    ("plan-gpu-word", {"task": text(_task(0, plan_gpu="abc"))}, "task", "line 1, column plan_gpu"),
    (
        "plan-gpu-1e308",
        {"task": text(_task(0, plan_gpu="1e308"))},
        "task",
        "line 1, column plan_gpu",
    ),
    (
        "plan-cpu-nan",
        {"task": text(TASKS[0], _task(1, plan_cpu="nan"))},
        "task",
        "line 2, column plan_cpu",
    ),
    ("duplicate-job", {"job": text(*JOBS, JOBS[0])}, "job", "line 3, column job_name"),
    ("duplicate-task", {"task": text(*TASKS, TASKS[0])}, "task", "line 3, column task_name"),
    ("job-without-task", {"job": text(*JOBS, "j3,i3,u3,T,1,2")}, "job", "line 3, column job_name"),
    (
        "job-table-cut-mid-row",
        {"job": text(JOBS[0]) + b"j2,i2,u2,Terminated,150.0,"},
        "job",
        "line 2",
    ),
    (
        "job-table-cut-mid-field",
        {"job": text(JOBS[0]) + b"j2,i2,u2,Term"},
        "job",
        "line 2, column start_time",
    ),
    ("job-table-cut-mid-number", {"job": text(JOBS[0]) + b"j2,i2,u2,T,150.0,90"}, "job", "line 2"),
    ("task-table-cut", {"task": text(TASKS[0]) + TASKS[1][:20].encode()}, "task", "line 2"),
    ("missing-cells", {"job": text(JOBS[0], "j2,i2,u2")}, "job", "line 2, column status"),
    ("header-without-column", {"job": text(_HEADER, JOBS[0])}, "job", "line 1, column end_time"),
    ("empty-job-table", {"job": b""}, "job", "'jobs'"),
    ("empty-task-table", {"task": b""}, "job", "line 1, column job_name"),
    (
        "job-table-not-utf8",
        {"job": text(JOBS[0]).replace(b"u1", b"\xfe\xff")},
        "job",
        "line 1, column user",
    ),
    ("job-table-bom", {"job": b"\xef\xbb\xbf" + text(*JOBS)}, "job", "line 1, column job_name"),
    (
        "task-table-nul",
        {"task": text(TASKS[0].replace("worker", "wor\0ker"))},
        "task",
        "line 1, column task_name",
    ),
    ("task-table-binary-junk", {"task": JUNK}, "task", "line 1"),
    (
        "unclosed-quote",
        {"job": text('j1,"i1,u1,Terminated,100.0,700.0')},
        "job",
        "line 1, column user",
    ),
    ("group-tags-binary-junk", {"tags": JUNK}, "group_tag", "line 1"),
    (
        "group-tags-junk-utf8",
        {"tags": text("i1,u1,V100,\x01\x02\x03,bert")},
        "group_tag",
        "line 1, column group",
    ),
    ("group-tags-duplicate", {"tags": text(*TAGS, TAGS[0])}, "group_tag", "line 3, column inst_id"),
    ("group-tags-missing-cells", {"tags": text("i1,u1,V100")}, "group_tag", "line 1, column group"),
]


def _pai(tmp_path: Path, tables: dict[str, bytes]) -> tuple[Path, list[str]]:
    """The three PAI tables (``tables`` in place of the good ones); the trace parameters."""
    good = {"job": text(*JOBS), "task": text(*TASKS), "tags": text(*TAGS)}
    names = {"job": "pai_job_table", "task": "pai_task_table", "tags": "pai_group_tag_table"}
    for key, name in names.items():
        (tmp_path / f"{name}.csv").write_bytes(tables.get(key, good[key]))
    jobs = tmp_path / "pai_job_table.csv"
    return jobs, [f"trace={jobs}", f"group_tags={tmp_path / 'pai_group_tag_table.csv'}"]


@pytest.mark.parametrize(
    ("tables", "table", "where"), [c[1:] for c in PAI], ids=[c[0] for c in PAI]
)
def test_a_hostile_pai_table_is_one_line(
    tmp_path: Path, capsys: Any, tables: dict[str, bytes], table: str, where: str
) -> None:
    _, params = _pai(tmp_path, tables)
    code, _, err = generate(capsys, tmp_path, "ddlwmp", *params)
    refused(code, err, str(tmp_path / f"pai_{table}_table.csv"), where)


def test_the_good_tables_and_trace_are_read(tmp_path: Path, capsys: Any) -> None:
    """The good rows the cases above spoil are read (each case fails for its own reason)."""
    _, params = _pai(tmp_path, {})
    code, _, err = generate(capsys, tmp_path, "ddlwmp", *params)
    assert code == 0 and err == "", err
    saved = json.loads((tmp_path / "out.json").read_text())
    assert [j["group"] for j in saved["jobs"]] == ["g1", "g2"]
    trace = tmp_path / "t.trace"
    trace.write_bytes(text(*LINES))
    (tmp_path / "isolated_throughputs.json").write_text(json.dumps(TPUT))
    for family in FAMILIES:
        code, _, err = generate(capsys, tmp_path, family, f"trace={trace}")
        assert code == 0 and err == "", err


def test_the_trace_limits_are_the_compact_forms() -> None:
    from dlsched.models.ddlwmp.instance import LIMITS as DDLWMP

    assert LIMITS["time"] == DDLWMP["release"] and LIMITS["steps"] == DDLWMP["iterations"]


# --- skip_bad_rows=true ---------------------------------------------------------------------

BAD_GAVEL = (
    text(
        LINES[0],
        line(arrival="nan"),  # bad number
        LINES[1],
        LINES[0],  # duplicate
        line(job_type="Nope"),  # unknown job
        LINES[2],
        LINES[1].rsplit("\t", 1)[0],  # wrong number of fields
    )
    + b"A3C\tc\t\xff\t1\t10\t0\t1\n"
    + LINES[2][:12].encode()
)  # not UTF-8; cut short
GAVEL_SKIPPED = (
    "skipped 6 bad rows (skip_bad_rows=true): t.trace: 1 bad number, 1 cut short, "
    "1 duplicate, 1 not UTF-8, 1 unknown job, 1 wrong number of fields"
)


@pytest.mark.parametrize("family", FAMILIES)
def test_skip_bad_rows_skips_and_counts_them(tmp_path: Path, capsys: Any, family: str) -> None:
    trace = tmp_path / "t.trace"
    trace.write_bytes(BAD_GAVEL)
    (tmp_path / "isolated_throughputs.json").write_text(json.dumps(TPUT))
    code, _, err = generate(capsys, tmp_path, family, f"trace={trace}")
    refused(code, err, str(trace), "line 2, column arrival")  # the first bad row, by default
    code, _, err = generate(capsys, tmp_path, family, f"trace={trace}", "skip_bad_rows=false")
    refused(code, err, "line 2, column arrival")
    code, _, err = generate(capsys, tmp_path, family, f"trace={trace}", "skip_bad_rows=true")
    assert code == 0, err
    assert f"dlsched: {GAVEL_SKIPPED}\n" in err and err.count("skipped") == 1
    saved = json.loads((tmp_path / "out.json").read_text())
    assert len(saved["jobs"]) == 3 and saved["description"].endswith(GAVEL_SKIPPED)


def test_skip_bad_rows_in_pai_tables(tmp_path: Path, capsys: Any) -> None:
    jobs = text(
        JOBS[0],
        _job(1, end_time="1e300"),  # bad number
        _job(0),  # duplicate
        "j3,i3,u3,Terminated,100.0,50.0",  # its task row bad (and a negative duration)
        "j4,i4,u4,Terminated,100.0,200.0",  # its task launched at 300
        "j5,i5,u5,Terminated,100.0,200.0",  # its only task row bad: no task left
        "j6,i6,u6,Terminated,100.0,400.0",
    )
    tasks = text(
        *TASKS,
        "j3,worker,1.0,Terminated,100.0,50.0,600,29,100,V100",  # ends before it starts
        "j4,worker,1.0,Terminated,300.0,400.0,600,29,100,V100",
        "j5,worker,nan,Terminated,100.0,200.0,600,29,100,V100",  # bad number
        "j6,worker,1.0,Terminated,100.0,400.0,600,29,100,V100",
    )
    _, params = _pai(tmp_path, {"job": jobs, "task": tasks})
    code, _, err = generate(capsys, tmp_path, "ddlwmp", *params)
    refused(code, err, "pai_task_table.csv", "line 3, column end_time")
    code, _, err = generate(capsys, tmp_path, "ddlwmp", *params, "skip_bad_rows=true")
    assert code == 0, err
    summary = (
        "skipped 7 bad rows (skip_bad_rows=true): pai_job_table.csv: 1 bad number, "
        "1 duplicate, 1 inconsistent times, 2 of a bad task row; pai_task_table.csv: "
        "1 bad number, 1 inconsistent times"
    )
    assert summary in err, err
    saved = json.loads((tmp_path / "out.json").read_text())
    assert [j["user"] for j in saved["jobs"]] == ["u1", "u6"]
    assert saved["description"].endswith(summary)


def test_skip_bad_rows_in_a_manifest_and_a_bad_flag(tmp_path: Path, capsys: Any) -> None:
    from dlsched.instances import load

    trace = tmp_path / "t.trace"
    trace.write_bytes(BAD_GAVEL)
    (tmp_path / "isolated_throughputs.json").write_text(json.dumps(TPUT))
    cluster = {"servers": 2, "gpus_per_server": 8, "inter_gbps": 10, "intra_gbps": 2400}
    for family in FAMILIES:
        spec: dict[str, Any] = {"family": family, "name": "m"}
        spec["trace"] = {"path": "t.trace", "skip_bad_rows": True}
        if family == "ddlwmp":
            spec["cluster"] = cluster
        (tmp_path / "m.json").write_text(json.dumps(spec))
        inst = load(tmp_path / "m.json")
        assert inst.num_jobs == 3 and GAVEL_SKIPPED in capsys.readouterr().err
        spec["trace"]["skip_bad_rows"] = "yes"
        (tmp_path / "m.json").write_text(json.dumps(spec))
        code, _, err = run(capsys, "solve", str(tmp_path / "m.json"), "--method", "x")
        refused(code, err, "m.json", "trace.skip_bad_rows", "expected true or false")
        code, _, err = generate(capsys, tmp_path, family, f"trace={trace}", "skip_bad_rows=1")
        refused(code, err, "skip_bad_rows", "expected true or false")


def test_solve_reads_a_hostile_trace_in_place_of_an_instance(tmp_path: Path, capsys: Any) -> None:
    trace = tmp_path / "t.trace"
    trace.write_bytes(text(LINES[0], line(arrival="1e308")))
    (tmp_path / "isolated_throughputs.json").write_text(json.dumps(TPUT))
    for ref in (str(trace), f"hare:{trace}", f"elastic:{trace}"):
        code, _, err = run(capsys, "solve", ref, "--method", "fifo")
        refused(code, err, str(trace), "line 2, column arrival", "1e+12")


# --- a few in a subprocess: the installed command, end to end -------------------------------


@pytest.mark.parametrize(
    ("family", "data", "where"),
    [
        ("ddlwmp", text(LINES[0], line(arrival="1e308")), "line 2, column arrival"),
        ("hare", text(line(total_steps="1" + "0" * 400)), "line 1, column total_steps"),
        ("elastic", b"\xef\xbb\xbf" + text(*LINES), "line 1, column job_type"),
    ],
)
def test_the_command_exits_2_with_one_line(
    tmp_path: Path, family: str, data: bytes, where: str
) -> None:
    trace = tmp_path / "t.trace"
    trace.write_bytes(data)
    (tmp_path / "isolated_throughputs.json").write_text(json.dumps(TPUT))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    argv = [sys.executable, "-m", "dlsched.cli", "solve", f"{family}:{trace}", "--method", "x"]
    got = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=300, check=False)
    assert got.returncode == 2 and "Traceback" not in got.stderr
    refused(got.returncode, got.stderr, str(trace), where)


# --- the same values in ddlwmp's compact and Parquet forms: refused the same way -------------


@pytest.mark.parametrize(
    ("column", "value", "form"),
    [
        ("release", 1e308, "compact"),
        ("release", -1.0, "compact"),
        ("iterations", 10**400, "compact"),
        ("release", math.nan, "parquet"),
        ("iterations", 10**13, "parquet"),
    ],
)
def test_the_compact_and_parquet_forms_refuse_them_too(
    tmp_path: Path, capsys: Any, column: str, value: Any, form: str
) -> None:
    from dataclasses import replace

    from dlsched.instances import dumps, load, save

    trace = tmp_path / "t.trace"
    trace.write_bytes(text(*LINES))
    (tmp_path / "isolated_throughputs.json").write_text(json.dumps(TPUT))
    inst = load(str(trace))
    jobs = (replace(inst.jobs[0], **{column: value}), *inst.jobs[1:])
    bad = replace(inst, jobs=jobs)
    path = tmp_path / f"w.{'json' if form == 'compact' else 'parquet'}"
    if form == "compact":
        path.write_text(dumps(bad, "compact"))
    else:
        save(bad, path, "parquet")
    code, _, err = run(capsys, "solve", str(path), "--method", "a-srpt")
    refused(code, err, str(path), f"jobs.{column}[0]")
