"""The public API (dlsched.api, its calls at the top level): known optima, compare's records
against solve's outcomes, Outcome.plot's bars and to_frame's row, the command line on the same
path, one-line errors, and ``import dlsched`` staying light."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import dlsched
from dlsched import api, families
from dlsched.cli import main
from dlsched.errors import OptionError
from dlsched.plotting import plot_ratios
from dlsched.result import json_safe

TOY = "hare/toy-2gpu"  # optimum 13.5 (its description, and test_hare_exact)
CIFAR = "elastic/intro-cifar10"  # optimum 25 (Section 1 of Zhou et al.)
MOTIVATING = "placement/liu2024-motivating"


@pytest.fixture
def pyplot():
    """pyplot on the Agg backend (off screen), every figure closed afterwards."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    yield plt
    plt.close("all")


def one_line(error: Exception, *words: str) -> None:
    text = str(error)
    assert "\n" not in text, text
    for w in words:
        assert w in text, (w, text)


# --- solve, load, instances, generate, methods ----------------------------------------------


@pytest.mark.parametrize(("name", "optimum"), [(TOY, 13.5), (CIFAR, 25.0)])
def test_solve_gives_the_known_optima(name: str, optimum: float) -> None:
    out = dlsched.solve(name, "exact", time_limit=60)
    assert str(out.status) == "optimal" and out.objective == pytest.approx(optimum)
    assert out.bound == pytest.approx(optimum) and out.gap == pytest.approx(0.0, abs=1e-9)


def test_the_exact_placement_agrees_with_exhaustive_enumeration() -> None:
    exact = dlsched.solve(MOTIVATING, "exact")
    brute = dlsched.solve(MOTIVATING, "exhaustive")  # every one of the S^K assignments
    assert str(exact.status) == str(brute.status) == "optimal"
    assert exact.objective == pytest.approx(brute.objective, rel=1e-9)


def test_load_takes_names_paths_and_instances(tmp_path: Path) -> None:
    inst = dlsched.load(TOY)
    path = tmp_path / "toy.json"
    path.write_text(json.dumps(families.of(inst).to_dict(inst)))
    assert dlsched.load(path) == inst and dlsched.load(str(path)) == inst
    assert dlsched.load(inst) is inst


def test_instances_are_the_bundled_files_by_family() -> None:
    every = dlsched.list_instances()
    assert every == sorted(every) and {TOY, CIFAR, MOTIVATING} <= set(every)
    by_family = [dlsched.list_instances(f) for f in families.names()]
    assert sorted(n for names in by_family for n in names) == every
    for family, names in zip(families.names(), by_family, strict=True):
        assert names and all(dlsched.load(n).family == family for n in names)


def test_generate_draws_the_size_asked_reproducibly() -> None:
    a = dlsched.generate("hare", jobs=3, gpus=2, seed=1)
    assert (a.num_jobs, a.num_gpus) == (3, 2)
    with pytest.raises(OptionError, match="option workers = 2: is now gpus="):
        dlsched.generate("hare", jobs=3, workers=2, seed=1)  # the former keyword
    assert dlsched.generate("hare", 3, 2, seed=1) == a != dlsched.generate("hare", 3, 2, seed=2)
    p = dlsched.generate("placement", 3, 5, seed=0, gpus_per_node=5)
    assert (p.num_jobs, p.num_workers, len(p.nodes)) == (3, 5, 1)


def test_methods_is_a_table_of_each_familys_methods() -> None:
    for family in families.names():
        table = dlsched.methods(family)
        assert list(table.columns) == ["name", "summary", "exact", "params", "rounds", "guarantee"]
        assert table.name.is_unique and "exact" in set(table.name[table.exact])
        assert all(isinstance(p, tuple) for p in table.params)
    placement = dlsched.methods("placement").set_index("name")
    assert placement.index[placement.exact].tolist() == ["exact", "exhaustive"]
    assert {"alpha", "beta", "samples"} <= set(placement.loc["jps", "params"])


# --- compare, checked against solve ---------------------------------------------------------


def test_compare_rows_are_solves_outcomes_against_the_optimum() -> None:
    frame = dlsched.compare(TOY, ["hare", "greedy", "relaxation"], time_limit=60)
    assert frame.method.tolist() == ["exact", "hare", "greedy", "relaxation"]
    assert (frame.reference_kind == "optimum").all() and (frame.reference == 13.5).all()
    assert (frame.jobs == 2).all()
    rows = frame.set_index("method")
    for method in ("hare", "greedy"):
        out = dlsched.solve(TOY, method)
        assert rows.loc[method, "objective"] == pytest.approx(out.objective)
        assert rows.loc[method, "ratio"] == pytest.approx(out.objective / 13.5)
        assert rows.loc[method, "ratio"] >= 1
    bound = dlsched.solve(TOY, "relaxation").bound
    assert rows.loc["relaxation", "value_kind"] == "bound"
    assert rows.loc["relaxation", "ratio"] == pytest.approx(bound / 13.5) and bound <= 13.5


def test_a_heuristic_equal_to_the_optimum_is_feasible_in_compare_as_in_solve() -> None:
    """a-maxweight reaches the optimum 25 of intro-cifar10 without proving it: its ratio is 1
    and its status feasible in compare, as in solve (only its own proof makes it optimal)."""
    rows = dlsched.compare(CIFAR, "a-maxweight", time_limit=60).set_index("method")
    alone = dlsched.solve(CIFAR, "a-maxweight")
    assert rows.loc["a-maxweight", "ratio"] == pytest.approx(1.0)
    assert rows.loc["a-maxweight", "status"] == str(alone.status) == "feasible"
    assert alone.bound is None and rows.loc["exact", "status"] == "optimal"


def test_the_command_lines_compare_prints_the_apis_records(capsys) -> None:
    assert main(["compare", TOY, "--methods", "hare,relaxation", "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    frame = dlsched.compare(TOY, ["hare", "relaxation"])
    for row, record in zip(frame.to_dict("records"), printed, strict=True):
        for key in ("method", "status", "reference", "reference_kind", "guarantee_name"):
            assert json_safe(row[key]) == record[key]  # a missing name: NaN in a frame
        assert row["ratio"] == pytest.approx(record["ratio"])


# --- Outcome.plot and Outcome.to_frame ------------------------------------------------------


def test_a_hare_chart_has_one_bar_per_task_and_one_per_synchronization(pyplot) -> None:
    inst = dlsched.load(TOY)
    out = dlsched.solve(inst, "exact")
    ax = out.plot()
    tasks = sum(j.rounds * j.tasks_per_round for j in inst.jobs)  # 2 x 2 + 1
    synced = sum(
        1 for e in out.solution.entries if inst.jobs[e.job].sync_time[e.gpu] > 0
    )  # j1's four tasks; j2 has none
    assert (tasks, synced) == (5, 4) and len(ax.patches) == tasks + synced
    assert ax.get_title() == "toy-2gpu / exact: optimal, objective 13.5"


def test_an_elastic_chart_has_one_bar_per_job_and_server_and_draws_on_the_axes_given(
    pyplot,
) -> None:
    out = dlsched.solve(CIFAR, "exact")
    _, given = pyplot.subplots()
    assert out.plot(given) is given
    used = sum(
        sum(1 for w in e.workers if w) for e in out.solution.entries
    )  # one job on one GPU, the other on two (one GPU per server)
    assert used == 3 and len(given.patches) == used


def test_a_placement_picture_stacks_each_workers_busy_time_to_its_jobs_jct(pyplot) -> None:
    out = dlsched.solve("placement/liu2024-s4k15-seed0", "optimus")  # equal split: stragglers
    inst = out.instance_object
    ax = out.plot()
    own, wait, comm = ax.containers[:3]
    assert len(own) == len(wait) == len(comm) == inst.num_workers
    jct = out.details["jct"]
    labels = [t.get_text() for t in ax.get_xticklabels()]
    for k, label in enumerate(labels):
        worker = next(i for i, w in enumerate(inst.workers) if w.name == label)
        job = inst.jobs[out.solution.assignment[worker]].name
        top = own[k].get_height() + wait[k].get_height() + comm[k].get_height()
        assert top == pytest.approx(jct[job], rel=1e-9)
    assert any(bar.get_height() > 0 for bar in wait)  # a faster worker waits for its straggler
    assert len(ax.get_legend().get_texts()) == inst.num_jobs + 3  # + wait, all-reduce, mean


def test_proportional_balancing_leaves_no_worker_waiting(pyplot) -> None:
    out = dlsched.solve(MOTIVATING, "exact")  # no communication in this example (errata)
    own, wait, _ = out.plot().containers[:3]
    jct = sorted(out.details["jct"].values())
    assert sorted({round(b.get_height(), 6) for b in own}) == [round(x, 6) for x in jct]
    assert all(b.get_height() == pytest.approx(0, abs=1e-6) for b in wait)


@pytest.mark.parametrize(
    ("name", "method"), [(TOY, "relaxation"), (CIFAR, "lp-bound"), ("ddlwmp/toy-2x4", "lp-bound")]
)
def test_a_method_with_nothing_to_draw_is_one_line(pyplot, name: str, method: str) -> None:
    out = dlsched.solve(name, method)
    with pytest.raises(OptionError) as e:
        out.plot()
    one_line(e.value, "plot", repr(method), "no schedule")


def test_a_mapping_is_not_drawn_as_a_schedule(pyplot) -> None:
    out = dlsched.solve("ddlwmp/toy-2x4", "heavy-edge")  # a JobMapping, not a Schedule
    with pytest.raises(OptionError) as e:
        out.plot()
    one_line(e.value, "'heavy-edge'", "no schedule")


def test_to_frame_is_one_row_of_the_outcome_and_its_flat_details() -> None:
    out = dlsched.solve(MOTIVATING, "exact")
    row = out.to_frame()
    assert len(row) == 1
    head = ["method", "instance", "status", "objective", "bound", "gap", "wall_time"]
    assert list(row.columns[:7]) == head
    assert row.iloc[0][head].tolist() == [
        "exact",
        "liu2024-motivating",
        "optimal",
        out.objective,
        out.bound,
        out.gap,
        out.wall_time,
    ]
    jcts = row[["jct.ResNet-18", "jct.VGG-19"]].iloc[0]
    assert jcts.mean() == pytest.approx(out.objective)  # (8): the average JCT
    assert row.loc[0, "samples_per_worker.ResNet-18.v100-0"] == pytest.approx(50_000)
    record = out.to_json(out.instance_object)  # the instance kept is never written
    assert set(record) == {*head, "instance_hash", "checked", "solution", "details"}
    assert json.loads(json.dumps(record))["solution"]["jobs"]["VGG-19"] == ["t4-0", "t4-1"]


# --- verify ---------------------------------------------------------------------------------


def test_verify_runs_the_runner_in_process_and_resumes_its_folder(tmp_path: Path) -> None:
    rows = dlsched.verify_theorems("002-thm4", count=2, time_limit=30, out=tmp_path)
    assert set(rows.theorem) == {"002-thm4"} and len(set(rows.instance_hash)) == 2
    assert not rows.holds.eq(False).any()  # Theorem 4 holds (its counterexamples are bundled)
    again = dlsched.verify_theorems("002-thm4", count=2, time_limit=30, out=tmp_path)
    assert len(again) == len(rows) and (tmp_path / "verify.jsonl").exists()


# --- plot_ratios ----------------------------------------------------------------------------


def test_plot_ratios_draws_one_line_per_method_through_its_mean(pyplot) -> None:
    frames = [
        dlsched.compare(dlsched.generate("hare", jobs, 2, seed), ["hare", "relaxation"])
        for jobs in (2, 3)
        for seed in (0, 1)
    ]
    frame = pd.concat(frames, ignore_index=True)
    lines = {line.get_label(): line for line in plot_ratios(frame).get_lines()[1:]}
    assert set(lines) == {"hare", "relaxation"}  # the reference's own rows are left out
    for method, line in lines.items():
        rows = frame[frame.method == method]
        assert line.get_xdata().tolist() == [2, 3]
        for x, y in zip(line.get_xdata(), line.get_ydata(), strict=True):
            assert y == pytest.approx(rows[rows.jobs == x].ratio.mean())
    assert (frame[frame.method == "hare"].ratio >= 1).all()
    assert (frame[frame.method == "relaxation"].ratio <= 1).all()


# --- bad input ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "words"),
    [
        (lambda: dlsched.methods("nofamily"), ("family", "'nofamily'")),
        (lambda: dlsched.list_instances("nofamily"), ("family", "'nofamily'")),
        (lambda: dlsched.generate("nofamily", 2, 2), ("family", "'nofamily'")),
        (lambda: dlsched.generate("hare", 0, 2), ("jobs", "0")),
        (lambda: dlsched.solve(TOY, "nomethod"), ("--method", "'nomethod'", "hare")),
        (lambda: dlsched.solve(TOY, "hare", nope=1), ("nope", "not a parameter")),
        (lambda: dlsched.compare(TOY, ["hare", "nomethod"]), ("--methods", "'nomethod'")),
        (lambda: dlsched.compare(TOY, "hare", reference="x"), ("--reference", "'x'")),
        (lambda: dlsched.verify_theorems("nothm"), ("theorems", "'nothm'")),
    ],
)
def test_bad_input_is_a_one_line_option_error(call, words: tuple[str, ...]) -> None:
    with pytest.raises(OptionError) as e:
        call()
    one_line(e.value, *words)


# --- the command line takes the API's path --------------------------------------------------


def test_the_command_lines_solve_is_the_apis(capsys, monkeypatch) -> None:
    calls = []
    solve = api.solve

    def spy(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append((args[1], kwargs))
        return solve(*args, **kwargs)

    monkeypatch.setattr(api, "solve", spy)
    assert main(["solve", TOY, "--method", "hare", "--seed", "3", "--param", 'h="max"']) == 0
    want = {"time_limit": 300.0, "seed": 3, "threads": 1, "bound": False, "h": "max"}
    # arguments handed in: the limit counts from when the method starts (start=None)
    want["start"] = None
    assert calls == [("hare", want)]
    assert "objective  16" in capsys.readouterr().out


def test_the_command_lines_methods_are_the_apis_table(capsys) -> None:
    assert main(["methods", "elastic"]) == 0
    out = capsys.readouterr().out.splitlines()
    lines = [line for line in out if not line.startswith(" ")]  # a guarantee goes under its row
    table = dlsched.methods("elastic")
    assert [line.split()[0] for line in lines] == table.name.tolist()
    assert [line.endswith("[exact]") for line in lines] == table.exact.tolist()
    guarantees = [line.split("guarantee: ", 1)[1] for line in out if line.startswith(" ")]
    assert guarantees == [g for g in table.guarantee if g]


@pytest.mark.parametrize("argv", [["generate", "hare", "--jobs", "2", "--gpus", "2"],
                                  ["solve", TOY, "--method", "hare"]])  # fmt: skip
def test_a_param_named_like_an_option_is_one_line(capsys, tmp_path: Path, argv) -> None:
    out = ["-o", str(tmp_path / "g.json")] if argv[0] == "generate" else []
    assert main([*argv, *out, "--param", "seed=1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err and "seed" in err
    assert not (tmp_path / "g.json").exists()


def test_a_placement_is_drawn_to_a_file_from_the_command_line(capsys, tmp_path: Path) -> None:
    pic = tmp_path / "p.png"
    assert main(["solve", MOTIVATING, "--method", "has", "--plot", str(pic)]) == 0
    assert pic.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# --- import dlsched stays light -------------------------------------------------------------


def test_importing_dlsched_loads_no_solver_nor_plotting_library() -> None:
    heavy = ("pyomo", "scipy", "ortools", "matplotlib", "pandas", "numpy", "highspy")
    code = (
        "import sys, dlsched; dlsched.API; "
        f"print([m for m in sys.modules if m.split('.')[0] in {heavy!r}])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
