"""Counterexamples: an instance and the record that shows a failing bound, kept as one JSON file
whose instance part loads with :mod:`dlsched.instances`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from dlsched.instances import instance_hash, to_dict, write_text_atomic


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


__all__ = ["save_counterexample"]
