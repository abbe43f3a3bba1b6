"""The parameters of a trace-driven instance, as the online families read them: the generator's
``--param`` values (``trace=FILE``, ``throughputs=FILE``, ``limit``, a time in seconds, a
Gavel cluster ``V:P:K``, ``skip_bad_rows``) and the ``trace`` object of an instance file that
names a trace (:func:`manifest`). Each bad value is one :class:`~dlsched.errors.OptionError`
naming it (in an instance file, an :class:`~dlsched.errors.InstanceError` naming
``trace.FIELD``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Generic, TypeVar

from dlsched.errors import InstanceError, OptionError
from dlsched.online.rows import BadRows
from dlsched.online.traces import CLUSTER, GPU_TYPES, cluster_of

T = TypeVar("T")


def file_param(params: Mapping[str, Any], key: str) -> Path | None:
    """The file a parameter names, or None when it is not given; an error when it is not a
    path of an existing file."""
    value = params.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        raise OptionError(key, value, "expected a file path")
    path = Path(value)
    if not path.is_file():
        raise OptionError(key, value, "no such file")
    return path


def beside(path: Path, name: str, levels: int) -> Path | None:
    """The file ``name`` in the folder of ``path`` or up to ``levels - 1`` folders above it
    (the nearest), or None."""
    for d in [path.parent, *path.parent.parents][:levels]:
        if (d / name).is_file():
            return d / name
    return None


def parse_cluster(value: Any, gpus: int | None) -> dict[str, int]:
    """``cluster=V:P:K`` (GPUs of each type), else ``gpus`` in thirds, else :data:`CLUSTER`."""
    if value is None:
        return cluster_of(gpus) if gpus is not None else dict(CLUSTER)
    parts = value.split(":") if isinstance(value, str) else []
    if len(parts) != 3 or not all(p.isdigit() for p in parts) or not sum(map(int, parts)):
        raise OptionError("cluster", value, "expected V100:P100:K80 GPU counts, e.g. 36:36:36")
    return dict(zip(GPU_TYPES, map(int, parts), strict=True))


def seconds(name: str, value: Any, low: float = 1e-3, high: float = 1e9) -> float:
    """A trace parameter in seconds, from ``low`` to ``high``."""
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    if not ok or not math.isfinite(value) or not low <= value <= high:
        raise OptionError(name, value, f"expected seconds from {low:g} to {high:g}")
    return float(value)


def positive(name: str, value: Any) -> int | None:
    """A positive integer trace parameter, or None when not given."""
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise OptionError(name, value, "expected a positive integer")
    return value


def skip_rows(params: Mapping[str, Any]) -> BadRows:
    """The bad rows of a trace as the trace parameter ``skip_bad_rows`` says (``true``: each
    skipped and counted, by default each refused: :class:`~dlsched.online.rows.BadRows`)."""
    value = params.get("skip_bad_rows", False)
    if not isinstance(value, bool):
        raise OptionError("skip_bad_rows", value, "expected true or false")
    return BadRows(value)


def trace_files(params: Mapping[str, Any], known: tuple[str, ...]) -> tuple[Path, Path]:
    """The trace and Gavel's ``isolated_throughputs.json`` (``throughputs``, by default found
    beside the trace or up to two folders above) of trace parameters ``params`` (an unknown
    one refused)."""
    unknown = sorted(set(params) - set(known))
    if unknown:
        listed = ", ".join(known)
        raise OptionError(unknown[0], params[unknown[0]], f"not with trace= (known: {listed})")
    trace = file_param(params, "trace")
    assert trace is not None
    tput = file_param(params, "throughputs") or beside(trace, "isolated_throughputs.json", 3)
    if tput is None:
        raise OptionError("throughputs", None, "give the path of isolated_throughputs.json")
    return trace, tput


def manifest(
    data: Mapping[str, Any],
    source: str,
    known: tuple[str, ...],
    build: Callable[[dict[str, Any]], T],
) -> T:
    """The instance of a file naming a trace, ``{"family": ..., "name": ..., "trace":
    {"path": ..., PARAMETER: ...}}``: ``build`` called on the trace parameters (``known``;
    ``path`` is ``trace``, and file paths are relative to the instance file's folder), an
    error naming ``trace.FIELD`` for a bad one; the file's name and description kept."""
    from dlsched.instances.validate import Reader

    top = Reader(data, source, fields=("family", "name", "description", "trace"))
    spec = top.raw("trace")
    r = Reader(spec, source, "trace", fields=("path", *(k for k in known if k != "trace")))
    base = Path(source).parent if Path(source).is_file() else Path()
    params = {k: v for k, v in spec.items() if k != "path"}
    params["trace"] = str(base / r.string("path"))
    if isinstance(params.get("throughputs"), str):
        params["throughputs"] = str(base / params["throughputs"])
    try:
        inst = build(params)
    except OptionError as e:
        field = r.field("path" if e.option == "trace" else e.option)
        raise InstanceError(source, field, e.value, e.reason) from None
    name = top.string("name", inst.name)  # type: ignore[attr-defined]
    about = top.string("description", inst.description, empty=True)  # type: ignore[attr-defined]
    return replace(inst, name=name, description=about)  # type: ignore[type-var]


@dataclass(frozen=True)
class GavelReader(Generic[T]):
    """A family's reading of Gavel's traces, as :mod:`dlsched.instances` asks it of the
    family's trace module's ``READER`` (``load_trace``, ``read_manifest``): ``from_params(size,
    params)``, the family's generator trace mode (``size`` None: the family's default cluster),
    on the trace parameters ``known``."""

    known: tuple[str, ...]
    from_params: Callable[[int | None, Mapping[str, Any]], T]

    def load_trace(self, path: Path) -> T:
        """A Gavel trace read with the defaults of ``from_params``."""
        return self.from_params(None, {"trace": str(path)})

    def read_manifest(self, data: Mapping[str, Any], source: str) -> T:
        """An instance file naming a trace: ``{"family": ..., "name": ..., "trace": {"path":
        ..., PARAMETER: ...}}`` (the parameters ``known`` of ``from_params``)."""
        return manifest(data, source, self.known, lambda params: self.from_params(None, params))


__all__ = [
    "GavelReader",
    "beside",
    "file_param",
    "manifest",
    "parse_cluster",
    "positive",
    "seconds",
    "skip_rows",
    "trace_files",
]
