"""The checks of the public calls' arguments (:mod:`dlsched.api`, :mod:`dlsched.api_models`),
made at the top of each call before any work, with the command line's limits and words.

A value of the wrong type is a :class:`TypeError` naming the argument and what it takes (a
bool is not a number, a float not a count); an impossible value an
:class:`~dlsched.errors.OptionError` (``option seed = -1: must be in [0, 2147483647]``). Every
message is one line. The module imports nothing of the package but its errors, so any layer may
check with it; what needs a family (an instance, a family's name) is checked by the calls
themselves (:func:`dlsched.api.load`, :func:`dlsched.families.get`).
"""

from __future__ import annotations

import numbers
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from dlsched.errors import OptionError, shown

#: Longest accepted time limit in seconds (about 11.6 days); SCIP refuses anything above 1e20.
MAX_TIME_LIMIT = 1e6
#: Most solver threads accepted (more only makes the solvers thrash).
MAX_THREADS = 256
#: Largest seed (CP-SAT takes a signed 32-bit seed).
MAX_SEED = 2**31 - 1
#: Most Dask worker processes accepted.
MAX_PROCESSES = 4096
#: Longest file or folder name, in bytes, and longest path (the usual Linux limits).
NAME_MAX = 255
PATH_MAX = 4096


def wrong_type(name: str, value: Any, expected: str) -> TypeError:
    """The one-line TypeError of an argument given a value of the wrong type."""
    return TypeError(f"argument {name} = {shown(value)}: expected {expected}, got {_kind(value)}")


def _kind(value: Any) -> str:
    return "None" if value is None else type(value).__name__


def span(low: float, high: float | None, low_open: bool = False) -> str:
    """The words of a range, as the command line says it: ``in [0, 10]``, ``at least 1``."""
    if high is None:
        return f"{'above' if low_open else 'at least'} {low:g}"
    return f"in {'(' if low_open else '['}{low:g}, {high:g}]"


def integer(name: str, value: Any, low: int, high: int | None = None, *, none: bool = False) -> Any:
    """An int (numpy's too, never a bool) in [low, high]; None when ``none`` allows it."""
    if value is None and none:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise wrong_type(name, value, "an integer" + (" or None" if none else ""))
    x = int(value)
    if x < low or (high is not None and x > high):
        raise OptionError(name, value, f"must be {span(low, high)}")
    return x


def real(name: str, value: Any, expected: str = "a number") -> float:
    """A real number (numpy's too, never a bool), as a float; a TypeError otherwise."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise wrong_type(name, value, expected)
    return float(value)


def seconds(name: str, value: Any, *, none: bool = True, high: float = MAX_TIME_LIMIT) -> Any:
    """A number of seconds in (0, ``high``]; None (no limit) when ``none`` allows it."""
    if value is None and none:
        return None
    x = real(name, value, "a number of seconds" + (" or None" if none else ""))
    if not 0 < x <= high:  # NaN too
        raise OptionError(name, value, f"must be a number of seconds {span(0, high, True)}")
    return x


def seed(name: str, value: Any) -> int:
    return int(integer(name, value, 0, MAX_SEED))


def flag(name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise wrong_type(name, value, "True or False")
    return value


def text(name: str, value: Any, *, none: bool = False) -> Any:
    """A non-empty string; None when ``none`` allows it."""
    if value is None and none:
        return None
    if not isinstance(value, str):
        raise wrong_type(name, value, "a string" + (" or None" if none else ""))
    if not value.strip():
        raise OptionError(name, value, "is empty")
    return value


def names(name: str, value: Any, *, none: bool = False) -> list[str]:
    """Names given as a comma-separated string (as on the command line: ``"hare,relaxation"``)
    or a sequence of strings: at least one, none twice. None is no name when ``none``."""
    if value is None and none:
        return []
    if isinstance(value, str):
        items = [m.strip() for m in value.split(",") if m.strip()]
    elif isinstance(value, Sequence) and not isinstance(value, bytes):
        items = list(value)
        bad = [m for m in items if not isinstance(m, str)]
        if bad:
            raise wrong_type(name, value, f"names (strings), one of them {_kind(bad[0])}")
        if not all(m.strip() for m in items):
            raise OptionError(name, value, "an empty name")
    else:
        raise wrong_type(name, value, "a name, names separated by commas, or a list of names")
    if not items and (isinstance(value, str) or not none):
        raise OptionError(name, value, "give at least one name")
    twice = next((m for k, m in enumerate(items) if m in items[:k]), None)
    if twice is not None:
        raise OptionError(name, value, f"'{twice}' is named twice")
    return items


def model(name: str, value: Any) -> Any:
    """A Pyomo model (what :func:`dlsched.model` builds), or a TypeError naming ``name``."""
    if not callable(getattr(value, "component_objects", None)):
        raise wrong_type(name, value, "a Pyomo model or a program's name")
    return value


def frame(name: str, value: Any, columns: Sequence[str]) -> Any:
    """A pandas DataFrame with ``columns`` (what :func:`dlsched.compare` returns)."""
    import pandas as pd

    if not isinstance(value, pd.DataFrame):
        raise wrong_type(name, value, "a DataFrame of dlsched.compare()")
    missing = [c for c in columns if c not in value.columns]
    if missing:
        known = ", ".join(map(str, value.columns)) or "none"
        raise OptionError(name, f"<{len(value)} rows>", f"has no column {missing[0]!r} ({known})")
    return value


def short(path: str, keep: int = 60) -> str:
    """``path`` cut in the middle to at most ``keep`` characters (for one-line messages)."""
    return path if len(path) <= keep else f"{path[:40]}...{path[-(keep - 43) :]}"


def check_lengths(option: str, path: str) -> None:
    """OptionError if ``path`` or one of its names is longer than the file system allows."""
    if "\0" in path:
        raise OptionError(option, short(path), "a NUL character in the path")
    if len(path.encode(errors="surrogateescape")) > PATH_MAX:
        raise OptionError(option, short(path), f"path longer than {PATH_MAX} bytes")
    if any(len(part.encode(errors="surrogateescape")) > NAME_MAX for part in Path(path).parts):
        raise OptionError(option, short(path), f"a name in the path is over {NAME_MAX} bytes")


def check_folder(option: str, path: Any) -> Path:
    """An output folder: given, creatable (its parent exists) or an existing writable folder."""
    if path is not None and not isinstance(path, str | os.PathLike):
        raise wrong_type(option, path, "a folder's path")
    path = os.fspath(path) if path is not None else None
    if not path or not isinstance(path, str):
        raise OptionError(option, path, "give the output folder")
    check_lengths(option, path)
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise OptionError(option, short(path), "exists and is not a folder")
    if not p.parent.is_dir():
        raise OptionError(option, short(path), f"folder {short(str(p.parent))!r} does not exist")
    if not os.access(p if p.exists() else p.parent, os.W_OK):
        raise OptionError(option, short(path), "not writable")
    return p


def settings(time_limit: Any, seed_: Any, threads: Any = 1, mip_gap: Any = 0.0) -> None:
    """The solver arguments of :func:`dlsched.solve` and :func:`dlsched.solve_model`."""
    seconds("time_limit", time_limit)
    seed("seed", seed_)
    integer("threads", threads, 1, MAX_THREADS)
    if not 0 <= real("mip_gap", mip_gap) < 1:  # NaN too
        raise OptionError("mip_gap", mip_gap, "must lie in [0, 1)")


def category(value: Any) -> tuple[int, ...]:
    """A placement category K_1,...,K_S: ``"3,1"`` (as ``--category`` takes it) or a sequence
    of integers, as a tuple (the method checks its length and sum)."""
    if isinstance(value, str):
        try:
            return tuple(int(x) for x in value.split(","))
        except ValueError:
            raise OptionError(
                "category", value, "expected comma-separated positive integers, e.g. 3,1"
            ) from None
    whole = isinstance(value, Sequence) and not isinstance(value, bytes)
    if not whole or any(isinstance(k, bool) or not isinstance(k, numbers.Integral) for k in value):
        raise wrong_type("category", value, "integers K_1,...,K_S (a sequence or '3,1')")
    return tuple(int(k) for k in value)


def method_params(given: dict[str, Any]) -> dict[str, Any]:
    """The method parameters that are also command-line options (``--category``, ``--alpha``,
    ``--beta``, ``--samples``, ``--route``, ``--backend``) checked and converted as there; the
    others are the method's to check."""
    out = dict(given)
    if "category" in out:
        out["category"] = category(out["category"])
    for key in ("alpha", "beta"):
        if key in out:
            real(key, out[key])
    if "samples" in out:
        integer("samples", out["samples"], 1)
    for key in ("route", "backend"):
        if key in out:
            text(key, out[key])
    return out


def verify_arguments(given: dict[str, Any]) -> list[str]:
    """The theorem keys of :func:`dlsched.api.verify_theorems` (its arguments, ``given``);
    every other argument is checked as ``dlsched verify`` checks its options, so no cluster
    is started and no folder made for a bad one."""
    keys = names("theorems", given["theorems"], none=True)
    count = integer("count", given["count"], 1)
    integer("jobs", given["jobs"], 1, none=True)
    integer("gpus", given["gpus"], 1, none=True)
    first = seed("first_seed", given["first_seed"])
    if first + count - 1 > MAX_SEED:
        raise OptionError("count", count, f"seeds would reach {first + count - 1} > {MAX_SEED}")
    seconds("time_limit", given["time_limit"])
    seed("seed", given["seed"])
    if given["out"] is not None:
        check_folder("out", given["out"])
    integer("processes", given["processes"], 0, MAX_PROCESSES, none=True)
    text("scheduler", given["scheduler"], none=True)
    search = flag("search", given["search"])
    budget = seconds("budget", given["budget"])
    if budget is not None and not search:
        raise OptionError("budget", budget, "is the budget of search=True; add search=True")
    return keys


def guarantee(name: str, value: Any) -> Any:
    """A guarantee: None, a positive number, or a function of the instance."""
    if value is None or (callable(value) and not isinstance(value, type)):
        return value
    x = real(name, value, "None, a number or a function of the instance")
    if not 0 < x < float("inf"):  # NaN too
        raise OptionError(name, value, "must be a positive number")
    return x


def search_arguments(given: dict[str, Any]) -> None:
    """The arguments of :func:`dlsched.api.search` (``given``), checked as ``dlsched search``
    checks its options, so no cluster is started and no folder made for a bad one. The
    method is a name or a Python object (a function, a class, an object with ``decide``); the
    family and whether it has the method are checked by the call."""
    method = given["method"]
    if isinstance(method, str):
        text("method", method)
    elif not (callable(method) or hasattr(method, "decide")):
        raise wrong_type("method", method, "a method's name or a function")
    text("family", given["family"])
    guarantee("guarantee", given["guarantee"])
    seconds("budget", given["budget"], none=False)
    integer("processes", given["processes"], 0, MAX_PROCESSES, none=True)
    text("scheduler", given["scheduler"], none=True)
    if given["out"] is not None:
        check_folder("out", given["out"])
    seed("seed", given["seed"])
    integer("jobs", given["jobs"], 1, none=True)
    integer("gpus", given["gpus"], 1, none=True)
    seconds("time_limit", given["time_limit"])


__all__ = [
    "MAX_PROCESSES",
    "MAX_SEED",
    "MAX_THREADS",
    "MAX_TIME_LIMIT",
    "NAME_MAX",
    "PATH_MAX",
    "category",
    "check_folder",
    "check_lengths",
    "flag",
    "frame",
    "guarantee",
    "integer",
    "method_params",
    "model",
    "names",
    "real",
    "search_arguments",
    "seconds",
    "seed",
    "settings",
    "short",
    "span",
    "text",
    "verify_arguments",
    "wrong_type",
]
