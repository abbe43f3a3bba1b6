"""The examples in the package's docstrings run and give what they print."""

from __future__ import annotations

import doctest
import importlib
import importlib.util
import pkgutil

import pytest

import dlsched


def _modules_with_examples() -> list[str]:
    found = []
    for info in pkgutil.walk_packages(dlsched.__path__, "dlsched."):
        spec = importlib.util.find_spec(info.name)
        origin = spec.origin if spec else None
        if origin and origin.endswith(".py"):
            with open(origin, encoding="utf-8") as f:
                if ">>> " in f.read():
                    found.append(info.name)
    return found


MODULES = _modules_with_examples()


def test_the_examples_are_found():
    assert {"dlsched.api", "dlsched.models.hare", "dlsched.models.elastic"} <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_examples(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0, name
