"""The error types of dlsched. Every user-facing failure is one of these, with a message that
names the offending file, field and value."""

from __future__ import annotations

from typing import Any


class DlschedError(Exception):
    """Base class of every error dlsched raises on purpose."""


class InstanceError(DlschedError, ValueError):
    """A malformed or inconsistent instance (file or in-memory data).

    ``source`` is the file (or ``"<dict>"``), ``field`` a path such as ``jobs[2].epochs`` and
    ``value`` the offending value (``None`` when the field is missing).
    """

    def __init__(self, source: str, field: str, value: Any, reason: str) -> None:
        self.source = source
        self.field = field
        self.value = value
        self.reason = reason
        shown = repr(value)
        if len(shown) > 80:
            shown = shown[:77] + "..."
        where = f"field '{field}'" if field else "instance"
        super().__init__(f"{source}: {where} = {shown}: {reason}")


class OptionError(DlschedError, ValueError):
    """An impossible option (unknown method, negative time limit, bad category, ...)."""

    def __init__(self, option: str, value: Any, reason: str) -> None:
        self.option = option
        self.value = value
        super().__init__(f"option {option} = {value!r}: {reason}")


class InfeasibleSolutionError(DlschedError):
    """The independent checker rejected a placement or schedule."""


class InternalError(Exception):
    """A bug in dlsched or a solver (for example a proof against a known solution). Not a
    user error: the command line reports it on one line with exit status 3."""


class AgreementError(InternalError):
    """A producer's own objective disagrees with the checker's re-evaluation of its solution."""
