"""dlsched: exact and relaxed optimization models for deep-learning cluster scheduling.

Every paper problem is a declarative Pyomo model solved exactly (HiGHS, SCIP, CP-SAT);
heuristics from the papers are rounding layers; every reported placement or schedule is
re-verified by :mod:`dlsched.check` from the raw instance.
"""

from dlsched.errors import DlschedError, InfeasibleSolutionError, InstanceError, OptionError

__version__ = "0.1.0"

__all__ = [
    "DlschedError",
    "InfeasibleSolutionError",
    "InstanceError",
    "OptionError",
    "__version__",
]
