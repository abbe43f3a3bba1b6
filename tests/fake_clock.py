"""A clock to give a Deadline (``MethodOptions(..., clock=clock)``, ``Deadline.after(limit,
clock)``) in tests: its time passes only when the test says so (:meth:`FakeClock.advance`, or
``step`` seconds at each read), so a test shows that a route kept its limit by what it did at
each stage, never by how long it took."""

from __future__ import annotations

from typing import Any


class FakeClock:
    """Seconds from 0; each read returns the time, then moves it on by ``step``."""

    def __init__(self, step: float = 0.0) -> None:
        self.now = 0.0
        self.step = step
        self.reads = 0

    def __call__(self) -> float:
        self.reads += 1
        now = self.now
        self.now += self.step
        return now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def record_time_limits(monkeypatch: Any, module: Any, name: str = "run_cpsat") -> list[Any]:
    """Wrap the solver call ``module.name`` (one of its arguments a ``SolveOptions``) so that
    it records the time limit each call was handed; returns the list it fills."""
    from dlsched.solvers.base import SolveOptions

    real = getattr(module, name)
    handed: list[Any] = []

    def spy(*args: Any, **kwargs: Any) -> Any:
        options = next(a for a in (*args, *kwargs.values()) if isinstance(a, SolveOptions))
        handed.append(options.time_limit)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, spy)
    return handed


def takes_time(monkeypatch: Any, clock: FakeClock, seconds: float, module: Any, name: str) -> None:
    """Wrap ``module.name`` so that each call takes ``seconds`` on ``clock`` (the time passes
    when it returns)."""
    real = getattr(module, name)

    def timed(*args: Any, **kwargs: Any) -> Any:
        out = real(*args, **kwargs)
        clock.advance(seconds)
        return out

    monkeypatch.setattr(module, name, timed)
