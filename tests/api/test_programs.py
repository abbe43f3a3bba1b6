"""dlsched.model / solve_model / programs / equations: the papers' programs as Pyomo models a
student can change (each family's ``programs`` part), solved and read back through the family's
checker; the equation index of the documentation."""

from __future__ import annotations

import importlib.util
import itertools
import re
from pathlib import Path

import pyomo.environ as pyo
import pytest

import dlsched
from dlsched import families
from dlsched.api_models import all_programs, equations
from dlsched.errors import InfeasibleSolutionError, OptionError
from dlsched.models.elastic.enumerate import ps_count
from dlsched.models.elastic.problem13 import Case, MinCostPlacement, check_problem13
from dlsched.models.hare.online.grouping import group_gpus, speed_matrix, spread
from dlsched.solvers.base import DEFAULT_TIME_LIMIT, Status
from dlsched.solvers.deadline import Deadline

#: one small bundled instance per program (and its parameters)
CASES = {
    "p1": ("placement/liu2024-motivating", {}),
    "hare-sched": ("hare/toy-2gpu", {}),
    "hare-sched-rl": ("hare/toy-2gpu", {}),
    "ddlwmp-8": ("ddlwmp/toy-2x4", {}),
    "elastic-packing": ("elastic/ring-2jobs", {}),
    "elastic-13": (
        "elastic/theorem1-counterexample",
        {"n": 3, "prices": [[0.0, 0.0], [0.01, 10.0]], "free": [[3, 8], [3, 8]]},
    ),
    "gpu-grouping": ("hare/hetero-4gpu-6jobs", {"groups": 2}),
}
EQUATION = re.compile(r"\(\d+[a-z]?\)")


def test_every_program_has_a_case():
    assert set(CASES) == set(all_programs())
    assert [p.name for p in dlsched.programs()] == list(all_programs())


def test_the_programs_are_the_families_parts():
    """Each family declares its programs; the listing is theirs in registry order, and
    problem (13) of the elastic family is among them."""
    declared = [p.info for f in families.names() for p in families.get(f).programs()]
    assert dlsched.programs() == declared
    assert [p.name for p in dlsched.programs("elastic")] == ["elastic-packing", "elastic-13"]
    (p13,) = [p for p in dlsched.programs() if p.name == "elastic-13"]
    assert p13.family == "elastic" and "(13)" in p13.equations and "(21)" in p13.equations


def test_programs_of_a_family():
    assert [p.name for p in dlsched.programs("hare")] == [
        "hare-sched",
        "hare-sched-rl",
        "gpu-grouping",
    ]
    assert all(p.family == "placement" for p in dlsched.programs("placement"))
    with pytest.raises(OptionError, match="unknown family"):
        dlsched.programs("nope")


@pytest.mark.parametrize("program", list(CASES))
def test_every_component_cites_an_equation(program):
    name, params = CASES[program]
    m = dlsched.model(name, program, **params)
    rows = equations(m)
    assert rows, program
    for component, doc, active in rows:
        assert active
        assert doc and EQUATION.search(doc), (program, component, doc)
        if "symmetry" in doc:  # a constraint the paper does not state says so
            assert doc.startswith("not in the paper")


@pytest.mark.parametrize("program", [p for p in CASES if p != "hare-sched-rl"])
def test_model_gives_the_exact_routes_optimum(program):
    name, params = CASES[program]
    out = dlsched.solve_model(name, dlsched.model(name, program, **params), time_limit=60)
    assert out.method == f"model:{program}"
    assert out.status == Status.OPTIMAL
    assert out.details["inactive"] == [] and out.details["added"] == []
    if program == "elastic-13":  # a sub-problem: every placement the checker accepts
        inst = dlsched.load(name)
        assert out.objective == pytest.approx(_cheapest_placement(inst, params), abs=1e-9)
    elif program == "gpu-grouping":  # no exact method of the family: the route and brute force
        inst = dlsched.load(name)
        expected = group_gpus(inst, 2, "exact", deadline=Deadline.after(DEFAULT_TIME_LIMIT)).spread
        assert out.objective == pytest.approx(expected, abs=1e-9)
        assert out.objective == pytest.approx(_best_two_groups(inst), abs=1e-9)
    else:
        exact = dlsched.solve(name, "exact", time_limit=60)
        assert exact.status == Status.OPTIMAL
        assert out.objective == pytest.approx(exact.objective, rel=1e-9)


def _best_two_groups(inst) -> float:
    """The least spread over every split of the GPUs into two non-empty groups."""
    s = speed_matrix(inst)
    gpus = range(inst.num_gpus)
    splits = (
        (tuple(g for g in gpus if g not in first), first)
        for k in range(1, inst.num_gpus)
        for first in itertools.combinations(gpus, k)
    )
    return min(spread(s, split) for split in splits)


def _cheapest_placement(inst, params) -> float:
    """The least cost of (13) over every placement of the workers and PSs on the servers that
    :func:`check_problem13` accepts (brute force)."""
    case = Case(0, 0, params["n"], False, tuple(map(tuple, params["prices"])),
                tuple(map(tuple, params["free"])))  # fmt: skip
    servers, most = range(inst.num_servers), ps_count(inst, 0, 0, case.n)
    best = float("inf")
    for y in itertools.product(range(case.n + 1), repeat=inst.num_servers):
        for s in itertools.product(range(most + 1), repeat=inst.num_servers):
            try:
                best = min(best, check_problem13(inst, MinCostPlacement(case, y, s)))
            except InfeasibleSolutionError:
                continue
    assert best < float("inf") and len(servers) == 2
    return best


def test_problem13_is_the_mincost_oracles_reference():
    """The program's optimum is the MILP's that Theorem 1's measure compares A_mincost1 with
    (10.01 on this counterexample, where A_mincost1 costs 30), and A_mincost1's own placement
    passes the checker at its cost."""
    import numpy as np

    from dlsched.models.elastic.guarantees import problem13_costs
    from dlsched.models.elastic.mincost import mincost1_fixed

    name, params = CASES["elastic-13"]
    inst = dlsched.load(name)
    win, room = np.array(params["prices"]), np.array(params["free"], dtype=float)
    out = dlsched.solve_model(name, "elastic-13", **params)
    _, exact, _ = problem13_costs(inst, 0, 0, 3, False, win, room)
    assert out.objective == pytest.approx(exact) == pytest.approx(10.01)
    cost, y, s = mincost1_fixed(inst, 0, 0, 3, win, room)
    assert check_problem13(inst, MinCostPlacement(out.solution.case, tuple(y), tuple(s))) == cost
    assert cost == pytest.approx(30.0)


def test_the_equation_index_is_the_builders_docs():
    """dlsched.equations(program) lists what the builder gives each component; the
    documentation's page is generated from it."""
    for program, (name, params) in CASES.items():
        built = {c: doc for c, doc, _ in equations(dlsched.model(name, program, **params))}
        index = {c: doc for c, doc, _ in equations(program)}
        assert built.items() <= index.items(), program
    spec = importlib.util.spec_from_file_location(
        "hooks", Path(__file__).parents[2] / "docs" / "hooks.py"
    )
    assert spec is not None and spec.loader is not None
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    page = (Path(__file__).parents[2] / "docs" / "equations.md").read_text()
    text = hooks.on_page_markdown(page)
    assert hooks.EQUATION_INDEX in page and hooks.EQUATION_INDEX not in text
    for p in dlsched.programs():
        assert f"## `{p.name}`" in text
    assert "| `round_barrier` | (7): round r + 1 starts after every task of round r" in text
    with pytest.raises(OptionError, match="unknown program"):
        equations("nope")


def test_relaxation_returns_the_relaxation_methods_bound():
    name = "hare/toy-2gpu"
    out = dlsched.solve_model(name, "hare-sched-rl")
    assert out.status == Status.BOUND and out.objective is None and out.solution is None
    assert out.bound == pytest.approx(dlsched.solve(name, "relaxation").bound, rel=1e-9)
    assert out.bound < 13.5  # below Hare_Sched's optimum on the instance


def test_a_constraint_not_binding_changes_nothing():
    """(4) is implied by x's bounds; the symmetry cut keeps an optimum; P1's node order too."""
    for constraint in ("arrival", "identical_tasks_ordered"):
        m = dlsched.model("hare/toy-2gpu", "hare-sched")
        getattr(m, constraint).deactivate()
        out = dlsched.solve_model("hare/toy-2gpu", m)
        assert out.status == Status.OPTIMAL and out.objective == pytest.approx(13.5)
        assert out.details["inactive"] == [constraint]
    m = dlsched.model("placement/liu2024-motivating", "p1")
    m.identical_nodes_ordered.deactivate()
    out = dlsched.solve_model("placement/liu2024-motivating", m)
    assert out.objective == pytest.approx(10592.029453922, rel=1e-9)


@pytest.mark.parametrize(
    ("name", "program", "constraint", "says"),
    [
        ("hare/toy-2gpu", "hare-sched", "round_barrier", r"\(7\)"),
        ("hare/toy-2gpu", "hare-sched", "no_overlap", r"\(8\)"),
        ("hare/toy-2gpu", "hare-sched", "assign_once", r"not scheduled .*\(5\)"),
        ("hare/toy-2gpu", "hare-sched", "completion", r"below the checker's .*\(6\)"),
        ("elastic/ring-2jobs", "elastic-packing", "capacity", r"\(2h\)/\(15b\)"),
        ("elastic/ring-2jobs", "elastic-packing", "one_schedule", r"not scheduled \(2a\)"),
        ("ddlwmp/toy-2x4", "ddlwmp-8", "server_capacity", r"> 4 GPUs"),
        ("ddlwmp/toy-2x4", "ddlwmp-8", "start_once", r"starts 0 times .*\(2\)"),
        ("placement/liu2024-motivating", "p1", "every_worker_serves_one_job", r"\(8c\)-\(8d\)"),
        ("placement/liu2024-motivating", "p1", "throughput", r"below .*\(13\)"),
        ("hare/hetero-4gpu-6jobs", "gpu-grouping", "one_group", r"not a partition .*\(4\)"),
        ("elastic/theorem1-counterexample", "elastic-13", "not_all_on", r"q = 0 .*\(13a\)"),
        ("elastic/theorem1-counterexample", "elastic-13", "bandwidth", r"cover too little"),
    ],
)
def test_dropping_a_constraint_lowers_the_optimum_and_the_checker_refuses(
    name, program, constraint, says
):
    params = CASES[program][1]
    optimum = dlsched.solve_model(name, program, **params).objective
    m = dlsched.model(name, program, **params)
    getattr(m, constraint).deactivate()
    with pytest.raises(InfeasibleSolutionError, match=says) as err:
        dlsched.solve_model(name, m)
    assert "\n" not in str(err.value)
    objective = next(o for o in m.component_data_objects(pyo.Objective, active=True))
    assert pyo.value(objective) <= optimum + 1e-6  # the model's answer was loaded into m


def test_the_relaxation_without_nine_is_a_weaker_bound():
    m = dlsched.model("hare/toy-2gpu", "hare-sched-rl")
    m.queyranne.deactivate()
    out = dlsched.solve_model("hare/toy-2gpu", m)
    assert out.status == Status.BOUND and out.bound <= 11.5 - 1  # (9) was worth 2.5 here


def test_forcing_a_job_onto_the_slow_gpu():
    """Job j2 (one task, weight 2, arrives at 1) forced onto the slow GPU: it ends at 3, and j1
    has only the fast GPU until then, its two rounds of two tasks ending at 4.5 and 9 (the slow
    GPU would end its second round at 9.5): 2 * 3 + 9 = 15 > 13.5."""
    m = dlsched.model("hare/toy-2gpu", "hare-sched")
    m.force = pyo.Constraint(expr=m.y[1, 0, 0, 1] == 1)
    out = dlsched.solve_model("hare/toy-2gpu", m)
    assert out.status == Status.OPTIMAL and out.objective == pytest.approx(15.0)
    assert out.solution.as_dict()[(1, 0, 0)][0] == 1
    assert out.details["added"] == ["force"]


def test_forcing_three_workers_on_a_job_is_p2():
    """Job 0 on at least 3 of the 4 workers: the category (3, 1), whose optimum the P2 route
    of the family (columns) finds."""
    name = "placement/liu2024-motivating"
    m = dlsched.model(name, "p1")
    m.force = pyo.Constraint(expr=sum(m.n[0, g] for g in m.GROUPS) >= 3)
    out = dlsched.solve_model(name, m)
    p2 = dlsched.solve(name, "exact", category=(3, 1))
    assert out.status == p2.status == Status.OPTIMAL
    assert out.objective == pytest.approx(p2.objective, rel=1e-9)
    assert out.objective > 10592.03  # above P1's optimum
    assert out.solution.counts(2) == (3, 1)


def test_a_changed_objective_is_refused():
    m = dlsched.model("elastic/ring-2jobs", "elastic-packing")
    m.weighted_completion.expr = m.weighted_completion.expr + 5
    with pytest.raises(OptionError, match="no longer states the objective"):
        dlsched.solve_model("elastic/ring-2jobs", m)


def test_bad_requests_are_one_line_errors():
    with pytest.raises(OptionError, match="unknown program"):
        dlsched.model("hare/toy-2gpu", "hare-sched-2")
    with pytest.raises(OptionError, match="is a placement program"):
        dlsched.model("hare/toy-2gpu", "p1")
    with pytest.raises(OptionError, match="not a parameter of hare-sched"):
        dlsched.model("hare/toy-2gpu", "hare-sched", groups=2)
    with pytest.raises(OptionError, match="solved by scip"):
        dlsched.solve_model("placement/liu2024-motivating", "p1", backend="highs")
    m = dlsched.model("hare/toy-2gpu", "hare-sched")
    with pytest.raises(OptionError, match="built for another"):
        dlsched.solve_model("hare/lemma2-counterexample", m)
    with pytest.raises(OptionError, match="not built by dlsched.model"):
        dlsched.solve_model("hare/toy-2gpu", pyo.ConcreteModel())


def test_the_time_limit_is_handed_to_the_solver(monkeypatch):
    import dlsched.solvers

    seen = []
    real = dlsched.solvers.solve

    def spy(model, backend, options):
        seen.append((backend, options.time_limit))
        return real(model, backend, options)

    monkeypatch.setattr(dlsched.solvers, "solve", spy)
    out = dlsched.solve_model("elastic/ring-2jobs", "elastic-packing", time_limit=7)
    assert out.status == Status.OPTIMAL
    ((backend, limit),) = seen
    assert backend == "highs" and 0 < limit <= 7  # what building left of the 7 s
