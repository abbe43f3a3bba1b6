"""The error types of dlsched. Every user-facing failure is one of these, with a message that
names the offending file, field and value."""

from __future__ import annotations

from typing import Any

#: Longest value shown in a message: a longer one is cut, with its length beside it.
SHOWN = 80


def shown(value: Any) -> str:
    """``repr(value)`` for a one-line message, cut to :data:`SHOWN` characters when longer: its
    beginning and its end (a path keeps its file name) around an ellipsis, and the value's
    length (a 100,000-character value is never repeated whole)."""
    text = repr(value)
    if len(text) <= SHOWN:
        return text
    if isinstance(value, str):
        size = f"{len(value):,} characters"
    elif isinstance(value, list | tuple | dict):
        size = f"{len(value):,} items"
    else:
        size = f"{len(text):,} characters"
    head = (SHOWN - 3) // 2
    return f"{text[:head]}...{text[-(SHOWN - 3 - head) :]} ({size})"


def first_line(e: BaseException) -> str:
    """An exception's message on one line: its first line (its type's name when empty)."""
    return (str(e).strip().splitlines() or [type(e).__name__])[0]


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
        where = f"field '{field}'" if field else "instance"
        super().__init__(f"{source}: {where} = {shown(value)}: {reason}")

    def __reduce__(self) -> tuple[Any, ...]:  # raised in a forked child, re-raised here
        return type(self), (self.source, self.field, self.value, self.reason)


class OptionError(DlschedError, ValueError):
    """An impossible option (unknown method, negative time limit, bad category, ...)."""

    def __init__(self, option: str, value: Any, reason: str) -> None:
        self.option = option
        self.value = value
        self.reason = reason
        super().__init__(f"option {option} = {shown(value)}: {reason}")

    def __reduce__(self) -> tuple[Any, ...]:  # raised in a forked child, re-raised here
        return type(self), (self.option, self.value, self.reason)


class ClusterError(DlschedError):
    """The Dask cluster a command ran on was lost on the way (its scheduler gone, every task
    cancelled): what was written stays, and a rerun resumes."""


class InfeasibleSolutionError(DlschedError):
    """The independent checker rejected a placement or schedule."""


class UserCodeError(DlschedError):
    """A user's method (a rule or a policy handed to dlsched) failed: it raised, returned
    something of the wrong form, or an answer the family's checker rejects. ``str()`` is one
    line; :attr:`user_traceback` holds the traceback of the user's own code ("" when there is
    none: a wrong form, an infeasible answer)."""

    def __init__(self, message: str, user_traceback: str = "") -> None:
        self.user_traceback = user_traceback
        super().__init__(message)

    def __reduce__(self) -> tuple[Any, ...]:  # raised in a forked child or a worker
        return type(self), (str(self), self.user_traceback)


class InternalError(Exception):
    """A bug in dlsched or a solver (for example a proof against a known solution). Not a
    user error: the command line reports it on one line with exit status 3."""


class AgreementError(InternalError):
    """A producer's own objective disagrees with the checker's re-evaluation of its solution."""
