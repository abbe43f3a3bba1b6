"""The one registry of problem families, and the :class:`Family` protocol each one implements.

A family is one folder ``dlsched/models/<name>/`` whose ``__init__`` exposes ``FAMILY``, an
object implementing :class:`Family`: a :class:`LazyFamily` that says where each part lives. The
core (instances, bounds, cli, demo, benchmarks) reaches a family only through :func:`get`; it
never imports one by name. Adding a family means adding its folder and one line to
:data:`REGISTRY`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from importlib.abc import Traversable
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from dlsched.errors import OptionError

# The registry sits below everything a family is made of, so it imports none of it, not even
# for type checking (that would tie the core into one import circle). These names document
# what the protocol's members carry; each is the class named beside it.
Method = Any  #: dlsched.models.Method
Program = Any  #: dlsched.models.program.Program
Outcome = Any  #: dlsched.result.Outcome
Deadline = Any  #: dlsched.solvers.deadline.Deadline
Layout = Any  #: dlsched.verify.moves.Layout
Theorem = Any  #: dlsched.verify.theorem.Theorem

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


class WorstCases(Protocol):
    """A family's exact worst cases of a heuristic (its ``metaopt`` part, which
    ``dlsched verify --search`` seeds its first lane with): for the pair (``theorem``,
    ``method``), the sizes not yet in ``logged`` (the lines it yielded before, of this search
    run), solved one by one until ``deadline`` (the share of the pair's search the search gives
    them; no solve runs past it). Each line is yielded as its size ends (the search logs it at
    once, with the pair's seconds spent): ``"kind": "exact-worst"``, ``jobs``, ``ratio``,
    ``upper`` (proven), ``status``, ``seconds``, ``box`` (what it ranges over) and ``instance``
    (its raw dict, or None). A pair it has no model for yields nothing."""

    def __call__(
        self,
        theorem: str,
        method: str,
        logged: Sequence[Mapping[str, Any]],
        deadline: Deadline,
    ) -> Iterator[dict[str, Any]]: ...


class Family(Protocol):
    """Everything the core asks of a family."""

    name: str
    #: one line naming the paper
    paper: str
    #: folder of bundled instances (``<name>/<file>.json`` is the bundled name)
    data: Traversable
    #: whether :meth:`plot` and :meth:`draw` draw anything (the command line refuses
    #: ``--plot`` before solving otherwise)
    plots: bool
    #: whether :meth:`run_policy` runs a user's online policy (the online families)
    policies: bool

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

    def drawing(self, method: str) -> Callable[..., Any]:
        """The family's drawing function ``draw(instance, solution, ax=None, title=None)``,
        which :meth:`dlsched.result.Outcome.plot` calls through
        :func:`dlsched.plotting.draw_chart` (the picture on an Axes, nothing saved);
        OptionError naming ``method`` when the family draws nothing."""
        ...

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

    def programs(self) -> Sequence[Program]:
        """The papers' programs :func:`dlsched.model` builds for the family's instances (each
        with its builder, the equations of its components, its decoder back to the family's
        solution); none: empty."""
        ...

    def layout(self) -> Layout | None:
        """Where the family's raw instance keeps what the worst-case search's moves change
        (:class:`dlsched.verify.moves.Layout`); None: ``verify --search`` cannot attack its
        theorems."""
        ...

    def metaopt(self) -> WorstCases | None:
        """The family's exact worst cases of a heuristic (:class:`WorstCases`); None: it has
        none."""
        ...

    def solution_from_json(self, instance: Any, data: Any, source: str) -> Any:
        """A user's answer as the family's solution object: that object itself, or the form
        ``dlsched solve --json`` prints under ``solution`` with the fields the checker can
        derive left out; UserCodeError naming ``source``, the field and the value if
        malformed (the checker then judges it)."""
        ...

    def run_policy(self, instance: Any, policy: Any, options: Any) -> Outcome:
        """A user's online policy (an object with ``decide(view)``, :mod:`dlsched.online.policy`)
        run on ``instance`` with ``options`` (a :class:`~dlsched.models.MethodOptions`): its
        verified Outcome with the flow time (and with ``options.bound``, the family's certified
        bound and gap), as the family's own online policies report theirs; UserCodeError for a
        wrong decision; OptionError when the family takes no online policies."""
        ...


#: Where a part of a family lives: ``"module:attribute"`` (a module starting with "." is
#: relative to the family's package), imported on first use; or the object itself (a small hook).
Part = str | Callable[..., Any]


class LazyFamily:
    """A :class:`Family` declared by where its parts live, each imported on first use, so that
    importing a family stays cheap (solvers, Pyomo builders and matplotlib load with the method
    that needs them). Its ``name`` is the last component of ``package``, whose ``data`` folder
    holds the bundled instances. A part left out is in its usual place in the family's folder:
    ``instance.py`` (``<name>_from_dict``, ``<name>_to_dict``), ``check.py`` (``check``),
    ``methods.py`` (``METHODS``), ``generate.py``, ``theorems.py`` (``THEOREMS``), ``demo.py``
    (``pairs`` and ``notes``), ``gantt.py`` (``save_gantt``, the picture saved, and ``gantt``,
    the drawing function ``draw(instance, solution, ax=None, title=None)`` returning its axes,
    whose second parameter's annotation is the solution type it draws; ``plot=None`` and
    ``draw=None``: the family draws nothing, ``plots`` is False). ``methods`` are tables merged
    in order; ``guarantees()`` come from the theorems that name one
    (:attr:`dlsched.verify.theorem.Theorem.guarantee`). Likewise ``programs.py``
    (``PROGRAMS``, a sequence of :class:`~dlsched.models.program.Program`) and ``layout.py``
    (``LAYOUT``, the search's :class:`~dlsched.verify.moves.Layout`), or None: the family has
    none; ``metaopt`` (a :class:`WorstCases` function) is declared or absent (None);
    ``solution.py`` (``solution_from_json``) reads a user method's answer (None: the family
    reads none); ``policy`` (``run_user_policy(instance, policy, options) -> Outcome``,
    :meth:`Family.run_policy`) is declared by the online families, absent (None) elsewhere."""

    def __init__(
        self,
        package: str,
        paper: str,
        *,
        check: Part = ".check:check",
        from_dict: Part | None = None,
        to_dict: Part | None = None,
        methods: Sequence[Part] = (".methods:METHODS",),
        generate: Part = ".generate:generate",
        theorems: Part = ".theorems:THEOREMS",
        demo: Part = ".demo:pairs",
        demo_notes: Part = ".demo:notes",
        plot: Part | None = ".gantt:save_gantt",
        draw: Part | None = ".gantt:gantt",
        outcome_details: Part | None = None,
        programs: Part | None = ".programs:PROGRAMS",
        layout: Part | None = ".layout:LAYOUT",
        metaopt: Part | None = None,
        solution: Part | None = ".solution:solution_from_json",
        policy: Part | None = None,
    ) -> None:
        self.package = package
        self.name = package.rpartition(".")[2]
        from_dict = from_dict or f".instance:{self.name}_from_dict"
        to_dict = to_dict or f".instance:{self.name}_to_dict"
        self.paper = paper
        self.data: Traversable = resources.files(package).joinpath("data")
        self.plots = plot is not None and draw is not None
        self.policies = policy is not None
        self._parts: dict[str, Part | None] = {
            "from_dict": from_dict,
            "to_dict": to_dict,
            "check": check,
            "generate": generate,
            "theorems": theorems,
            "demo": demo,
            "demo_notes": demo_notes,
            "plot": plot,
            "draw": draw,
            "outcome_details": outcome_details,
            "programs": programs,
            "layout": layout,
            "metaopt": metaopt,
            "solution": solution,
            "policy": policy,
        }
        self._methods = tuple(methods)
        self._resolved: dict[str, Any] = {}  # "module:attribute" -> what it names, once found

    def _part(self, part: Part | None) -> Any:
        if not isinstance(part, str):
            return part
        found = self._resolved.get(part)
        if found is None:
            module, _, attribute = part.partition(":")
            found = getattr(importlib.import_module(module, self.package), attribute)
            self._resolved[part] = found
        return found

    def _call(self, key: str, *args: Any, **kwargs: Any) -> Any:
        return self._part(self._parts[key])(*args, **kwargs)

    def from_dict(self, data: Mapping[str, Any], source: str) -> Any:
        return self._call("from_dict", data, source)

    def to_dict(self, instance: Any) -> dict[str, Any]:
        out: dict[str, Any] = self._call("to_dict", instance)
        return out

    def check(self, instance: Any, solution: Any) -> Evaluation:
        out: Evaluation = self._call("check", instance, solution)
        return out

    def methods(self) -> Mapping[str, Method]:
        """Every table's methods; a name in two tables is a defect (one would hide the other)."""
        out: dict[str, Method] = {}
        for table in self._methods:
            for name, m in self._part(table).items():
                if name in out:
                    raise RuntimeError(f"{self.name}: method {name!r} is in two of {self._methods}")
                out[name] = m
        return out

    def generate(self, jobs: int, workers: int, seed: int, **params: Any) -> Any:
        return self._call("generate", jobs, workers, seed, **params)

    def plot(self, instance: Any, outcome: Outcome, path: Path) -> Path:
        if not self.plots:
            raise OptionError("--plot", str(path), f"the {self.name} family has no plot")
        out: Path = self._call("plot", instance, outcome, Path(path))
        return out

    def drawing(self, method: str) -> Callable[..., Any]:
        if not self.plots:
            raise OptionError("plot", method, f"the {self.name} family draws nothing")
        out: Callable[..., Any] = self._part(self._parts["draw"])
        return out

    def theorems(self) -> Sequence[Theorem]:
        out: Sequence[Theorem] = self._part(self._parts["theorems"])
        return out

    def guarantees(self) -> Mapping[str, Guarantee]:
        return {
            m: Guarantee(t.guarantee, t.bound)
            for t in self.theorems()
            if t.guarantee is not None and t.bound is not None
            for m in t.methods
        }

    def demo(self, quick: bool) -> Sequence[tuple[str, Sequence[str]]]:
        out: Sequence[tuple[str, Sequence[str]]] = self._call("demo", quick)
        return out

    def demo_notes(self, quick: bool) -> Sequence[str]:
        out: Sequence[str] = self._call("demo_notes", quick)
        return out

    def outcome_details(self, instance: Any, solution: Any, evaluation: Any) -> dict[str, Any]:
        if self._parts["outcome_details"] is None:
            return {}
        out: dict[str, Any] = self._call("outcome_details", instance, solution, evaluation)
        return out

    def programs(self) -> Sequence[Program]:
        out: Sequence[Program] = self._part(self._parts["programs"]) or ()
        return out

    def layout(self) -> Layout | None:
        out: Layout | None = self._part(self._parts["layout"])
        return out

    def metaopt(self) -> WorstCases | None:
        out: WorstCases | None = self._part(self._parts["metaopt"])
        return out

    def solution_from_json(self, instance: Any, data: Any, source: str) -> Any:
        if self._parts["solution"] is None:
            raise OptionError("method", source, f"the {self.name} family reads no user answers")
        return self._call("solution", instance, data, source)

    def run_policy(self, instance: Any, policy: Any, options: Any) -> Outcome:
        if self._parts["policy"] is None:
            raise OptionError("policy", policy, f"the {self.name} family takes no online policies")
        out: Outcome = self._call("policy", instance, policy, options)
        return out

    def attribute(self, name: str) -> Any:
        """The family module's attributes made on demand (its ``__getattr__``): ``METHODS``,
        so that importing the family stays light."""
        if name == "METHODS":
            return self.methods()
        raise AttributeError(name)


#: The entry-point group through which an installed package adds a family: ``name =
#: "package.module"``, a module holding ``FAMILY`` (read once, on the first name not found).
FAMILIES_GROUP = "dlsched.families"
_installed: list[bool] = []  # whether the installed packages' families were read


def installed() -> None:
    """Add the families of installed packages (:data:`FAMILIES_GROUP`) to :data:`REGISTRY`,
    once per process; the shipped ones keep their names."""
    if not _installed:
        from importlib.metadata import entry_points

        for ep in entry_points(group=FAMILIES_GROUP):
            REGISTRY.setdefault(ep.name, ep.value)
        _installed.append(True)


def names() -> list[str]:
    """Family names in registry order (an installed package's after the shipped ones)."""
    installed()
    return list(REGISTRY)


def get(name: Any) -> Family:
    """The family called ``name``; OptionError if there is none."""
    if isinstance(name, str) and name not in REGISTRY:
        installed()
    if not isinstance(name, str) or name not in REGISTRY:
        raise OptionError("family", name, f"unknown family (known: {', '.join(sorted(REGISTRY))})")
    module = importlib.import_module(REGISTRY[name])
    family: Family = module.FAMILY
    return family


def of(instance: Any) -> Family:
    """The family of an instance."""
    return get(getattr(instance, "family", None))


__all__ = [
    "REGISTRY",
    "FAMILIES_GROUP",
    "Evaluation",
    "Family",
    "Guarantee",
    "Instance",
    "LazyFamily",
    "Part",
    "WorstCases",
    "get",
    "installed",
    "names",
    "of",
]
