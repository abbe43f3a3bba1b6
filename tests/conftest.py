"""Shared test configuration: hypothesis runs derandomized (reproducible in CI)."""

from __future__ import annotations

from hypothesis import HealthCheck, settings

settings.register_profile(
    "dlsched",
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    print_blob=True,
)
settings.load_profile("dlsched")

#: Files whose tests take longest (notebook kernels, Dask clusters): run first, so that the
#: pytest-xdist workers finish together instead of one waiting on a notebook at the end.
_LONGEST_FIRST = ("test_notebooks.py", "test_verify.py")


def pytest_collection_modifyitems(items: list) -> None:
    def rank(item) -> int:
        name = item.path.name
        return _LONGEST_FIRST.index(name) if name in _LONGEST_FIRST else len(_LONGEST_FIRST)

    items.sort(key=rank)  # stable: the order within each file is kept
