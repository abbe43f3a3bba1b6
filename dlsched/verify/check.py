"""One theorem checked in this process, by the same rows, verdicts and counterexample files as
``dlsched verify``: on one instance (:func:`check`), on a counterexample saved earlier
(:func:`recheck`), or on a seeded sample drawn by a generator of the caller's (:func:`sample`,
what a family's ``sweep`` calls).

A row is :mod:`.runner`'s: ``method``, ``value``, ``reference``, ``reference_kind``, ``ratio``,
``bound``, ``holds`` (False: a violation), ``applies``, ``case`` and ``details``.
"""

from __future__ import annotations

import dataclasses
import json
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from dlsched.errors import DlschedError, OptionError
from dlsched.instances import from_dict, instance_hash
from dlsched.solvers.base import SolveOptions
from dlsched.verify.runner import (
    COUNTEREXAMPLES,
    LOG,
    VerifyOptions,
    measure_case,
    read_log,
    run,
)
from dlsched.verify.theorem import Theorem, registry


def theorem_of(theorem: str | Theorem) -> Theorem:
    """The registered theorem of that id (OptionError naming the known ones), or ``theorem``."""
    if isinstance(theorem, Theorem):
        return theorem
    table = registry()
    if theorem not in table:
        raise OptionError("THEOREM", theorem, f"unknown theorem (known: {', '.join(table)})")
    return table[theorem]


def check(
    theorem: str | Theorem,
    instance: Any,
    solve: SolveOptions | None = None,
    *,
    case: str = "",
    details: Mapping[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """The rows of ``theorem`` (an id or a record) on ``instance``, each with its verdict; with
    ``details``, only the sub-case they describe (named ``case``), for a theorem that replays
    its sub-cases (a drawn price window, ...). OptionError for a theorem that does not."""
    t = theorem_of(theorem)
    if details is not None and t.replay is None:
        raise OptionError("details", case or "-", f"{t.id} draws no sub-cases to replay")
    sub = None if details is None else (case, dict(details))
    return measure_case(t, instance, solve or SolveOptions(), sub)


def load_counterexample(path: str | Path) -> tuple[Any, dict[str, Any]]:
    """The instance and the row of a counterexample file (``{"instance", "record"}``)."""
    data = json.loads(Path(path).read_text())
    return from_dict(data["instance"], str(path)), data["record"]


def recheck(path: str | Path, solve: SolveOptions | None = None) -> dict[str, Any]:
    """The row of a saved counterexample measured again: its theorem (the record's
    ``theorem``) on its instance, the recorded sub-case replayed when the theorem replays its
    cases (a drawn price window, ...). DlschedError when the row is not measured again."""
    inst, rec = load_counterexample(path)
    t = theorem_of(rec["theorem"])
    case = (rec.get("case") or "", rec.get("details") or {}) if t.replay else None
    for r in measure_case(t, inst, solve or SolveOptions(), case):
        if r["method"] == rec["method"] and r["case"] == (rec.get("case") or ""):
            return r
    raise DlschedError(f"{path}: {t.id} measures no {rec['method']} row on its instance again")


def sample(
    theorem: str | Theorem,
    count: int,
    first_seed: int = 0,
    *,
    generate: Callable[..., Any] | None = None,
    methods: Sequence[str] | None = None,
    directory: str | Path | None = None,
    solve: SolveOptions | None = None,
    shrink: int = 0,
) -> tuple[list[dict[str, Any]], list[Path]]:
    """``theorem`` on ``count`` instances drawn with seeds ``first_seed``, ... (by ``generate``,
    ``generate(seed, jobs=None, gpus=None)``, in place of the theorem's own; ``methods`` in place
    of its methods), run by the verify runner in this process: one JSON line per row in
    ``directory/verify.jsonl`` (a second call resumes it), each violation saved under
    ``directory/counterexamples`` (and ``shrink`` of them per method shrunk). Returns the rows of
    these instances and their counterexample files (minimal ones too); without a directory the
    run goes to a temporary folder and nothing is kept."""
    t = theorem_of(theorem)
    if generate is not None:
        t = dataclasses.replace(t, generate=generate)
    if methods is not None:
        t = dataclasses.replace(t, methods=tuple(methods))
    so = solve or SolveOptions()
    opts = VerifyOptions(
        count=count, first_seed=first_seed, solve=so, processes=0, progress=False, shrink=shrink
    )
    wanted = {instance_hash(t.instance(first_seed + k)) for k in range(count)}
    with tempfile.TemporaryDirectory(prefix="dlsched-verify-") as scratch:
        folder = Path(directory) if directory is not None else Path(scratch)
        run([t], folder, opts)
        rows = [
            r
            for r in read_log(folder / LOG)
            if r["theorem"] == t.id and r["instance_hash"] in wanted
            and r["time_limit"] == so.time_limit and r["seed"] == so.seed
        ]  # fmt: skip
        saved = [
            path
            for path in sorted((folder / COUNTEREXAMPLES).glob(f"{t.id}-*.json"))
            if directory is not None and _of(path, t.id, wanted)
        ]
    return rows, saved


def _of(path: Path, theorem: str, hashes: set[str]) -> bool:
    """Whether the counterexample file ``path`` is of ``theorem`` on one of the instances
    ``hashes`` (a minimal one: shrunk from one of them)."""
    rec = json.loads(path.read_text())["record"]
    drawn = rec.get("shrunk_from", rec.get("instance_hash"))
    return bool(rec.get("theorem") == theorem and drawn in hashes)


__all__ = ["check", "load_counterexample", "recheck", "sample", "theorem_of"]
