"""A clock to give a Deadline (``MethodOptions(..., clock=clock)``, ``Deadline.after(limit,
clock)``) in tests: its time passes only when the test says so (:meth:`FakeClock.advance`, or
``step`` seconds at each read), so a test shows that a route kept its limit by what it did at
each stage, never by how long it took; and :func:`forked`, which records what each call forked
under a Deadline is handed."""

from __future__ import annotations

from typing import Any

from dlsched.solvers.deadline import Deadline


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
    """Wrap the call ``module.name`` so that it records the time limit each call was handed:
    that of its ``SolveOptions`` (a solver call), else what is left of its ``Deadline`` (work
    that makes its solver call's options itself); returns the list it fills."""
    from dlsched.solvers.base import SolveOptions
    from dlsched.solvers.deadline import Deadline

    real = getattr(module, name)
    handed: list[Any] = []

    def spy(*args: Any, **kwargs: Any) -> Any:
        given = (*args, *kwargs.values())
        options = next((a for a in given if isinstance(a, SolveOptions)), None)
        if options is None:
            deadline = next(a for a in given if isinstance(a, Deadline))
            handed.append(deadline.seconds())
        else:
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


def forked(monkeypatch, kill: bool = False) -> list[tuple[float, float | None]]:
    """Record what each forked call is handed (its seconds, what its Deadline has left), then
    run it, or kill it (None) when ``kill``."""
    from dlsched.solvers import deadline as deadline_module

    real = deadline_module.call_with_deadline
    handed = []

    def spy(fn, *args, seconds, label):
        budget = next(a for a in args if isinstance(a, Deadline))
        handed.append((seconds, budget.left()))
        return None if kill else real(fn, *args, seconds=seconds, label=label)

    monkeypatch.setattr(deadline_module, "call_with_deadline", spy)
    return handed
