"""The worst-case search of any method (dlsched.verify.user, dlsched.verify.user_search,
dlsched.search): the record made for (family, method, guarantee), a low guarantee violated,
shrunk and saved as instance files that reproduce their ratios, the worst ratio per size
without a guarantee, resume, and the arguments refused before any work. Budgets are on a fake
clock (time passes only when the search reads it), so nothing here depends on how long a solve
took."""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path

import pytest
from fake_clock import FakeClock

import dlsched
from dlsched import families
from dlsched.errors import OptionError
from dlsched.solvers import SolveOptions
from dlsched.verify import user
from dlsched.verify.runner import VerifyOptions, counterexample_stem
from dlsched.verify.search import SEARCH_JSON, SEARCH_LOG, SearchOptions, read_search_log
from dlsched.verify.user_search import finished_row, prepare, run

ROOT = Path(__file__).resolve().parents[2]
SERIAL = VerifyOptions(solve=SolveOptions(time_limit=30), processes=0, progress=False)


def budget(seconds: float) -> SearchOptions:
    """``seconds`` on a clock that moves a tenth of a second at each read."""
    return SearchOptions(budget=seconds, clock=FakeClock(step=0.1))


def ratio_of(path: str, method: str) -> float:
    """The method's ratio to the certified optimum on the instance saved at ``path``, as
    ``dlsched.compare`` gives it."""
    frame = dlsched.compare(path, [method], time_limit=30)
    row = frame[frame.method == method].iloc[0]
    assert frame.iloc[0].reference_kind == "optimum"
    return float(row.ratio)


# --- the record --------------------------------------------------------------------------------


def test_the_record_borrows_draws_reference_and_shrinking_from_a_theorem_of_the_family() -> None:
    """A method no theorem measures borrows from one that measures a method by the default
    measure against an exact method; one a theorem measures, from that theorem. The method,
    the id and the bound are the record's own; the lender's assumptions are not borrowed."""
    t = user.method_theorem("hare", "greedy")
    lent = user.lender("hare", "greedy")
    assert lent is not None and lent.measure is None and "greedy" not in lent.methods
    assert (t.id, t.methods, t.bound, t.measure) == ("search-hare-greedy", ("greedy",), None, None)
    assert (t.generate, t.reference, t.shrink) == (lent.generate, lent.reference, lent.shrink)
    assert t.reference in user.exact_methods("hare") and t.shrinkable
    own = user.lender("placement", "has")
    assert own is not None and "has" in own.methods
    for name in families.names():  # every family lends a record an exact reference
        assert user.method_theorem(name, "x").reference in user.exact_methods(name)


def test_the_guarantee_is_none_a_number_or_a_function_of_the_instance() -> None:
    inst = dlsched.load("hare/toy-2gpu")
    assert user.method_theorem("hare", "greedy", 2.5).bound(inst) == 2.5
    jobs = user.method_theorem("hare", "greedy", lambda i: float(i.num_jobs)).bound
    assert jobs is not None and jobs(inst) == inst.num_jobs
    for bad in (0, -1.0, float("nan"), "2"):
        with pytest.raises(OptionError, match="guarantee"):
            user.method_theorem("hare", "greedy", bad)  # type: ignore[arg-type]


def test_a_method_named_by_a_spec_makes_a_file_safe_id_and_file_names() -> None:
    assert user.slug("examples/rules.py:hare_all_on_gpu0") == "examples-rules-py-hare-all-on-gpu0"
    long_a, long_b = user.slug("a" * 80 + ":f"), user.slug("a" * 80 + ":g")
    assert len(long_a) <= user.SLUG and long_a != long_b
    row = {"theorem": "t", "instance_hash": "h", "method": "dir/rules.py:rule", "case": ""}
    assert counterexample_stem(row) == "t-h-dir_rules.py_rule"
    assert counterexample_stem({**row, "method": "a-srpt"}) == "t-h-a-srpt"  # unchanged


def test_a_python_object_is_registered_and_carried() -> None:
    """A function is registered (``dlsched.register``) before the search and carried in the
    record: another process that never saw it registers it again from the record."""
    from dlsched import usercode

    def rule(instance: object) -> object:
        return instance

    t = prepare("hare", rule, 1.0)
    (name,) = t.methods
    assert usercode.find("hare", name).obj is rule
    assert isinstance(t.measure, partial)
    carried = t.measure.args[0]
    usercode.REGISTERED.pop(("hare", name))  # a worker that never registered it
    carried.ensure()
    assert usercode.find("hare", name).obj is rule


def test_a_registered_object_is_searched_under_its_name() -> None:
    """A function registered with a name keeps it (and its registration) in the search."""
    from dlsched import usercode

    def rule(instance: object) -> object:
        return instance

    usercode.register(rule, family="hare", name="my-rule", guarantee=3.0)
    assert prepare("hare", rule, 2.0).methods == ("my-rule",)
    assert usercode.find("hare", "my-rule").guarantee == 3.0


def test_a_spec_is_carried_with_its_files_absolute_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A spec relative to this folder travels as the absolute path, so a worker started
    elsewhere resolves the same file."""
    (tmp_path / "mine.py").write_text("def rule(instance):\n    return None\n")
    monkeypatch.chdir(tmp_path)
    t = prepare("hare", "mine.py:rule", None)
    carried = t.measure.args[0]
    assert carried.shipped == (("hare", "mine.py:rule", f"{tmp_path.resolve()}/mine.py:rule"),)


# --- the search ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def violated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    """greedy on hare against the guarantee 1.0 (it is not exact: violated), 30 s of a fake
    clock."""
    d = tmp_path_factory.mktemp("violated")
    return d, run(prepare("hare", "greedy", 1.0), d, SERIAL, budget(30.0))


def test_a_low_guarantee_is_violated_shrunk_and_saved(violated: tuple[Path, dict]) -> None:
    """The row has verify --search's fields; the worst instance and its shrunk violation are
    instance files (no larger, still above the guarantee) on which dlsched.compare gives
    the ratios the search found."""
    d, row = violated
    keys = {"worst_ratio", "sample_worst_ratio", "solves", "seconds", "violated", "instance",
            "minimal_instance", "sizes", "family", "guarantee"}  # fmt: skip
    assert keys <= set(row) and row["violated"] and row["guarantee"] == 1.0
    assert json.loads((d / SEARCH_JSON).read_text()) == [json.loads(json.dumps(row))]
    assert row["worst_ratio"] > 1.0 and row["solves"] > 0
    assert ratio_of(row["instance"], "greedy") == pytest.approx(row["worst_ratio"], rel=1e-6)
    small, worst = dlsched.load(row["minimal_instance"]), dlsched.load(row["instance"])
    assert small.num_jobs <= worst.num_jobs
    assert ratio_of(row["minimal_instance"], "greedy") == pytest.approx(row["minimal_ratio"])
    assert row["minimal_ratio"] > 1.0


def test_each_size_has_its_worst_ratio_and_instance(violated: tuple[Path, dict]) -> None:
    """One entry per (jobs, gpus) the search certified, the largest of them the row's worst;
    each instance file of that size, with that ratio."""
    _, row = violated
    sizes = row["sizes"]
    assert len({(s["jobs"], s["gpus"]) for s in sizes}) == len(sizes) > 1
    assert max(s["worst_ratio"] for s in sizes) == pytest.approx(row["worst_ratio"])
    top = max(sizes, key=lambda s: s["worst_ratio"])
    inst = dlsched.load(top["instance"])
    assert (inst.num_jobs, inst.num_gpus) == (top["jobs"], top["gpus"])
    assert ratio_of(top["instance"], "greedy") == pytest.approx(top["worst_ratio"], rel=1e-6)


@pytest.mark.parametrize("shrunk", [3.0, 2.2])
def test_a_shrunk_violation_worse_than_the_search_is_the_worst(tmp_path: Path, shrunk: float):
    """Shrinking certifies candidates too: a shrunk violation of a higher ratio than the
    search's worst becomes the row's worst and its size's; a lower one changes neither."""
    from dlsched.instances import to_dict

    t = prepare("hare", "greedy", 2.0)
    big, small = (to_dict(dlsched.load(n)) for n in ("hare/hetero-4gpu-6jobs", "hare/toy-2gpu"))

    def record(ratio: float) -> dict:
        return {"status": "feasible", "reference_kind": "optimum", "ratio": ratio, "bound": 2.0}

    (tmp_path / "m.json").write_text(json.dumps({"instance": small, "record": record(shrunk)}))
    row = {"worst_ratio": 2.5, "worst_over_bound": 1.25, "worst_infinite": False,
           "instance": big, "minimal": "m.json", "bound": 2.0}  # fmt: skip
    out = finished_row(t, row, [{"point": {"instance": big}, "rows": [record(2.5)]}], tmp_path)
    worst = max(shrunk, 2.5)
    assert out["worst_ratio"] == worst and out["worst_over_bound"] == worst / 2
    assert out["minimal_ratio"] == shrunk
    assert dlsched.load(out["instance"]).num_jobs == (2 if shrunk > 2.5 else 6)
    assert {(s["jobs"], s["gpus"]): s["worst_ratio"] for s in out["sizes"]} == {
        (2, 2): shrunk,
        (6, 4): 2.5,
    }


def test_a_search_run_again_resumes_from_its_log(tmp_path: Path) -> None:
    """The same search into the same folder: the second run replays the log (no candidate
    solved again; its budget spent already) and writes the same row's finds."""
    t = prepare("hare", "greedy", None)
    first = run(t, tmp_path, SERIAL, budget(8.0))
    lines = len(read_search_log(tmp_path / SEARCH_LOG))
    again = run(t, tmp_path, SERIAL, budget(8.0))
    assert len(read_search_log(tmp_path / SEARCH_LOG)) == lines
    assert (again["solves"], again["worst_ratio"]) == (first["solves"], first["worst_ratio"])
    assert not again["violated"] and again["guarantee"] is None
    assert again["minimal_instance"] is None


def test_a_rule_by_its_file_and_registered_from_python_searches_alike(tmp_path: Path) -> None:
    """The same function named by its file and registered from Python (under another name):
    on the same clock the two searches solve the same candidates and find the same ratios."""
    from dlsched import usercode

    spec = f"{ROOT}/examples/rules.py:hare_all_on_gpu0"
    by_file = run(prepare("hare", spec, 10.0), tmp_path / "a", SERIAL, budget(8.0))
    rule = usercode.load_spec(spec)
    name = dlsched.register(rule, family="hare", name="gpu0-from-python")
    try:
        by_call = run(prepare("hare", rule, 10.0), tmp_path / "b", SERIAL, budget(8.0))
    finally:
        usercode.REGISTERED.pop(("hare", name), None)
    keys = ("solves", "worst_ratio", "sample_worst_ratio", "violated")
    assert by_file["solves"] > 0
    assert {k: by_file[k] for k in keys} == {k: by_call[k] for k in keys}
    sizes = [[s["worst_ratio"] for s in row["sizes"]] for row in (by_file, by_call)]
    assert sizes[0] == sizes[1]


# --- the call ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "error", "words"),
    [
        ({"method": 3}, TypeError, "method"),
        ({"method": "nope"}, OptionError, "method"),
        ({"family": "nofamily"}, OptionError, "family"),
        ({"budget": 0}, OptionError, "budget"),
        ({"guarantee": -2}, OptionError, "guarantee"),
        ({"guarantee": "2"}, TypeError, "guarantee"),
        ({"processes": -1}, OptionError, "processes"),
        ({"jobs": 0}, OptionError, "jobs"),
        ({"seed": -1}, OptionError, "seed"),
    ],
)
def test_the_call_refuses_bad_arguments_on_one_line(kwargs: dict, error: type, words: str) -> None:
    given = {"method": "greedy", "family": "hare", **kwargs}
    with pytest.raises(error, match=words) as e:
        dlsched.search(given.pop("method"), given.pop("family"), **given)
    assert "\n" not in str(e.value)


def test_the_call_returns_the_instances_when_it_keeps_no_folder(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Without ``out`` the row holds the instances themselves (the folder is gone). The
    search's clock is a fake one, so the budget buys the same work on a loaded machine."""
    import dlsched.verify.search as search_module

    real = search_module.SearchOptions
    monkeypatch.setattr(
        search_module, "SearchOptions", lambda b, **kw: real(b, clock=FakeClock(step=0.1), **kw)
    )
    row = dlsched.search("greedy", "hare", budget=20)
    assert row["solves"] > 0 and row["instance"].family == "hare"
    assert all(s["instance"].family == "hare" for s in row["sizes"])


def test_a_registered_guarantee_is_the_searchs_when_none_is_given() -> None:
    from dlsched import usercode

    def rule(instance: object) -> object:
        return instance

    name = dlsched.register(rule, family="hare", name="with-guarantee", guarantee=3.0)
    try:
        assert prepare("hare", rule, None).bound(None) == 3.0
        assert prepare("hare", name, 5.0).bound(None) == 5.0  # the one given wins
    finally:
        usercode.REGISTERED.pop(("hare", name), None)
