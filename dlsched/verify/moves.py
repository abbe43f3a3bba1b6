"""Moves of the worst-case search (:mod:`dlsched.verify.search`) on a family's raw instance: the
JSON-like dict of the family's ``to_dict``, which its ``from_dict`` checks again. A move changes
one number (a weight, a time, a speed, a capacity, an arrival, a price of a theorem's sub-case),
scales a job, adds or removes a job, a task or round (a count), a GPU, worker or server (the
cluster's axis, with every per-job column along it), a stage, or merges two jobs.

Each family's :class:`Layout` (its ``layout`` part, :mod:`dlsched.families`, in the family's
folder) says where its jobs are, which list is the cluster's axis and which job fields run
along it, which fields are labels (never changed) or categories (set to another value
present), what "scaling a job" multiplies and which integers count tasks, rounds or servers.
Numbers are kept on two significant digits, so that the exact routes (CP-SAT scales times to
integers) stay fast. A move returns None when it does not apply; the search checks every
candidate with the family's validation before solving it.
"""

from __future__ import annotations

import math
import pickle
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

Raw = dict[str, Any]
#: A point of the search: the raw instance and, for a theorem measured on recorded sub-cases
#: (``Theorem.replay``), the sub-case's details (None otherwise).
Pair = tuple[Raw, dict[str, Any] | None]
Path = tuple[Any, ...]  # keys and indices from the root of the instance (or "case")

#: Keys never changed in any family: what names things rather than measures them.
LABELS = frozenset({"family", "name", "description"})


@dataclass(frozen=True)
class Axis:
    """The cluster's list of GPUs (workers, servers) and what runs along it."""

    items: str  # the top-level list ("gpus", "workers", "servers")
    per_job: tuple[str, ...] = ()  # job fields holding one entry per item
    per_case: tuple[str, ...] = ()  # sub-case fields holding one row per item


@dataclass(frozen=True)
class Layout:
    """Where a family's raw instance keeps what the moves change."""

    family: str
    axis: Axis | None
    gpus: Callable[[Raw], int]  # the cluster's size (GPUs, workers, servers)
    labels: frozenset[str] = LABELS
    categorical: frozenset[str] = frozenset()  # strings set to another value present
    job_size: tuple[str, ...] = ()  # the fields "scale a job" multiplies
    counts: tuple[str, ...] = ()  # integers that count tasks, rounds, servers, replicas
    stages: str | None = None  # a per-job list of parts (added, removed)
    limits: Mapping[str, tuple[float, float]] = field(default_factory=dict)  # caps on numbers
    work: Callable[[Raw], int] = lambda raw: len(raw["jobs"])  # what the exact route grows with
    work_per_job: float = 1.0  # the search's cap on ``work``: this many per job of its cap
    #: whether a sub-case's details fit the instance (indices in range, one row per item)
    case_ok: Callable[[Raw, Mapping[str, Any]], bool] | None = None


def clone(obj: Any) -> Any:
    """A deep copy of JSON-like data (dicts, lists, numbers, strings), several times faster
    than :func:`copy.deepcopy` on it."""
    return pickle.loads(pickle.dumps(obj, pickle.HIGHEST_PROTOCOL))


def jobs(raw: Raw) -> int:
    return len(raw["jobs"])


# --- numbers ------------------------------------------------------------------------------------


def nice(x: float) -> float:
    """``x`` on two significant digits (0 stays 0)."""
    return 0.0 if x == 0 else float(f"{x:.2g}")


def leaves(obj: Any, labels: frozenset[str], path: Path = ()) -> Iterator[tuple[Path, Any]]:
    """(path, value) of every number and boolean under ``obj``, except under a label key."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k not in labels:
                yield from leaves(v, labels, (*path, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from leaves(v, labels, (*path, i))
    elif isinstance(obj, bool | int | float):
        yield path, obj


def fields(obj: Any, labels: frozenset[str], name: Path = ()) -> Iterator[tuple[Path, float]]:
    """(field, value) of every number under ``obj`` (booleans and label keys left out), the
    field being the leaf's :func:`kind`; faster than :func:`leaves` then :func:`kind`."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k not in labels:
                yield from fields(v, labels, (*name, k))
    elif isinstance(obj, list):
        for v in obj:
            if isinstance(v, int | float) and not isinstance(v, bool):
                yield name, v
            elif isinstance(v, dict | list):
                yield from fields(v, labels, name)
    elif isinstance(obj, int | float) and not isinstance(obj, bool):
        yield name, obj


def kind(path: Path) -> tuple[Any, ...]:
    """The field a leaf is an entry of, indices dropped: ("jobs", "weight") for every job's."""
    return tuple(p for p in path if not isinstance(p, int))


def get(obj: Any, path: Path) -> Any:
    for p in path:
        obj = obj[p]
    return obj


def put(obj: Any, path: Path, value: Any) -> None:
    get(obj, path[:-1])[path[-1]] = value


def _root(pair: Pair) -> dict[str, Any]:
    """The point as one tree: the instance, and its sub-case under "case"."""
    raw, case = pair
    return {**raw, "case": case} if case is not None else dict(raw)


def _split(tree: dict[str, Any], had_case: bool) -> Pair:
    case = tree.pop("case", None) if had_case else None
    return tree, case


def _limited(layout: Layout, path: Path, value: float) -> float:
    lo, hi = layout.limits.get(str(path[-1]), (-math.inf, math.inf))
    return min(max(value, lo), hi)


def changed(value: Any, rng: np.random.Generator, siblings: list[Any]) -> Any:
    """One number changed: a boolean flipped; an integer by +-1 or doubled or halved; a real
    multiplied by a log-normal factor or by 10 or 1/10, set to zero, or set to the value of
    another entry of the same field (``siblings``)."""
    if isinstance(value, bool):
        return not value
    pick = int(rng.integers(4))
    if pick == 3 and siblings:
        return siblings[int(rng.integers(len(siblings)))]
    pick %= 3
    if isinstance(value, int):
        return [value + 1, max(0, value - 1), value * 2 if rng.random() < 0.5 else value // 2][pick]
    if value == 0:
        return nice(float(rng.choice(siblings))) if siblings else 1.0
    factor = [math.exp(rng.normal(0, 0.7)), 10.0 ** rng.choice([-1, 1]), 0.0][pick]
    return nice(value * factor)


# --- moves ----------------------------------------------------------------------------------


def tweak(pair: Pair, layout: Layout, rng: np.random.Generator) -> Pair | None:
    """Change one number of the instance or of its sub-case."""
    tree = clone(_root(pair))
    found = [(p, v) for p, v in leaves(tree, layout.labels)]
    if not found:
        return None
    path, value = found[int(rng.integers(len(found)))]
    same = [v for p, v in found if kind(p) == kind(path) and p != path and type(v) is type(value)]
    new = changed(value, rng, same)
    if isinstance(new, float):
        new = _limited(layout, path, new)
    elif isinstance(new, int) and not isinstance(new, bool):
        new = int(_limited(layout, path, new))
    if new == value:
        return None
    put(tree, path, new)
    return _split(tree, pair[1] is not None)


def recategorize(pair: Pair, layout: Layout, rng: np.random.Generator) -> Pair | None:
    """Set one categorical field (a GPU type, a node) to another value present."""
    raw = clone(pair[0])
    found = list(_strings(raw, layout.categorical))
    if not found:
        return None
    path, value = found[int(rng.integers(len(found)))]
    others = sorted({v for p, v in found if kind(p) == kind(path) and v != value})
    if not others:
        return None
    put(raw, path, others[int(rng.integers(len(others)))])
    return raw, pair[1]


def _strings(obj: Any, keys: frozenset[str], path: Path = ()) -> Iterator[tuple[Path, str]]:
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k in keys and isinstance(v, str):
                yield (*path, k), v
            else:
                yield from _strings(v, keys, (*path, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _strings(v, keys, (*path, i))


def _scaled(obj: Any, factor: float) -> Any:
    """Every number under ``obj`` times ``factor`` (integers stay integers of at least 1)."""
    if isinstance(obj, dict):
        return {k: _scaled(v, factor) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_scaled(v, factor) for v in obj]
    if isinstance(obj, bool):
        return obj
    if isinstance(obj, int):
        return max(1, round(obj * factor))
    if isinstance(obj, float):
        return nice(obj * factor)
    return obj


def scale_job(pair: Pair, layout: Layout, rng: np.random.Generator) -> Pair | None:
    """Multiply one job's size (its times, its iterations) by 1/2, 2 or a log-normal factor."""
    if not layout.job_size:
        return None
    raw = clone(pair[0])
    job = raw["jobs"][int(rng.integers(len(raw["jobs"])))]
    factor = [0.5, 2.0, math.exp(rng.normal(0, 0.7))][int(rng.integers(3))]
    for key in layout.job_size:
        if key in job:
            job[key] = _scaled(job[key], factor)
    return raw, pair[1]


def _fresh_name(names: list[str], base: str) -> str:
    k = 1
    while f"{base}+{k}" in names:
        k += 1
    return f"{base}+{k}"


def add_job(pair: Pair, layout: Layout, rng: np.random.Generator) -> Pair | None:
    """A copy of one job (a new name), then one of its numbers changed."""
    raw = clone(pair[0])
    src = raw["jobs"][int(rng.integers(len(raw["jobs"])))]
    new = clone(src)
    if "name" in new:
        new["name"] = _fresh_name([j.get("name", "") for j in raw["jobs"]], str(src["name"]))
    raw["jobs"].append(new)
    index = len(raw["jobs"]) - 1
    found = [(p, v) for p, v in leaves(new, layout.labels) if not isinstance(v, bool)]
    if found:
        path, value = found[int(rng.integers(len(found)))]
        same = [get(j, path) for j in raw["jobs"][:-1] if _has(j, path)]
        put(raw, ("jobs", index, *path), changed(value, rng, same))
    return raw, pair[1]


def _has(obj: Any, path: Path) -> bool:
    try:
        get(obj, path)
    except (KeyError, IndexError, TypeError):
        return False
    return True


def remove_job(pair: Pair, layout: Layout, rng: np.random.Generator) -> Pair | None:
    raw = clone(pair[0])
    if len(raw["jobs"]) <= 1:
        return None
    del raw["jobs"][int(rng.integers(len(raw["jobs"])))]
    return raw, pair[1]


def merge_jobs(pair: Pair, layout: Layout, rng: np.random.Generator) -> Pair | None:
    """Two jobs as one: the weights added, every other number the mean of the two (the
    first job's structure kept where they differ)."""
    raw = clone(pair[0])
    if len(raw["jobs"]) < 2:
        return None
    i, j = sorted(int(x) for x in rng.choice(len(raw["jobs"]), size=2, replace=False))
    a, b = raw["jobs"][i], raw["jobs"][j]
    for path, value in list(leaves(a, layout.labels)):
        if isinstance(value, bool) or not _has(b, path):
            continue
        other = get(b, path)
        if isinstance(other, bool) or not isinstance(other, int | float):
            continue
        total = value + other if path[-1] == "weight" else (value + other) / 2
        put(a, path, round(total) if isinstance(value, int) else nice(total))
    del raw["jobs"][j]
    return raw, pair[1]


def add_item(pair: Pair, layout: Layout, rng: np.random.Generator) -> Pair | None:
    """A copy of one GPU (worker, server) with a new name; along it every job's column copied
    and scaled by one log-normal factor (a faster or slower copy), the sub-case's row too."""
    axis = layout.axis
    if axis is None:
        return None
    raw, case = clone(pair[0]), clone(pair[1])
    items = raw[axis.items]
    k = int(rng.integers(len(items)))
    names = [x if isinstance(x, str) else x.get("name", "") for x in items]
    base = names[k]
    if isinstance(items[k], str):
        items.append(_fresh_name(names, base))
    else:
        items.append({**clone(items[k]), "name": _fresh_name(names, base)})
    factor = math.exp(rng.normal(0, 0.5))
    for job in raw["jobs"]:
        for key in axis.per_job:
            column = job[key]
            column.append(_scaled(clone(column[k]), factor))
    for key in axis.per_case:
        if case is not None:
            case[key].append(clone(case[key][k]))
    return raw, case


def remove_item(pair: Pair, layout: Layout, rng: np.random.Generator) -> Pair | None:
    axis = layout.axis
    if axis is None or len(pair[0][axis.items]) <= 1:
        return None
    raw, case = clone(pair[0]), clone(pair[1])
    k = int(rng.integers(len(raw[axis.items])))
    del raw[axis.items][k]
    for job in raw["jobs"]:
        for key in axis.per_job:
            del job[key][k]
    for key in axis.per_case:
        if case is not None:
            del case[key][k]
    return raw, case


def count(pair: Pair, layout: Layout, rng: np.random.Generator) -> Pair | None:
    """A task, round, replica or server more or fewer: one counting integer +-1."""
    raw = clone(pair[0])
    found = [
        (p, v)
        for p, v in leaves(raw, layout.labels)
        if p[-1] in layout.counts and isinstance(v, int) and not isinstance(v, bool)
    ]
    if not found:
        return None
    path, value = found[int(rng.integers(len(found)))]
    put(raw, path, value + 1 if value <= 1 or rng.random() < 0.5 else value - 1)
    return raw, pair[1]


def _job_stages(pair: Pair, rng: np.random.Generator, stages: str) -> tuple[Any, list[Any]]:
    """A copy of the instance and the ``stages`` list of one of its jobs, drawn at random."""
    raw = clone(pair[0])
    return raw, raw["jobs"][int(rng.integers(len(raw["jobs"])))][stages]


def add_stage(pair: Pair, layout: Layout, rng: np.random.Generator) -> Pair | None:
    if layout.stages is None:
        return None
    raw, parts = _job_stages(pair, rng, layout.stages)
    parts.insert(int(rng.integers(len(parts) + 1)), clone(parts[-1]))
    return raw, pair[1]


def remove_stage(pair: Pair, layout: Layout, rng: np.random.Generator) -> Pair | None:
    if layout.stages is None:
        return None
    raw, parts = _job_stages(pair, rng, layout.stages)
    if len(parts) <= 1:
        return None
    del parts[int(rng.integers(len(parts)))]
    return raw, pair[1]


Move = Callable[[Pair, Layout, np.random.Generator], Pair | None]

#: Every move and how often the search draws it.
MOVES: dict[str, tuple[Move, float]] = {
    "tweak": (tweak, 0.40),
    "scale_job": (scale_job, 0.10),
    "add_job": (add_job, 0.12),
    "remove_job": (remove_job, 0.07),
    "merge_jobs": (merge_jobs, 0.05),
    "add_gpu": (add_item, 0.05),
    "remove_gpu": (remove_item, 0.05),
    "count": (count, 0.08),
    "recategorize": (recategorize, 0.03),
    "add_stage": (add_stage, 0.025),
    "remove_stage": (remove_stage, 0.025),
}


def propose(pair: Pair, layout: Layout, rng: np.random.Generator,
            weights: Mapping[str, float] | None = None) -> tuple[str, Pair | None]:  # fmt: skip
    """One move drawn by ``weights`` (default :data:`MOVES`' own) and applied: (its name, the
    new point or None when it does not apply)."""
    names = list(MOVES)
    w = np.array([(weights or {}).get(n, MOVES[n][1]) for n in names])
    name = names[int(rng.choice(len(names), p=w / w.sum()))]
    return name, MOVES[name][0](pair, layout, rng)


__all__ = [
    "LABELS",
    "MOVES",
    "Axis",
    "Layout",
    "Pair",
    "Raw",
    "changed",
    "jobs",
    "leaves",
    "nice",
    "propose",
]
