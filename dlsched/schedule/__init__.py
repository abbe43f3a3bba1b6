"""Domain results shared by all problems (one module per family). Solvers and heuristics
produce these; only :mod:`dlsched.check` decides whether they are feasible and what they cost."""

from dlsched.schedule.hare import TaskSchedule
from dlsched.schedule.placement import Placement

__all__ = ["Placement", "TaskSchedule"]
