"""A heuristic reports its own run unless a bound is asked for (``MethodOptions.bound``,
``dlsched solve --bound``, ``dlsched.solve(..., bound=True)``): without it, status feasible and
no bound, gap or bound_time; with it, the online families' certified flow-time bound beside
the same schedule, its seconds apart from the wall time, computed once per instance and shared
by the methods compared on it. ``solve --json`` writes the same text as before, as it goes."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

import dlsched
from dlsched.errors import OptionError
from dlsched.models import MethodOptions, run_method
from dlsched.result import json_safe, write_json
from dlsched.solvers import Status

#: An online heuristic and a bundled instance of each online family.
ONLINE = [
    ("hare/tcc2024-fig12", "hlas"),
    ("elastic/intro-cifar10", "a-online"),
    ("ddlwmp/toy-2x4", "a-srpt"),
]
#: What only a bound adds to a heuristic's details.
BOUND_KEYS = {
    "flow_time_bound_s",
    "flow_time_gap",
    "weighted_completion_bound",
    "weighted_completion_gap",
    "flow_time_bound_lemma1_s",
    "flow_time_bound_lp_s",
    "bound_time",
}


def _steady(details: dict[str, Any]) -> dict[str, Any]:
    """The details but the bound's and the timings."""
    return {k: v for k, v in details.items() if k not in BOUND_KEYS and not k.endswith("_time")}


@pytest.mark.parametrize(("name", "method"), ONLINE)
def test_without_a_bound_a_heuristic_is_feasible_and_shows_no_gap(name: str, method: str) -> None:
    out = dlsched.solve(name, method)
    assert out.status == Status.FEASIBLE
    assert out.bound is None and out.gap is None
    assert not BOUND_KEYS & set(out.details)
    assert out.details["flow_time_s"] > 0


@pytest.mark.parametrize(("name", "method"), ONLINE)
def test_a_bound_adds_to_the_same_run(name: str, method: str) -> None:
    """The same schedule, objective, status and details, plus the bound's: the flow time at
    least the bound, the gap from them, and bound_time."""
    inst = dlsched.load(name)
    plain = run_method(inst, method)
    bounded = run_method(inst, method, MethodOptions(bound=True))
    assert bounded.objective == plain.objective and bounded.status == plain.status
    assert bounded.solution == plain.solution
    d = bounded.details
    assert _steady(d) == _steady(plain.details)
    assert 0 < d["flow_time_bound_s"] <= d["flow_time_s"] * (1 + 1e-9)
    assert d["flow_time_gap"] == pytest.approx(1 - d["flow_time_bound_s"] / d["flow_time_s"])
    assert d["bound_time"] >= 0
    assert list(d)[-1] == "bound_time"


class _Clock:
    """A clock that moves only when the bound is computed (by :attr:`step`)."""

    def __init__(self) -> None:
        self.now = 0.0
        self.step = 100.0

    def __call__(self) -> float:
        return self.now


def test_wall_time_is_the_run_and_bound_time_the_bound(monkeypatch) -> None:
    """The bound's seconds are reported apart: with a clock that moves only while the bound
    is computed, the run's wall time does not include them and bound_time is them."""
    from dlsched.models.ddlwmp import flowlp

    clock = _Clock()
    real = flowlp.compute_flow_bound

    def slow(*args: Any) -> Any:
        clock.now += clock.step
        return real(*args)

    monkeypatch.setattr(flowlp, "compute_flow_bound", slow)
    inst = dlsched.load("ddlwmp/toy-2x4")
    out = run_method(inst, "a-srpt", MethodOptions(bound=True, clock=clock, time_limit=None))
    assert out.wall_time == 0.0
    assert out.details["bound_time"] == clock.step


def test_compare_computes_the_bound_once_and_shares_it(monkeypatch) -> None:
    """``compare(..., bound=True)``: one bound for the instance whatever the methods, each
    record with its flow-time gap; without a bound, none computed and the records as before
    (no bound fields in their JSON)."""
    from dlsched.models.hare.online import bounds

    calls: list[int] = []
    real = bounds.flow_bound
    monkeypatch.setattr(bounds, "flow_bound", lambda *a: calls.append(1) or real(*a))
    methods = ["hlas", "online-fifo", "2d-las"]
    rows = dlsched.compare("hare/tcc2024-fig12", methods, "exact", as_frame=False, bound=True)
    assert len(calls) == 1
    online = [r for r in rows if r.method in methods]
    assert len(online) == 3 and all(0 <= r.flow_time_gap < 1 for r in online)
    assert sum(r.bound_time > 0 for r in online) >= 1
    assert all(r.bound_time is None for r in rows if r.method == "exact")
    calls.clear()
    plain = dlsched.compare("hare/tcc2024-fig12", methods, "exact", as_frame=False)
    assert not calls
    assert all("bound_time" not in r.to_json() for r in plain)
    assert [r.objective for r in plain] == [r.objective for r in rows]


def test_bound_must_be_true_or_false() -> None:
    with pytest.raises(OptionError, match="bound"):
        MethodOptions(bound="yes")  # type: ignore[arg-type]


def test_the_command_line_flag(capsys) -> None:
    from dlsched.cli import main

    assert main(["solve", "hare/tcc2024-fig12", "--method", "hlas"]) == 0
    plain = capsys.readouterr().out
    flow = next(ln for ln in plain.splitlines() if ln.startswith("flow time"))
    assert "bound" not in flow
    assert main(["solve", "hare/tcc2024-fig12", "--method", "hlas", "--bound", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)["details"]
    assert d["flow_time_bound_s"] <= d["flow_time_s"] and d["bound_time"] >= 0
    assert main(["solve", "hare/tcc2024-fig12", "--method", "hlas", "--param", "bound=1"]) == 2
    assert "bound" in capsys.readouterr().err


# --- the JSON answer, written as it goes -------------------------------------------------------

#: A method with a solution on a bundled instance of each family.
SOLVED = [
    ("placement/liu2024-motivating", "exact"),
    ("hare/toy-2gpu", "hare"),
    ("hare/tcc2024-fig12", "hlas"),
    ("ddlwmp/toy-2x4", "a-srpt"),
    ("ddlwmp/toy-2x4", "exact"),
    ("elastic/intro-cifar10", "exact"),
]


def _text(value: Any) -> str:
    import io

    out = io.StringIO()
    write_json(value, out)
    return out.getvalue()


@pytest.mark.parametrize(("name", "method"), SOLVED)
def test_the_json_answer_is_the_same_text(name: str, method: str, monkeypatch, capsys) -> None:
    """``dlsched solve --json``: byte for byte what ``json.dumps(..., indent=1)`` of the whole
    answer printed."""
    from dlsched import api
    from dlsched.cli import main

    inst = dlsched.load(name)
    out = run_method(inst, method, MethodOptions(bound=True))
    monkeypatch.setattr(api, "solve", lambda *a, **k: out)
    assert main(["solve", name, "--method", method, "--json"]) == 0
    printed = capsys.readouterr().out
    assert printed == json.dumps(json_safe(out.to_json(inst)), indent=1) + "\n"


def test_the_writer_matches_json_dumps_on_every_kind_of_value() -> None:
    shared = {"0": [1, 0], "1": [0, 1]}
    value = {
        "a": [1, 2.5, float("nan"), float("inf"), None, True, 'x\ny"z', "é"],
        "empty": {},
        "none": [],
        "tuple": (1, (2, 3)),
        "numpy": np.arange(3),
        "scalar": np.float64(1.5),
        7: {"jobs": {"j0": {"p": shared}, "j1": {"p": shared, "q": [shared]}}},
        "deep": {"b": {"c": {"d": {"e": [shared, {"f": shared}]}}}},
    }
    assert _text(value) == json.dumps(json_safe(value), indent=1)
    for scalar in (1, 2.0, "s", None, float("-inf")):
        assert _text(scalar) == json.dumps(json_safe(scalar), indent=1)
