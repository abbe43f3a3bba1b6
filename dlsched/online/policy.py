"""What every online family's public policy interface shares (below the families: it imports
none of them).

A user's online policy is any object with ``decide(view) -> Sequence[...]``: at each decision
of the shared event engine (:mod:`dlsched.simulate`) it sees the family's *view* (a frozen
snapshot: the time ``now``, the arrived unfinished jobs with what an online scheduler may know
of them, the free resources) and returns what to start now, each item one of the family's
``Start`` records, or a :class:`Wake`, a request to be consulted again at a later time with no
event due then. It may also have ``on_arrival(job)`` and ``on_complete(job)``, called with a
job's view when the job arrives and when it has finished. The policy never receives the
instance, nor the engine: each family builds the view from its own state
(``dlsched/models/<family>/policy.py``, ``run_user_policy``).

Every item is checked before anything starts; a wrong one ends the run with a one-line
:class:`~dlsched.errors.UserCodeError` naming the expected form and the value. So does a policy
that leaves jobs waiting forever (:func:`starved`). Exceptions raised by the policy's own code
propagate unchanged.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from dlsched.errors import UserCodeError, shown

S = TypeVar("S")


@dataclass(frozen=True, slots=True)
class Wake:
    """Consult the policy again at time ``at`` (later than now), even if nothing happens then:
    how a policy that chooses to wait (a delay, a reserve) comes back."""

    at: float


class UserPolicy(Protocol):
    """The one method a user's online policy must have (the hooks are optional)."""

    def decide(self, view: Any) -> Sequence[Any]: ...


def policy_name(policy: Any) -> str:
    """The name an outcome gives a user's policy: its ``name`` attribute if a string, else
    its class's name."""
    name = getattr(policy, "name", None)
    return name if isinstance(name, str) and name else type(policy).__name__


def checked(policy: Any) -> Any:
    """``policy`` if it has a ``decide`` method, else the one-line error naming the form."""
    if isinstance(policy, type) or not callable(getattr(policy, "decide", None)):
        raise UserCodeError(
            f"the policy {shown(policy)} has no decide(view) method: expected an object with "
            "decide(view) -> a sequence of Start records"
        )
    return policy


def hook(policy: Any, name: str) -> Callable[[Any], Any] | None:
    """The policy's optional hook ``name`` (``on_arrival``, ``on_complete``), or None."""
    found = getattr(policy, name, None)
    return found if callable(found) else None


def refused(form: str, value: Any, why: str = "") -> UserCodeError:
    """The one-line error of a policy's wrong decision: ``value`` (shortened), why it is
    refused, and the form expected."""
    reason = f" ({why})" if why else ""
    return UserCodeError(f"the policy returned {shown(value)}{reason}: expected {form}")


def starved(now: float, waiting: Iterable[str]) -> UserCodeError:
    """The error of a policy that left jobs waiting with nothing running and nothing due."""
    names = list(waiting)
    few = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
    return UserCodeError(f"the policy started nothing while jobs waited at t={now:g} ({few})")


def decisions(returned: Any, kind: type[S], form: str, now: float) -> tuple[list[S], list[float]]:
    """A policy's answer checked for its form: (its starts of type ``kind``, in order; the
    times of its wakes, each later than ``now``). ``form`` names what one start looks like
    in the error of a wrong item."""
    if returned is None:
        return [], []
    if isinstance(returned, str | bytes | Mapping) or not isinstance(returned, Iterable):
        raise refused(f"a sequence of {form} or Wake(at)", returned)
    starts: list[S] = []
    wakes: list[float] = []
    for item in returned:
        if isinstance(item, kind):
            starts.append(item)
        elif isinstance(item, Wake):
            at = item.at
            number = isinstance(at, int | float) and not isinstance(at, bool)
            if not (number and math.isfinite(at) and at > now):
                raise refused("Wake(at) with a time later than now", item, f"now is {now:g}")
            wakes.append(float(at))
        else:
            raise refused(f"{form} or Wake(at)", item)
    return starts, wakes


def index(value: Any, known: Mapping[int, Any] | Sequence[Any], what: str, form: str) -> int:
    """``value`` as an index into ``known`` (a job, a GPU, a server), or the error naming
    ``form``."""
    whole = isinstance(value, int) and not isinstance(value, bool)
    inside = whole and (value in known if isinstance(known, Mapping) else 0 <= value < len(known))
    if not (whole and inside):
        raise refused(form, value, f"no such {what}")
    return int(value)


__all__ = [
    "UserPolicy",
    "Wake",
    "checked",
    "decisions",
    "hook",
    "index",
    "policy_name",
    "refused",
    "starved",
]
