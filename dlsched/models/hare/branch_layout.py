"""The layout of the arrays :mod:`branch` and its compiled core :mod:`branch_core` share:
plain constants, importable without loading numba (the caller's thread reads the search's
counters while the core is still being loaded in the search's own thread)."""

#: stats: nodes, incumbent, 1 once a schedule below the upper bound is found, 1 if stopped,
#: then dominance's keys and rows in use.
NODES, BEST, FOUND, STOPPED, KEYS, ROWS = 0, 1, 2, 3, 4, 5
STATS = 6
#: Levels.scalars: cost of the finished jobs, start of the last task, its job and GPU,
#: children tried.
COST, TAU, LAST_N, LAST_M, TRIED = 0, 1, 2, 3, 4

__all__ = [
    "BEST",
    "COST",
    "FOUND",
    "KEYS",
    "LAST_M",
    "LAST_N",
    "NODES",
    "ROWS",
    "STATS",
    "STOPPED",
    "TAU",
    "TRIED",
]
