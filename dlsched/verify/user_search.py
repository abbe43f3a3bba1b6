"""``dlsched search FAMILY --method M`` and :func:`dlsched.search`: the worst-case search of
:mod:`.search` on the record :mod:`.user` makes for (family, method, guarantee), within the
budget as ``verify --search`` keeps it (its search, shrinking and sample shares), resumed from
the folder's log, and its finds saved as instance files any command loads.

``DIR/search.json`` holds ``verify --search``'s row of the pair (``worst_ratio``,
``sample_worst_ratio``, ``solves``, ``seconds``, ``violated``, ...) where ``instance`` is the
path of the worst instance found (``DIR/instances/<id>-worst.json``: ``dlsched compare PATH
--methods M`` reproduces its ratio), ``minimal_instance`` that of its shrunk violation
(``<id>-minimal.json``, when the guarantee was violated), and ``sizes`` the worst ratio at
each instance size (jobs, GPUs or servers) with its instance (``<id>-<J>j<G>g.json``). The
paths are the folder's as given, joined with the file's name.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from dlsched import families
from dlsched.errors import OptionError
from dlsched.instances import from_dict, save
from dlsched.verify.hunt import CERTIFIED, score
from dlsched.verify.runner import SEARCH_JSON, VerifyOptions
from dlsched.verify.search import (
    SEARCH_LOG,
    SearchOptions,
    read_search_log,
    run_key,
    search,
    write_rows,
)
from dlsched.verify.theorem import Theorem
from dlsched.verify.user import Carried, Guarantee, method_theorem

#: Where the instances a search found are saved, in its folder.
INSTANCES = "instances"


def prepare(family: str, method: Any, guarantee: Guarantee, option: str = "--method") -> Theorem:
    """The record of ``method`` on ``family`` (:func:`.user.method_theorem`): a Python object
    by the name it is registered under, else registered now (:func:`dlsched.usercode.named`),
    a spec resolved; either carried to the search's other processes. Without ``guarantee``,
    the one the method was registered with (if any). OptionError naming ``option`` for a
    method the family does not know, before any work."""
    from dlsched import usercode
    from dlsched.bounds import check_methods

    families.get(family)  # OptionError for an unknown family
    if not isinstance(method, str):
        method = usercode.named(method, family)
    if guarantee is None:  # the one it was registered with, if any
        found = usercode.find(family, method)
        guarantee = None if found is None else found.guarantee
    theorem = method_theorem(family, method, guarantee)
    try:
        check_methods(family, [method], theorem.reference)
    except OptionError as e:
        raise OptionError(option, e.value, e.reason) from None
    shipped = usercode.portable(family, [method])
    if shipped:
        theorem = method_theorem(family, method, guarantee, Carried(family, method, shipped))
    return theorem


def size_of(theorem: Theorem, raw: dict[str, Any]) -> tuple[int, int]:
    """(jobs, GPUs or servers) of a raw instance of the record's family."""
    layout = families.get(theorem.family).layout()
    return len(raw["jobs"]), int(layout.gpus(raw)) if layout is not None else 0


Found = tuple[float, dict[str, Any], dict[str, Any]]  # (score, row, raw instance)


def worst_by_size(lines: Sequence[dict[str, Any]], theorem: Theorem,
                  ) -> dict[tuple[int, int], Found]:  # fmt: skip
    """Per size (jobs, GPUs), the logged candidate of the highest score: (score, its row, its
    raw instance); only certified rows count (as in the search)."""
    out: dict[tuple[int, int], Found] = {}
    for line in lines:
        raw = line["point"]["instance"]
        for row in line.get("rows", ()):
            s = score(row)
            if s is None or row.get("reference_kind") not in CERTIFIED:
                continue
            size = size_of(theorem, raw)
            if size not in out or s > out[size][0]:
                out[size] = (s, row, raw)
    return dict(sorted(out.items()))


def save_instance(raw: dict[str, Any], directory: Path, name: str) -> str:
    """``raw`` saved as ``DIR/instances/<name>.json`` (named ``name``); its path as given."""
    folder = directory / INSTANCES
    folder.mkdir(parents=True, exist_ok=True)
    inst = from_dict({**raw, "name": name}, "search")
    return str(save(inst, folder / f"{name}.json", "full"))


def _ratio(row: dict[str, Any]) -> float | None:
    if row.get("ratio_infinite"):
        return math.inf
    x = row.get("ratio")
    return None if x is None else float(x)


def sizes_rows(theorem: Theorem, lines: Sequence[dict[str, Any]], directory: Path,
               ) -> list[dict[str, Any]]:  # fmt: skip
    """One row per instance size: jobs, gpus, the worst ratio found there and its instance
    (saved)."""
    out = []
    for (jobs, gpus), (_, row, raw) in worst_by_size(lines, theorem).items():
        path = save_instance(raw, directory, f"{theorem.id}-{jobs}j{gpus}g")
        ratio = _ratio(row)
        out.append({"jobs": jobs, "gpus": gpus, "worst_ratio": ratio, "instance": path})
    return out


def finished_row(theorem: Theorem, row: dict[str, Any], lines: Sequence[dict[str, Any]],
                 directory: Path) -> dict[str, Any]:  # fmt: skip
    """``verify --search``'s row of the pair with its finds saved as instance files:
    ``instance`` (the worst), ``minimal_instance`` (its shrunk violation, or None), ``sizes``,
    and the pair's ``family``, ``reference`` and ``guarantee`` (None: none). A shrunk
    violation is a certified candidate too: when its ratio is higher than the search's worst
    (a smaller instance can be worse), it is the worst, and the worst of its size."""
    out = {**row, "family": theorem.family, "reference": theorem.reference}
    out["guarantee"] = row.get("bound") if theorem.bound is not None else None
    out["minimal_instance"] = None
    found = list(lines)
    if row.get("minimal"):
        data = json.loads((directory / row["minimal"]).read_text())
        out["minimal_instance"] = save_instance(data["instance"], directory,
                                                f"{theorem.id}-minimal")  # fmt: skip
        out["minimal_ratio"] = _ratio(data["record"])
        found.append({"point": {"instance": data["instance"]}, "rows": [data["record"]]})
        out |= shrunk_worst(row, data["record"], data["instance"])
    raw = out.get("instance")
    out["instance"] = save_instance(raw, directory, f"{theorem.id}-worst") if raw else None
    out["sizes"] = sizes_rows(theorem, found, directory)
    return out


def shrunk_worst(row: dict[str, Any], record: dict[str, Any], raw: dict[str, Any],
                 ) -> dict[str, Any]:  # fmt: skip
    """The row's worst (ratio, over the bound, instance) replaced by the shrunk violation's
    ``record`` on ``raw`` when that scores higher; else nothing."""
    s = score(record)
    best = math.inf if row.get("worst_infinite") else row.get("worst_over_bound")
    if s is None or (best is not None and s <= best):
        return {}
    ratio = _ratio(record)
    return {
        "worst_ratio": None if ratio is None or math.isinf(ratio) else ratio,
        "worst_infinite": ratio is not None and math.isinf(ratio),
        "worst_over_bound": None if math.isinf(s) else s,
        "instance": raw,
    }


def run(theorem: Theorem, directory: Path, options: VerifyOptions, budget: SearchOptions,
        ) -> dict[str, Any]:  # fmt: skip
    """The search of ``theorem``'s one method into ``directory`` (resumed from its log),
    within ``budget``: its row of ``search.json``, written there (:func:`finished_row`)."""
    (method,) = theorem.methods
    summary = search([theorem], directory, options, budget)
    (row,) = [r for r in summary.rows if r["method"] == method]
    key = run_key(theorem, method, options, budget)
    lines = [r for r in read_search_log(directory / SEARCH_LOG, key) if "point" in r]
    done = finished_row(theorem, row, lines, directory)
    done["search_seconds"] = round(summary.seconds, 3)
    write_rows(directory, [done])
    return done


def summary_lines(row: dict[str, Any], directory: Path, budget: float) -> list[str]:
    """What ``dlsched search`` prints: the pair's worst, its sample's, the saved instances,
    and the worst ratio at each size."""
    worst = _text(row.get("worst_ratio"), row.get("worst_infinite"))
    sample = _text(row.get("sample_worst_ratio"), row.get("sample_worst_infinite"))
    bound = "" if row["guarantee"] is None else f" against the guarantee {row['guarantee']:g}"
    lines = [
        f"{row['method']} on {row['family']}{bound}: worst ratio {worst} (a seeded sample's: "
        f"{sample}) in {row['solves']} certified solves, {row['search_seconds']:.0f} s of the "
        f"{budget:g}-s budget; {directory / SEARCH_JSON}",
    ]
    if row.get("instance"):
        lines.append(f"  worst instance: {row['instance']}")
    if row["violated"]:
        small = row.get("minimal_instance")
        lines.append(f"  violated; shrunk to {small}" if small else "  violated (not shrunk)")
    for s in row["sizes"]:
        lines.append(f"  {s['jobs']} jobs, {s['gpus']} gpus: worst ratio "
                     f"{_text(s['worst_ratio'])}  {s['instance']}")  # fmt: skip
    return lines


def _text(x: float | None, infinite: bool | None = False) -> str:
    if infinite or (x is not None and math.isinf(x)):
        return "inf"
    return "-" if x is None else f"{x:.4g}"


__all__ = [
    "INSTANCES",
    "prepare",
    "finished_row",
    "run",
    "save_instance",
    "shrunk_worst",
    "size_of",
    "sizes_rows",
    "summary_lines",
    "worst_by_size",
]
