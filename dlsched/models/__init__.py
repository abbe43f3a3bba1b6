"""One subpackage per paper problem. Each exposes ``METHODS`` (name -> :class:`Method`) and
may expose ``generate(...)`` and ``plot(instance, outcome, path)`` for the command line."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from dlsched.errors import OptionError
from dlsched.solvers.base import SolveOptions


@dataclass(frozen=True)
class MethodOptions:
    """Solver options (time limit, seed, ...) plus method parameters (category, alpha, ...)."""

    solve: SolveOptions = field(default_factory=SolveOptions)
    params: Mapping[str, Any] = field(default_factory=dict)

    def param(self, name: str, default: Any = None) -> Any:
        return self.params.get(name, default)


@dataclass(frozen=True)
class Method:
    name: str
    run: Callable[[Any, MethodOptions], Any]  # (instance, options) -> Outcome
    summary: str
    exact: bool = False
    params: tuple[str, ...] = ()  # parameter names the method accepts


def family_module(family: str) -> ModuleType:
    try:
        return importlib.import_module(f"dlsched.models.{family}")
    except ModuleNotFoundError as e:
        if e.name == f"dlsched.models.{family}":
            raise OptionError("family", family, "no models for this family yet") from None
        raise


def methods(family: str) -> dict[str, Method]:
    return dict(family_module(family).METHODS)


def run_method(instance: Any, method: str, options: MethodOptions | None = None) -> Any:
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
    return m.run(instance, options)
