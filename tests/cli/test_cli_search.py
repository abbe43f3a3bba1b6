"""``dlsched search``: a shipped heuristic against a deliberately low guarantee, its worst
instance reproduced by ``dlsched compare``, the rerun into the same folder resumed, and every
bad option answered on one line with status 2 before any work."""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path

import pytest
from cli_run import one_line, run
from fake_clock import FakeClock

from dlsched.verify import search as search_module
from dlsched.verify.search import SEARCH_LOG, SearchOptions, read_search_log

FIELDS = {"worst_ratio", "sample_worst_ratio", "solves", "seconds", "violated", "instance"}


def on_a_fake_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """The command's budget read on a clock that moves a tenth of a second at each read."""
    fake = partial(SearchOptions, clock=FakeClock(step=0.1))
    monkeypatch.setattr(search_module, "SearchOptions", fake)


def test_search_writes_its_row_and_a_worst_instance_compare_reproduces(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    d = tmp_path / "out"
    argv = ["search", "hare", "--method", "greedy", "--budget", "20", "--guarantee", "1.0",
            "--processes", "0", "--quiet", "-o", str(d)]  # fmt: skip
    on_a_fake_clock(monkeypatch)
    code, out, err = run(capsys, *argv)
    assert code == 0, err
    (row,) = json.loads((d / "search.json").read_text())
    assert set(row) >= FIELDS and row["method"] == "greedy" and row["solves"] > 0
    assert row["instance"] in out and Path(row["instance"]).is_file()
    code, out, err = run(capsys, "compare", row["instance"], "--methods", "greedy", "--json")
    assert code == 0, err
    (mine,) = [r for r in json.loads(out) if r["method"] == "greedy"]
    assert mine["ratio"] == pytest.approx(row["worst_ratio"], rel=1e-6)
    solved = len(read_search_log(d / SEARCH_LOG))
    on_a_fake_clock(monkeypatch)
    code, out, err = run(capsys, *argv)  # the same folder: resumed, its budget spent already
    assert code == 0, err
    assert len(read_search_log(d / SEARCH_LOG)) == solved
    assert json.loads((d / "search.json").read_text())[0]["solves"] == row["solves"]


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["--method", "nope"], ("--method", "nope")),
        (["--guarantee", "0"], ("--guarantee",)),
        (["--guarantee", "x"], ("--guarantee",)),
        (["--budget", "0"], ("--budget",)),
        (["--processes", "-1"], ("--processes",)),
        (["--workers", "2"], ("--gpus",)),
    ],
)
def test_bad_options_are_one_line_and_status_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, argv: list[str], words: tuple[str, ...]
) -> None:
    given = ["search", "hare", "--method", "greedy", "-o", str(tmp_path / "o")]
    code, _, err = run(capsys, *given, *argv)
    assert code == 2
    one_line(err, *words)
    assert not (tmp_path / "o").exists()


def test_an_unknown_family_or_an_output_that_is_a_file_is_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, _, err = run(capsys, "search", "nofamily", "--method", "greedy", "-o", str(tmp_path))
    assert code == 2
    one_line(err, "nofamily")
    f = tmp_path / "file"
    f.write_text("")
    code, _, err = run(capsys, "search", "hare", "--method", "greedy", "-o", str(f))
    assert code == 2
    one_line(err, "-o", "not a folder")
    code, _, err = run(capsys, "search", "hare", "-o", str(tmp_path / "o"))  # no --method
    assert code == 2
    one_line(err, "--method")
