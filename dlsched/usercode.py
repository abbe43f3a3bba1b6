"""A user's own methods, run and judged like the shipped ones.

A user method is an object of one family: a function ``instance -> solution`` (an offline
*rule*: it returns the family's solution object, or the form ``dlsched solve --json`` prints
under ``solution``, read by the family's ``solution`` part), or an online *policy* (a class,
instantiated once per run, or an object with a ``decide`` attribute, copied per run), run by
the family's ``run_policy`` part. It is named by

- a **spec**: ``path/to/file.py:function`` (relative to the current folder) or
  ``package.module:function``, imported on first use in any process and registered under the
  spec itself (:func:`resolve`);
- a **registered name**: :func:`register` in this process (a function handed to
  :func:`dlsched.solve` or :func:`dlsched.compare` is registered under a readable name);
- an **entry point** of an installed package, group ``dlsched.methods``: ``name =
  "package.module:obj"``, where ``obj`` is a :class:`UserMethod` (the method is ``name``), or
  a function or policy when ``name`` is ``family.method``.

Every run goes through :meth:`UserMethod.run`: the user's code runs under the method's
:class:`~dlsched.solvers.deadline.Deadline` in a forked child (a hang ends as status
``time_limit``), its answer is read by the family and re-verified by the family's checker
(:func:`dlsched.result.verified_outcome`: a rule is a heuristic, status ``feasible``). What the
user's code does wrong (it raises, returns a wrong form or an infeasible answer) is a
:class:`~dlsched.errors.UserCodeError`: one line, with the traceback of the user's own frames
in ``user_traceback``. This module imports no family: it reaches them through
:mod:`dlsched.families`.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import importlib
import importlib.util
import inspect
import itertools
import os
import pickle
import sys
import traceback
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from dlsched import families
from dlsched.errors import (
    DlschedError,
    InfeasibleSolutionError,
    OptionError,
    UserCodeError,
    first_line,
)
from dlsched.families import Guarantee

#: The entry-point group of an installed package's methods.
METHODS_GROUP = "dlsched.methods"
#: The folder of the package: frames in it are dlsched's, not the user's.
PACKAGE_DIR = str(Path(__file__).resolve().parent)
#: The head of a user's traceback as dlsched shows it.
TRACEBACK_HEAD = "Traceback of your function (most recent call last):"
#: Longest user message kept on the one line of a UserCodeError.
MESSAGE_CHARS = 300


@dataclass(frozen=True)
class UserMethod:
    """A user's method of ``family``: ``obj`` (a function ``instance -> solution``, or a
    policy: a class or an object with ``decide``), under ``name``, with an optional
    ``guarantee`` on its ratio to the optimum (a number, or a function of the instance) and a
    one-line ``summary``. ``spec`` is where another process finds it again (a spec, or None
    when it travels with the task), ``source`` where it came from (shown by ``dlsched
    methods``). Declared as is in a package's entry point."""

    obj: Any
    family: str
    name: str | None = None
    guarantee: float | Callable[[Any], float] | None = None
    summary: str = ""
    spec: str | None = None
    source: str = "registered"

    @property
    def kind(self) -> str:
        """``"policy"`` (a class, or an object with ``decide``) or ``"rule"``."""
        return "policy" if inspect.isclass(self.obj) or hasattr(self.obj, "decide") else "rule"

    @property
    def label(self) -> str:
        return str(self.name)

    def describe(self) -> str:
        """The summary ``dlsched methods`` shows."""
        return self.summary or f"your {self.kind} ({self.source})"

    def guarantee_text(self) -> str:
        g = self.guarantee
        if g is None:
            return ""
        shown = f"{g:g}" if isinstance(g, int | float) else f"{_qualname(g)}(instance)"
        return f"{shown} (registered with the method)"

    def bound(self) -> Guarantee | None:
        """The guarantee as :func:`dlsched.bounds.compare` reads it."""
        g = self.guarantee
        if g is None:
            return None
        fn = g if callable(g) else (lambda instance, v=float(g): v)
        return Guarantee("registered", fn)

    def run(self, instance: Any, options: Any) -> Any:
        """The verified Outcome of the method on ``instance`` under ``options`` (a
        :class:`dlsched.models.MethodOptions`, its deadline started)."""
        if self.kind == "policy":
            return run_policy(self, instance, options)
        return run_rule(self, instance, options)


#: (family, name) -> the methods registered in this process (and specs resolved in it).
REGISTERED: dict[tuple[str, str], UserMethod] = {}
_entry_points: dict[tuple[str, str], UserMethod] | None = None
_unnamed = itertools.count(1)


# --- specs ---------------------------------------------------------------------------------


def is_spec(name: str) -> bool:
    """Whether ``name`` is a spec (``file.py:function``, ``package.module:function``)."""
    where, colon, attr = name.rpartition(":")
    if not colon or not where or not attr:
        return False
    return where.endswith(".py") or all(p.isidentifier() for p in where.split("."))


def load_spec(spec: str) -> Any:
    """The object a spec names; OptionError on one line if there is none (a missing file or
    module, a syntax error, a missing attribute)."""
    where, _, attr = spec.rpartition(":")
    if not is_spec(spec):
        raise OptionError("method", spec, "expected path/to/file.py:function or module:function")
    module = _file_module(spec, where) if where.endswith(".py") else _module(spec, where)
    found: Any = module
    for part in attr.split("."):
        if not hasattr(found, part):
            raise OptionError("method", spec, f"{where} has no attribute {part!r}")
        found = getattr(found, part)
    if not callable(found) and not hasattr(found, "decide"):
        what = type(found).__name__
        raise OptionError("method", spec, f"is a {what}: expected a function, a class or a policy")
    return found


def _module(spec: str, name: str) -> Any:
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as e:
        raise OptionError("method", spec, f"no module named {e.name!r}") from None
    except SyntaxError as e:
        raise OptionError("method", spec, _syntax(e)) from None
    except Exception as e:  # noqa: BLE001 - the user's module failed as it was imported
        raise OptionError("method", spec, f"importing {name} raised {_one_line(e)}") from None


def _file_module(spec: str, file: str) -> Any:
    """The module of a user's file, imported once per file (under a name of its own, so that
    its classes pickle in this process and a forked child)."""
    path = Path(file).expanduser().resolve()
    if not path.is_file():
        raise OptionError("method", spec, f"no file {file!r} (from {os.getcwd()})")
    digest = hashlib.sha1(str(path).encode()).hexdigest()[:16]  # the same in every process
    name = f"dlsched_user.{path.stem}_{digest}"
    if name in sys.modules:
        return sys.modules[name]
    loader = importlib.util.spec_from_file_location(name, path)
    if loader is None or loader.loader is None:
        raise OptionError("method", spec, f"{file!r} is not a Python file")
    module = importlib.util.module_from_spec(loader)
    sys.modules[name] = module
    try:
        loader.loader.exec_module(module)
    except SyntaxError as e:
        del sys.modules[name]
        raise OptionError("method", spec, _syntax(e)) from None
    except Exception as e:  # noqa: BLE001 - the user's file failed as it was run
        del sys.modules[name]
        raise OptionError("method", spec, f"running {file} raised {_one_line(e)}") from None
    _by_value(module)
    return module


def _by_value(module: Any) -> None:
    """A user file's functions and classes travel to Dask's workers by value (the workers
    have no such module to import)."""
    with contextlib.suppress(ImportError):
        import cloudpickle

        cloudpickle.register_pickle_by_value(module)


def _syntax(e: SyntaxError) -> str:
    return f"syntax error in {Path(e.filename or '?').name} line {e.lineno}: {e.msg}"


def resolve(family: str, spec: str, where: str | None = None) -> UserMethod:
    """The method a spec names in ``family``, imported now and registered under the spec
    (once per process); ``where``: the same spec with its file's absolute path (what another
    process, elsewhere, reads)."""
    found = REGISTERED.get((family, spec))
    if found is None:
        obj = load_spec(where or spec)
        found = _declared(obj, family, spec, f"from {spec}")
        found = replace(found, name=spec, spec=spec)
        REGISTERED[family, spec] = found
    return found


def _declared(obj: Any, family: str, name: str, source: str) -> UserMethod:
    """``obj`` as a UserMethod of ``family`` (a UserMethod declaration kept, checked)."""
    if isinstance(obj, UserMethod):
        if obj.family != family:
            raise OptionError("method", name, f"is a method of family {obj.family!r}")
        return replace(obj, source=source)
    return UserMethod(obj, family, name, source=source)


# --- the registry --------------------------------------------------------------------------


def register(
    obj: Any,
    *,
    family: str,
    name: str | None = None,
    guarantee: float | Callable[[Any], float] | None = None,
    summary: str = "",
) -> str:
    """Register a method of ``family`` in this process under ``name`` (default: a readable
    name of ``obj``, :func:`default_name`) and return the name. ``obj`` is a function
    ``instance -> solution`` (an offline rule) or an online policy (a class, instantiated
    with no arguments once per run, or an object with ``decide``, copied per run);
    ``guarantee``: None, a number, or a function of the instance giving the bound on the
    method's ratio to the optimum that ``compare`` checks. Registering a name again replaces
    the method (a notebook cell run again); a shipped method's name is refused."""
    families.get(family)
    if not callable(obj) and not hasattr(obj, "decide"):
        raise OptionError("method", obj, "expected a function, a class or a policy object")
    if guarantee is not None and (isinstance(guarantee, bool) or not (
        callable(guarantee) or isinstance(guarantee, int | float))):  # fmt: skip
        raise OptionError("guarantee", guarantee, "expected a number or a function of the instance")
    if not isinstance(summary, str):
        raise OptionError("summary", summary, "expected a string")
    name = default_name(obj, family) if name is None else name
    if not isinstance(name, str) or not name.strip():
        raise OptionError("name", name, "expected a non-empty string")
    if name in families.get(family).methods():
        raise OptionError("name", name, f"is a shipped method of {family}: choose another name")
    REGISTERED[family, name] = UserMethod(obj, family, name, guarantee, summary)
    return name


def default_name(obj: Any, family: str) -> str:
    """A readable name: ``module:qualname`` of an importable function (the same object
    registered again keeps it), the bare name of one defined in a notebook or a script (unless
    a shipped method has it), ``lambda-<n>`` for an anonymous one."""
    qual = _qualname(obj)
    module = getattr(obj, "__module__", None) or "__main__"
    known = registered_name(obj, family)
    if known is not None:
        return known
    if "<" in qual:
        return f"lambda-{next(_unnamed)}"
    if module == "__main__" and qual not in families.get(family).methods():
        return qual
    return f"{module}:{qual}"


def registered_name(obj: Any, family: str) -> str | None:
    """The name ``obj`` (the object itself) is registered under in ``family``, or None."""
    for (fam, name), m in REGISTERED.items():
        if fam == family and m.obj is obj:
            return name
    return None


def _qualname(obj: Any) -> str:
    return str(getattr(obj, "__qualname__", None) or type(obj).__qualname__)


def entry_points() -> dict[tuple[str, str], UserMethod]:
    """The methods of installed packages (group :data:`METHODS_GROUP`), loaded once per
    process; one that fails to load is left out with a one-line warning."""
    global _entry_points
    if _entry_points is None:
        from importlib.metadata import entry_points as found

        loaded: dict[tuple[str, str], UserMethod] = {}
        for ep in found(group=METHODS_GROUP):
            try:
                m = _entry(ep.name, ep.load(), f"package {ep.dist.name if ep.dist else '?'}")
            except Exception as e:  # noqa: BLE001 - a broken package
                warnings.warn(f"entry point {ep.name} = {ep.value}: {_one_line(e)}", stacklevel=2)
                continue
            loaded[m.family, m.label] = replace(m, spec=None)
        _entry_points = loaded
    return _entry_points


def _entry(name: str, obj: Any, source: str) -> UserMethod:
    """One entry point's method: a UserMethod (named ``name``), or ``family.method``."""
    if isinstance(obj, UserMethod):
        families.get(obj.family)
        return replace(obj, name=name, source=source)
    family, dot, method = name.partition(".")
    if not dot or family not in families.names():
        raise OptionError("entry point", name, "expected family.method for a bare function")
    return UserMethod(obj, family, method, source=source)


def forget_entry_points() -> None:
    """Read the installed packages' methods again on next use (after installing one)."""
    global _entry_points
    _entry_points = None


def methods(family: str) -> dict[str, UserMethod]:
    """The user methods of ``family``: its entry points', then those registered here."""
    out = {name: m for (fam, name), m in entry_points().items() if fam == family}
    out.update({name: m for (fam, name), m in REGISTERED.items() if fam == family})
    return out


def find(family: str, name: str) -> UserMethod | None:
    """The user method ``name`` of ``family`` (a spec resolved now), or None."""
    found = methods(family).get(name)
    if found is None and is_spec(name):
        found = resolve(family, name)
    return found


def guarantee(family: str, name: str) -> Guarantee | None:
    """The guarantee a user method was registered with (None: none, or no such method)."""
    found = methods(family).get(name)
    return None if found is None else found.bound()


Portable = UserMethod | tuple[str, str, str]


def portable(family: str, names: Iterable[str]) -> tuple[Portable, ...]:
    """What a worker needs to run ``names`` of ``family``: a method registered here travels
    itself (cloudpickled with the task, a notebook's function by value); a spec travels as
    (family, spec, the spec with its file's absolute path), resolved again there; entry points
    and shipped methods need nothing."""
    out: list[Portable] = []
    for name in dict.fromkeys(names):
        m = REGISTERED.get((family, name))
        if m is not None:
            out.append(m if m.spec is None else (family, m.spec, absolute(m.spec)))
    return tuple(out)


def absolute(spec: str) -> str:
    """A file's spec with the file's absolute path (a module's as it is)."""
    where, _, attr = spec.rpartition(":")
    if not where.endswith(".py"):
        return spec
    return f"{Path(where).expanduser().resolve()}:{attr}"


def install(shipped: Sequence[Portable]) -> None:
    """Register in this process (a worker) what :func:`portable` gave."""
    for item in shipped:
        if isinstance(item, UserMethod):
            REGISTERED[item.family, item.label] = item
        else:
            resolve(*item)


# --- running -------------------------------------------------------------------------------


def run_rule(method: UserMethod, instance: Any, options: Any) -> Any:
    """An offline rule's verified Outcome: the rule runs in a forked child under the
    method's deadline (in this process without a limit), its answer read there by the family's
    ``solution`` part, then checked here."""
    from dlsched.result import Outcome, verified_outcome

    answer = _forked(method, instance, options, _rule_answer, method.obj, instance, method.label)
    if isinstance(answer, Outcome):  # it did not return within its time limit
        return answer
    try:
        wall = options.deadline.elapsed()
        return verified_outcome(instance, method.label, answer, wall_time=wall)
    except InfeasibleSolutionError as e:
        raise UserCodeError(f"{method.label} returned an infeasible answer: {e}") from None


def _forked(method: UserMethod, instance: Any, options: Any, child: Callable[..., Any],
            *args: Any) -> Any:  # fmt: skip
    """``child(*args, deadline)`` run in a forked child under the method's deadline: what it
    returned; the method's time_limit Outcome when it did not end in time; the UserCodeError
    it returned, raised here."""
    from dlsched.result import no_solution

    deadline = options.deadline
    out = deadline.for_fork().run(child, *args, deadline, label=method.label)
    if out is None:
        ended = "return" if method.kind == "rule" else "end"
        reason = f"{method.label} did not {ended} within its time limit"
        wall = deadline.elapsed()
        return no_solution(instance, method.label, reason, wall_time=wall, hit_limit=True)
    if isinstance(out, UserCodeError):
        raise out
    return out


def _rule_answer(rule: Any, instance: Any, name: str, deadline: Any) -> Any:
    """In the child: the rule's answer as the family's solution object, or the
    UserCodeError that says why not (``deadline``: the method's, which the time-limit tests
    look for among a forked call's arguments)."""
    try:
        with _stdout_to_stderr():
            given = rule(instance)
    except (Exception, SystemExit) as e:
        return raised(name, e)
    try:
        solution = families.of(instance).solution_from_json(instance, given, name)
        pickle.dumps(solution)
    except UserCodeError as e:
        return e
    except Exception as e:  # noqa: BLE001 - an answer no reader expected (a cycle, a lock)
        return UserCodeError(f"{name} returned {type(given).__name__}: {_one_line(e)}")
    return solution


def run_policy(method: UserMethod, instance: Any, options: Any) -> Any:
    """An online policy's verified Outcome: the family's ``run_policy`` part runs it in a
    forked child under the method's deadline (a class instantiated, an object copied)."""
    family = families.of(instance)
    if not family.policies:
        why = f"the {family.name} family takes no online policies"
        raise OptionError("method", method.label, why)
    out = _forked(method, instance, options, _policy_outcome, method, instance, options)
    return replace(out, method=method.label, instance_object=instance)


def _policy_outcome(method: UserMethod, instance: Any, options: Any, deadline: Any) -> Any:
    """In the child: the policy's Outcome, or the UserCodeError that says why not."""
    obj = method.obj
    try:
        with _stdout_to_stderr():
            policy = obj() if inspect.isclass(obj) else copy.deepcopy(obj)
            return families.of(instance).run_policy(instance, policy, options)
    except UserCodeError as e:
        return e
    except InfeasibleSolutionError as e:
        return UserCodeError(f"{method.label}'s schedule is infeasible: {e}")
    except DlschedError:
        raise
    except (Exception, SystemExit) as e:
        return raised(method.label, e)


class _stdout_to_stderr:
    """What the user's code prints goes to stderr (stdout carries dlsched's answer, JSON)."""

    def __enter__(self) -> None:
        self.saved = sys.stdout
        sys.stdout = sys.stderr

    def __exit__(self, *exc: object) -> None:
        sys.stdout = self.saved


def raised(name: str, e: BaseException) -> UserCodeError:
    """The UserCodeError of a user's exception: one line, and the traceback of the user's
    frames (dlsched's frames before them left out)."""
    tb = e.__traceback__
    while tb is not None and _ours(tb.tb_frame.f_code.co_filename):
        tb = tb.tb_next
    lines = traceback.format_exception(type(e), e, tb)
    text = "".join(lines).replace("Traceback (most recent call last):", TRACEBACK_HEAD, 1)
    return UserCodeError(f"{name} raised {_one_line(e)}", text)


def _ours(filename: str) -> bool:
    return filename.startswith(PACKAGE_DIR + os.sep)


def _one_line(e: BaseException) -> str:
    """``Type: first line of the message``, cut to :data:`MESSAGE_CHARS`."""
    message = first_line(e)
    line = type(e).__name__ if message == type(e).__name__ else f"{type(e).__name__}: {message}"
    return line if len(line) <= MESSAGE_CHARS else line[: MESSAGE_CHARS - 3] + "..."


def as_names(family: str, methods: Sequence[Any]) -> list[Any]:
    """``methods`` with each function or policy object replaced by its name (:func:`named`);
    names left as they are."""
    return [named(m, family) if _is_code(m) else m for m in methods]


def named(obj: Any, family: str) -> str:
    """The name of ``obj`` in ``family``: the name it is registered under, its registration
    (guarantee, summary) kept; else it is registered now (:func:`register`, under
    :func:`default_name`)."""
    known = registered_name(obj, family)
    return register(obj, family=family) if known is None else known


def _is_code(obj: Any) -> bool:
    return not isinstance(obj, str) and (callable(obj) or hasattr(obj, "decide"))


__all__ = [
    "METHODS_GROUP",
    "REGISTERED",
    "TRACEBACK_HEAD",
    "UserMethod",
    "as_names",
    "default_name",
    "entry_points",
    "find",
    "forget_entry_points",
    "guarantee",
    "install",
    "is_spec",
    "load_spec",
    "methods",
    "named",
    "portable",
    "raised",
    "register",
    "registered_name",
    "resolve",
    "run_policy",
    "run_rule",
]
