"""One subpackage per paper problem (a family, see :mod:`dlsched.families`), and what they
share: :class:`Method`, :class:`MethodOptions` and :func:`run_method`."""

from __future__ import annotations

import importlib
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from dlsched.errors import OptionError
from dlsched.result import Outcome
from dlsched.solvers.base import (
    DEFAULT_TIME_LIMIT,
    SolveOptions,
    SolverSettings,
    check_time_limit,
)
from dlsched.solvers.deadline import Clock, Deadline


@dataclass(frozen=True)
class MethodOptions:
    """A method's time limit, its solver settings (seed, threads, gap), its parameters
    (category, alpha, ...) and whether a heuristic also computes a bound (``bound``).

    The limit lives here alone, as ``time_limit`` and the running ``deadline`` started from it;
    ``solve`` carries no limit, so a route receives one budget (the deadline) and settings, and
    the deadline makes each solver call's limit (:meth:`Deadline.solve_options`). A
    :class:`SolveOptions` given as ``solve`` (settings with a limit, the form users and the
    command line write) is split: its limit becomes ``time_limit``.
    """

    solve: SolverSettings = field(default_factory=SolverSettings)
    params: Mapping[str, Any] = field(default_factory=dict)
    #: the method's time limit as a running :class:`Deadline`: started here, and again by
    #: :func:`run_method` when the method starts; routes split it into stage budgets and never
    #: add a limit to a clock themselves
    deadline: Deadline = field(default=None, compare=False)  # type: ignore[assignment]
    #: the clock the deadline reads (tests inject a fake one to make time pass)
    clock: Clock = field(default=time.perf_counter, repr=False, compare=False)
    #: seconds the whole method may take, model building included (None: no limit)
    time_limit: float | None = DEFAULT_TIME_LIMIT
    #: a heuristic also computes a certified lower bound on its answer (the online families'
    #: flow-time bounds, once per instance object: the methods run on one instance share it),
    #: after its own run, within its deadline; off, it reports its own run alone
    bound: bool = False
    #: the reading of ``clock`` the limit counts from (None: when :func:`run_method` starts
    #: the method); the command line gives its process's start, so that start-up, imports and
    #: loading count against the limit too
    start: float | None = None

    def __post_init__(self) -> None:
        solve: Any = self.solve
        if isinstance(solve, SolveOptions):
            if self.time_limit not in (DEFAULT_TIME_LIMIT, solve.time_limit):
                raise OptionError(
                    "time_limit",
                    self.time_limit,
                    f"disagrees with solve.time_limit={solve.time_limit}",
                )
            object.__setattr__(self, "time_limit", solve.time_limit)
            object.__setattr__(self, "solve", solve.settings)
        check_time_limit(self.time_limit)
        if not isinstance(self.bound, bool):
            raise OptionError("bound", self.bound, "expected true or false")
        if self.deadline is None:
            deadline = Deadline.after(self.time_limit, self.clock, start=self.start)
            object.__setattr__(self, "deadline", deadline)

    def param(self, name: str, default: Any = None) -> Any:
        return self.params.get(name, default)

    def route(self, method: str, routes: Sequence[str], aliases: Mapping[str, str] = {}) -> str:
        """The route of an exact method: ``route=`` (one of ``routes``, the first the
        default), or ``backend=``, its former name (a backend is a solver; a route is the
        method's way to its answer), with a FutureWarning; both given, they must agree.
        ``aliases`` maps other accepted spellings to routes."""
        route, legacy = self.param("route"), self.param("backend")
        if legacy is not None:
            warnings.warn(
                f"{method}: backend= names the route; use route= (backend= will be removed)",
                FutureWarning,
                stacklevel=3,
            )
            if route is not None and route != legacy:
                raise OptionError("backend", legacy, f"disagrees with route={route} (its new name)")
        name = "route" if route is not None or legacy is None else "backend"
        chosen = route if route is not None else legacy if legacy is not None else routes[0]
        chosen = aliases.get(chosen, chosen)
        if chosen not in routes:
            raise OptionError(name, chosen, f"{method} takes {', '.join(routes)}")
        return str(chosen)

    def started(self) -> MethodOptions:
        """These options with the deadline started now (at :attr:`start` if given)."""
        deadline = Deadline.after(self.time_limit, self.clock, start=self.start)
        return replace(self, deadline=deadline)


Runner = Callable[[Any, "MethodOptions"], Outcome]


@dataclass(frozen=True)
class Method:
    name: str
    #: (instance, options) -> verified Outcome, or ``"module:function"`` naming it, imported
    #: only when the method runs (a family's table then costs no solver import); with
    #: ``args``, the named function makes the runner: ``function(*args)``
    run: Runner | str
    summary: str
    exact: bool = False
    params: tuple[str, ...] = ()  # parameter names the method accepts
    #: those of ``params`` that are true or false: any other value ("no", 0, "bogus") is
    #: refused by :func:`run_method`, never read as truthy
    flags: tuple[str, ...] = ()
    #: the relaxation a rounding method rounds (its LP value is reported beside its own)
    rounds: str = ""
    #: the guarantee the method has, with its reference, or "none"
    guarantee: str = ""
    args: tuple[Any, ...] = ()

    def runner(self) -> Runner:
        """The function that runs this method (imported now if ``run`` names it)."""
        if callable(self.run):
            return self.run
        module, _, attr = self.run.partition(":")
        named = getattr(importlib.import_module(module), attr)
        return named(*self.args) if self.args else named  # type: ignore[no-any-return]


def method_table(*table: Method) -> dict[str, Method]:
    """A family's methods by name, in the order given."""
    return {m.name: m for m in table}


def methods(family: str) -> dict[str, Method]:
    """The methods of ``family``: its own, then the user's (installed packages' entry points,
    those registered in this process: :mod:`dlsched.usercode`)."""
    from dlsched import families, usercode

    shipped = dict(families.get(family).methods())
    mine = usercode.methods(family)
    return {**shipped, **{n: user_method(m) for n, m in mine.items() if n not in shipped}}


def user_method(m: Any) -> Method:
    """A user's method (:class:`dlsched.usercode.UserMethod`) as a :class:`Method`."""
    return Method(m.label, m.run, m.describe(), guarantee=m.guarantee_text())


def find_method(family: str, name: str, option: str = "--method") -> Method:
    """The method ``name`` of ``family``: one of :func:`methods`, or a spec
    (``file.py:function``, ``module:function``) imported now; OptionError naming ``option``
    otherwise."""
    from dlsched import usercode

    table = methods(family)
    if name in table:
        return table[name]
    if isinstance(name, str) and usercode.is_spec(name):
        try:
            return user_method(usercode.resolve(family, name))
        except OptionError as e:
            raise OptionError(option, name, e.reason) from None
    raise OptionError(option, name, f"unknown for family '{family}' (known: {', '.join(table)})")


def run_method(instance: Any, method: str, options: MethodOptions | None = None) -> Outcome:
    """Run a method of the instance's family (a name of :func:`methods`, or a spec) and
    return its verified Outcome."""
    m = find_method(instance.family, method)
    options = options or MethodOptions()
    unknown = sorted(set(options.params) - set(m.params))
    if unknown:
        raise OptionError(
            unknown[0],
            options.params[unknown[0]],
            f"not a parameter of method '{method}' (accepted: {', '.join(m.params) or 'none'})",
        )
    check_flags(m, options.params)
    return m.runner()(instance, options.started())


def check_flags(method: Method, params: Mapping[str, Any]) -> None:
    """OptionError naming the first boolean parameter of ``method`` given anything but a bool."""
    for name in method.flags:
        if name in params and not isinstance(params[name], bool):
            raise OptionError(f"--param {name}", params[name], "expected true or false")
