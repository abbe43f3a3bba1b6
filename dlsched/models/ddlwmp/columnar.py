"""The compact form of a ddlwmp instance, and its canonical JSON written piece by piece.

The full form repeats every job's stage table; a generated workload of 150,000 jobs is a
300 MB file. The compact form writes each distinct *profile* (model, AllReduce, stage table)
once and the jobs as columns::

    {"family": "ddlwmp", "name": ..., "cluster": {...},
     "profiles": [{"model": "ResNet152", "allreduce": "ring", "stages": [{...}, ...]}, ...],
     "jobs": {"name": [...], "release": [...], "iterations": [...], "profile": [...],
              "predicted_iterations": [...], "group": [...], "user": [...]}}

``profile`` holds indexes into ``profiles``; ``predicted_iterations`` (null for a job without
one), ``group`` and ``user`` are written when some job has one. The same columns are the
Parquet form's table (:mod:`dlsched.instances.parquet`), the rest its metadata. Every column
is checked at once (numpy), and the first bad entry is reported as ``jobs.COLUMN[ROW]`` with
the message the full form gives for that field. Jobs of one profile share one stage table.

:func:`canonical_chunks` yields the canonical JSON of the *full* form (sorted keys, no
spaces) in pieces, each profile's part made once, so the instance hash of
:func:`dlsched.instances.instance_hash` is the same for both forms and costs no full dump.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from dlsched.errors import InstanceError
from dlsched.instances.validate import Range, Reader, check_integer, check_number
from dlsched.models.ddlwmp.instance import (
    ALLREDUCE,
    LIMITS,
    STAGE_FIELDS,
    DdlwmpInstance,
    Job,
    Stage,
    ddlwmp_to_dict,
    read_stage,
    stage_dict,
)

#: ``dlsched generate`` (and :func:`dlsched.instances.save`) write JSON in the compact form
#: from this many jobs; below it the full form, which is easier to read.
COMPACT_FROM = 1000

_PROFILE = ("model", "allreduce", "stages")
_COLUMNS = ("name", "release", "iterations", "profile", "predicted_iterations", "group", "user")
_OPTIONAL = ("predicted_iterations", "group", "user")

Profile = tuple[str, str, tuple[Stage, ...]]  # (model, allreduce, stages)


# --- reading ----------------------------------------------------------------------------------


def _profile(r: Reader) -> Profile:
    kind = r.string("allreduce", "ring")
    if kind not in ALLREDUCE:
        raise r.fail("allreduce", kind, f"expected one of {', '.join(ALLREDUCE)}")
    stages = tuple(
        read_stage(r.child("stages", s, k, fields=STAGE_FIELDS))
        for k, s in enumerate(r.array("stages"))
    )
    return r.string("model", "", empty=True), kind, stages


def _numbers(
    r: Reader, name: str, values: list[Any], rng: Range, integer: bool, nullable: bool = False
) -> list[Any]:
    """A numeric column, every entry in ``rng`` (integers when ``integer``; None allowed when
    ``nullable``), as Python ints or floats, checked at once; when some entry is bad, the
    first one raises the error :func:`check_number` or :func:`check_integer` gives for it."""
    allowed = {int, float} | ({type(None)} if nullable else set())
    fine = False
    if {type(v) for v in values} <= allowed:
        x = np.array(values, dtype=float)  # None becomes NaN
        ok = (x >= rng.low) & (x <= rng.high)
        if integer:
            ok &= x == np.floor(x)
        fine = bool((ok | np.isnan(x)).all() if nullable else ok.all())
    if not fine:
        check = check_integer if integer else check_number
        field = f"{r.field('jobs')}.{name}"
        for i, v in enumerate(values):
            if v is not None or not nullable:
                check(v, r.source, f"{field}[{i}]", rng)
    if integer:
        return [None if v is None else int(v) for v in values]
    return [float(v) for v in values]


def _strings(r: Reader, name: str, values: list[Any], empty: bool) -> list[str]:
    if {type(v) for v in values} <= {str} and (empty or all(values)):
        cache: dict[str, str] = {}  # equal strings kept once (groups and users recur)
        return values if name == "name" else [cache.setdefault(v, v) for v in values]
    k = next(i for i, v in enumerate(values) if not isinstance(v, str) or not (v or empty))
    what = "expected a string" if empty else "expected a non-empty string"
    raise InstanceError(r.source, f"{r.field('jobs')}.{name}[{k}]", values[k], what)


def _columns(r: Reader) -> dict[str, list[Any]]:
    cols = r.child("jobs", r.raw("jobs"), fields=_COLUMNS)
    out: dict[str, list[Any]] = {}
    for name in _COLUMNS:
        if name in _OPTIONAL and name not in cols.data:
            continue
        out[name] = cols.array(name)
    n = len(out["name"])
    for name, values in out.items():
        if len(values) != n:
            raise cols.fail(name, values, f"expected {n} entries (as many as jobs.name)")
    return out


def compact_jobs(r: Reader) -> tuple[Job, ...]:
    """The jobs of a compact instance read by ``r`` (its ``profiles`` and ``jobs``)."""
    profiles = [
        _profile(r.child("profiles", p, k, fields=_PROFILE))
        for k, p in enumerate(r.array("profiles"))
    ]
    cols = _columns(r)
    n = len(cols["name"])
    names = _strings(r, "name", cols["name"], empty=False)
    release = _numbers(r, "release", cols["release"], LIMITS["release"], False)
    iterations = _numbers(r, "iterations", cols["iterations"], LIMITS["iterations"], True)
    which = _numbers(r, "profile", cols["profile"], Range(0, len(profiles) - 1), True)
    pred = cols.get("predicted_iterations")
    pred = (
        [None] * n
        if pred is None
        else _numbers(r, "predicted_iterations", pred, LIMITS["predicted_iterations"], True, True)
    )
    group = _strings(r, "group", cols["group"], True) if "group" in cols else [""] * n
    user = _strings(r, "user", cols["user"], True) if "user" in cols else [""] * n
    return tuple(
        Job(name, rel, it, profiles[p][2], profiles[p][1], g, u, pr, profiles[p][0])
        for name, rel, it, p, g, u, pr in zip(
            names, release, iterations, which, group, user, pred, strict=True
        )
    )


# --- writing ----------------------------------------------------------------------------------


def _profiles(inst: DdlwmpInstance) -> tuple[list[Profile], list[int]]:
    """The distinct profiles and each job's index among them (by stage-table object first)."""
    by_id: dict[tuple[int, str, str], int] = {}
    by_value: dict[Profile, int] = {}
    index = []
    for j in inst.jobs:
        k = by_id.get((id(j.stages), j.allreduce, j.model))
        if k is None:
            k = by_value.setdefault((j.model, j.allreduce, j.stages), len(by_value))
            by_id[id(j.stages), j.allreduce, j.model] = k
        index.append(k)
    return list(by_value), index


def to_compact(inst: DdlwmpInstance) -> dict[str, Any]:
    """The compact form of ``inst`` (a JSON-ready dict)."""
    profiles, index = _profiles(inst)
    out = ddlwmp_to_dict(DdlwmpInstance(inst.name, inst.cluster, (), inst.description))
    out["profiles"] = [
        {**({"model": m} if m else {}), "allreduce": a, "stages": [stage_dict(s) for s in st]}
        for m, a, st in profiles
    ]
    jobs = inst.jobs
    cols: dict[str, list[Any]] = {
        "name": [j.name for j in jobs],
        "release": [j.release for j in jobs],
        "iterations": [j.iterations for j in jobs],
        "profile": index,
    }
    if any(j.predicted_iterations is not None for j in jobs):
        cols["predicted_iterations"] = [j.predicted_iterations for j in jobs]
    for name in ("group", "user"):
        if any(getattr(j, name) for j in jobs):
            cols[name] = [getattr(j, name) for j in jobs]
    out["jobs"] = cols
    return out


def compact_dumps(data: dict[str, Any]) -> str:
    """A compact dict as JSON text: one line per profile field and one per column."""
    head = {k: v for k, v in data.items() if k != "jobs"}
    text = json.dumps(head, indent=1)[:-2]  # without the closing "\n}"
    cols = ",\n".join(
        f"  {json.dumps(k)}: {json.dumps(v, separators=(',', ':'))}"
        for k, v in data["jobs"].items()
    )
    return f'{text},\n "jobs": {{\n{cols}\n }}\n}}\n'


# --- the canonical JSON of the full form, in pieces -------------------------------------------

_enc = json.encoder.encode_basestring_ascii  # what json.dumps uses for a string by default


def _num(x: float) -> str:
    """A number as json.dumps writes it (floats by float.__repr__, integers by int's)."""
    return float.__repr__(x) if isinstance(x, float) else int.__repr__(x)


def _canon(x: Any) -> str:
    return json.dumps(x, sort_keys=True, separators=(",", ":"))


def _job_parts(j: Job) -> tuple[str, str, str]:
    """The parts of a job's canonical JSON that only its profile decides: before ``group``,
    between ``iterations`` and ``name``, and ``stages`` (keys in sorted order)."""
    stages = ',"stages":' + _canon([stage_dict(s) for s in j.stages])
    model = f',"model":{_enc(j.model)}' if j.model else ""
    return f'{{"allreduce":{_enc(j.allreduce)},"group":', model, stages


def _job_chunks(jobs: Sequence[Job]) -> Iterator[str]:
    parts: dict[tuple[int, str, str], tuple[str, str, str]] = {}
    for k, j in enumerate(jobs):
        key = (id(j.stages), j.allreduce, j.model)
        p = parts.get(key)
        if p is None:
            p = parts[key] = _job_parts(j)
        pred = j.predicted_iterations
        yield (
            ("," if k else "")
            + p[0]
            + _enc(j.group)
            + ',"iterations":'
            + _num(j.iterations)
            + p[1]
            + ',"name":'
            + _enc(j.name)
            + ("" if pred is None else ',"predicted_iterations":' + _num(pred))
            + ',"release":'
            + _num(j.release)
            + p[2]
            + ',"user":'
            + _enc(j.user)
            + "}"
        )


def canonical_chunks(inst: DdlwmpInstance) -> Iterator[str]:
    """``json.dumps(ddlwmp_to_dict(inst), sort_keys=True, separators=(",", ":"))`` in
    pieces whose concatenation is that text exactly."""
    head = ddlwmp_to_dict(DdlwmpInstance(inst.name, inst.cluster, (), inst.description))
    text = _canon(head)  # ... "jobs":[], ... with the keys sorted
    before, after = text.split('"jobs":[]', 1)
    yield before + '"jobs":['
    yield from _job_chunks(inst.jobs)
    yield "]" + after


__all__ = ["COMPACT_FROM", "canonical_chunks", "compact_dumps", "compact_jobs", "to_compact"]
