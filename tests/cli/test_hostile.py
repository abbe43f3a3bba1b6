"""What a hostile pass over the command line found: outputs that are links, devices or pipes;
a status of its own for bound-only methods; wrong input accepted (names given as numbers,
fractional counts, a training share that trains on nothing, repeated methods, huge values
repeated whole in a message); generated names that read as bundled ones; and a heuristic that
ran past its time limit."""

from __future__ import annotations

import contextlib
import json
import os
import pickle
import stat
import sys
from pathlib import Path

import pytest
from cli_run import one_line, run

from dlsched.cli import main
from dlsched.errors import InstanceError, OptionError
from dlsched.instances import dumps, from_dict, load
from dlsched.solvers.base import Status
from dlsched.solvers.certify import bound_only

GENERATE = ("generate", "placement", "--jobs", "3", "--gpus", "10", "--seed", "0")


def _device(path: str) -> str:
    if not (os.path.exists(path) and stat.S_ISCHR(os.stat(path).st_mode)):
        pytest.skip(f"no {path} here")
    return path


# --- 1. outputs that are links, devices or pipes ---------------------------------------------


def test_output_through_a_symlink_replaces_its_target_and_keeps_the_link(
    capsys, tmp_path: Path
) -> None:
    target = tmp_path / "target.json"
    target.write_text("old")
    target.chmod(0o640)
    link = tmp_path / "link.json"
    link.symlink_to(target.name)
    code, out, err = run(capsys, *GENERATE, "-o", str(link))
    assert code == 0, err
    assert link.is_symlink() and os.readlink(link) == target.name
    assert load(target).family == "placement"  # the target has the instance
    assert stat.S_IMODE(target.stat().st_mode) == 0o640  # replaced with its mode kept
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.json", "target.json"]


def test_a_full_device_is_one_line_naming_the_path_and_the_error(capsys, tmp_path: Path) -> None:
    """Through a link, so that a writer that replaces what it is given replaces the link in
    the test folder, never the device."""
    full = _device("/dev/full")
    link = tmp_path / "full.json"
    link.symlink_to(full)
    code, out, err = run(capsys, *GENERATE, "-o", str(link))
    assert code == 2 and out == ""
    one_line(err, "-o", link.name, os.strerror(28))
    assert link.is_symlink() and stat.S_ISCHR(os.stat(full).st_mode)


def test_a_device_is_written_in_place(capsys, tmp_path: Path) -> None:
    null = _device("/dev/null")
    link = tmp_path / "null.json"
    link.symlink_to(null)
    code, _, err = run(capsys, *GENERATE, "-o", str(link))
    assert code == 0, err
    assert link.is_symlink() and stat.S_ISCHR(os.stat(null).st_mode)


def test_a_named_pipe_is_written_not_replaced(capsys, tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # so the writer's open does not block
    try:
        code, _, err = run(capsys, *GENERATE, "-o", str(fifo))
        assert code == 0, err
        assert stat.S_ISFIFO(fifo.lstat().st_mode)
        chunks = []
        while chunk := os.read(reader, 1 << 16):
            chunks.append(chunk)
    finally:
        os.close(reader)
    assert json.loads(b"".join(chunks))["family"] == "placement"


def test_a_loop_of_links_is_refused(capsys, tmp_path: Path) -> None:
    (tmp_path / "a.json").symlink_to("b.json")
    (tmp_path / "b.json").symlink_to("a.json")
    code, _, err = run(capsys, *GENERATE, "-o", str(tmp_path / "a.json"))
    assert code == 2
    one_line(err, "a.json", "loop")
    assert (tmp_path / "a.json").is_symlink()


def test_a_picture_through_a_link_to_a_full_device_is_one_line(capsys, tmp_path: Path) -> None:
    full = _device("/dev/full")
    link = tmp_path / "g.png"
    link.symlink_to(full)
    code, out, err = run(capsys, "solve", "hare/toy-2gpu", "--method", "hare", "--plot", str(link))
    assert code == 2 and "status" in out  # the result first, then the failing picture
    one_line(err, "--plot", os.strerror(28))
    assert link.is_symlink()


def test_a_sweep_onto_a_device_is_refused_before_any_work(capsys, tmp_path: Path) -> None:
    link = tmp_path / "s.jsonl"
    link.symlink_to(_device("/dev/null"))
    argv = ("sweep", "hare", "--count", "1", "--jobs", "2", "--gpus", "2", "--methods", "hare")
    code, out, err = run(capsys, *argv, "-o", str(link))
    assert code == 2 and out == ""
    one_line(err, "-o", "not a regular file")


def test_a_full_standard_output_is_one_line(capsys, monkeypatch) -> None:
    full = open(_device("/dev/full"), "w")  # noqa: SIM115
    monkeypatch.setattr(sys, "stdout", full)
    try:
        code = main(["solve", "hare/toy-2gpu", "--method", "hare", "--json"])
    finally:
        monkeypatch.undo()
        with contextlib.suppress(OSError):  # what is left in its buffer cannot be written
            full.close()
    assert code == 2
    one_line(capsys.readouterr().err, "cannot write", os.strerror(28))


# --- 3. messages: huge values cut, errors of a forked child -------------------------------------


def test_a_huge_value_is_cut_in_the_message_with_its_length(capsys) -> None:
    code, _, err = run(capsys, "solve", "hare/toy-2gpu", "--method", "a" * 100_000)
    assert code == 2
    one_line(err, "--method", "100,000 characters")
    assert len(err) < 1000


def test_a_huge_value_in_an_instance_is_cut_too() -> None:
    data = json.loads(dumps(load("hare/toy-2gpu")))
    data["description"] = ["x"] * 50_000
    with pytest.raises(InstanceError) as err:
        from_dict(data, "big.json")
    assert "50,000 items" in str(err.value) and len(str(err.value)) < 300


@pytest.mark.parametrize(
    "error", [OptionError("backend", "bogus", "unknown"), InstanceError("f", "x", 1, "bad")]
)
def test_errors_survive_the_pipe_from_a_forked_child(error: Exception) -> None:
    back = pickle.loads(pickle.dumps(error))
    assert type(back) is type(error) and str(back) == str(error)


def test_an_option_refused_in_a_forked_stage_is_one_line(capsys) -> None:
    code, _, err = run(capsys, "solve", "hare/toy-2gpu", "--method", "hare", "--backend", "bogus")
    assert code == 2
    one_line(err, "backend", "'bogus'")


# --- 2. bound-only methods have a status of their own -----------------------------------------

BOUND_ONLY = [
    ("hare/toy-2gpu", "relaxation"),
    ("hare/toy-2gpu", "relaxation-strong"),
    ("ddlwmp/toy-2x4", "lp-bound"),
    ("ddlwmp/toy-2x4", "srpt-bound"),
    ("elastic/intro-cifar10", "lp-bound"),
]


@pytest.mark.parametrize(("name", "method"), BOUND_ONLY)
def test_a_bound_only_method_reports_bound_below_the_optimum(name: str, method: str) -> None:
    from dlsched.bounds import compare

    rows = {r.method: r for r in compare(load(name), [method])}
    exact, mine = rows["exact"], rows[method]
    assert exact.status == "optimal" and exact.reference_kind == "optimum"
    assert mine.status == str(Status.BOUND) == "bound"
    assert mine.objective is None and mine.value_kind == "bound"
    assert mine.ratio is not None and 0 < mine.ratio <= 1 + 1e-9  # a lower bound of the optimum


def test_solve_shows_bound_in_text_and_json_and_exits_0(capsys) -> None:
    code, out, _ = run(capsys, "solve", "ddlwmp/toy-2x4", "--method", "srpt-bound")
    status = next(line for line in out.splitlines() if line.startswith("status"))
    assert code == 0 and status.split()[1] == "bound" and "no schedule" in status
    code, out, _ = run(capsys, "solve", "hare/toy-2gpu", "--method", "relaxation", "--json")
    got = json.loads(out)
    assert code == 0 and got["status"] == "bound" and got["objective"] is None
    assert got["bound"] == pytest.approx(11.5)


def test_a_bound_only_reference_is_a_lower_bound_not_a_failure(capsys) -> None:
    argv = ("compare", "hare/toy-2gpu", "--methods", "hare", "--reference", "relaxation")
    code, out, _ = run(capsys, *argv, "--json")
    rows = {r["method"]: r for r in json.loads(out)}
    assert code == 0 and rows["relaxation"]["status"] == "bound"
    assert rows["hare"]["reference_kind"] == "lower bound" and rows["hare"]["ratio"] >= 1


def test_a_sweep_records_bound(capsys, tmp_path: Path) -> None:
    log = tmp_path / "s.jsonl"
    argv = ("sweep", "hare", "--count", "1", "--jobs", "2", "--gpus", "2", "--processes", "0")
    code, _, err = run(capsys, *argv, "--methods", "relaxation", "-o", str(log))
    assert code == 0, err
    records = {r["method"]: r for r in map(json.loads, log.read_text().splitlines())}
    assert records["relaxation"]["status"] == "bound" and records["exact"]["status"] == "optimal"


def test_the_status_of_a_route_without_a_solution() -> None:
    assert bound_only(Status.OPTIMAL, 3.0) == Status.BOUND
    assert bound_only(Status.OPTIMAL, None) == Status.ERROR  # ended, yet proved nothing
    for kept in (Status.TIME_LIMIT, Status.NO_SOLUTION, Status.ERROR, Status.INFEASIBLE):
        assert bound_only(kept, 3.0) == kept


# --- 3. wrong input that was accepted ---------------------------------------------------------


def _edited(tmp_path: Path, name: str, path: str, text: str) -> Path:
    """The bundled ``name`` with the JSON ``text`` written at the dotted ``path``."""
    data = json.loads(dumps(load(name)))
    *parents, last = [int(p) if p.isdigit() else p for p in path.split(".")]
    target = data
    for p in parents:
        target = target[p]
    target[last] = "@here@"
    out = tmp_path / "bad.json"
    out.write_text(json.dumps(data).replace('"@here@"', text))
    return out


BAD = [
    ("ddlwmp/toy-2x4", "jobs.0.group", "7", "jobs[0].group", "7"),
    ("ddlwmp/toy-2x4", "jobs.1.user", "null", "jobs[1].user", "None"),
    ("ddlwmp/toy-2x4", "jobs.2.group", "Infinity", "jobs[2].group", "inf"),
    ("ddlwmp/toy-2x4", "jobs.0.user", "[1]", "jobs[0].user", "[1]"),
    ("elastic/intro-cifar10", "servers.0.capacity.gpu", "2.5", "servers[0].capacity.gpu", "2.5"),
    ("elastic/ring-2jobs", "worker_types.0.demand.gpu", "0.5", "worker_types[0].demand.gpu", "0.5"),
    ("placement/liu2024-motivating", "jobs.0.dataset_size", "2.5", "jobs[0].dataset_size", "2.5"),
    ("placement/liu2024-motivating", "jobs.1.dataset_size", "0.5", "jobs[1].dataset_size", "0.5"),
]


@pytest.mark.parametrize(("name", "path", "text", "field", "value"), BAD)
def test_wrong_types_and_fractional_counts_are_refused_on_one_line(
    capsys, tmp_path: Path, name: str, path: str, text: str, field: str, value: str
) -> None:
    bad = _edited(tmp_path, name, path, text)
    with pytest.raises(InstanceError) as err:
        load(bad)
    assert err.value.field == field
    method = {"ddlwmp": "a-srpt", "elastic": "fifo", "placement": "has"}[name.split("/")[0]]
    code, out, err_text = run(capsys, "solve", str(bad), "--method", method)
    assert code == 2 and out == ""
    one_line(err_text, "bad.json", f"'{field}'", value)


def test_a_whole_gpu_count_and_a_fractional_other_resource_are_accepted(tmp_path: Path) -> None:
    inst = load(_edited(tmp_path, "elastic/intro-cifar10", "servers.0.capacity.gpu", "2.0"))
    assert inst.servers[0].capacity[0] == 2
    inst = load(_edited(tmp_path, "elastic/intro-cifar10", "servers.0.capacity.cpu", "7.5"))
    assert inst.servers[0].capacity[1] == 7.5
    inst = load(_edited(tmp_path, "placement/liu2024-motivating", "jobs.0.dataset_size", "1e3"))
    assert inst.jobs[0].dataset_size == 1000


def test_group_and_user_strings_still_load() -> None:
    data = json.loads(dumps(load("ddlwmp/toy-2x4")))
    data["jobs"][0].update(group="g7", user="")
    assert from_dict(data, "x.json").jobs[0].group == "g7"


@pytest.mark.parametrize(("share", "empty"), [("0.01", "no training job"), ("0.99", "to predict")])
def test_a_training_share_that_leaves_a_side_empty_is_refused(
    capsys, share: str, empty: str
) -> None:
    argv = ("solve", "ddlwmp/toy-2x4", "--method", "a-srpt", "--param", "predictor=group-mean")
    code, out, err = run(capsys, *argv, "--param", f"train_share={share}")
    assert code == 2 and out == ""
    one_line(err, "train_share", share, empty)


def test_a_training_share_splits_the_jobs_it_names() -> None:
    from dlsched.models.ddlwmp.predict import split

    inst = load("ddlwmp/toy-2x4")  # 6 jobs
    for share, cut in ((0.2, 1), (0.5, 3), (0.8, 5)):
        train, test = split(inst, share)
        assert (len(train), len(test)) == (cut, 6 - cut)
        assert max(j.release for j in train) <= min(j.release for j in test)


@pytest.mark.parametrize("command", ["compare", "sweep"])
def test_a_method_named_twice_is_refused(capsys, tmp_path: Path, command: str) -> None:
    log = tmp_path / "s.jsonl"
    where = {
        "compare": ("compare", "placement/liu2024-motivating"),
        "sweep": ("sweep", "placement", "--count", "1", "--jobs", "2", "--gpus", "3"),
    }[command]
    extra = ("-o", str(log)) if command == "sweep" else ()
    code, out, err = run(capsys, *where, "--methods", "has, jps,has", *extra)
    assert code == 2 and out == "" and not log.exists()
    one_line(err, "--methods", "'has' is named twice")


# --- 4. generated names, and what the tour leaves in the checkout ------------------------------


@pytest.mark.parametrize("family", ["placement", "hare", "ddlwmp", "elastic"])
def test_a_generated_instance_is_never_named_like_a_bundled_one(family: str) -> None:
    import dataclasses

    from dlsched import families
    from dlsched.instances import bundled

    stems = {name.split("/", 1)[1] for name in bundled()}
    gen = families.get(family).generate
    for jobs, workers, seed in ((5, 96, 0), (4, 16, 0), (3, 8, 1), (2, 8, 0)):
        inst = gen(jobs, workers, seed)
        assert inst.name not in stems, (family, inst.name)
    if family == "placement":  # the bundled one is this generator's, under its own name
        inst = gen(5, 100, 0)
        assert inst.name == "generated-s5k100-seed0"
        bundled_one = load("placement/liu2024-s5k100-seed0")
        assert dataclasses.replace(inst, name=bundled_one.name) == bundled_one


def test_every_file_the_readme_tour_writes_is_ignored_by_git() -> None:
    import re
    import shutil
    import subprocess

    root = Path(__file__).resolve().parents[2]
    if shutil.which("git") is None or not (root / ".git").exists():
        pytest.skip("not a git checkout")
    readme = (root / "README.md").read_text()
    written = set(re.findall(r"(?:-o|--plot) ([\w./-]+)", readme))
    assert {"big.json", "gantt.png", "sweep.jsonl", "h.json", "d.json", "verify-out"} <= written
    for name in sorted(written):
        probe = f"{name}/x" if "." not in name else name  # a folder: what lands in it
        got = subprocess.run(["git", "check-ignore", "-q", probe], cwd=root, check=False)
        assert got.returncode == 0, f"{name} is not in .gitignore"


# --- 5. A_maxweight keeps its time limit --------------------------------------------------------


def test_a_maxweight_stops_at_its_limit_between_jobs(monkeypatch) -> None:
    """Time passes only when the oracle prices a job (0.4 s each, on an injected clock): with
    a 1 s limit the deadline has passed after the third job, so exactly three are priced and
    the outcome is time_limit with no schedule; without a limit every job is priced."""
    from dlsched.models import MethodOptions, run_method
    from dlsched.models.elastic import algorithms
    from dlsched.models.elastic.generate import generate
    from dlsched.solvers.base import SolveOptions

    inst = generate(12, 6, 0)  # A_maxweight schedules every job of it
    now = [0.0]
    real = algorithms.ORACLES["fast"]

    def slow(instance):  # type: ignore[no-untyped-def]
        oracle = real(instance)

        def price(*args, **kwargs):  # type: ignore[no-untyped-def]
            now[0] += 0.4
            return oracle(*args, **kwargs)

        return price

    monkeypatch.setitem(algorithms.ORACLES, "fast", slow)
    cut = run_method(
        inst, "a-maxweight", MethodOptions(SolveOptions(time_limit=1.0), clock=lambda: now[0])
    )
    assert cut.status == Status.TIME_LIMIT and cut.objective is None and cut.solution is None
    assert cut.details["hit_limit"] and cut.details["time_limit"] == 1.0
    assert now[0] == pytest.approx(3 * 0.4)  # three jobs priced, the fourth never
    assert "after pricing 3 of 12 jobs" in cut.details["reason"]
    now[0] = 0.0
    whole = run_method(
        inst, "a-maxweight", MethodOptions(SolveOptions(time_limit=None), clock=lambda: now[0])
    )
    assert whole.status == Status.FEASIBLE and whole.objective is not None
    assert now[0] == pytest.approx(12 * 0.4)
