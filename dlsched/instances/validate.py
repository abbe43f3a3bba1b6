"""Small validation helpers shared by every instance family.

They read a field from a JSON-like mapping and raise :class:`InstanceError` naming the source,
the dotted field path and the value. Booleans are never accepted as numbers.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from dlsched.errors import InstanceError

_MISSING = object()


class Reader:
    """Reads typed fields of one JSON object, reporting errors against ``source``/``path``."""

    def __init__(self, data: Any, source: str, path: str = "") -> None:
        self.source = source
        self.path = path
        if not isinstance(data, Mapping):
            raise InstanceError(source, path, data, "expected a JSON object")
        self.data = data

    def _field(self, name: str) -> str:
        return f"{self.path}.{name}" if self.path else name

    def fail(self, name: str, value: Any, reason: str) -> InstanceError:
        return InstanceError(self.source, self._field(name), value, reason)

    def raw(self, name: str, default: Any = _MISSING) -> Any:
        if name not in self.data:
            if default is _MISSING:
                raise self.fail(name, None, "required field is missing")
            return default
        return self.data[name]

    def string(self, name: str, default: Any = _MISSING) -> str:
        value = self.raw(name, default)
        if not isinstance(value, str) or not value:
            raise self.fail(name, value, "expected a non-empty string")
        return value

    def number(
        self,
        name: str,
        default: Any = _MISSING,
        *,
        positive: bool = False,
        nonnegative: bool = False,
    ) -> float:
        value = self.raw(name, default)
        return check_number(
            value, self.source, self._field(name), positive=positive, nonnegative=nonnegative
        )

    def integer(self, name: str, default: Any = _MISSING, *, minimum: int | None = None) -> int:
        value = self.raw(name, default)
        return check_integer(value, self.source, self._field(name), minimum=minimum)

    def array(self, name: str, default: Any = _MISSING, *, nonempty: bool = True) -> list[Any]:
        value = self.raw(name, default)
        if not isinstance(value, list):
            raise self.fail(name, value, "expected a JSON array")
        if nonempty and not value:
            raise self.fail(name, value, "must not be empty")
        return value

    def child(self, name: str, value: Any, index: int | None = None) -> Reader:
        path = self._field(name) if index is None else f"{self._field(name)}[{index}]"
        return Reader(value, self.source, path)


def check_number(
    value: Any, source: str, field: str, *, positive: bool = False, nonnegative: bool = False
) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InstanceError(source, field, value, "expected a number")
    x = float(value)
    if not math.isfinite(x):
        raise InstanceError(source, field, value, "must be finite")
    if positive and x <= 0:
        raise InstanceError(source, field, value, "must be positive")
    if nonnegative and x < 0:
        raise InstanceError(source, field, value, "must not be negative")
    return x


def check_integer(value: Any, source: str, field: str, *, minimum: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InstanceError(source, field, value, "expected an integer")
    if isinstance(value, float) and not value.is_integer():
        raise InstanceError(source, field, value, "expected an integer")
    x = int(value)
    if minimum is not None and x < minimum:
        raise InstanceError(source, field, value, f"must be at least {minimum}")
    return x


def number_list(
    values: Sequence[Any],
    source: str,
    field: str,
    length: int,
    *,
    positive: bool = False,
    nonnegative: bool = False,
) -> tuple[float, ...]:
    if not isinstance(values, list):
        raise InstanceError(source, field, values, "expected a JSON array of numbers")
    if len(values) != length:
        raise InstanceError(source, field, values, f"expected {length} entries, got {len(values)}")
    return tuple(
        check_number(v, source, f"{field}[{k}]", positive=positive, nonnegative=nonnegative)
        for k, v in enumerate(values)
    )


def unique_names(names: Sequence[str], source: str, field: str) -> None:
    seen: set[str] = set()
    for k, name in enumerate(names):
        if name in seen:
            raise InstanceError(source, f"{field}[{k}].name", name, "duplicate name")
        seen.add(name)
