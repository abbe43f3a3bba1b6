"""Bounds: heuristic vs certified optimum (or certified lower bound), with the guarantee a
theorem gives beside the measured ratio; resumable sweeps; counterexamples kept, never hidden.

- :mod:`.comparisons`: :func:`compare` runs methods on one instance against a reference method
  (the exact one) and returns :class:`Comparison` records; ``reference_kind`` says whether the
  reference is a proven optimum or only a lower bound (a time-limited exact run).
- :mod:`.guarantees`: the guarantee of a method (its family's theorems, or one registered at
  run time), and the one rule a ratio holds its bound by (:func:`verdict`, :data:`SLACK`).
- :mod:`.table`: the records as a plain-text table.
- :mod:`.sweeps`: :func:`sweep` compares over many instances, appending one JSON line per
  record as it finishes, so an interrupted sweep resumes where it stopped.
- :mod:`.log`: that JSON-lines file (locked, fsynced, a torn last line repaired), shared with
  ``dlsched verify``.
- :mod:`.counterexample`: an instance and its failing record saved as one JSON file.

The bounds themselves are the families' theorems (:meth:`dlsched.families.Family.theorems`).
"""

from __future__ import annotations

from dlsched.bounds.comparisons import (
    Comparison,
    check_methods,
    compare,
    comparison,
    reference_of,
    reference_options,
    to_frame,
)
from dlsched.bounds.counterexample import save_counterexample
from dlsched.bounds.guarantees import (
    GUARANTEES,
    SLACK,
    guarantee_for,
    register_guarantee,
    verdict,
    within,
)
from dlsched.bounds.log import append_line, locked_log, parse_record, repair_tail
from dlsched.bounds.sweeps import SWEEP_KEY, sweep
from dlsched.bounds.table import TABLE_COLUMNS, format_table

__all__ = [
    "GUARANTEES",
    "SLACK",
    "SWEEP_KEY",
    "TABLE_COLUMNS",
    "Comparison",
    "compare",
    "format_table",
    "append_line",
    "check_methods",
    "comparison",
    "guarantee_for",
    "locked_log",
    "parse_record",
    "reference_of",
    "reference_options",
    "register_guarantee",
    "repair_tail",
    "save_counterexample",
    "sweep",
    "to_frame",
    "verdict",
    "within",
]
