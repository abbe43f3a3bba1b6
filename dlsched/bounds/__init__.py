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

import itertools
import json
import math
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from dlsched import families
from dlsched.errors import DlschedError, OptionError
from dlsched.families import Guarantee
from dlsched.instances import instance_hash, to_dict, write_text_atomic
from dlsched.models import MethodOptions, run_method
from dlsched.models import methods as family_methods
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
    value_kind: str  # "objective" (a verified solution) | "bound" (a relaxation's) | "none"
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


def reference_of(out: Outcome) -> tuple[float | None, str]:
    """A reference run's value and kind: its proven optimum, else its certified lower bound."""
    if out.status == Status.OPTIMAL and out.objective is not None:
        return out.objective, "optimum"
    if out.bound is not None:
        return out.bound, "lower bound"
    return None, "none"


def comparison(instance: Any, out: Outcome, ref: Outcome) -> Comparison:
    value, kind = reference_of(ref)
    ratio = gap = None
    mine, value_kind = out.objective, "objective"
    if mine is None:
        mine, value_kind = (out.bound, "bound") if out.bound is not None else (None, "none")
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


def check_methods(family: str, methods: Sequence[str], reference: str) -> None:
    """OptionError naming the first of ``methods`` (``--methods``) or ``reference``
    (``--reference``) that ``family`` does not have: checked before anything is run or written."""
    known = family_methods(family)
    for option, names in (("--reference", [reference]), ("--methods", list(methods))):
        for name in names:
            if name not in known:
                raise OptionError(
                    option, name, f"unknown for family '{family}' (known: {', '.join(known)})"
                )


def compare(
    instance: Any,
    methods: Sequence[str],
    reference: str = "exact",
    options: MethodOptions | None = None,
) -> list[Comparison]:
    """Run ``reference`` and every method on ``instance``; every outcome is checker-verified
    (the method layer guarantees it)."""
    check_methods(instance.family, methods, reference)
    options = options or MethodOptions()
    ref = run_method(instance, reference, MethodOptions(solve=options.solve))
    rows = [comparison(instance, ref, ref)]
    for m in methods:
        if m == reference:
            continue
        rows.append(comparison(instance, run_method(instance, m, options), ref))
    return rows


def to_frame(rows: Iterable[Comparison]):  # type: ignore[no-untyped-def]
    """The records as a DataFrame (an unbounded guarantee stays inf, unlike in JSON)."""
    import pandas as pd

    return pd.DataFrame([asdict(r) for r in rows])


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


#: The fields of a sweep record that key it: a rerun skips a (instance, method) pair whose key is
#: already in the file, and runs every other pair.
SWEEP_KEY = ("instance_hash", "method", "reference_method", "time_limit", "seed")

_Key = tuple[Any, ...]


def sweep(
    instances: Iterable[Any],
    methods: Sequence[str],
    path: str | Path,
    reference: str = "exact",
    options: MethodOptions | None = None,
    counterexamples: str | Path | None = None,
) -> list[Comparison]:
    """Compare over many instances, appending one JSON line per record to ``path`` as it
    finishes. Each line carries its key (instance hash, method, reference method, time limit,
    seed), so a rerun resumes: it runs only the (instance, method) pairs missing
    under the same options, and the reference again only when some method is missing (its own
    record is written once per instance and key). The file is locked for the whole sweep (a
    second sweep on it fails at once) and a torn last line left by a killed sweep is repaired.
    Any record whose guarantee fails is also saved as a counterexample (instance + record)
    under ``counterexamples``. Every method name and the reference are checked on the first
    instance before the file is opened, and a file that is not wholly sweep records is refused
    untouched. Returns the new records only."""
    path = Path(path)
    options = options or MethodOptions()
    extra = {"time_limit": options.solve.time_limit, "seed": options.solve.seed}
    out: list[Comparison] = []
    pending = iter(instances)
    first = next(pending, None)
    if first is None:
        return out
    check_methods(first.family, methods, reference)
    with locked_log(path) as fd:
        done = _done_keys(path, fd)
        for inst in itertools.chain([first], pending):
            for r in _pending(inst, methods, reference, options, done):
                record = {**r.to_json(), **extra}
                append_line(fd, json.dumps(record) + "\n")
                done.add(_record_key(record))
                if r.holds is False and counterexamples is not None:
                    save_counterexample(inst, record, counterexamples)
                out.append(r)
    return out


def _pending(
    instance: Any,
    methods: Sequence[str],
    reference: str,
    options: MethodOptions,
    done: set[_Key],
) -> Iterator[Comparison]:
    """The records of ``instance`` missing from ``done``, each yielded as soon as it is run."""
    h = instance_hash(instance)
    solve = options.solve

    def key(method: str) -> _Key:
        return (h, method, reference, solve.time_limit, solve.seed)

    todo = [m for m in dict.fromkeys(methods) if m != reference and key(m) not in done]
    if not todo and key(reference) in done:
        return
    ref = run_method(instance, reference, MethodOptions(solve=solve))
    if key(reference) not in done:
        yield comparison(instance, ref, ref)
    for m in todo:
        yield comparison(instance, run_method(instance, m, options), ref)


def _record_key(record: dict[str, Any]) -> _Key:
    # A record written before keys existed has no "seed" (None never equals a seed): rerun.
    return tuple(record.get(f) for f in SWEEP_KEY)


@contextmanager
def locked_log(path: Path) -> Iterator[int]:
    """An append descriptor on ``path`` (created if missing), exclusively locked until exit."""
    import fcntl

    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o666)  # less the umask
    except OSError as e:
        raise DlschedError(f"{path}: cannot open the sweep file: {e.strerror}") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise DlschedError(f"{path} is in use by another sweep") from None
        yield fd
    finally:
        os.close(fd)  # releases the lock


def _done_keys(path: Path, fd: int) -> set[_Key]:
    """The keys of the complete records in ``path``, after repairing a torn last line."""
    lines = repair_tail(path, fd).split(b"\n")
    done: set[_Key] = set()
    for n, line in enumerate(lines, 1):
        if line.strip():
            done.add(_record_key(parse_record(path, n, line)))
    return done


def parse_record(path: Path, lineno: int, line: bytes) -> dict[str, Any]:
    record = _as_record(line)
    if record is None:
        raise DlschedError(f"{path}:{lineno}: not a sweep record; fix or remove this line")
    return record


def _as_record(line: bytes) -> dict[str, Any] | None:
    try:
        record = json.loads(line)
    except ValueError:
        return None
    ok = isinstance(record, dict) and "instance_hash" in record and "method" in record
    return record if ok else None


def repair_tail(path: Path, fd: int) -> bytes:
    """The file's complete lines, once every one of them is a sweep record (DlschedError naming
    the first that is not, before anything is changed). A last line without its newline (a
    sweep killed mid-write) is completed when it holds a whole record, and cut off when it is
    no whole JSON value and some earlier line is a record; otherwise the file is refused
    untouched (a file of one line that is not a record, say).
    stderr says once what was repaired."""
    data = path.read_bytes()
    cut = data.rfind(b"\n") + 1
    complete, tail = data[:cut], data[cut:]
    records = 0
    for n, line in enumerate(complete.split(b"\n"), 1):
        if line.strip():
            parse_record(path, n, line)
            records += 1
    if not tail.strip():  # nothing, or blanks the next record's line will start with
        return data
    if _as_record(tail) is not None:
        append_line(fd, "\n")
        print(f"dlsched: {path}: completed a last line that lacked its newline", file=sys.stderr)
        return data + b"\n"
    if records == 0 or _is_json(tail):  # not a record cut short: refuse, change nothing
        parse_record(path, complete.count(b"\n") + 1, tail)  # raises
    os.ftruncate(fd, cut)
    os.fsync(fd)
    print(
        f"dlsched: {path}: dropped a torn last line ({len(tail)} bytes) left by an interrupted "
        "sweep",
        file=sys.stderr,
    )
    return complete


def _is_json(line: bytes) -> bool:
    try:
        json.loads(line)
    except ValueError:
        return False
    return True


def append_line(fd: int, line: str) -> None:
    """Append a complete line in one write() (looping only on a short write), then fsync, so a
    kill at any moment loses at most this line."""
    data = line.encode("utf-8")
    while data:
        data = data[os.write(fd, data) :]
    os.fsync(fd)


def save_counterexample(
    instance: Any, record: dict[str, Any], directory: str | Path, stem: str | None = None
) -> Path:
    """Write ``{instance, record}`` as JSON (``stem``.json, by default family, instance hash
    and method); the instance part loads with dlsched.instances."""
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    stem = stem or f"{instance.family}-{instance_hash(instance)}-{record.get('method', 'x')}"
    path = d / f"{stem}.json"
    payload = {"instance": to_dict(instance), "record": record}
    return write_text_atomic(path, json.dumps(payload, indent=1) + "\n")


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
    "locked_log",
    "parse_record",
    "reference_of",
    "register_guarantee",
    "repair_tail",
    "save_counterexample",
    "sweep",
    "to_frame",
]
