"""The one registry of problem families, and the :class:`Family` protocol each one implements.

A family is one folder ``dlsched/models/<name>/`` whose ``__init__`` exposes ``FAMILY``, an
object implementing :class:`Family`. The core (instances, bounds, cli, demo, benchmarks) reaches
a family only through :func:`get`; it never imports one by name. Adding a family means adding
its folder and one line to :data:`REGISTRY`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from importlib.abc import Traversable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from dlsched.errors import OptionError

if TYPE_CHECKING:
    from dlsched.models import Method
    from dlsched.result import Outcome
    from dlsched.verify.theorem import Theorem

#: family name -> the module that holds its ``FAMILY`` object (imported on first use).
REGISTRY: dict[str, str] = {
    "placement": "dlsched.models.placement",
    "hare": "dlsched.models.hare",
    "ddlwmp": "dlsched.models.ddlwmp",
    "elastic": "dlsched.models.elastic",
}


@runtime_checkable
class Instance(Protocol):
    """What the core needs of any instance: its family and its name."""

    @property
    def family(self) -> str: ...

    @property
    def name(self) -> str: ...


@runtime_checkable
class Evaluation(Protocol):
    """What a checker returns: at least the verified objective (minimised)."""

    @property
    def objective(self) -> float: ...


@dataclass(frozen=True)
class Guarantee:
    """A theorem's bound on ``method / reference`` as a function of the instance."""

    name: str
    bound: Callable[[Any], float]


class Family(Protocol):
    """Everything the core asks of a family."""

    name: str
    #: one line naming the paper
    paper: str
    #: folder of bundled instances (``<name>/<file>.json`` is the bundled name)
    data: Traversable
    #: whether :meth:`plot` draws anything (the command line refuses ``--plot`` before
    #: solving otherwise)
    plots: bool

    def from_dict(self, data: Mapping[str, Any], source: str) -> Any:
        """Validate a JSON-like mapping; raise InstanceError naming source, field and value."""
        ...

    def to_dict(self, instance: Any) -> dict[str, Any]: ...

    def check(self, instance: Any, solution: Any) -> Evaluation:
        """Re-derive feasibility and objective from the raw instance; raise
        InfeasibleSolutionError on any violation."""
        ...

    def methods(self) -> Mapping[str, Method]: ...

    def generate(self, jobs: int, workers: int, seed: int, **params: Any) -> Any: ...

    def plot(self, instance: Any, outcome: Outcome, path: Path) -> Path: ...

    def guarantees(self) -> Mapping[str, Guarantee]:
        """method name -> the theorem bounding its ratio to the optimum."""
        ...

    def theorems(self) -> Sequence[Theorem]:
        """The paper's theorems and claims as checkable records (``dlsched verify``); the core
        treats a family without this method as having none."""
        ...

    def demo(self, quick: bool) -> Sequence[tuple[str, Sequence[str]]]:
        """(bundled instance, methods) pairs that ``dlsched demo`` compares with ``exact``."""
        ...

    def demo_notes(self, quick: bool) -> Sequence[str]:
        """Lines ``dlsched demo`` prints after the family's tables (theorem checks, ...)."""
        ...

    def outcome_details(self, instance: Any, solution: Any, evaluation: Any) -> dict[str, Any]:
        """Family-specific figures added to every verified Outcome (may be empty)."""
        ...


def names() -> list[str]:
    """Family names in registry order."""
    return list(REGISTRY)


def get(name: Any) -> Family:
    """The family called ``name``; OptionError if there is none."""
    if not isinstance(name, str) or name not in REGISTRY:
        raise OptionError("family", name, f"unknown family (known: {', '.join(sorted(REGISTRY))})")
    module = importlib.import_module(REGISTRY[name])
    family: Family = module.FAMILY
    return family


def of(instance: Any) -> Family:
    """The family of an instance."""
    return get(getattr(instance, "family", None))


__all__ = ["REGISTRY", "Evaluation", "Family", "Guarantee", "Instance", "get", "names", "of"]
