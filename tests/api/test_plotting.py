"""Pictures of comparisons: ``dlsched compare --plot`` (a bar per method on one instance) and
:func:`dlsched.plot_ratios` against instance size."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import dlsched

CLI = [sys.executable, "-m", "dlsched.cli"]


def test_one_instance_is_a_bar_per_method_with_its_guarantee() -> None:
    frame = dlsched.compare("hare/toy-2gpu", ["hare", "relaxation"], time_limit=30)
    ax = dlsched.plot_ratios(frame)
    heights = [round(b.get_height(), 6) for b in ax.patches]
    expected = frame.loc[frame.method != "exact", "ratio"].round(6).tolist()
    assert heights == expected
    assert [t.get_text() for t in ax.get_xticklabels()] == ["hare", "relaxation"]
    marks = ax.collections[0].get_offsets()  # the guarantee of hare alone (Theorem 4)
    assert marks.tolist() == [[0.0, frame.loc[frame.method == "hare", "guarantee"].item()]]


def test_several_sizes_are_lines_through_the_mean_ratio() -> None:
    frame = pd.DataFrame(
        {
            "method": ["exact", "a", "a", "a", "exact", "a"],
            "reference_method": "exact",
            "jobs": [2, 2, 2, 2, 5, 5],
            "ratio": [1.0, 1.0, 2.0, 3.0, 1.0, 1.5],
        }
    )
    ax = dlsched.plot_ratios(frame)
    assert not ax.patches
    line = ax.get_lines()[1]
    assert line.get_xdata().tolist() == [2, 5] and line.get_ydata().tolist() == [2.0, 1.5]


def test_compare_plot_writes_the_picture(tmp_path: Path) -> None:
    out = tmp_path / "ratios.png"
    argv = [*CLI, "compare", "hare/toy-2gpu", "--methods", "hare,gavel-fifo", "--plot", str(out)]
    subprocess.run(argv, check=True, capture_output=True, cwd=tmp_path)
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("name", ["ratios.nope", "missing/ratios.png"])
def test_a_bad_plot_path_is_one_line_before_anything_runs(tmp_path: Path, name: str) -> None:
    argv = [*CLI, "compare", "hare/toy-2gpu", "--methods", "hare", "--plot", str(tmp_path / name)]
    got = subprocess.run(argv, capture_output=True, text=True, cwd=tmp_path)
    assert got.returncode == 2 and "--plot" in got.stderr
    assert len(got.stderr.strip().splitlines()) == 1 and not got.stdout


def test_sweep_plot_draws_every_record_of_the_log_against_jobs(tmp_path: Path) -> None:
    """Two sweeps of different sizes into one log; the second's --plot draws both sizes."""
    from dlsched.bounds.log import read_records

    log, out = tmp_path / "sweep.jsonl", tmp_path / "sweep.png"
    for jobs in (2, 3):
        argv = [*CLI, "sweep", "hare", "--count", "2", "--jobs", str(jobs), "--gpus", "2"]
        argv += ["--methods", "greedy", "--processes", "0", "--quiet", "-o", str(log)]
        subprocess.run([*argv, "--plot", str(out)], check=True, capture_output=True, cwd=tmp_path)
    records = read_records(log)
    assert sorted({r["jobs"] for r in records}) == [2, 3]
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    frame = pd.DataFrame(records)
    ax = dlsched.plot_ratios(frame)
    mean = frame[frame.method == "greedy"].groupby("jobs")["ratio"].mean()
    assert ax.get_lines()[1].get_ydata().tolist() == pytest.approx(mean.tolist())
