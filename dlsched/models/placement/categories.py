"""Feasible solution categories Psi (Algorithm 1 of Liu et al., TPDS 2024).

Psi = {(K_1, ..., K_S) : sum K_i = K, K_i >= 1}, |Psi| = C(K-1, S-1), in the order of
Algorithm 1: K_2 runs fastest, then K_3, ..., K_S slowest, K_1 = K - sum_{j>=2} K_j. That is
lexicographic order on (K_S, ..., K_2), which makes ranking and unranking closed-form, so JPS
can sample from the rear of Psi without enumerating it.
"""

from __future__ import annotations

from collections.abc import Iterator
from math import comb

from dlsched.errors import OptionError


def _check(num_workers: int, num_jobs: int) -> None:
    if num_jobs < 1:
        raise OptionError("num_jobs", num_jobs, "must be at least 1")
    if num_workers < num_jobs:
        raise OptionError("num_workers", num_workers, f"must be at least num_jobs ({num_jobs})")


def num_categories(num_workers: int, num_jobs: int) -> int:
    _check(num_workers, num_jobs)
    return comb(num_workers - 1, num_jobs - 1)


def algorithm1(num_workers: int, num_jobs: int) -> Iterator[tuple[int, ...]]:
    """Algorithm 1 exactly as printed (systematic enumeration), yielding categories in order."""
    _check(num_workers, num_jobs)
    k, s = num_workers, num_jobs
    cat = [k - s + 1] + [1] * (s - 1)
    seen: set[tuple[int, ...]] = set()
    while tuple(cat) not in seen:
        seen.add(tuple(cat))
        yield tuple(cat)
        if s == 1:
            return

        def k_hat(i: int) -> int:  # (15), 1-based i
            return k - (i - 1) - sum(cat[j - 1] for j in range(i + 1, s + 1))

        reset = cat[1] >= k_hat(2)
        cat[1] = 1 if reset else cat[1] + 1
        for i in range(3, s + 1):
            if reset:  # K_{i-1} was set to 1
                reset = cat[i - 1] >= k_hat(i)
                cat[i - 1] = 1 if reset else cat[i - 1] + 1
            else:
                break
        cat[0] = k - sum(cat[1:])


def categories(num_workers: int, num_jobs: int) -> list[tuple[int, ...]]:
    """Psi in Algorithm 1's order (public API)."""
    return list(algorithm1(num_workers, num_jobs))


def unrank(index: int, num_workers: int, num_jobs: int) -> tuple[int, ...]:
    """The category at 0-based position ``index`` of Algorithm 1's order, in O(S K)."""
    total = num_categories(num_workers, num_jobs)
    if not 0 <= index < total:
        raise OptionError("index", index, f"must lie in [0, {total})")
    s = num_jobs
    cat = [0] * s
    budget = num_workers - 1  # sum_{j>=2} K_j <= K - 1 keeps K_1 >= 1
    for pos in range(s - 1, 0, -1):  # 0-based positions S-1 .. 1 (K_S slowest)
        v = 1
        while True:
            block = comb(budget - v, pos - 1)  # completions of positions 1..pos-1
            if index < block:
                break
            index -= block
            v += 1
        cat[pos] = v
        budget -= v
    cat[0] = num_workers - sum(cat[1:])
    return tuple(cat)


def rank(category: tuple[int, ...], num_workers: int) -> int:
    """Inverse of :func:`unrank`."""
    s = len(category)
    validate_category(category, num_workers, s)
    index = 0
    budget = num_workers - 1
    for pos in range(s - 1, 0, -1):
        for v in range(1, category[pos]):
            index += comb(budget - v, pos - 1)
        budget -= category[pos]
    return index


def validate_category(category: tuple[int, ...], num_workers: int, num_jobs: int) -> None:
    if len(category) != num_jobs:
        raise OptionError(
            "--category", ",".join(map(str, category)), f"needs {num_jobs} entries (one per job)"
        )
    if any(c < 1 for c in category):
        raise OptionError("--category", ",".join(map(str, category)), "every K_i must be >= 1")
    if sum(category) != num_workers:
        raise OptionError(
            "--category",
            ",".join(map(str, category)),
            f"must sum to the number of workers K = {num_workers} (8c)",
        )
