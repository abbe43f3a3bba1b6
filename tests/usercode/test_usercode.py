"""A user's own method (dlsched/usercode.py): named by a spec or registered, run like a shipped
method and judged by the family's checker against the certified optimum; what the user's code
does wrong (it raises, answers infeasibly, never returns, returns the wrong form) is the user's
error, in process and through compare, never a dlsched traceback, and the other rows stay."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from cli_run import run
from fake_clock import forked
from hypothesis import given, settings
from strategies import hare_brute_force, tiny_instances

import dlsched
from dlsched import usercode
from dlsched.errors import OptionError, UserCodeError
from dlsched.models import methods

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "examples" / "rules.py"
TOY = "hare/toy-2gpu"  # optimum 13.5

BAD = """
import time


def helper(instance):
    return {"tasks": []}[instance.name]


def raises(instance):
    return helper(instance)


def infeasible(instance):
    return {"tasks": [{"job": j.name, "round": r, "index": k, "gpu": 0, "start": 0.0}
                      for j in instance.jobs for r in range(j.rounds)
                      for k in range(j.tasks_per_round)]}


def hangs(instance):
    while True:
        time.sleep(0.01)


def wrong_type(instance):
    return 3


def prints(instance):
    print("hello from the rule")
    from rules import hare_all_on_gpu0
    return hare_all_on_gpu0(instance)


NOT_CALLABLE = 7
"""


@pytest.fixture
def bad(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A user's file of bad rules, in the current folder (specs are relative to it)."""
    (tmp_path / "bad.py").write_text(BAD)
    (tmp_path / "broken.py").write_text("def f(instance:\n    return 1\n")
    (tmp_path / "rules.py").write_text(RULES.read_text())
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


@pytest.fixture(autouse=True)
def clean_registry() -> Any:
    yield
    usercode.REGISTERED.clear()


# --- specs -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "words"),
    [
        ("missing.py:f", ["no file 'missing.py'"]),
        ("bad.py:nothing", ["bad.py has no attribute 'nothing'"]),
        ("bad.py:NOT_CALLABLE", ["is a int"]),
        ("broken.py:f", ["syntax error in broken.py line 1"]),
        ("no_such_module.x:f", ["no module named 'no_such_module'"]),
        ("rules:nothing", ["rules has no attribute 'nothing'"]),
    ],
)
def test_a_bad_spec_is_one_line_naming_it(bad: Path, capsys: Any, spec: str, words: list[str]):
    with pytest.raises(OptionError, match="option --method") as e:
        dlsched.solve(TOY, spec)
    assert spec in str(e.value) and "\n" not in str(e.value)
    for w in words:
        assert w in str(e.value)
    code, out, err = run(capsys, "solve", TOY, "--method", spec)
    assert code == 2 and out == "" and err.count("\n") == 1 and "Traceback" not in err
    assert spec in err


def test_specs_of_a_file_and_of_a_module_name_the_same_function(bad: Path) -> None:
    by_file = dlsched.solve(TOY, "rules.py:hare_all_on_gpu0")
    by_module = dlsched.solve(TOY, "rules:hare_all_on_gpu0")
    assert by_file.objective == by_module.objective == 32.0
    assert by_file.method == "rules.py:hare_all_on_gpu0"
    assert "rules.py:hare_all_on_gpu0" in methods("hare")  # registered under the spec


# --- running like a shipped method ----------------------------------------------------------


def test_a_rule_is_checked_and_judged_against_the_certified_optimum(bad: Path) -> None:
    out = dlsched.solve(TOY, "rules.py:hare_greedy")
    assert str(out.status) == "feasible" and out.bound is None  # a heuristic proves nothing
    rows = dlsched.compare(TOY, ["rules.py:hare_greedy", "hare"], as_frame=False)
    assert [r.method for r in rows] == ["exact", "rules.py:hare_greedy", "hare"]
    assert rows[1].reference_kind == "optimum" and rows[1].reference == 13.5
    assert rows[1].ratio == pytest.approx(out.objective / 13.5)


def hare_optimal_on_toy(instance: Any) -> Any:
    """An optimal schedule of hare/toy-2gpu, written as a user would: still status feasible."""
    return dlsched.solve(instance, "exact").solution


def test_a_rule_at_the_optimum_is_still_feasible_not_optimal() -> None:
    out = dlsched.solve(TOY, hare_optimal_on_toy)
    assert out.objective == 13.5 and str(out.status) == "feasible"


def test_a_function_passed_itself_is_registered_under_a_readable_name() -> None:
    out = dlsched.solve(TOY, hare_optimal_on_toy)
    assert out.method == f"{__name__}:hare_optimal_on_toy"
    anonymous = dlsched.compare(TOY, [lambda i: hare_optimal_on_toy(i)], as_frame=False)
    assert anonymous[1].method.startswith("lambda-") and anonymous[1].ratio == 1.0


def test_a_registered_guarantee_is_judged_by_compare(bad: Path) -> None:
    sys.path.insert(0, str(bad))
    from rules import hare_all_on_gpu0

    name = dlsched.register(hare_all_on_gpu0, family="hare", name="gpu0", guarantee=2)
    assert name == "gpu0" and "gpu0" in dlsched.methods("hare").name.tolist()
    row = dlsched.compare(TOY, "gpu0", as_frame=False)[1]
    assert row.guarantee == 2 and row.holds is False  # 32 / 13.5 > 2
    dlsched.register(hare_all_on_gpu0, family="hare", name="gpu0", guarantee=lambda i: 3.0)
    row = dlsched.compare(TOY, "gpu0", as_frame=False)[1]
    assert row.guarantee == 3 and row.holds is True


def test_a_registered_function_passed_itself_keeps_its_name_and_guarantee() -> None:
    """Handing compare the registered function itself (not its name) judges it by the
    guarantee it was registered with; it is not registered again without one."""

    def rule(instance: Any) -> Any:
        return hare_optimal_on_toy(instance)

    name = dlsched.register(rule, family="hare", name="kept", guarantee=0.5)
    row = dlsched.compare(TOY, [rule], as_frame=False)[1]
    assert (row.method, row.guarantee, row.holds) == ("kept", 0.5, False)  # 1 > 0.5
    assert usercode.find("hare", name).guarantee == 0.5
    assert dlsched.solve(TOY, rule).method == "kept"


def test_register_refuses_what_it_cannot_run() -> None:
    with pytest.raises(OptionError, match="shipped method"):
        dlsched.register(hare_optimal_on_toy, family="hare", name="hare")
    with pytest.raises(OptionError, match="unknown family"):
        dlsched.register(hare_optimal_on_toy, family="nope")
    with pytest.raises(OptionError, match="guarantee"):
        dlsched.register(hare_optimal_on_toy, family="hare", guarantee="2")
    with pytest.raises(OptionError, match="a function, a class or a policy"):
        dlsched.register(3, family="hare")


def test_a_policy_in_a_family_without_policies_is_refused(monkeypatch: Any) -> None:
    class Policy:
        def decide(self, view: Any) -> Any:
            return []

    family = dlsched.families.get("placement")
    monkeypatch.setattr(family, "run_policy", None, raising=False)
    name = dlsched.register(Policy, family="placement", name="mine")
    with pytest.raises(OptionError, match="takes no online policies"):
        dlsched.solve("placement/liu2024-motivating", name)


@settings(max_examples=10, deadline=None)
@given(inst=tiny_instances())
def test_the_checker_judges_a_rule_against_the_brute_force_optimum(inst: Any) -> None:
    sys.path.insert(0, str(ROOT / "examples"))
    from rules import hare_greedy

    out = dlsched.solve(inst, hare_greedy, time_limit=None)
    assert out.objective >= hare_brute_force(inst) - 1e-6


# --- the four kinds of bad code -------------------------------------------------------------


def test_a_rule_that_raises_shows_its_own_traceback(bad: Path, capsys: Any) -> None:
    with pytest.raises(UserCodeError) as e:
        dlsched.solve(TOY, "bad.py:raises")
    assert str(e.value) == "bad.py:raises raised KeyError: 'toy-2gpu'"
    tb = e.value.user_traceback
    assert tb.startswith(usercode.TRACEBACK_HEAD)
    assert "in raises" in tb and "in helper" in tb and "dlsched/" not in tb
    code, out, err = run(capsys, "solve", TOY, "--method", "bad.py:raises")
    assert code == 2 and out == ""
    assert err.startswith(usercode.TRACEBACK_HEAD) and "dlsched/" not in err
    last = err.rstrip().splitlines()[-1]
    assert last == "dlsched: error: bad.py:raises raised KeyError: 'toy-2gpu'"


def test_an_infeasible_answer_names_the_checkers_first_violation(bad: Path) -> None:
    with pytest.raises(UserCodeError, match=r"infeasible answer: task j1/r1/t0 .* \(7\)"):
        dlsched.solve(TOY, "bad.py:infeasible")


def test_a_wrong_return_names_the_form(bad: Path) -> None:
    with pytest.raises(UserCodeError) as e:
        dlsched.solve(TOY, "bad.py:wrong_type")
    assert str(e.value) == (
        "bad.py:wrong_type: a hare rule must return a TaskSchedule or {'tasks': [{'job', "
        "'round', 'index', 'gpu', 'start'}, ...]}, got int"
    )


def test_a_rule_that_never_returns_ends_at_its_limit(bad: Path, monkeypatch: Any) -> None:
    """Killed at the limit handed to its forked child (the fork recorded, never waited for)."""
    handed = forked(monkeypatch, kill=True)
    out = dlsched.solve(TOY, "bad.py:hangs", time_limit=10)
    assert str(out.status) == "time_limit" and out.objective is None
    assert "did not return within its time limit" in out.details["reason"]
    seconds, left = handed[0]
    assert left == pytest.approx(10, abs=0.5)  # the method's deadline, whole
    assert seconds == pytest.approx(10 - 2 * 1.0 + 1.0, abs=0.5)  # for_fork, plus a grace


def test_a_rule_that_never_returns_is_killed(bad: Path) -> None:
    out = dlsched.solve(TOY, "bad.py:hangs", time_limit=0.5)
    assert str(out.status) == "time_limit"


def test_what_a_rule_prints_goes_to_stderr(bad: Path, capsys: Any) -> None:
    code, out, err = run(capsys, "solve", TOY, "--method", "bad.py:prints", "--json")
    assert code == 0 and "hello from the rule" not in out
    assert '"status": "feasible"' in out


def test_compare_keeps_every_row_and_shows_the_users_errors(bad: Path, capsys: Any) -> None:
    names = "bad.py:raises,bad.py:infeasible,bad.py:hangs,bad.py:wrong_type,hare"
    code, out, err = run(capsys, "compare", TOY, "--methods", names, "--time-limit", "5")
    assert code == 0  # a failed method is a result: its row says so
    assert "bad.py:raises: bad.py:raises raised KeyError" in out
    assert "bad.py:raises on toy-2gpu:\n" + usercode.TRACEBACK_HEAD in err
    code, out, _ = run(capsys, "compare", TOY, "--methods", names, "--time-limit", "5", "--json")
    rows = {r["method"]: r for r in json.loads(out)}
    assert rows["bad.py:raises"]["status"] == "error"
    assert "KeyError" in rows["bad.py:raises"]["error"]
    assert "in helper" in rows["bad.py:raises"]["traceback"]
    assert "(7)" in rows["bad.py:infeasible"]["error"]
    assert rows["bad.py:hangs"]["status"] == "time_limit"
    assert "got int" in rows["bad.py:wrong_type"]["error"]
    assert rows["hare"]["status"] == "feasible" and rows["hare"]["ratio"] is not None
    assert "error" not in rows["hare"] and "error" not in rows["exact"]


def test_sweep_in_process_writes_every_row_with_the_errors(bad: Path, capsys: Any) -> None:
    out_file = bad / "sw.jsonl"
    argv = ["sweep", "hare", "--count", "2", "--jobs", "2", "--gpus", "2", "--methods",
            "bad.py:raises,rules.py:hare_greedy", "--processes", "0", "--quiet",
            "--time-limit", "20", "-o", str(out_file)]  # fmt: skip
    code, out, err = run(capsys, *argv)
    assert code == 0 and "errors of your methods: 2" in out
    rows = [json.loads(line) for line in out_file.read_text().splitlines()]
    assert len(rows) == 6
    assert {r["status"] for r in rows if r["method"] == "bad.py:raises"} == {"error"}
    assert all(r["ratio"] >= 1 - 1e-9 for r in rows if r["method"] == "rules.py:hare_greedy")
