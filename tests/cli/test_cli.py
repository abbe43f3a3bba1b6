"""The command line: JSON output, bad input handling, generation."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

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
        "--gpus",
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
        (["generate", "placement", "--jobs", "5", "--gpus", "2", "-o", "x.json"], "--gpus"),
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
        capsys, "generate", "placement", "--jobs", "3", "--gpus", "2", "-o", str(target)
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
        "--gpus",
        "4",
        "--methods",
        "has,optimus-lb",
        "--processes",
        "0",
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


@pytest.mark.parametrize(
    "argv",
    [
        ["generate", "hare", "--jobs", "3", "--workers", "2", "-o", "{tmp}/h.json"],
        ["sweep", "hare", "--count", "1", "--jobs", "2", "--workers", "2", "--methods", "hare",
         "-o", "{tmp}/s.jsonl"],
        ["verify", "002-thm4", "--count", "1", "--workers", "0", "-o", "{tmp}/v"],
        ["verify", "002-thm4", "--count", "1", "-o", "{tmp}/v", "--workers"],
    ],
)  # fmt: skip
def test_the_old_workers_option_ends_in_one_line_naming_the_new_ones(capsys, tmp_path, argv):
    """--workers meant the cluster size in generate and sweep but Dask processes in verify: it
    is refused everywhere (with or without a value), nothing run or written."""
    code, out, err = run(capsys, *[a.replace("{tmp}", str(tmp_path)) for a in argv])
    assert code == 2 and out == "" and not list(tmp_path.iterdir())
    if argv[0] == "generate":  # no --processes there
        assert err == "dlsched generate: error: --workers is now --gpus (the cluster size)\n"
    else:
        assert err == (
            f"dlsched {argv[0]}: error: --workers is now --gpus (the cluster size); "
            "--processes is the number of Dask processes\n"
        )


@pytest.mark.parametrize(
    "argv",
    [
        ["solve", "hare/toy-2gpu", "--method", "hare", "--workers", "2"],
        ["solve", "hare/toy-2gpu", "--workers", "--method", "hare"],
        ["compare", "hare/toy-2gpu", "--methods", "hare", "--workers", "2"],
        ["methods", "hare", "--workers", "2"],
        ["instances", "list", "--workers", "2"],
        ["instances", "show", "hare/toy-2gpu", "--workers"],
        ["demo", "--workers", "2"],
    ],
)
def test_the_old_workers_option_is_refused_by_the_commands_without_gpus(capsys, argv):
    """Commands with neither --gpus nor --processes answer --workers with the same kind of
    line (not argparse's "unrecognized arguments"), before anything runs."""
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert err.startswith(f"dlsched {' '.join(argv[: 2 if argv[0] == 'instances' else 1])}: ")
    assert "--workers is no more" in err and "--gpus" in err and "--processes" in err


@pytest.mark.parametrize(
    "argv",
    [
        ["solve", "hare/toy-2gpu", "--method", "hare", "--processes", "2"],
        ["compare", "hare/toy-2gpu", "--methods", "hare", "--processes", "0"],
        ["generate", "hare", "--jobs", "2", "--gpus", "2", "--processes", "2", "-o", "{tmp}/g"],
        ["demo", "--processes"],
    ],
)
def test_processes_in_a_command_that_runs_here_is_one_line(capsys, tmp_path, argv) -> None:
    code, out, err = run(capsys, *[a.replace("{tmp}", str(tmp_path)) for a in argv])
    assert code == 2 and out == "" and not list(tmp_path.iterdir())
    assert err == (
        f"dlsched {argv[0]}: error: --processes is an option of sweep and verify; this command "
        "runs in this process\n"
    )


def test_verify_list_and_a_bad_option_import_no_solver_nor_pyomo(tmp_path) -> None:
    """``verify --list`` and an option error answer before any solver, Pyomo, SciPy or pandas
    is imported (each family's theorems are listed without them); the list is the registry's."""
    from dlsched.verify import registry

    heavy = ("pyomo", "scipy", "ortools", "highspy", "pandas", "matplotlib", "dask")
    code = (
        "import sys; from dlsched.cli import main; c = main(sys.argv[1:]); "
        f"print(sorted({{m.split('.')[0] for m in sys.modules}} & set({heavy!r})), c)"
    )
    for argv in (["--list"], ["--budget", "5", "-o", str(tmp_path / "v")], ["nothm"],
                 ["-o", str(tmp_path / "v"), "--count", "0"]):  # fmt: skip
        done = subprocess.run(
            [sys.executable, "-c", code, "verify", *argv], capture_output=True, text=True
        )
        assert done.stdout.splitlines()[-1] == ("[] 0" if argv == ["--list"] else "[] 2"), (
            argv, done.stdout, done.stderr,
        )  # fmt: skip
        if argv == ["--list"]:
            listed = [line.split()[0] for line in done.stdout.splitlines()[:-1]]
            assert listed == list(registry())
    assert not list(tmp_path.iterdir())


LONG = "a" * 300
GEN_HARE = ["generate", "hare", "--jobs", "3", "--gpus", "2", "-o", "{tmp}/h.json"]
GEN_PLACEMENT = ["generate", "placement", "--jobs", "3", "--gpus", "5", "-o", "{tmp}/p.json"]
SOLVE_TOY = ["solve", "hare/toy-2gpu", "--method", "exact"]
SWEEP = ["sweep", "hare", "--jobs", "2", "--gpus", "2", "--methods", "hare"]

#: (command line, fragment of the error line); "{tmp}" is a fresh folder.
BAD_COMMAND_LINES = [
    (["methods", "hare.gantt"], "family"),
    (["methods", "../x"], "family"),
    ([*GEN_HARE, "--param", "foo=1"], "foo"),
    ([*GEN_HARE, "--param", "arrival_span=-5"], "arrival_span"),
    ([*GEN_HARE, "--param", "arrival_span=NaN"], "arrival_span"),
    ([*GEN_HARE, "--param", "rounds=nan"], "rounds"),
    ([*GEN_HARE, "--param", "rounds=[3,1]"], "rounds"),
    ([*GEN_HARE, "--param", "tasks=[0,2]"], "tasks"),
    ([*GEN_HARE, "--param", "tasks=[1,1e30]"], "tasks"),
    ([*GEN_HARE, "--param", "decimals=1.5"], "decimals"),
    ([*GEN_PLACEMENT, "--param", "foo=1"], "foo"),
    ([*GEN_PLACEMENT, "--param", "noise=NaN"], "noise"),
    ([*GEN_PLACEMENT, "--param", "noise=nan"], "noise"),
    ([*GEN_PLACEMENT, "--param", "gpus_per_node=1.5"], "gpus_per_node"),
    ([*GEN_PLACEMENT, "--param", "inter_node_gbps=-1"], "inter_node_gbps"),
    ([*GEN_PLACEMENT, "--param", "layout=ring"], "layout"),
    ([*GEN_PLACEMENT, "--param", "name=true"], "name"),
    (["generate", "placement", "--jobs", "2000", "--gpus", "2000", "-o", "x.json"], "--jobs"),
    (["generate", "hare", "--jobs", "0", "--gpus", "2", "-o", "{tmp}/h.json"], "--jobs"),
    (["generate", "hare", "--jobs", "3", "--gpus", "-1", "-o", "{tmp}/h.json"], "--gpus"),
    ([*GEN_HARE, "--seed", "-1"], "--seed"),
    (["generate", "hare", "--jobs", "3", "--gpus", "2", "-o", "{tmp}/" + LONG], "-o"),
    (["generate", "hare", "--jobs", "3", "--gpus", "2", "-o", "{tmp}/no/h.json"], "-o"),
    ([*SOLVE_TOY, "--plot", "{tmp}/missing/g.png"], "--plot"),
    ([*SOLVE_TOY, "--plot", "{tmp}/g.pdfx"], "pdfx"),
    ([*SOLVE_TOY, "--plot", "{tmp}"], "--plot"),
    ([*SOLVE_TOY, "--plot", "{tmp}/" + LONG + ".png"], "--plot"),
    (["solve", LONG, "--method", "exact"], "INSTANCE"),
    (["solve", "placement/" + LONG, "--method", "exact"], "INSTANCE"),
    (["instances", "show", LONG], "INSTANCE"),
    ([*SOLVE_TOY, "--time-limit", "1e21"], "--time-limit"),
    ([*SOLVE_TOY, "--time-limit", "inf"], "--time-limit"),
    ([*SOLVE_TOY, "--threads", "0"], "--threads"),
    ([*SOLVE_TOY, "--threads", "-3"], "--threads"),
    ([*SOLVE_TOY, "--threads", "100000"], "--threads"),
    ([*SOLVE_TOY, "--seed", "-1"], "--seed"),
    ([*SOLVE_TOY, "--seed", str(2**40)], "--seed"),
    (["compare", "hare/toy-2gpu", "--methods", "hare", "--time-limit", "1e21"], "--time-limit"),
    ([*SWEEP, "--count", "0", "-o", "{tmp}/s.jsonl"], "--count"),
    ([*SWEEP, "--count", "1", "--first-seed", "-2", "-o", "{tmp}/s.jsonl"], "--first-seed"),
    ([*SWEEP, "--count", "1", "-o", "{tmp}/missing/s.jsonl"], "-o"),
    (["verify", "000-has", "--task-seconds", "-1", "-o", "{tmp}/v"], "--task-seconds"),
]


@pytest.mark.parametrize(("argv", "fragment"), BAD_COMMAND_LINES)
def test_bad_command_lines_exit_2_with_one_error_line(capsys, tmp_path, argv, fragment) -> None:
    code, _, err = run(capsys, *(a.replace("{tmp}", str(tmp_path)) for a in argv))
    lines = err.strip().splitlines()
    assert code == 2 and "Traceback" not in err
    assert len(lines) == 1 and lines[0].startswith("dlsched") and ": error: " in lines[0]
    assert fragment in lines[-1] and len(lines[-1]) < 300
    assert not list(tmp_path.iterdir()), "nothing is written on bad input"


def test_plot_path_is_checked_before_solving(capsys, tmp_path, monkeypatch) -> None:
    import dlsched.models

    def never(*_args: object, **_kw: object) -> None:
        raise AssertionError("solved before the --plot path was checked")

    monkeypatch.setattr(dlsched.models, "run_method", never)
    for plot in (tmp_path / "missing" / "g.png", tmp_path / "g.pdfx"):
        code, _, err = run(capsys, *SOLVE_TOY, "--plot", str(plot))
        assert code == 2 and "--plot" in err


def test_a_failing_plot_keeps_the_printed_result(capsys, tmp_path) -> None:
    # A family without a plot is refused before solving (test_cli_qa); a method that returns
    # no schedule can only fail once solved, and its result is printed first.
    argv = ["solve", "hare/toy-2gpu", "--method", "relaxation", "--plot"]
    code, out, err = run(capsys, *argv, str(tmp_path / "p.png"))
    assert code == 2 and "no schedule" in err
    assert "method     relaxation" in out and "  bound    11.5" in out


def test_solve_text_prints_no_none_and_gap_in_percent(capsys) -> None:
    code, out, _ = run(capsys, "solve", "placement/liu2024-motivating", "--method", "has")
    assert code == 0 and "None" not in out
    assert "objective  11225.837\n  bound    none proved\n  gap      -\n" in out
    code, out, _ = run(capsys, "solve", "placement/liu2024-motivating", "--method", "exact")
    assert "objective  10592.029\n  bound    10592.029\n  gap      0.00%\n" in out


def test_solve_text_labels_the_flow_times_bound_apart_from_the_objectives(capsys) -> None:
    """An online method proves no bound on its objective but one on its flow time: each
    number has its bound and gap under it, never one line's bound beside the other's."""
    code, out, _ = run(capsys, "solve", "ddlwmp/toy-2x4", "--method", "spjf", "--bound")
    lines = out.splitlines()
    at = lines.index(next(line for line in lines if line.startswith("objective  ")))
    assert lines[at + 1 : at + 3] == ["  bound    none proved", "  gap      -"]
    flow = lines[at + 3]
    assert flow.startswith("flow time  ") and flow.endswith(" s")
    assert lines[at + 4].startswith("  bound    ") and lines[at + 4].endswith(" s")
    assert lines[at + 5].startswith("  gap      ") and lines[at + 5].endswith("%")
    assert not any(line.startswith("bound") for line in lines)


def test_solve_text_prints_the_solution_one_readable_line_per_job(capsys) -> None:
    code, out, _ = run(capsys, "solve", "placement/liu2024-motivating", "--method", "has")
    tail = out.split("solution   2 jobs\n", 1)[1].splitlines()
    assert [line.split()[0] for line in tail] == ["ResNet-18", "VGG-19"]
    assert "{" not in out and "[" not in out and "'" not in out  # no Python repr
    code, out, _ = run(capsys, "solve", "elastic/intro-cifar10", "--method", "fifo")
    job = next(line for line in out.splitlines() if line.startswith("  cifar10-a "))
    assert "start 0, duration 10, end 10" in job and "workers {s1: 1, s2: 1}" in job
    assert "'" not in job and "job cifar10-a" not in job


def _row(method: str, value_kind: str, objective: float | None, ratio: float | None):
    from dlsched.bounds import Comparison

    return Comparison(
        instance="x",
        instance_hash="0",
        family="hare",
        method=method,
        status="optimal",
        objective=objective,
        wall_time=0.5,
        reference_method="exact",
        reference=20.0,
        reference_kind="optimum",
        value_kind=value_kind,
        ratio=ratio,
        gap=None if ratio is None else ratio - 1,
        guarantee_name=None,
        guarantee=float("nan"),
        holds=None,
    )


def test_table_shows_the_bound_of_a_relaxation_and_no_nan() -> None:
    from dlsched.bounds import format_table

    rows = [_row("exact", "objective", 20.0, 1.0), _row("relaxation", "bound", None, 0.8)]
    text = format_table(rows)
    assert "NaN" not in text and "None" not in text and "nan" not in text
    header, exact, relax = text.splitlines()
    assert header.split()[:3] == ["method", "status", "value"]
    assert relax.split()[:4] == ["relaxation", "optimal", "16", "bound"]


def test_demo_prints_no_nan(capsys, monkeypatch) -> None:
    from dlsched import demo

    monkeypatch.setattr(demo.families, "names", lambda: ["hare"])
    code, out, _ = run(capsys, "demo", "--quick")
    assert code == 0 and "NaN" not in out and "None" not in out
    relax = next(line for line in out.splitlines() if line.strip().startswith("relaxation"))
    assert relax.split()[2] == "11.5"  # toy-2gpu's LP bound, shown as the value


def test_gantt_has_a_legend_and_the_status_in_its_title(tmp_path) -> None:
    from types import SimpleNamespace

    from dlsched.instances import load
    from dlsched.models import run_method
    from dlsched.models.hare.gantt import gantt
    from dlsched.plotting import outcome_title

    inst = load("hare/toy-2gpu")
    out = run_method(inst, "hare")
    ax = gantt(inst, out.solution)
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert {"j1", "j2"} <= set(labels) and "synchronization $T^s$" in labels
    cut = SimpleNamespace(method="exact", status="time_limit", objective=13.5, bound=9.0, gap=1 / 3)
    title = outcome_title(inst, cut)
    assert "time_limit" in title and "13.5" in title and "33.33%" in title
    done = SimpleNamespace(method="exact", status="optimal", objective=13.5, bound=13.5, gap=0.0)
    assert outcome_title(inst, done).endswith("optimal, objective 13.5")


def test_a_closed_pipe_ends_quietly(capsys, monkeypatch) -> None:
    import os

    read, write = os.pipe()
    os.close(read)
    stream = os.fdopen(write, "w", buffering=1)
    monkeypatch.setattr(sys, "stdout", stream)
    try:
        code = main(["instances", "list"])
    finally:
        stream.close()
    assert code == 141 and "Traceback" not in capsys.readouterr().err


def test_solve_says_a_bound_only_method_gives_a_bound(capsys) -> None:
    code, out, _ = run(capsys, "solve", "hare/toy-2gpu", "--method", "relaxation")
    assert code == 0
    status = next(line for line in out.splitlines() if line.startswith("status"))
    assert "no schedule" in status and status.split()[1] == "bound"
    code, out, _ = run(capsys, "solve", "hare/toy-2gpu", "--method", "exact")
    status = next(line for line in out.splitlines() if line.startswith("status"))
    assert status.split()[1:] == ["optimal"]  # a solved instance says only that


@pytest.mark.parametrize(
    ("family", "size", "methods"),
    [
        ("hare", ("--jobs", "12", "--gpus", "8"), ("hlas", "hlas-p", "2d-las", "online-fifo")),
        ("elastic", ("--jobs", "10", "--gpus", "4"), ("a-online",)),
    ],
)
def test_a_heuristic_imports_no_solver_nor_compiler(tmp_path, family, size, methods) -> None:
    """``dlsched solve`` of an online heuristic, its schedule checked and printed, loads no
    solver (Pyomo, HiGHS, OR-Tools, SciPy), no compiler (numba) and no pandas or plotting
    library: a heuristic costs its rule, its check and its report."""
    heavy = ("pyomo", "highspy", "ortools", "scipy", "numba", "pandas", "matplotlib", "dask")
    path = tmp_path / "i.json"
    assert main(["generate", family, *size, "--seed", "1", "-o", str(path)]) == 0
    code = (
        "import sys; from dlsched.cli import main; c = main(sys.argv[1:]); "
        f"print(sorted({{m.split('.')[0] for m in sys.modules}} & set({heavy!r})), c)"
    )
    for method in methods:
        done = subprocess.run(
            [sys.executable, "-c", code, "solve", str(path), "--method", method],
            capture_output=True,
            text=True,
        )
        assert done.stdout.splitlines()[-1] == "[] 0", (method, done.stdout[-300:], done.stderr)


def _handed_options(monkeypatch) -> list[Any]:
    """Record the options every run of a method is handed (then run it)."""
    import dlsched.models

    real, handed = dlsched.models.run_method, []

    def spy(instance: Any, method: str, options: Any = None) -> Any:
        handed.append(options)
        return real(instance, method, options)

    monkeypatch.setattr(dlsched.models, "run_method", spy)
    return handed


def test_solve_counts_its_time_limit_from_the_start_it_is_given(capsys, monkeypatch) -> None:
    handed = _handed_options(monkeypatch)
    argv = ["solve", "hare/toy-2gpu", "--method", "exact", "--time-limit", "2"]
    assert main(argv, start=-1e6) == 0  # its process started long before: nothing is left
    (options,) = handed
    assert options.start == -1e6 and options.started().deadline.start == -1e6
    assert options.started().deadline.passed()
    fields = dict(line.split(None, 1) for line in capsys.readouterr().out.splitlines())
    assert float(fields["wall"].split()[1]) > 1e6  # its time counts from the start given
    assert main(argv[:3] + ["hare", "--time-limit", "2"]) == 0
    assert handed[-1].start is None  # arguments handed in: from when the method starts


def test_the_process_command_line_counts_from_the_process_start(capsys, monkeypatch) -> None:
    from dlsched import cli
    from dlsched.solvers import deadline

    handed = _handed_options(monkeypatch)
    monkeypatch.setattr(deadline, "process_start", lambda: 1234.5)
    monkeypatch.setattr(sys, "argv", ["dlsched", "solve", "hare/toy-2gpu", "--method", "hare"])
    ended: list[int] = []
    monkeypatch.setattr(cli, "end_process", ended.append)  # the process ends without teardown
    assert main() == 0
    assert [o.start for o in handed] == [1234.5]
    assert handed[0].started().deadline.start == 1234.5
    assert ended == [0] and "status     feasible" in capsys.readouterr().out
    assert main(sys.argv[1:]) == 0 and ended == [0]  # arguments handed in: the caller goes on
