"""Small validation helpers shared by every instance family.

They read a field from a JSON-like mapping and raise :class:`InstanceError` naming the source,
the dotted field path and the value. The rules they enforce:

- every object lists its fields: an unknown (e.g. misspelt) key is refused, with a hint;
- every number lies in its field's :class:`Range`; NaN and infinities lie in none;
- booleans are never numbers; counts are integers from 1 to :data:`MAX_COUNT`.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from dlsched.errors import InstanceError

_MISSING = object()
T = TypeVar("T")

#: Smallest value of a positive field: the finest time resolution of the exact solvers (times
#: are scaled by at most 1e6), and far below any physical rate or size the models describe.
RESOLUTION = 1e-6
#: Largest count (epochs, rounds, tasks per round, tasks of an instance): beyond it no
#: solver finishes, and a count that large is almost always a unit mistake.
MAX_COUNT = 10**6


@dataclass(frozen=True)
class Range:
    """The values a numeric field accepts: ``low <= x <= high`` (hence finite)."""

    low: float
    high: float

    def __str__(self) -> str:
        return f"from {self.low:g} to {self.high:g}"


#: A count: an integer from 1 to MAX_COUNT.
COUNT = Range(1, MAX_COUNT)


def _out_of(value: Any, rng: Range, what: str) -> str:
    if isinstance(value, float) and not math.isfinite(value):
        return "must be a finite number (NaN, Infinity and numbers beyond 1e308 are refused)"
    return f"must be {what} {rng}"


def check_number(value: Any, source: str, field: str, rng: Range) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InstanceError(source, field, value, f"expected a number {rng}")
    if not rng.low <= value <= rng.high:  # exact for any int, False for NaN
        raise InstanceError(source, field, value, _out_of(value, rng, "a number"))
    return float(value)


def check_integer(value: Any, source: str, field: str, rng: Range = COUNT) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InstanceError(source, field, value, f"expected an integer {rng}")
    if not rng.low <= value <= rng.high:
        raise InstanceError(source, field, value, _out_of(value, rng, "an integer"))
    if isinstance(value, float) and not value.is_integer():
        raise InstanceError(source, field, value, f"expected an integer {rng}")
    return int(value)


def _parse(text: str, integer: bool) -> int | float:
    """``text`` as a number (an int when ``integer`` and written as one); ValueError if none."""
    if integer:
        try:
            return int(text)
        except ValueError:
            pass  # 2.0 or 1e3: an integer all the same; or not a number, raised below
    return float(text)


def number_text(text: str, source: str, field: str, rng: Range, integer: bool = False) -> float:
    """A number written as text (a cell of a trace file) in ``rng`` (an integer when
    ``integer``), else an error showing the text as written, with the reasons of
    :func:`check_number` and :func:`check_integer` (NaN, infinities and 10^400 lie in no
    range; a huge integer is compared exactly, never converted to a float)."""
    kind = "an integer" if integer else "a number"
    try:
        value = _parse(text, integer)
    except ValueError:
        raise InstanceError(source, field, text, f"expected {kind} {rng}") from None
    if not rng.low <= value <= rng.high:  # exact for any int, False for NaN
        raise InstanceError(source, field, text, _out_of(value, rng, kind))
    if integer and not float(value).is_integer():
        raise InstanceError(source, field, text, f"expected {kind} {rng}")
    return int(value) if integer else float(value)


def number_list(values: Any, source: str, field: str, length: int, rng: Range) -> tuple[float, ...]:
    """``length`` numbers in ``rng``. The common case (all good) takes a few C-level passes."""
    if not isinstance(values, list | tuple):
        raise InstanceError(source, field, values, "expected a JSON array of numbers")
    if len(values) != length:
        raise InstanceError(source, field, values, f"expected {length} entries, got {len(values)}")
    # Fast path: NaN makes the sum NaN; min and max compare ints exactly, so nothing overflows.
    if (
        values
        and {type(v) for v in values} <= {int, float}
        and rng.low <= min(values)
        and max(values) <= rng.high
        and math.isfinite(sum(values))
    ):
        return tuple(map(float, values))
    return tuple(check_number(v, source, f"{field}[{k}]", rng) for k, v in enumerate(values))


def check_keys(
    data: Mapping[Any, Any], known: Collection[str], source: str, path: str, what: str = "field"
) -> None:
    """Refuse a key of ``data`` not in ``known``, suggesting the closest known one."""
    for key in data:
        if key not in known:
            name = str(key)
            close = difflib.get_close_matches(name, list(known), n=1)
            hint = f"; did you mean '{close[0]}'?" if close else ""
            listed = ", ".join(sorted(known))
            raise InstanceError(
                source,
                f"{path}.{name}" if path else name,
                data[key],
                f"unknown {what} (known: {listed}){hint}",
            )


class Reader:
    """Reads typed fields of one JSON object, reporting errors against ``source``/``path``.

    ``fields`` are every key the object may have; any other key is refused.
    """

    def __init__(self, data: Any, source: str, path: str = "", *, fields: Collection[str]) -> None:
        self.source = source
        self.path = path
        if not isinstance(data, Mapping):
            raise InstanceError(source, path, data, "expected a JSON object")
        check_keys(data, fields, source, path)
        self.data = data

    def field(self, name: str) -> str:
        return f"{self.path}.{name}" if self.path else name

    def fail(self, name: str, value: Any, reason: str) -> InstanceError:
        return InstanceError(self.source, self.field(name), value, reason)

    def raw(self, name: str, default: Any = _MISSING) -> Any:
        if name not in self.data:
            if default is _MISSING:
                raise self.fail(name, None, "required field is missing")
            return default
        return self.data[name]

    def string(self, name: str, default: Any = _MISSING, *, empty: bool = False) -> str:
        value = self.raw(name, default)
        if not isinstance(value, str) or not (value or empty):
            raise self.fail(
                name, value, "expected a string" if empty else "expected a non-empty string"
            )
        return value

    def number(self, name: str, rng: Range, default: Any = _MISSING) -> float:
        return check_number(self.raw(name, default), self.source, self.field(name), rng)

    def integer(self, name: str, rng: Range = COUNT, default: Any = _MISSING) -> int:
        return check_integer(self.raw(name, default), self.source, self.field(name), rng)

    def array(self, name: str, default: Any = _MISSING, *, nonempty: bool = True) -> list[Any]:
        value = self.raw(name, default)
        if not isinstance(value, list):
            raise self.fail(name, value, "expected a JSON array")
        if nonempty and not value:
            raise self.fail(name, value, "must not be empty")
        return value

    def child(
        self, name: str, value: Any, index: int | None = None, *, fields: Collection[str]
    ) -> Reader:
        path = self.field(name) if index is None else f"{self.field(name)}[{index}]"
        return Reader(value, self.source, path, fields=fields)


def unique_names(names: Sequence[str], source: str, field: str) -> None:
    seen: set[str] = set()
    for k, name in enumerate(names):
        if name in seen:
            raise InstanceError(source, f"{field}[{k}].name", name, "duplicate name")
        seen.add(name)


def built(source: str, make: Callable[..., T], **fields: Any) -> T:
    """``make(**fields)``: an instance whose own checks name the source ``<instance>``, its
    error re-raised naming ``source`` (the file the fields were read from)."""
    try:
        return make(**fields)
    except InstanceError as e:
        raise InstanceError(source, e.field, e.value, e.reason) from None
