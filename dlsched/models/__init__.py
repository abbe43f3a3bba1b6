"""One subpackage per paper problem (a family, see :mod:`dlsched.families`), and what they
share: :class:`Method`, :class:`MethodOptions` and :func:`run_method`."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from dlsched.errors import OptionError
from dlsched.result import Outcome
from dlsched.solvers.base import SolveOptions
from dlsched.solvers.deadline import Clock, Deadline


@dataclass(frozen=True)
class MethodOptions:
    """Solver options (time limit, seed, ...) plus method parameters (category, alpha, ...)."""

    solve: SolveOptions = field(default_factory=SolveOptions)
    params: Mapping[str, Any] = field(default_factory=dict)
    #: the method's time limit (``solve.time_limit``) as a running :class:`Deadline`: started
    #: here, and again by :func:`run_method` when the method starts; routes split it into
    #: stage budgets and never add a limit to a clock themselves
    deadline: Deadline = field(default=None, compare=False)  # type: ignore[assignment]
    #: the clock the deadline reads (tests inject a fake one to make time pass)
    clock: Clock = field(default=time.perf_counter, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.deadline is None:
            object.__setattr__(self, "deadline", Deadline.after(self.solve.time_limit, self.clock))

    def param(self, name: str, default: Any = None) -> Any:
        return self.params.get(name, default)

    def started(self) -> MethodOptions:
        """These options with the deadline started now."""
        return replace(self, deadline=Deadline.after(self.solve.time_limit, self.clock))


@dataclass(frozen=True)
class Method:
    name: str
    run: Callable[[Any, MethodOptions], Outcome]  # (instance, options) -> verified Outcome
    summary: str
    exact: bool = False
    params: tuple[str, ...] = ()  # parameter names the method accepts
    #: those of ``params`` that are true or false: any other value ("no", 0, "bogus") is
    #: refused by :func:`run_method`, never read as truthy
    flags: tuple[str, ...] = ()


def methods(family: str) -> dict[str, Method]:
    from dlsched import families

    return dict(families.get(family).methods())


def run_method(instance: Any, method: str, options: MethodOptions | None = None) -> Outcome:
    """Run a named method of the instance's family and return its verified Outcome."""
    table = methods(instance.family)
    if method not in table:
        raise OptionError(
            "--method",
            method,
            f"unknown for family '{instance.family}' (known: {', '.join(table)})",
        )
    m = table[method]
    options = options or MethodOptions()
    unknown = sorted(set(options.params) - set(m.params))
    if unknown:
        raise OptionError(
            unknown[0],
            options.params[unknown[0]],
            f"not a parameter of method '{method}' (accepted: {', '.join(m.params) or 'none'})",
        )
    check_flags(m, options.params)
    return m.run(instance, options.started())


def check_flags(method: Method, params: Mapping[str, Any]) -> None:
    """OptionError naming the first boolean parameter of ``method`` given anything but a bool."""
    for name in method.flags:
        if name in params and not isinstance(params[name], bool):
            raise OptionError(f"--param {name}", params[name], "expected true or false")
