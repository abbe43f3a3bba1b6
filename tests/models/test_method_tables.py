"""The method tables: every entry's route resolves (a table names routes as "module:function",
imported only when they run, so a misspelt name would otherwise surface only then), every
family has a rounding of an LP relaxation, and what a rounding rounds and guarantees is shown."""

from __future__ import annotations

import subprocess
import sys

import pytest

from dlsched import families
from dlsched.models import methods

FAMILIES = families.names()


@pytest.mark.parametrize("family", FAMILIES)
def test_every_route_named_by_a_table_resolves(family: str) -> None:
    for name, m in methods(family).items():
        assert callable(m.runner()), f"{family} {name}: {m.run!r}"


@pytest.mark.parametrize("family", FAMILIES)
def test_every_family_rounds_an_lp_relaxation(family: str) -> None:
    rounding = {n: m for n, m in methods(family).items() if m.rounds}
    assert rounding, f"{family}: no method rounds a relaxation"
    for name, m in rounding.items():
        assert m.guarantee, f"{family} {name}: what it guarantees is not said"
        assert not m.exact, f"{family} {name}: a rounding cannot certify an optimum"


def test_dlsched_methods_shows_what_a_rounding_rounds_and_guarantees() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "dlsched.cli", "methods", "elastic"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    lines = out.splitlines()
    (row,) = [i for i, line in enumerate(lines) if line.startswith("lp-round ")]
    assert "(rounds " in lines[row]
    assert lines[row + 1].strip().startswith("guarantee: ")


def test_a_name_in_two_of_a_familys_tables_is_refused(monkeypatch) -> None:
    """Online hare's srtf once shadowed hare's offline srtf baseline: the merged table would have
    run the wrong policy under the old name."""
    from dlsched.models.hare import online

    fam = families.get("hare")
    tables = [fam._part(t) for t in fam._methods]
    assert sum(len(t) for t in tables) == len(fam.methods())  # no name in two tables
    clash = dict(online.methods.LIST_METHODS)
    clash["srtf"] = clash["online-srtf"]
    monkeypatch.setattr(online.methods, "LIST_METHODS", clash)
    monkeypatch.setattr(fam, "_resolved", {})  # the tables looked up again, the clash with them
    with pytest.raises(RuntimeError, match="'srtf' is in two"):
        fam.methods()
