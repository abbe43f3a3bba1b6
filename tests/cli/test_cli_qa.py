"""The command line's QA findings: bad options refused before any solve or write, sweep files
never changed by a refused command, pictures checked first, file modes kept, exact theorem
ids, boolean parameters checked, every family folder documented."""

from __future__ import annotations

import json
import os
import shutil
import stat
from pathlib import Path

import pytest
from cli_run import one_line, run

import dlsched.bounds.comparisons
from dlsched import families
from dlsched.bounds import locked_log, repair_tail
from dlsched.cli import main
from dlsched.errors import DlschedError

ROOT = Path(__file__).resolve().parents[2]
HARE_SWEEP = ("sweep", "hare", "--count", "2", "--jobs", "3", "--gpus", "2")


@pytest.fixture
def no_solving(monkeypatch) -> list[str]:
    """Every method run through the bounds module is recorded and refused."""
    calls: list[str] = []

    def refuse(instance, method, options=None):  # type: ignore[no-untyped-def]
        calls.append(method)
        raise AssertionError(f"{method} was run")

    monkeypatch.setattr(dlsched.bounds.comparisons, "run_method", refuse)
    return calls


# --- 1. methods, reference and generator parameters before any solve or write ----------------


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        (("--methods", "bogus"), ("--methods", "'bogus'", "hare")),
        (("--methods", "hare,bogus"), ("--methods", "'bogus'")),
        (("--methods", "hare", "--reference", "bogus"), ("--reference", "'bogus'")),
    ],
)
def test_sweep_refuses_unknown_names_before_touching_the_file(
    capsys, tmp_path: Path, no_solving: list[str], extra: tuple[str, ...], words: tuple[str, ...]
) -> None:
    out = tmp_path / "s.jsonl"
    code, _, err = run(capsys, *HARE_SWEEP, *extra, "-o", str(out), "--time-limit", "5")
    assert code == 2 and no_solving == [] and not out.exists()
    one_line(err, *words)


def test_sweep_refuses_impossible_generator_parameters_without_creating_the_file(
    capsys, tmp_path: Path, no_solving: list[str]
) -> None:
    out = tmp_path / "s.jsonl"
    argv = ("sweep", "placement", "--count", "2", "--jobs", "3", "--gpus", "2")
    code, _, err = run(capsys, *argv, "--methods", "jps", "-o", str(out))
    assert code == 2 and no_solving == [] and not out.exists()
    one_line(err, "--gpus", "2")


def test_sweep_keeps_existing_records_when_refusing_a_method(
    capsys, tmp_path: Path, no_solving: list[str]
) -> None:
    out = tmp_path / "s.jsonl"
    before = b'{"instance_hash": "ab", "method": "exact"}\n'
    out.write_bytes(before)
    code, _, err = run(capsys, *HARE_SWEEP, "--methods", "bogus", "-o", str(out))
    assert code == 2 and out.read_bytes() == before


def test_compare_refuses_an_unknown_method_before_solving(capsys, no_solving: list[str]) -> None:
    code, out, err = run(capsys, "compare", "hare/toy-2gpu", "--methods", "hare,bogus")
    assert code == 2 and no_solving == [] and out == ""
    one_line(err, "--methods", "'bogus'", "hare")
    code, out, err = run(
        capsys, "compare", "hare/toy-2gpu", "--methods", "hare", "--reference", "x"
    )
    assert code == 2 and no_solving == []
    one_line(err, "--reference", "'x'")


# --- 2. a file that is not a sweep file is refused untouched ---------------------------------


@pytest.mark.parametrize(
    "content",
    [
        b"hello world\nsecond",  # a non-record line, then a "torn" one
        json.dumps({"family": "hare", "jobs": ["x" * 1200]}).encode(),  # one JSON line, no \n
        b"not json at all",  # one line, no newline
        b'{"instance_hash": "ab", "method": "exact"}\n{"family": "hare"}',  # whole JSON tail
    ],
)
def test_sweep_refuses_a_file_that_is_not_a_sweep_file_untouched(
    capsys, tmp_path: Path, no_solving: list[str], content: bytes
) -> None:
    out = tmp_path / "txt.jsonl"
    out.write_bytes(content)
    code, _, err = run(capsys, *HARE_SWEEP, "--methods", "hare", "-o", str(out))
    assert code == 2 and out.read_bytes() == content and no_solving == []
    one_line(err, str(out), "not a sweep record")


def test_a_torn_last_line_after_records_is_still_cut(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    good = b'{"instance_hash": "ab", "method": "exact"}\n'
    path.write_bytes(good + b'{"instance_hash": "cd", "meth')
    with locked_log(path) as fd:
        assert repair_tail(path, fd) == good
    assert path.read_bytes() == good


def test_a_whole_last_record_gets_its_newline(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    good = b'{"instance_hash": "ab", "method": "exact"}'
    path.write_bytes(good)
    with locked_log(path) as fd:
        assert repair_tail(path, fd) == good + b"\n"
    assert path.read_bytes() == good + b"\n"


def test_a_bad_line_before_a_torn_one_changes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    content = b'{"instance_hash": "ab", "method": "exact"}\nhello\n{"instance_hash": "c'
    path.write_bytes(content)
    with locked_log(path) as fd, pytest.raises(DlschedError, match=":2: not a sweep record"):
        repair_tail(path, fd)
    assert path.read_bytes() == content


# --- 3 and 4. pictures: formats that work, checked before solving ----------------------------


def test_pgf_without_its_tex_engine_is_refused_on_one_line(
    capsys, tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setattr(shutil, "which", lambda *a, **k: None)
    pic = tmp_path / "x.pgf"
    code, out, err = run(capsys, "solve", "hare/toy-2gpu", "--method", "hare", "--plot", str(pic))
    assert code == 2 and out == "" and not pic.exists()
    one_line(err, "--plot", "pgf")


def test_a_failing_picture_is_one_line_after_the_result(
    capsys, tmp_path: Path, monkeypatch
) -> None:
    fam = families.get("hare")

    def broken(instance, outcome, path):  # type: ignore[no-untyped-def]
        outcome.solution  # noqa: B018  (reads the outcome first, as every family's plot does)
        raise RuntimeError("Failed to process string with tex because latex could not be found")

    monkeypatch.setattr(fam, "plot", broken)
    pic = tmp_path / "x.png"
    code, out, err = run(capsys, "solve", "hare/toy-2gpu", "--method", "hare", "--plot", str(pic))
    assert code == 2 and "status" in out
    one_line(err, "--plot", "latex could not be found")


def test_a_family_without_a_plot_is_refused_before_solving(
    capsys, tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setattr(families.get("placement"), "plots", False)  # every family draws now
    pic = tmp_path / "x.png"
    argv = ("solve", "placement/liu2024-motivating", "--method", "exact", "--plot", str(pic))
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == "" and not pic.exists()
    one_line(err, "--plot", "placement")


@pytest.mark.parametrize(
    ("where", "words"),
    [("/proc/x.png", ("/proc/x.png", "cannot write")), ("", ("--plot", "empty"))],
)
def test_an_unwritable_or_empty_plot_path_is_refused_before_solving(
    capsys, where: str, words: tuple[str, ...]
) -> None:
    if where.startswith("/proc") and not Path("/proc/self").exists():
        pytest.skip("no /proc here")
    code, out, err = run(capsys, "solve", "hare/toy-2gpu", "--method", "hare", "--plot", where)
    assert code == 2 and out == ""
    one_line(err, *words)


def test_a_method_without_a_schedule_fails_to_draw_on_one_line(capsys, tmp_path: Path) -> None:
    pic = tmp_path / "x.png"
    argv = ("solve", "hare/toy-2gpu", "--method", "relaxation", "--plot", str(pic))
    code, out, err = run(capsys, *argv)
    assert code == 2 and "status" in out and not pic.exists()
    one_line(err, "--plot", "no schedule")


# --- 5. file modes ----------------------------------------------------------------------------


def _generate(capsys, path: Path) -> None:
    code, _, err = run(capsys, "generate", "hare", "--jobs", "2", "--gpus", "2", "-o", str(path))
    assert code == 0, err


def test_generate_keeps_the_mode_of_the_file_it_replaces(capsys, tmp_path: Path) -> None:
    path = tmp_path / "g.json"
    for mode in (0o644, 0o640):
        path.write_text("old")
        path.chmod(mode)
        _generate(capsys, path)
        assert stat.S_IMODE(path.stat().st_mode) == mode
        assert json.loads(path.read_text())["family"] == "hare"


def test_a_new_file_honours_the_umask(capsys, tmp_path: Path) -> None:
    for umask in (0o022, 0o077):
        old = os.umask(umask)
        try:
            path = tmp_path / f"new-{umask:o}.json"
            _generate(capsys, path)
        finally:
            os.umask(old)
        assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~umask


# --- 6. theorem ids ---------------------------------------------------------------------------


def test_an_exact_theorem_id_selects_that_theorem_only(capsys) -> None:
    code, out, _ = run(capsys, "verify", "001-thm1", "--list")
    assert code == 0 and [line.split()[0] for line in out.splitlines()] == ["001-thm1"]
    code, out, _ = run(capsys, "verify", "001", "--list")
    assert [line.split()[0] for line in out.splitlines()] == ["001-thm1", "001-thm1-perfect"]


# --- 7. boolean method parameters -------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "param"),
    [("hare", "random_ties=no"), ("exact", "hint=bogus"), ("hare", "random_ties=1")],
)
def test_a_boolean_parameter_takes_only_true_or_false(capsys, method: str, param: str) -> None:
    argv = ("solve", "hare/toy-2gpu", "--method", method, "--param", param)
    code, out, err = run(capsys, *argv)
    name, value = param.split("=")
    assert code == 2 and out == ""
    one_line(err, f"--param {name}", value)


def test_a_boolean_parameter_accepts_true(capsys) -> None:
    argv = ("solve", "hare/toy-2gpu", "--method", "hare", "--param", "random_ties=true", "--json")
    code, out, err = run(capsys, *argv)
    assert code == 0, err
    assert json.loads(out)["method"] == "hare"


# --- 8. docs ----------------------------------------------------------------------------------


@pytest.mark.parametrize("doc", ["README.md", "docs/architecture.md"])
def test_the_layout_lists_every_family_folder(doc: str) -> None:
    text = (ROOT / doc).read_text(encoding="utf-8")
    layout = text[text.index("one folder per family") :][:800]
    for name in families.names():
        assert f"{name}/" in layout, (doc, name)


@pytest.mark.parametrize("command", ["sweep", "verify"])
def test_seeds_past_the_largest_seed_are_refused_before_any_work(command, tmp_path, capsys):
    out = tmp_path / ("s.jsonl" if command == "sweep" else "v")
    args = ["--first-seed", str(2**31 - 1), "--count", "2", "-o", str(out)]
    sweep = ["sweep", "hare", "--jobs", "3", "--gpus", "2", "--methods", "greedy"]
    head = sweep if command == "sweep" else ["verify"]
    assert main([*head, *args]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--count" in err and "2147483648" in err
    assert not out.exists()
