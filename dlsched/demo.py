"""``dlsched demo``: every method on the bundled instances, verified, beside the certified
optimum (or bound) and the applicable guarantee."""

from __future__ import annotations

from dlsched import families
from dlsched.bounds import TABLE_COLUMNS, Comparison, compare, format_table
from dlsched.instances import load
from dlsched.models import MethodOptions
from dlsched.solvers import SolverSettings
from dlsched.solvers.deadline import Deadline

COLUMNS = tuple(c for c in TABLE_COLUMNS if c != "guarantee_name")
INTRO = (
    "dlsched demo: each objective is re-verified by its family checker from the raw instance.",
    "'value' is a method's objective, or its certified lower bound when 'value_kind' is bound",
    "(status 'bound': a method that gives a lower bound and no schedule, such as a relaxation);",
    "'ratio' is value / certified optimum ('reference_kind' says if only a bound is known);",
    "'guarantee' is the applicable theorem's bound on the ratio (blank: none applies).",
)


def _show(name: str, rows: list[Comparison]) -> None:
    print(f"\n== {name}")
    print(format_table(rows, COLUMNS))


def run_demo(quick: bool = False) -> int:
    started = Deadline.never()
    opts = MethodOptions(solve=SolverSettings(seed=0), time_limit=60)
    for line in INTRO:
        print(line)
    for name in families.names():
        family = families.get(name)
        print(f"\n# {name} ({family.paper})")
        for inst_name, methods in family.demo(quick):
            _show(inst_name, compare(load(inst_name), list(methods), "exact", opts))
        for line in family.demo_notes(quick):
            print(line)

    print(f"\ndemo finished in {started.elapsed():.1f} s")
    return 0
