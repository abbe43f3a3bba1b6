"""dlsched: exact and relaxed optimization models for deep-learning cluster scheduling.

Every paper problem is a family (:mod:`dlsched.families`) with a declarative Pyomo model solved
exactly (HiGHS, SCIP, CP-SAT); heuristics from the papers are rounding layers; every reported
placement or schedule is re-verified by its family's checker from the raw instance
(:func:`dlsched.result.verified_outcome`). docs/architecture.md describes the layout.
The calls most scripts need are at the top level (:data:`API`, from :mod:`dlsched.api` and
:mod:`dlsched.api_models`):
``dlsched.load``, ``dlsched.solve``, ``dlsched.compare``, ``dlsched.methods``, ...
``dlsched.instances`` and ``dlsched.verify`` are the subpackages of those names, whether
imported yet or not; their calls are ``dlsched.list_instances`` and ``dlsched.verify_theorems``.
"""

from typing import Any

from dlsched.errors import (
    DlschedError,
    InfeasibleSolutionError,
    InstanceError,
    OptionError,
    UserCodeError,
)

#: The one version of the package (pyproject.toml reads it from here).
__version__ = "0.1.0"

#: The public calls of :mod:`dlsched.api`, imported on first use (``import dlsched`` stays light).
#: Its ``instances`` and ``verify`` are named like subpackages: at the top level they are
#: ``list_instances`` and ``verify_theorems``.
API = (
    "load",
    "solve",
    "generate",
    "methods",
    "list_instances",
    "verify_theorems",
    "compare",
    "search",
    "model",
    "solve_model",
    "programs",
    "equations",
    "plot_ratios",
    "register",
)
#: where each name of :data:`API` lives (default: :mod:`dlsched.api`); the papers' programs
#: (:mod:`dlsched.api_models`) load instances with :func:`dlsched.api.load`
_HOMES = {
    **dict.fromkeys(("model", "solve_model", "programs", "equations"), "dlsched.api_models"),
    "plot_ratios": "dlsched.plotting",
}
#: The declaration of a user's method in a package's entry point (:mod:`dlsched.usercode`),
#: imported on first use.
CLASSES = {"UserMethod": "dlsched.usercode"}
#: Subpackages named like commands: ``dlsched.instances`` is always the subpackage (imported
#: on first use, as ``import dlsched.instances`` would), never a call.
SUBPACKAGES = ("instances", "verify")


def __getattr__(name: str) -> Any:
    if name in API:
        import importlib

        return getattr(importlib.import_module(_HOMES.get(name, "dlsched.api")), name)
    if name in CLASSES:
        import importlib

        return getattr(importlib.import_module(CLASSES[name]), name)
    if name in SUBPACKAGES:
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module 'dlsched' has no attribute {name!r}")


__all__ = [
    "DlschedError",
    "InfeasibleSolutionError",
    "InstanceError",
    "OptionError",
    "UserCodeError",
    "UserMethod",
    "__version__",
    *API,
]
