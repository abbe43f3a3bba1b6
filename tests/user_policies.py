"""What the tests of the user-policy interface share: the example policies of
``examples/policies.py`` (loaded from its path, as a user's file is), a recorder of the views a
policy sees, and the comparison of two runs' views up to the first moment a hidden size shows."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

_PATH = Path(__file__).resolve().parent.parent / "examples" / "policies.py"
_spec = importlib.util.spec_from_file_location("examples_policies", _PATH)
assert _spec is not None and _spec.loader is not None
examples: Any = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(examples)


class Recorder:
    """Wraps a policy: keeps every view and job it is shown, then passes them on."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.views: list[Any] = []
        self.arrived: list[Any] = []
        self.completed: list[Any] = []

    def decide(self, view: Any) -> Any:
        self.views.append(view)
        return self.inner.decide(view)

    def on_arrival(self, job: Any) -> None:
        self.arrived.append(job)
        if hasattr(self.inner, "on_arrival"):
            self.inner.on_arrival(job)

    def on_complete(self, job: Any) -> None:
        self.completed.append(job)
        if hasattr(self.inner, "on_complete"):
            self.inner.on_complete(job)


class Fixed:
    """Returns ``answer`` (or ``answer(view)`` when callable) at the first decision, nothing
    after."""

    def __init__(self, answer: Any) -> None:
        self.answer, self.calls = answer, 0

    def decide(self, view: Any) -> Any:
        self.calls += 1
        if self.calls > 1:
            return []
        return self.answer(view) if callable(self.answer) else self.answer


def left_at(views: list[Any], job: int) -> float:
    """The time of the first view without ``job`` after one with it (inf: never)."""
    seen = False
    for v in views:
        here = any(j.index == job for j in v.jobs)
        if seen and not here:
            return float(v.now)
        seen = seen or here
    return float("inf")


def same_until(a: list[Any], b: list[Any], job: int) -> tuple[int, bool]:
    """(how many views the runs ``a`` and ``b`` share before ``job`` leaves either one's view,
    whether they are all equal); the views after that moment differ somewhere."""
    until = min(left_at(a, job), left_at(b, job))
    first = [v for v in a if v.now < until]
    second = [v for v in b if v.now < until]
    return len(first), first == second


def slot_fields(cls: type) -> set[str]:
    """The fields of a slotted view class (it has no ``__dict__``)."""
    return set(cls.__slots__)  # type: ignore[attr-defined]
