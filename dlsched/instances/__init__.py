"""Instances: typed, immutable, loaded from JSON (by path or bundled name) with validation.

>>> from dlsched.instances import load
>>> inst = load("placement/liu2024-motivating")
>>> inst.num_jobs, inst.num_workers
(2, 4)
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from dlsched.errors import InstanceError
from dlsched.instances.placement import (
    PlacementInstance,
    PlacementJob,
    Worker,
    placement_from_dict,
    placement_to_dict,
)


@dataclass(frozen=True)
class Family:
    """How one problem family reads and writes its instances."""

    name: str
    from_dict: Callable[[Any, str], Any]
    to_dict: Callable[[Any], dict[str, Any]]


FAMILIES: dict[str, Family] = {}


def register_family(family: Family) -> None:
    FAMILIES[family.name] = family


register_family(Family("placement", placement_from_dict, placement_to_dict))


def _register_optional_families() -> None:
    # Families living in their own modules register themselves on import.
    import importlib

    for module in ("dlsched.instances.hare",):
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as e:  # pragma: no cover - family not built yet
            if e.name != module:
                raise


def from_dict(data: Any, source: str = "<dict>") -> Any:
    """Build and validate an instance from a JSON-like dict."""
    _register_optional_families()
    if not isinstance(data, dict):
        raise InstanceError(source, "", data, "expected a JSON object at the top level")
    fam = data.get("family")
    if fam is None:
        raise InstanceError(source, "family", None, "required field is missing")
    if fam not in FAMILIES:
        raise InstanceError(
            source, "family", fam, f"unknown family (known: {', '.join(sorted(FAMILIES))})"
        )
    return FAMILIES[fam].from_dict(data, source)


def to_dict(instance: Any) -> dict[str, Any]:
    _register_optional_families()
    return FAMILIES[instance.family].to_dict(instance)


def loads(text: str, source: str = "<string>") -> Any:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise InstanceError(
            source,
            "",
            text[max(0, e.pos - 20) : e.pos + 20],
            f"broken JSON: {e.msg} at line {e.lineno} column {e.colno}",
        ) from None
    return from_dict(data, source)


def _bundled_root() -> Any:
    return resources.files("dlsched.instances").joinpath("data")


def bundled() -> list[str]:
    """Names of the bundled instances, e.g. ``placement/liu2024-motivating``."""
    root = _bundled_root()
    names = []
    for fam_dir in root.iterdir():
        if fam_dir.is_dir():
            for f in fam_dir.iterdir():
                if f.name.endswith(".json"):
                    names.append(f"{fam_dir.name}/{f.name[:-5]}")
    return sorted(names)


def load(ref: str | os.PathLike[str]) -> Any:
    """Load an instance from a file path or a bundled name."""
    path = Path(ref)
    if path.is_file():
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as e:
            raise InstanceError(str(path), "", str(path), f"cannot read file: {e}") from None
        return loads(text, str(path))
    name = str(ref)
    if name.endswith(".json"):
        raise InstanceError(name, "", name, "no such file")
    res = _bundled_root().joinpath(*(name + ".json").split("/"))
    if res.is_file():
        return loads(res.read_text(encoding="utf-8"), name)
    raise InstanceError(
        name, "", name, "no such file or bundled instance (see `dlsched instances list`)"
    )


def dumps(instance: Any) -> str:
    return json.dumps(to_dict(instance), indent=1) + "\n"


def save(instance: Any, path: str | os.PathLike[str]) -> Path:
    """Write atomically: a crash or error never leaves a half-written file behind."""
    return write_text_atomic(Path(path), dumps(instance))


def write_text_atomic(path: Path, text: str) -> Path:
    path = Path(path)
    if path.parent and not path.parent.exists():
        raise InstanceError(str(path), "", str(path.parent), "directory does not exist")
    fd, tmp = tempfile.mkstemp(dir=path.parent or ".", prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path


def instance_hash(instance: Any) -> str:
    """Content hash of the canonical JSON form (first 16 hex digits of SHA-256)."""
    canon = json.dumps(to_dict(instance), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canon.encode()).hexdigest()[:16]


__all__ = [
    "FAMILIES",
    "Family",
    "PlacementInstance",
    "PlacementJob",
    "Worker",
    "bundled",
    "dumps",
    "from_dict",
    "instance_hash",
    "load",
    "loads",
    "register_family",
    "save",
    "to_dict",
    "write_text_atomic",
]
