"""Bounds: heuristic vs certified optimum (or certified lower bound), with the guarantee a
theorem gives beside the measured ratio; resumable sweeps; counterexamples kept, never hidden.

- :func:`compare` runs methods on one instance against a reference method (the exact one) and
  returns :class:`Comparison` records; ``reference_kind`` says whether the reference is a
  proven optimum or only a lower bound (a time-limited exact run).
- :func:`sweep` does that over many instances, appending one JSON line per record as it
  finishes, so an interrupted sweep resumes where it stopped.
- Each family's ``guarantees`` module holds its theorem-specific checks; the guarantee of a
  method is found through the family object (:func:`dlsched.families.get`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from dlsched import families
from dlsched.families import Guarantee
from dlsched.instances import instance_hash, to_dict, write_text_atomic
from dlsched.models import MethodOptions, run_method
from dlsched.result import Outcome
from dlsched.solvers.base import Status

#: Relative slack before a measured ratio counts as violating a guarantee (solver tolerances).
SLACK = 1e-6

#: (family, method) -> guarantee registered at run time (a user's conjecture, a test's);
#: these take precedence over the family's own theorems.
GUARANTEES: dict[tuple[str, str], Guarantee] = {}


def register_guarantee(family: str, method: str, name: str, fn: Callable[[Any], float]) -> None:
    GUARANTEES[(family, method)] = Guarantee(name, fn)


def guarantee_for(family: str, method: str) -> Guarantee | None:
    """The guarantee bounding ``method``'s ratio to the optimum on ``family``, if any."""
    return GUARANTEES.get((family, method)) or families.get(family).guarantees().get(method)


@dataclass(frozen=True)
class Comparison:
    instance: str
    instance_hash: str
    family: str
    method: str
    status: str
    objective: float | None
    wall_time: float
    reference_method: str
    reference: float | None  # optimum, or a certified lower bound
    reference_kind: str  # "optimum" | "lower bound" | "none"
    value_kind: str  # "objective" (a verified solution) | "bound" (a relaxation's value)
    ratio: float | None  # value / reference (>= 1 for a heuristic, <= 1 for a relaxation)
    gap: float | None  # ratio - 1
    guarantee_name: str | None
    guarantee: float | None
    holds: bool | None  # ratio <= guarantee (None when unknown)

    def to_json(self) -> dict[str, Any]:
        return {
            k: (None if isinstance(v, float) and not math.isfinite(v) else v)
            for k, v in asdict(self).items()
        }


def _reference(out: Outcome) -> tuple[float | None, str]:
    if out.status == Status.OPTIMAL and out.objective is not None:
        return out.objective, "optimum"
    if out.bound is not None:
        return out.bound, "lower bound"
    return None, "none"


def comparison(instance: Any, out: Outcome, ref: Outcome) -> Comparison:
    value, kind = _reference(ref)
    ratio = gap = None
    mine, value_kind = (
        (out.objective, "objective") if out.objective is not None else (out.bound, "bound")
    )
    if value is not None and value > 0 and mine is not None:
        ratio = mine / value
        gap = ratio - 1
    g = guarantee_for(instance.family, out.method)
    bound = g.bound(instance) if g else None
    holds = None
    if bound is not None and ratio is not None and value_kind == "objective":
        holds = ratio <= bound * (1 + SLACK)
        if not holds and kind != "optimum":
            holds = None  # against a lower bound a large ratio proves nothing
    return Comparison(
        instance=out.instance,
        instance_hash=out.instance_hash,
        family=instance.family,
        method=out.method,
        status=str(out.status),
        objective=out.objective,
        wall_time=out.wall_time,
        reference_method=ref.method,
        reference=value,
        reference_kind=kind,
        value_kind=value_kind,
        ratio=ratio,
        gap=gap,
        guarantee_name=g.name if g else None,
        guarantee=bound,
        holds=holds,
    )


def compare(
    instance: Any,
    methods: Sequence[str],
    reference: str = "exact",
    options: MethodOptions | None = None,
) -> list[Comparison]:
    """Run ``reference`` and every method on ``instance``; every outcome is checker-verified
    (the method layer guarantees it)."""
    options = options or MethodOptions()
    ref = run_method(instance, reference, MethodOptions(solve=options.solve))
    rows = [comparison(instance, ref, ref)]
    for m in methods:
        if m == reference:
            continue
        rows.append(comparison(instance, run_method(instance, m, options), ref))
    return rows


def to_frame(rows: Iterable[Comparison]):  # type: ignore[no-untyped-def]
    import pandas as pd

    return pd.DataFrame([r.to_json() for r in rows])


#: The columns a person reads first.
TABLE_COLUMNS = (
    "method",
    "status",
    "objective",
    "value_kind",
    "ratio",
    "reference_kind",
    "guarantee_name",
    "guarantee",
    "holds",
    "wall_time",
)


def format_table(rows: Iterable[Comparison], columns: Sequence[str] = TABLE_COLUMNS) -> str:
    """A plain-text table of comparison records."""
    import pandas as pd

    with pd.option_context(
        "display.width",
        140,
        "display.max_columns",
        20,
        "display.float_format",
        lambda x: f"{x:,.4g}",
    ):
        return str(to_frame(rows)[list(columns)].to_string(index=False))


def sweep(
    instances: Iterable[Any],
    methods: Sequence[str],
    path: str | Path,
    reference: str = "exact",
    options: MethodOptions | None = None,
    counterexamples: str | Path | None = None,
) -> list[Comparison]:
    """Compare over many instances, appending JSON lines to ``path``; instances already in the
    file (same content hash) are skipped, so a rerun resumes. Any record whose guarantee fails
    is also saved as a counterexample (instance + record) under ``counterexamples``."""
    path = Path(path)
    done: set[str] = set()
    if path.exists():
        for line in path.read_text().splitlines():
            if line.strip():
                done.add(json.loads(line)["instance_hash"])
    out: list[Comparison] = []
    for inst in instances:
        h = instance_hash(inst)
        if h in done:
            continue
        rows = compare(inst, methods, reference, options)
        with path.open("a", encoding="utf-8") as fh:
            for r in rows:
                fh.write(json.dumps(r.to_json()) + "\n")
        for r in rows:
            if r.holds is False and counterexamples is not None:
                save_counterexample(inst, r.to_json(), counterexamples)
        out.extend(rows)
        done.add(h)
    return out


def save_counterexample(instance: Any, record: dict[str, Any], directory: str | Path) -> Path:
    """Write ``{instance, record}`` as JSON; the instance part loads with dlsched.instances."""
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    path = d / f"{instance.family}-{instance_hash(instance)}-{record.get('method', 'x')}.json"
    payload = {"instance": to_dict(instance), "record": record}
    return write_text_atomic(path, json.dumps(payload, indent=1) + "\n")


__all__ = [
    "GUARANTEES",
    "SLACK",
    "TABLE_COLUMNS",
    "Comparison",
    "compare",
    "format_table",
    "comparison",
    "register_guarantee",
    "save_counterexample",
    "sweep",
    "to_frame",
]
