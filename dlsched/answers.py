"""Readers of the fields of a user method's answer (the form ``dlsched solve --json`` prints
under ``solution``), for each family's ``solution_from_json``: each returns the field's value
or raises :class:`~dlsched.errors.UserCodeError` naming the answer's source (the method), the
field (``tasks[3].gpu``) and the value, on one line. The checker then judges what was read."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from dlsched.errors import UserCodeError, shown


def wrong(source: str, field: str, value: Any, reason: str) -> UserCodeError:
    """The one-line error of a malformed field of ``source``'s answer."""
    where = f"field '{field}'" if field else "answer"
    return UserCodeError(f"{source}: {where} = {shown(value)}: {reason}")


def answer(source: str, value: Any, family: str, form: str) -> Mapping[str, Any]:
    """The answer as an object; else the one line naming the ``form`` a ``family`` rule must
    return."""
    if not isinstance(value, Mapping):
        raise UserCodeError(
            f"{source}: a {family} rule must return {form}, got {type(value).__name__}"
        )
    return value


def mapping(source: str, field: str, value: Any) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise wrong(source, field, value, f"expected an object, got {type(value).__name__}")
    return value


def items(source: str, field: str, value: Any) -> Sequence[Any]:
    """A list (or tuple) of entries."""
    if not isinstance(value, list | tuple):
        raise wrong(source, field, value, f"expected a list, got {type(value).__name__}")
    return value


def get(source: str, field: str, entry: Mapping[str, Any], key: str, default: Any = ...) -> Any:
    """``entry[key]``; missing: ``default``, or an error naming ``field.key`` when none."""
    if key in entry:
        return entry[key]
    if default is ...:
        raise wrong(source, f"{field}.{key}" if field else key, None, "missing")
    return default


def integer(source: str, field: str, value: Any, low: int = 0) -> int:
    """A whole number >= ``low`` (an integral float such as 2.0 is read as 2)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or value != int(value):
        raise wrong(source, field, value, "expected a whole number")
    if value < low:
        raise wrong(source, field, value, f"expected at least {low}")
    return int(value)


def number(source: str, field: str, value: Any) -> float:
    """A finite number."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise wrong(source, field, value, "expected a finite number")
    return float(value)


def index(source: str, field: str, value: Any, names: Sequence[str], what: str) -> int:
    """The index of one of ``names`` (``what``: job, GPU, server, ...), given by its name or by
    its index."""
    if isinstance(value, str):
        try:
            return list(names).index(value)
        except ValueError:
            known = ", ".join(names[:8]) + (", ..." if len(names) > 8 else "")
            raise wrong(source, field, value, f"no {what} of that name (known: {known})") from None
    k = integer(source, field, value)
    if k >= len(names):
        raise wrong(source, field, value, f"no {what} {k} (there are {len(names)})")
    return k


def counts(source: str, field: str, value: Any, names: Sequence[str], what: str) -> dict[int, Any]:
    """``{name or index: count}`` (a server's workers, ...) by index."""
    out: dict[int, Any] = {}
    for key, n in mapping(source, field, value).items():
        named = key not in names and isinstance(key, str) and key.isdigit()
        out[index(source, f"{field}.{key}", int(key) if named else key, names, what)] = n
    return out


__all__ = ["answer", "counts", "get", "index", "integer", "items", "mapping", "number", "wrong"]
