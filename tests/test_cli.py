"""The command line: JSON output, bad input handling, generation."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from dlsched.cli import main


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_solve_json_has_the_documented_fields(capsys) -> None:
    code, out, _ = run(
        capsys, "solve", "placement/liu2024-motivating", "--method", "exact", "--json"
    )
    assert code == 0
    d = json.loads(out)
    for key in ("method", "status", "objective", "bound", "gap", "wall_time", "solution"):
        assert key in d
    assert d["status"] == "optimal" and round(d["objective"]) == 10592
    assert d["solution"]["jobs"]["ResNet-18"] == ["v100-0", "v100-1"]


def test_solve_by_path_with_category(capsys, tmp_path: Path) -> None:
    code, out, _ = run(
        capsys,
        "generate",
        "placement",
        "--jobs",
        "2",
        "--workers",
        "5",
        "--seed",
        "3",
        "-o",
        str(tmp_path / "g.json"),
    )
    assert code == 0 and (tmp_path / "g.json").exists()
    code, out, _ = run(
        capsys, "solve", str(tmp_path / "g.json"), "--method", "has", "--category", "3,2", "--json"
    )
    d = json.loads(out)
    assert d["details"]["category"] == [3, 2]


def test_lists(capsys) -> None:
    code, out, _ = run(capsys, "instances", "list")
    assert code == 0 and "placement/liu2024-motivating" in out
    code, out, _ = run(capsys, "methods", "placement")
    assert "exact" in out and "jps" in out


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["solve", "nope.json", "--method", "exact"], "no such file"),
        (["solve", "placement/liu2024-motivating", "--method", "magic"], "unknown"),
        (
            ["solve", "placement/liu2024-motivating", "--method", "has", "--category", "9,9"],
            "must sum",
        ),
        (["generate", "placement", "--jobs", "5", "--workers", "2", "-o", "x.json"], "--workers"),
        (["methods", "nofamily"], "family"),
        (
            ["solve", "hare/toy-2gpu", "--method", "exact-cpsat", "--param", "pooled=maybe"],
            "pooled",
        ),
    ],
)
def test_bad_input_exits_2_with_a_message(capsys, argv, fragment) -> None:
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert fragment in err and "Traceback" not in err


def test_bad_file_through_the_real_entry_point(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"family": "placement", "name": "x", "workers": [], "jobs": []}')
    proc = subprocess.run(
        [sys.executable, "-m", "dlsched.cli", "solve", str(bad), "--method", "exact"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2
    assert str(bad) in proc.stderr and "'workers'" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_generate_does_not_clobber_on_error(tmp_path: Path, capsys) -> None:
    target = tmp_path / "keep.json"
    target.write_text("precious")
    code, _, _ = run(
        capsys, "generate", "placement", "--jobs", "3", "--workers", "2", "-o", str(target)
    )
    assert code == 2
    assert target.read_text() == "precious"


def test_cpsat_model_switches_from_the_command_line(capsys) -> None:
    for flags in ("pooled=true", "pooled=false", "subsets=false"):
        argv = ["solve", "hare/toy-2gpu", "--method", "exact-cpsat", "--param", flags, "--json"]
        code, out, _ = run(capsys, *argv)
        d = json.loads(out)
        assert code == 0 and d["status"] == "optimal"
        assert d["objective"] == pytest.approx(13.5)
        if flags == "subsets=false":
            assert d["details"]["subset_bound"] is None


def test_compare_reports_the_guarantee(capsys) -> None:
    code, out, _ = run(
        capsys, "compare", "hare/theorem4-counterexample", "--methods", "relaxation,hare", "--json"
    )
    assert code == 0
    rows = {r["method"]: r for r in json.loads(out)}
    assert rows["exact"]["reference_kind"] == "optimum"
    assert rows["relaxation"]["value_kind"] == "bound" and rows["relaxation"]["ratio"] <= 1
    assert rows["hare"]["guarantee"] == 3.0 and rows["hare"]["holds"] is False


def test_sweep_appends_and_resumes(capsys, tmp_path: Path) -> None:
    log = tmp_path / "s.jsonl"
    argv = [
        "sweep",
        "placement",
        "--count",
        "2",
        "--jobs",
        "2",
        "--workers",
        "4",
        "--methods",
        "has,optimus-lb",
        "-o",
        str(log),
        "--counterexamples",
        str(tmp_path / "cx"),
    ]
    code, out, _ = run(capsys, *argv)
    assert code == 0 and "6 new records" in out
    code, out, _ = run(capsys, *argv)
    assert "0 new records" in out
    assert len(log.read_text().splitlines()) == 6
