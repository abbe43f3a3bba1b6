"""Resumable sweeps: :func:`~dlsched.bounds.comparisons.compare` over many instances, one JSON
line per record in a :mod:`~dlsched.bounds.log`, each keyed so that a rerun runs only what is
missing."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from dlsched.bounds.comparisons import Comparison, against_reference, check_methods
from dlsched.bounds.counterexample import save_counterexample
from dlsched.bounds.log import append_line, locked_log, parse_record, repair_tail
from dlsched.instances import instance_hash
from dlsched.models import MethodOptions

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
    if todo or key(reference) not in done:
        yield from against_reference(instance, todo, reference, options, key(reference) not in done)


def _record_key(record: dict[str, Any]) -> _Key:
    # A record written before keys existed has no "seed" (None never equals a seed): rerun.
    return tuple(record.get(f) for f in SWEEP_KEY)


def _done_keys(path: Path, fd: int) -> set[_Key]:
    """The keys of the complete records in ``path``, after repairing a torn last line."""
    lines = repair_tail(path, fd).split(b"\n")
    done: set[_Key] = set()
    for n, line in enumerate(lines, 1):
        if line.strip():
            done.add(_record_key(parse_record(path, n, line)))
    return done


__all__ = ["SWEEP_KEY", "sweep"]
