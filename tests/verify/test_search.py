"""dlsched verify --search: the moves on each family's raw instance, the budget kept and handed
down (on a fake clock: time passes only when the search reads it), a killed search resumed with
no certified solve lost or repeated, serial and Dask searches alike, counterexamples found from
nothing and shrunk, the exact worst case of online-fifo against brute force, the rows and the
report, the command line's refusals."""

from __future__ import annotations

import copy
import dataclasses
import importlib
import itertools
import json
import math
import os
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from fake_clock import FakeClock, takes_time

from dlsched import families
from dlsched.cli import main
from dlsched.errors import OptionError
from dlsched.instances import from_dict, to_dict
from dlsched.models import run_method
from dlsched.models.hare.instance import HareInstance, HareJob
from dlsched.models.hare.metaopt import Box, fifo_worst_case
from dlsched.solvers import SolveOptions
from dlsched.solvers.deadline import MIN_SOLVER_SECONDS, Deadline, grace
from dlsched.verify import moves, registry, select
from dlsched.verify import runner as verify_runner
from dlsched.verify import search as search_module
from dlsched.verify.report import write_report
from dlsched.verify.runner import UNLIMITED, Allowance, VerifyOptions, violates
from dlsched.verify.search import (
    SEARCH_JSON,
    SEARCH_LOG,
    Point,
    SearchOptions,
    read_search_log,
    score,
    search,
)

SO = SolveOptions(time_limit=30)
ROW_KEYS = {"theorem", "method", "worst_ratio", "sample_worst_ratio", "solves", "seconds",
            "violated", "instance"}  # fmt: skip


def serial(**kw: object) -> VerifyOptions:
    return VerifyOptions(solve=SO, processes=0, progress=False, **kw)  # type: ignore[arg-type]


def budget(seconds: float) -> SearchOptions:
    """A budget on a clock that moves a tenth of a second at each read (two per candidate
    solved, a few per batch and per leg): the search's course depends on what it solves, never
    on how long it took."""
    return SearchOptions(budget=seconds, clock=FakeClock(step=0.1))


def only(theorem_id: str, method: str):  # noqa: ANN201 - a Theorem
    return dataclasses.replace(registry()[theorem_id], methods=(method,))


def candidates(path: Path) -> list[tuple[int, int, int, str]]:
    """(lane, batch, slot, point) of every candidate of a search log, in log order."""
    return [
        (r["lane"], r["batch"], r["slot"], Point.from_json(r["point"]).key())
        for r in read_search_log(path)
        if "batch" in r
    ]


def consistent(a: list[tuple[int, int, int, str]], b: list[tuple[int, int, int, str]]) -> int:
    """How many (lane, batch, slot) two searches both solved, asserting that they solved
    the same point there and that each lane of one is a prefix of the other's: a lane's
    proposals depend only on the seed and its own results."""
    sa, sb = {c[:3]: c[3] for c in a}, {c[:3]: c[3] for c in b}
    common = sa.keys() & sb.keys()
    assert all(sa[k] == sb[k] for k in common)
    for lane in {k[0] for k in sa.keys() | sb.keys()}:
        da = sorted(k[1:] for k in sa if k[0] == lane)
        db = sorted(k[1:] for k in sb if k[0] == lane)
        short, long = sorted((da, db), key=len)
        assert long[: len(short)] == short  # (a batch holds each slot with a candidate)
    return len(common)


# --- scores ------------------------------------------------------------------------------------


def test_the_score_is_the_ratio_over_a_finite_bound_and_only_on_certified_rows() -> None:
    row = {"status": "optimal", "applies": True, "reference_kind": "optimum", "ratio": 3.0}
    assert score({**row, "bound": 1.5}) == 2.0  # how much the inequality fails
    assert score({**row, "bound": None}) == 3.0  # an empirical claim: the ratio
    assert score({**row, "bound": math.inf}) == 3.0
    assert score({**row, "ratio": None, "ratio_infinite": True}) == math.inf
    assert score({**row, "reference_kind": "lower bound"}) is None  # a lower bound overstates
    assert score({**row, "applies": False}) is None  # outside the assumptions
    assert score({**row, "status": "error"}) is None


# --- moves ---------------------------------------------------------------------------------------


def test_every_family_declares_its_layout() -> None:
    """The moves' layouts are the families' own parts, each in its family's folder; the
    search finds them through the registry (and the core holds none)."""
    for name in families.names():
        lay = families.get(name).layout()
        assert isinstance(lay, moves.Layout) and lay.family == name
        assert search_module.family_layout(name) is lay
        assert type(lay).__module__ == "dlsched.verify.moves"
        assert importlib.import_module(f"dlsched.models.{name}.layout").LAYOUT is lay
    assert not hasattr(moves, "LAYOUTS")


@pytest.mark.parametrize("theorem_id", ["002-thm4", "000-has", "001-thm1", "003-thm1"])
def test_moves_act_on_the_raw_instance_as_named(theorem_id: str) -> None:
    """Every move on drawn instances of each family: the input untouched; when the family
    accepts the result, a job more (add), fewer (remove, merge, with the weights added), a GPU
    more or fewer with every per-job column along it; a job scaled keeps its structure."""
    t = registry()[theorem_id]
    lay = families.get(t.family).layout()
    assert lay is not None
    applied = set()
    for seed in range(12):
        raw = to_dict(t.instance(seed, jobs=3))
        case = {"m": 0, "p": 0, "n": 1, "q": True,
                "prices": [[1.0] * len(raw.get("resources", []))] * len(raw.get("servers", [])),
                "free": [[1.0] * len(raw.get("resources", []))] * len(raw.get("servers", []))
                } if t.replay else None  # fmt: skip
        for name, (move, _) in moves.MOVES.items():
            before = copy.deepcopy((raw, case))
            got = move((raw, case), lay, np.random.default_rng(seed))
            assert (raw, case) == before  # nothing mutated
            if got is None or not valid(got[0]):
                continue
            applied.add(name)
            new, new_case = got
            jobs_before, jobs_after = len(raw["jobs"]), len(new["jobs"])
            expected = {"add_job": 1, "remove_job": -1, "merge_jobs": -1}.get(name, 0)
            assert jobs_after - jobs_before == expected, name
            if name == "merge_jobs" and "weight" in raw["jobs"][0]:
                total = sum(j["weight"] for j in raw["jobs"])
                assert sum(j["weight"] for j in new["jobs"]) == pytest.approx(total, rel=0.05)
            if lay.axis is not None and name in ("add_gpu", "remove_gpu"):
                items = len(new[lay.axis.items])
                assert items - len(raw[lay.axis.items]) == (1 if name == "add_gpu" else -1)
                for job in new["jobs"]:
                    assert all(len(job[key]) == items for key in lay.axis.per_job)
                for key in lay.axis.per_case if new_case is not None else ():
                    assert len(new_case[key]) == items
    assert {"tweak", "add_job", "remove_job", "scale_job"} <= applied


def valid(raw: dict) -> bool:
    try:
        from_dict(raw)
    except Exception:  # noqa: BLE001 - any refusal
        return False
    return True


# --- the budget -------------------------------------------------------------------------------


def test_the_budget_is_kept_and_each_solve_gets_at_most_what_is_left(tmp_path: Path) -> None:
    """000-jps with a budget of 40 seconds of a fake clock: its search had SEARCH_SHARE of
    it; every candidate began with time left and was handed at most that time (and at most
    --time-limit); legs were handed out until the search's budget was spent, then none; the
    row says the budget stopped it; the sample came in the rest, the whole within the
    budget."""
    t = registry()["000-jps"]
    clock = FakeClock(step=0.1)
    summary = search([t], tmp_path, serial(), SearchOptions(40.0, clock=clock))
    (row,) = summary.rows
    assert row["budget"] == pytest.approx(search_module.SEARCH_SHARE * 40.0, abs=0.5)
    lines = [r for r in read_search_log(tmp_path / SEARCH_LOG) if "batch" in r]
    assert len({r["lane"] for r in lines}) == search_module.LANES  # every lane ran
    for r in lines:
        assert 0 < r["left"] <= row["budget"]  # a candidate starts only with time left
        assert r["time_limit"] <= min(r["left"], SO.time_limit)
    spent = [r["spent"] for r in lines]
    assert spent == sorted(spent)  # logged as each leg came back
    assert spent[-1] >= row["budget"]  # stopped because the budget was spent ...
    first_past = spent.index(next(x for x in spent if x >= row["budget"]))
    # ... and the legs logged after the budget was spent were already running then
    assert len(set(spent[first_past:])) <= search_module.LANES
    assert set(row) >= ROW_KEYS and row["seconds"] >= row["budget"]
    assert row["stopped"] == "budget" and not row["sample_stopped"]
    assert row["solves"] == len(lines) and row["sample_solves"] >= row["solves"]
    assert summary.seconds <= 40.0 + grace(40.0)
    assert json.loads((tmp_path / SEARCH_JSON).read_text()) == summary.rows


def test_the_sample_stops_at_what_is_left_of_the_budget_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each instance of the sample takes 3 s of the fake clock: the sample stops when the
    budget is spent, with fewer solves than the search's (the row says so), the whole
    search ending within the budget and the one instance under way then."""
    clock = FakeClock(step=0.1)
    takes_time(monkeypatch, clock, 3.0, verify_runner, "measure_instance")
    options = serial(task_seconds=0)  # a task per instance: the deadline read after each
    summary = search([only("000-jps", "jps")], tmp_path, options, SearchOptions(40.0, clock=clock))
    (row,) = summary.rows
    assert row["stopped"] == "budget" and row["sample_stopped"]
    assert 0 < row["sample_solves"] < row["solves"]
    assert summary.seconds <= 40.0 + 3.0 + 0.5


def test_a_task_counts_the_time_it_waited_for_a_worker() -> None:
    """A deadline handed out with 10 s left, its task starting 4 s later: 6 s are left there,
    and none once the 10 s are over; without a limit, none."""
    clock = FakeClock()
    allowance = Allowance.of(Deadline.after(10.0, clock))
    clock.advance(4.0)
    assert allowance.deadline().left() == pytest.approx(6.0)
    clock.advance(7.0)
    assert allowance.deadline().passed()
    assert UNLIMITED.deadline().left() is None


def test_a_leg_stops_at_the_deadline_it_was_handed_not_at_its_own_length() -> None:
    """A leg of (about) 100 s handed the pair's deadline with 5 s left, starting 2 s later:
    each candidate is handed at most what is left (3 s at most), and the leg stops when the
    deadline passes, its batch left pending with what it solved of it."""
    t = only("000-has", "has")
    lay = families.get(t.family).layout()
    lane = search_module.Hunt(t, "has", lay, search_module._limits(lay, 3, 2), (3, 2), seed=0)
    clock = FakeClock(step=0.1)
    allowance = Allowance.of(Deadline.after(5.0, clock))
    clock.advance(2.0)
    leg = search_module.advance(lane, {}, SO.settings, SO.time_limit, 100.0, allowance)
    assert leg.lines
    for line in leg.lines:
        assert 0 < line["left"] <= 3.0 and line["time_limit"] <= line["left"]
    assert clock.now <= 5.0 + 0.5
    assert not leg.known or lane.pending  # stopped within a batch: it stays pending


# --- resuming ---------------------------------------------------------------------------------


def test_a_killed_search_resumes_with_no_solve_lost_or_repeated(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A clean search, and the same search killed after 13 candidates (its log cut there, a
    line torn in the middle): resumed, it keeps the 13, solves only candidates it had not
    logged, none twice, and proposes in every slot what the clean search proposed there."""
    t = only("002-lemma2", "hare")
    search([t], tmp_path / "clean", serial(), budget(30.0))
    clean = candidates(tmp_path / "clean" / SEARCH_LOG)
    assert len(clean) >= 16

    killed = tmp_path / "killed"
    killed.mkdir()
    text = (tmp_path / "clean" / SEARCH_LOG).read_text().splitlines(keepends=True)
    kept = [line for line in text if '"batch"' in line][:13]
    (killed / SEARCH_LOG).write_text("".join(kept) + '{"theorem": "002-lemma2", "method": "ha')
    solved = []
    real = search_module.evaluate

    def counting(*args):  # noqa: ANN002, ANN202
        solved.append(args[2].key())
        return real(*args)

    monkeypatch.setattr(search_module, "evaluate", counting)
    search([t], killed, serial(), budget(30.0))
    resumed = candidates(killed / SEARCH_LOG)
    assert resumed[:13] == clean[:13]  # nothing lost
    assert len(set(resumed)) == len(resumed)  # none twice
    assert sorted(solved) == sorted(c[3] for c in resumed[13:])  # only what was missing
    assert len(resumed) > 13 and consistent(resumed, clean) >= 16
    again = len(solved)
    search([t], killed, serial(), budget(30.0))  # nothing left to do
    assert len(solved) == again and candidates(killed / SEARCH_LOG) == resumed


def test_a_lane_in_a_cma_episode_travels_to_a_process_that_never_imported_cma() -> None:
    """A lane is a worker's task and its result: one in the middle of a CMA-ES episode,
    pickled, loads in a fresh interpreter and goes on there with the same proposals it makes
    here."""
    t = only("000-has", "has")
    lane = search_module.Hunt(t, "has", families.get(t.family).layout(), search_module._limits(
        families.get(t.family).layout(), 3, 2), (3, 2), seed=0, lane=1)  # fmt: skip
    while lane.cma is None:
        props = lane.proposals()
        rows = [search_module.evaluate(t, "has", p.point, SO.settings, SO.time_limit) if p else None
                for p in props]  # fmt: skip
        lane.absorb([(p.point, r) if p and r else None for p, r in zip(props, rows, strict=True)])
    lane.absorb([None] * len(lane.proposals()))  # the episode asked, told nothing
    data = pickle.dumps(lane)
    here = [p.point.key() if p else None for p in pickle.loads(data).proposals()]
    script = ("import pickle, sys; lane = pickle.loads(sys.stdin.buffer.read()); "
              "print([p.point.key() if p else None for p in lane.proposals()])")  # fmt: skip
    out = subprocess.run([sys.executable, "-c", script], input=data, capture_output=True,
                         check=True).stdout  # fmt: skip
    assert out.decode().strip() == str(here)


def test_a_search_on_dask_proposes_and_finds_what_a_serial_one_does(tmp_path: Path) -> None:
    """The same search in this process and on a LocalCluster of 2 processes: in each slot
    both solved, the same candidate and the same rows (timings aside); each lane of one a
    prefix of the other's (how far each lane got depends on the order legs came back); on
    Dask, lanes went back and forth in the middle of CMA-ES episodes."""
    t = only("000-has", "has")
    search([t], tmp_path / "serial", serial(), budget(40.0))
    dask_options = VerifyOptions(solve=SO, processes=2, progress=False)
    search([t], tmp_path / "dask", dask_options, budget(40.0))
    here, there = (candidates(tmp_path / d / SEARCH_LOG) for d in ("serial", "dask"))
    assert consistent(here, there) >= 16
    moves_there = {r["move"] for r in read_search_log(tmp_path / "dask" / SEARCH_LOG)}
    assert "cma" in moves_there  # lanes in a CMA-ES episode went to the workers and back

    def rows(d: Path) -> dict:
        return {(r["lane"], r["batch"], r["slot"]):
                [{k: v for k, v in x.items() if k != "wall_time"} for x in r["rows"]]
                for r in read_search_log(d / SEARCH_LOG) if "batch" in r}  # fmt: skip

    a, b = rows(tmp_path / "serial"), rows(tmp_path / "dask")
    assert all(a[k] == b[k] for k in a.keys() & b.keys())


# --- what it finds -------------------------------------------------------------------------


def test_an_algorithm4_miss_on_13_is_found_from_nothing_and_shrunk(tmp_path: Path) -> None:
    """Seed 003's Algorithm 4 (A_mincost1) against the MILP of (13): from seeded draws only,
    the search finds a case where it is not optimal; the violation is saved, shrunk, and the
    minimal instance violates Theorem 1 again when measured afresh."""
    t = only("003-thm1", "A_mincost1")
    (row,) = search([t], tmp_path, serial(), budget(120.0)).rows
    assert row["violated"] and (row["worst_infinite"] or row["worst_ratio"] > 1)
    assert row["minimal"] and row["counterexample"]
    saved = json.loads((tmp_path / row["minimal"]).read_text())
    inst, record = from_dict(saved["instance"]), saved["record"]
    case = (record["case"], record["details"])
    assert violates(t, inst, "A_mincost1", SO, case) is not None
    assert len(inst.jobs) <= len(row["instance"]["jobs"])


# --- the exact worst case --------------------------------------------------------------------


def _fifo_ratio(arrivals: tuple[float, ...], times: tuple[float, ...]) -> float:
    jobs = tuple(
        HareJob(f"j{k}", a, 1.0, 1, 1, (p,), (0.0,))
        for k, (a, p) in enumerate(zip(arrivals, times, strict=True))
    )
    inst = HareInstance(name="brute", gpus=("g0",), jobs=jobs)
    fifo, opt = run_method(inst, "online-fifo").objective, run_method(inst, "exact").objective
    assert fifo is not None and opt is not None
    return fifo / opt


def test_the_exact_worst_case_of_fifo_is_the_brute_forces_and_is_reached() -> None:
    """Two jobs, arrivals in {0, 0.5, 1}, times in {0.5, 1, 1.5}: every one of the 81
    instances measured by online-fifo and the certified optimum; the model's worst case is
    their maximum, proven (upper bound = ratio), and its instance reaches it."""
    box = Box(2, arrival=(0.0, 1.0), time=(0.5, 1.5))
    got = fifo_worst_case(box, Deadline.after(60))
    grid_a, grid_p = (0.0, 0.5, 1.0), (0.5, 1.0, 1.5)
    brute = max(
        _fifo_ratio(a, p)
        for a in itertools.product(grid_a, repeat=2)
        for p in itertools.product(grid_p, repeat=2)
    )
    assert got.status == "optimal" and got.ratio == pytest.approx(brute, rel=1e-9)
    assert got.upper is not None and got.upper >= brute - 1e-9
    assert got.instance is not None
    jobs = got.instance.jobs
    ratio = _fifo_ratio(tuple(j.arrival for j in jobs), tuple(j.train_time[0] for j in jobs))
    assert ratio == pytest.approx(got.ratio, rel=1e-9)


def test_no_instance_of_the_box_beats_the_proven_upper_bound() -> None:
    box = Box(3)
    got = fifo_worst_case(box, Deadline.after(60))
    assert got.status == "optimal" and got.upper is not None
    rng = np.random.default_rng(3)
    for _ in range(30):
        a = tuple(float(x) for x in rng.integers(0, 21, 3) / 2)
        p = tuple(float(x) for x in rng.integers(1, 21, 3) / 2)
        assert _fifo_ratio(a, p) <= got.upper + 1e-9


@pytest.mark.parametrize("use", [1.0, 0.1])
def test_the_exact_worst_case_hands_its_solves_no_more_than_is_left(
    monkeypatch: pytest.MonkeyPatch, use: float
) -> None:
    """Every solve of the exact worst case (the model's HiGHS calls, the two routes measuring
    each instance found) is handed at most what is left of its 10 s, none once they are over:
    when each solve takes all it was handed, the limits sum to the budget at most; when each
    takes a tenth of it, the worst case of three jobs is still proven (ratio 2.52)."""
    from dlsched.models.hare import metaopt

    clock, handed = FakeClock(), []

    def spend(limit: float) -> None:
        handed.append((limit, 10.0 - clock.now))
        clock.advance(use * limit)

    real_solve, real_run = metaopt.solve, metaopt.run_method

    def solve(md, backend, options):  # noqa: ANN001, ANN202
        out = real_solve(md, backend, options)
        spend(options.time_limit)
        return out

    def run(inst, method, options):  # noqa: ANN001, ANN202
        out = real_run(inst, method, options)
        spend(options.time_limit)
        return out

    monkeypatch.setattr(metaopt, "solve", solve)
    monkeypatch.setattr(metaopt, "run_method", run)
    got = fifo_worst_case(Box(3), Deadline.after(10.0, clock))
    assert handed and all(limit <= max(left, MIN_SOLVER_SECONDS) for limit, left in handed)
    if use == 1.0:
        assert sum(limit for limit, _ in handed) <= 10.0 and got.status == "time limit"
    else:
        assert got.status == "optimal" and got.ratio == pytest.approx(2.52, abs=0.01)


def test_the_exact_worst_cases_are_a_family_part(tmp_path: Path) -> None:
    """hare declares its exact worst-case model; the other families have none, and the search
    asks for it through the registry: a pair with no model has no exact worst case."""
    from dlsched.models.hare import metaopt

    assert families.get("hare").metaopt() is metaopt.worst_cases
    assert [f for f in families.names() if families.get(f).metaopt() is not None] == ["hare"]
    assert list(metaopt.worst_cases("002-thm4", "hare", [], Deadline.after(60))) == []  # none
    t = registry()["000-has"]
    fd = os.open(tmp_path / "log", os.O_WRONLY | os.O_CREAT)
    try:
        got = search_module.exact_worst_cases(t, "has", [], Deadline.after(20), fd, "run", 0.0)
    finally:
        os.close(fd)
    assert got == [] and (tmp_path / "log").read_text() == ""


def test_the_exact_worst_cases_join_the_online_fifo_search(tmp_path: Path) -> None:
    """On (004-online, online-fifo) the exact worst cases are solved first (logged, each
    size exact) and certified again as candidates: the search's worst is at least theirs."""
    t = only("004-online", "online-fifo")
    (row,) = search([t], tmp_path, serial(), budget(20.0)).rows
    exact = row["exact_worst"]
    assert exact and exact[0]["jobs"] == 2 and exact[0]["status"] == "optimal"
    assert row["worst_ratio"] >= max(e["ratio"] for e in exact if e["ratio"]) - 1e-9


# --- rows, report, command line -------------------------------------------------------------


def test_the_report_renders_the_search_as_html(tmp_path: Path) -> None:
    search([only("000-jps", "jps")], tmp_path, serial(), budget(12.0))
    md, page = write_report(tmp_path)
    text, html = md.read_text(), page.read_text()
    assert "## Worst-case search" in text and "(search-000-jps.png)" in text
    assert (tmp_path / "search-000-jps.png").read_bytes()[:4] == b"\x89PNG"
    assert "<h2>Worst-case search</h2>" in html and "## " not in html
    assert "<blockquote>" in html and "&gt; JPS" not in html
    assert html.count('src="data:image/png;base64,') >= 2  # a histogram and a search plot


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["--search", "--budget", "0"], "--budget '0'"),
        (["--search", "--budget", "-5"], "--budget '-5'"),
        (["--search", "--budget", "nan"], "--budget 'nan'"),
        (["--search", "--budget", "inf"], "--budget 'inf'"),
        (["--budget", "5"], "add --search"),
    ],
)
def test_bad_search_options_exit_2_with_one_line(capsys, tmp_path: Path, argv, fragment) -> None:
    assert main(["verify", "000-jps", *argv, "-o", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert fragment in err and err.count("\n") == 1
    assert not (tmp_path / "out").exists()


def test_a_theorem_with_no_method_to_attack_exits_2(
    capsys, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bare = dataclasses.replace(registry()["000-jps"], id="000-bare", methods=())
    monkeypatch.setattr("dlsched.verify.theorem.registry", lambda: {"000-bare": bare})
    assert main(["verify", "000-bare", "--search", "-o", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "000-bare" in err and "no method to attack" in err and err.count("\n") == 1
    with pytest.raises(OptionError):
        SearchOptions(budget=float("nan"))
    monkeypatch.undo()
    assert [t.id for t in select(["000-jps"])] == ["000-jps"]
