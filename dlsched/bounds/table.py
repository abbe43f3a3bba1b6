"""Comparison records as a plain-text table (``dlsched compare``, ``dlsched demo``)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from dlsched.bounds.comparisons import Comparison, to_frame

#: The columns a person reads first. ``value`` is the objective of a verified solution, or
#: the certified bound of a relaxation (``value_kind`` says which).
TABLE_COLUMNS = (
    "method",
    "status",
    "value",
    "value_kind",
    "ratio",
    "reference_kind",
    "guarantee_name",
    "guarantee",
    "holds",
    "wall_time",
)


def _value(r: Comparison) -> float | None:
    """The number a row's ratio is computed from: objective, or the relaxation's bound."""
    if r.value_kind == "objective" or r.objective is not None:
        return r.objective
    if r.ratio is None or r.reference is None:
        return None
    return r.ratio * r.reference


def _cell(x: float) -> str:
    """Four significant digits; whole numbers from 10,000 up to 1e15 in full."""
    return f"{x:,.0f}" if 1e4 <= abs(x) < 1e15 else f"{x:.4g}"


def format_table(rows: Iterable[Comparison], columns: Sequence[str] = TABLE_COLUMNS) -> str:
    """A plain-text table of comparison records; unknown cells (None, NaN) are blank. Besides
    the record fields, ``value`` (see :data:`TABLE_COLUMNS`) may be asked for."""
    import pandas as pd

    rows = list(rows)
    frame = to_frame(rows)
    frame["value"] = pd.Series([_value(r) for r in rows], dtype=float)
    frame = frame[list(columns)].copy()
    for c in frame.columns:
        if frame[c].dtype.kind == "O":  # None in a column of objects (holds, names)
            frame[c] = frame[c].map(lambda v: "" if v is None else v)
    with pd.option_context("display.width", 160, "display.max_columns", 20):
        return str(frame.to_string(index=False, na_rep="", float_format=_cell))


__all__ = ["TABLE_COLUMNS", "format_table"]
