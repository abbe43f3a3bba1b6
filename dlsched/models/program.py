"""What a family declares of its papers' programs (its ``programs`` part, :mod:`dlsched.families`):
one :class:`Program` each, which :func:`dlsched.model` builds and :func:`dlsched.solve_model`
solves and reads back (:mod:`dlsched.api_models`).

A program's equations live once, beside its builder: the builder module's table of component
name -> the equation it states, given to each Pyomo component as its ``doc`` when it is built.
:attr:`Program.docs` names that table (``"module:attribute"``, imported when asked, so that
listing the programs imports no solver), and :meth:`Program.equations` reads it.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple


class ProgramInfo(NamedTuple):
    """One row of :func:`dlsched.programs`."""

    name: str
    family: str
    equations: str
    summary: str


def _as_is(m: Any) -> Any:
    return m


@dataclass(frozen=True)
class Program:
    """A paper's program: its builder, the equation of each component it builds, and how a
    solved model's values become the family's solution (None: a relaxation, a bound only)."""

    info: ProgramInfo
    build: Callable[..., Any]  # (instance, **params) -> pyomo ConcreteModel
    #: component name -> the equation it states: the builder module's table, or
    #: ``"module:attribute"`` naming it (imported on first use)
    docs: Mapping[str, str] | str
    decode: Callable[[Any, Any, Mapping[str, float]], Any] | None
    #: the equations that tie the objective to the answer (named when they disagree)
    ties: str = ""
    #: the objective is the answer's cost itself (no epigraph variable that may be slack)
    exact_objective: bool = False
    params: tuple[str, ...] = ()
    backends: tuple[str, ...] = ("highs", "scip")
    #: the checker's objective of a solution; None: the family's (through verified_outcome)
    check: Callable[[Any, Any], float] | None = None
    #: the model handed to the solver (pyomo.gdp models: a big-M copy)
    prepare: Callable[[Any], Any] = _as_is

    @property
    def name(self) -> str:
        return self.info.name

    def equations(self) -> Mapping[str, str]:
        """Component name -> the equation it states, in the order the builder adds them."""
        if not isinstance(self.docs, str):
            return self.docs
        module, _, attribute = self.docs.partition(":")
        table: Mapping[str, str] = getattr(importlib.import_module(module), attribute)
        return table


def symmetry_breaking(valid_for: str, what: str) -> str:
    """The ``doc`` of a constraint the paper does not state: symmetry breaking, valid for the
    equations ``valid_for`` (every solution of them has a symmetric image that satisfies it)."""
    return f"not in the paper: symmetry breaking, valid for {valid_for}: {what}"


__all__ = ["Program", "ProgramInfo", "symmetry_breaking"]
