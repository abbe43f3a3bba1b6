"""The command line run in process: its exit code and output, its one-line errors, and the runs
a sweep makes."""

from __future__ import annotations

from typing import Any

import pytest

import dlsched.bounds.comparisons
from dlsched.cli import main
from dlsched.instances import instance_hash
from dlsched.models import MethodOptions


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def one_line(err: str, *words: str) -> None:
    assert err.count("\n") == 1 and "Traceback" not in err, err
    for w in words:
        assert w in err, (w, err)


def count_runs(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """Record (instance hash, method) of every run the sweep makes in this process."""
    calls: list[tuple[str, str]] = []
    real = dlsched.bounds.comparisons.run_method

    def counting(instance: Any, method: str, options: MethodOptions | None = None) -> Any:
        calls.append((instance_hash(instance), method))
        return real(instance, method, options)

    monkeypatch.setattr(dlsched.bounds.comparisons, "run_method", counting)
    return calls
