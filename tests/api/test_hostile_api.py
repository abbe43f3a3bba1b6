"""Hostile calls of the public API (``dlsched.load``, ``solve``, ``compare``, ``methods``,
``generate``, ``list_instances``, ``verify_theorems``, ``model``, ``solve_model``,
``programs``, ``equations``, ``plot_ratios``): every wrong argument is refused before any work, by a
:class:`~dlsched.errors.DlschedError` or by a TypeError of :mod:`dlsched.arguments`, on one
line naming the argument; no call hangs. No method, solver, verification run or cluster is
started here: their entry points raise if reached. The top-level names are checked in a fresh
interpreter and after a solve."""

from __future__ import annotations

import math
import re
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

import dlsched
from dlsched import api, families
from dlsched.errors import DlschedError

TOY = "hare/toy-2gpu"
MOTIVATING = "placement/liu2024-motivating"
#: Seconds a refused call may take (imports included, on a loaded machine): far more than a
#: check needs, far less than any solve or run.
PATIENCE = 120.0

Call = Callable[[Path], Any]


class WorkStarted(AssertionError):
    """A method, solver or verification run was reached: an argument was not checked first."""


@pytest.fixture(autouse=True)
def no_work(monkeypatch: pytest.MonkeyPatch) -> None:
    import dlsched.models
    import dlsched.solvers
    import dlsched.verify.runner
    import dlsched.verify.search

    def never(*_args: Any, **_kw: Any) -> None:
        raise WorkStarted("work started before the arguments were checked")

    # run_method checks the method's name and parameters, then calls its runner: the work
    monkeypatch.setattr(dlsched.models.Method, "runner", lambda _self: never)
    monkeypatch.setattr(dlsched.solvers, "solve", never)
    monkeypatch.setattr(dlsched.verify.runner, "run", never)
    monkeypatch.setattr(dlsched.verify.search, "command", never)


def refusal(call: Call, tmp: Path) -> BaseException | None:
    """What ``call`` raises, run in a thread; the test fails if it is still running after
    :data:`PATIENCE` seconds (a hang)."""
    box: dict[str, BaseException | None] = {}

    def target() -> None:
        try:
            call(tmp)
        except BaseException as e:  # noqa: BLE001 - any escape is the finding
            box["error"] = e
        else:
            box["error"] = None

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(PATIENCE)
    assert not thread.is_alive(), "the call hangs"
    return box["error"]


# --- the hostile calls ------------------------------------------------------------------------

#: Values that are not instances (or name none): each given to every call taking an instance.
BAD_INSTANCES: list[tuple[str, Any]] = [
    ("int", 42),
    ("none", None),
    ("empty-dict", {}),
    ("family-only", {"family": "hare"}),
    ("unknown-family", {"family": "hare-x"}),
    ("family-int", {"family": 3}),
    ("jobs-int", {"family": "hare", "name": "x", "jobs": 3}),
    ("list", [TOY]),
    ("tuple", (TOY,)),
    ("bytes", TOY.encode()),
    ("float", 1.5),
    ("bool", True),
    ("object", object()),
    ("look-alike", SimpleNamespace(family="hare", name="x")),
    ("family-module", families),
    ("empty-name", ""),
    ("unknown-name", "no/such-instance"),
    ("nul", "a\0b"),
    ("long", "a" * 5000),
]
INSTANCE_CALLS: list[tuple[str, Callable[[Any], Any]]] = [
    ("load", lambda x: dlsched.load(x)),
    ("solve", lambda x: dlsched.solve(x, "hare")),
    ("compare", lambda x: dlsched.compare(x, ["hare"])),
    ("model", lambda x: dlsched.model(x, "hare-sched")),
    ("solve_model", lambda x: dlsched.solve_model(x, "hare-sched")),
]


def _instance_cases() -> list[Any]:
    return [
        pytest.param(lambda _t, f=f, x=x: f(x), "instance", id=f"{name}-{kind}")
        for name, f in INSTANCE_CALLS
        for kind, x in BAD_INSTANCES
    ]


def _keyword_cases(prefix: str, call: Callable[..., Any], bad: dict[str, list[Any]]) -> list[Any]:
    """``call(**{argument: value})`` for each bad value of each argument; the message must
    name the argument."""
    return [
        pytest.param(lambda _t, k=k, v=v: call(**{k: v}), k, id=f"{prefix}-{k}={v!r:.20}")
        for k, values in bad.items()
        for v in values
    ]


SOLVE_BAD: dict[str, list[Any]] = {
    "method": [42, None, "", ["hare"], "nomethod"],
    "time_limit": ["5", True, False, -1, 0, math.nan, math.inf, 1e7, [5]],
    "seed": [1.5, -1, True, "1", 2**31, None],
    "threads": [0, -1, 1.5, True, "2", 1000, None],
    "mip_gap": [-0.1, 1, "0", True, math.nan, None],
}
COMPARE_BAD: dict[str, list[Any]] = {
    "methods": [None, 42, "", ",", "hare,hare", ["hare", 3], ["hare", None], b"hare",
                {"hare": 1}, "nomethod", ["hare", ""], ("hare", "hare"), [], "hare,nomethod"],
    "reference": [None, 42, "", "nomethod"],
    "time_limit": ["5", -1, True],
    "seed": [-1, 1.5],
    "as_frame": ["yes", 1, None],
}  # fmt: skip
GENERATE_BAD: dict[str, list[Any]] = {
    "family": [42, None, "nope"],
    "jobs": [0, -1, 1.5, True, "3", None],
    "gpus": [0, -1, 1.5, True, "2", None],
    "seed": [-1, 1.5, True, "1"],
}
VERIFY_BAD: dict[str, list[Any]] = {
    "theorems": [42, "nothm", ["nothm"], [3], "", b"002", {"002": 1}],
    "count": [0, -1, 1.5, True, "1", None],
    "jobs": [0, -2, 1.5, True],
    "gpus": [0, -1, True],
    "first_seed": [-1, 1.5, True],
    "time_limit": [0, -1, "5", True],
    "seed": [-1, 1.5],
    "processes": [-1, -2, 1.5, True, "2", 5000],
    "scheduler": [42, ""],
    "search": ["yes", 1, None],
}
SOLVE_MODEL_BAD: dict[str, list[Any]] = {
    "program_or_model": [42, None, object(), ["hare-sched"]],
    "backend": [42, "nope"],
    "time_limit": ["5", -1, True],
    "seed": [-1],
    "threads": [0],
    "mip_gap": [2],
}


def _solve(**kw: Any) -> Any:
    return dlsched.solve(TOY, **{"method": "hare", **kw})


def _compare(**kw: Any) -> Any:
    return dlsched.compare(TOY, **{"methods": ["hare"], **kw})


def _generate(**kw: Any) -> Any:
    return dlsched.generate(**{"family": "hare", "jobs": 3, "gpus": 2, **kw})


def _verify(**kw: Any) -> Any:
    return dlsched.verify_theorems(**{"theorems": "002-thm4", "count": 1, **kw})


def _solve_model(**kw: Any) -> Any:
    return dlsched.solve_model(TOY, **{"program_or_model": "hare-sched", **kw})


def _frame(columns: dict[str, list[Any]]) -> Any:
    import pandas as pd

    return pd.DataFrame(columns)


#: Calls that need a word of their own, or a folder (``tmp``, fresh for each test).
OTHER_CASES: list[Any] = [
    pytest.param(lambda _t: dlsched.solve(TOY, "hare", nope=1), "nope", id="solve-unknown-param"),
    pytest.param(lambda _t: dlsched.solve(MOTIVATING, "has", category="3,x"), "category",
                 id="solve-category-text"),
    pytest.param(lambda _t: dlsched.solve(MOTIVATING, "has", category=42), "category",
                 id="solve-category-int"),
    pytest.param(lambda _t: dlsched.solve(MOTIVATING, "has", category=[3, "1"]), "category",
                 id="solve-category-mixed"),
    pytest.param(lambda _t: dlsched.solve(MOTIVATING, "jps", samples="x"), "samples",
                 id="solve-samples-text"),
    pytest.param(lambda _t: dlsched.solve(MOTIVATING, "jps", samples=-1), "samples",
                 id="solve-samples-negative"),
    pytest.param(lambda _t: dlsched.solve(MOTIVATING, "jps", alpha="x"), "alpha",
                 id="solve-alpha-text"),
    pytest.param(lambda _t: dlsched.solve(MOTIVATING, "jps", beta=True), "beta",
                 id="solve-beta-bool"),
    pytest.param(lambda _t: dlsched.solve(TOY, "exact", route=42), "route", id="solve-route-int"),
    pytest.param(lambda _t: dlsched.solve(TOY, "relaxation", backend=[1]), "backend",
                 id="solve-backend-list"),
    pytest.param(lambda _t: dlsched.generate("hare", 3, 2, workers=2), "workers",
                 id="generate-workers"),
    pytest.param(lambda _t: dlsched.generate("hare", 3, 2, nope=1), "nope",
                 id="generate-unknown-param"),
    pytest.param(lambda _t: dlsched.generate("hare", 3, 2, arrival_span=-1), "arrival_span",
                 id="generate-bad-param"),
    pytest.param(lambda _t: _verify(first_seed=2**31 - 1, count=2), "count",
                 id="verify-seeds-overflow"),
    pytest.param(lambda _t: _verify(budget=5), "budget", id="verify-budget-without-search"),
    pytest.param(lambda _t: _verify(out=Path(__file__)), "out", id="verify-out-a-file"),
    pytest.param(lambda t: _verify(out=t / "no" / "folder"), "out", id="verify-out-no-parent"),
    pytest.param(lambda _t: _verify(out=42), "out", id="verify-out-int"),
    pytest.param(lambda _t: _verify(out=""), "out", id="verify-out-empty"),
    pytest.param(lambda _t: _verify(out=b"x"), "out", id="verify-out-bytes"),
    *[
        pytest.param(lambda _t, b=b: _verify(search=True, budget=b), "budget",
                     id=f"verify-budget={b!r}")
        for b in (0, -1, "5", True, math.nan)
    ],
    *[
        pytest.param(lambda _t, f=f: dlsched.methods(f), "family", id=f"methods-{f!r:.12}")
        for f in (42, None, "", "nope", ["hare"], b"hare")
    ],
    *[
        pytest.param(lambda _t, f=f: dlsched.list_instances(f), "family",
                     id=f"list_instances-{f!r:.12}")
        for f in (42, "", "nope", ["hare"], True)
    ],
    *[
        pytest.param(lambda _t, f=f: dlsched.programs(f), "family", id=f"programs-{f!r:.12}")
        for f in (42, "nope", "", True)
    ],
    *[
        pytest.param(lambda _t, p=p: dlsched.model(TOY, p), "program", id=f"model-{p!r:.12}")
        for p in (42, None, "", "noprogram", "p1")
    ],
    pytest.param(lambda _t: dlsched.model(TOY, "hare-sched", nope=1), "nope",
                 id="model-unknown-param"),
    *[
        pytest.param(lambda _t, f=f, x=x: dlsched.plot_ratios(f, x=x), word,
                     id=f"plot_ratios-{word}-{i}")
        for i, (f, x, word) in enumerate([
            (42, "jobs", "frame"), (None, "jobs", "frame"), ("x", "jobs", "frame"),
            ([{"method": "hare"}], "jobs", "frame"),
            (_frame({"method": ["hare"]}), "jobs", "frame"),
            (_frame({"method": ["hare"], "reference_method": ["exact"], "ratio": [1.0]}), 42, "x"),
            (_frame({"method": ["hare"], "reference_method": ["exact"], "ratio": [1.0]}), "size",
             "frame"),
        ])
    ],
    pytest.param(lambda _t: dlsched.solve_model(TOY, "noprogram"), "program",
                 id="solve_model-unknown-program"),
    *[
        pytest.param(lambda _t, m=m: dlsched.equations(m), word, id=f"equations-{m!r:.12}")
        for m, word in ((42, "argument m"), (None, "argument m"), (object(), "argument m"),
                        (["hare-sched"], "argument m"), ("noprogram", "program"))
    ],
]  # fmt: skip

CASES = [
    *_instance_cases(),
    *_keyword_cases("solve", _solve, SOLVE_BAD),
    *_keyword_cases("compare", _compare, COMPARE_BAD),
    *_keyword_cases("generate", _generate, GENERATE_BAD),
    *_keyword_cases("verify", _verify, VERIFY_BAD),
    *_keyword_cases("solve_model", _solve_model, SOLVE_MODEL_BAD),
    *OTHER_CASES,
]


def test_there_are_at_least_140_hostile_calls() -> None:
    assert len(CASES) >= 140


@pytest.mark.parametrize(("call", "word"), CASES)
def test_a_wrong_argument_is_one_line_naming_it(call: Call, word: str, tmp_path: Path) -> None:
    error = refusal(call, tmp_path)
    assert error is not None, "accepted"
    assert not isinstance(error, WorkStarted), "work started before the arguments were checked"
    ours = isinstance(error, DlschedError) or (
        type(error) is TypeError and str(error).startswith("argument ")
    )
    assert ours, f"{type(error).__name__}: {error}"  # never a raw error from deep inside
    text = str(error)
    assert "\n" not in text and len(text) < 600, text
    assert re.search(rf"(?<![a-z_]){re.escape(word)}", text), (word, text)
    assert not list(tmp_path.iterdir())  # nothing written


# --- the spellings the command line takes are taken -------------------------------------------


def test_a_comma_string_of_methods_is_split_as_on_the_command_line(monkeypatch) -> None:
    import dlsched.bounds

    seen: list[list[str]] = []

    def record(inst: Any, names: list[str], reference: str, options: Any) -> list[Any]:
        seen.append(names)
        return []

    monkeypatch.setattr(dlsched.bounds, "compare", record)
    api.compare(TOY, " hare, relaxation ", as_frame=False)
    api.compare(TOY, ["hare", "relaxation"], as_frame=False)
    api.compare(TOY, "hare", as_frame=False)
    assert seen == [["hare", "relaxation"], ["hare", "relaxation"], ["hare"]]


def test_a_dict_is_read_as_an_instance_file_and_an_instance_is_taken_as_it_is() -> None:
    inst = dlsched.load(TOY)
    data = families.of(inst).to_dict(inst)
    assert dlsched.load(data) == inst and dlsched.load(inst) is inst


def test_numpy_integers_and_floats_are_numbers_and_bools_are_not(monkeypatch) -> None:
    import numpy as np

    from dlsched import arguments

    assert arguments.integer("count", np.int64(3), 1) == 3
    assert arguments.seconds("time_limit", np.float32(2.5)) == 2.5
    with pytest.raises(TypeError, match="argument count = True: expected an integer"):
        arguments.integer("count", True, 1)
    with pytest.raises(TypeError, match="argument time_limit = False"):
        arguments.seconds("time_limit", False)


def test_the_start_of_a_solve_is_a_clock_reading_or_none() -> None:
    for start in ("now", True, [0.0]):
        with pytest.raises(TypeError, match="argument start = .*time.perf_counter"):
            dlsched.solve(TOY, "hare", start=start)


# --- the top-level names ----------------------------------------------------------------------

#: What the package's top level gives, whether anything was imported before or not.
TOP_LEVEL = (
    "import dlsched, types; "
    "calls = [n for n in dlsched.API if not callable(getattr(dlsched, n))]; "
    "subs = [type(dlsched.instances).__name__, dlsched.instances.__name__, "
    "dlsched.verify.__name__]; "
    "from dlsched.instances import load; "
    "import dlsched.verify.runner; "
    "print(calls, subs, dlsched.list_instances('hare')[0], "
    "dlsched.verify_theorems is dlsched.api.verify, load(dlsched.list_instances()[0]).family)"
)
EXPECTED_TOP_LEVEL = (
    "[] ['module', 'dlsched.instances', 'dlsched.verify'] hare/hetero-4gpu-6jobs True ddlwmp"
)


def test_the_top_level_names_in_a_fresh_interpreter() -> None:
    """``dlsched.list_instances`` and ``dlsched.verify_theorems`` are the calls, and
    ``dlsched.instances`` and ``dlsched.verify`` the subpackages, before anything is imported."""
    done = subprocess.run([sys.executable, "-c", TOP_LEVEL], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == EXPECTED_TOP_LEVEL


def test_the_top_level_names_after_a_solve(monkeypatch) -> None:
    """The same after a solve has imported the subpackages (run here without its method)."""
    import dlsched.models

    monkeypatch.setattr(dlsched.models.Method, "runner", lambda _self: lambda inst, o: "ran")
    assert dlsched.solve(TOY, "hare") == "ran"
    import dlsched.instances as instances_package
    import dlsched.verify as verify_package

    assert dlsched.instances is instances_package and dlsched.verify is verify_package
    assert all(callable(getattr(dlsched, name)) for name in dlsched.API)
    assert dlsched.list_instances is api.list_instances is api.instances
    assert dlsched.verify_theorems is api.verify_theorems is api.verify
    assert dlsched.list_instances("hare") == [n for n in dlsched.list_instances() if "hare/" in n]


def test_the_api_page_lists_only_names_that_work() -> None:
    """Every top-level name the API page shows is a call of the package or one of its modules
    (``dlsched.instances``, the subpackage, is never shown as a call), and every call is on it."""
    from importlib.util import find_spec

    page = (Path(__file__).parents[2] / "docs" / "api.md").read_text()
    shown = set(re.findall(r"`dlsched\.([a-z_]+)`", page))
    calls = {name for name in shown if name in dlsched.API}
    assert calls == set(dlsched.API)
    assert all(callable(getattr(dlsched, name)) for name in calls)
    assert all(find_spec(f"dlsched.{name}") is not None for name in shown - calls)
    assert not re.search(r"dlsched\.(instances|verify)\(", page)
