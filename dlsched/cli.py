"""The ``dlsched`` command line.

    dlsched solve INSTANCE --method METHOD [--time-limit S] [--bound] [--json] [--plot FILE] ...
    dlsched instances list
    dlsched methods FAMILY
    dlsched generate FAMILY --jobs S --gpus K --seed N -o FILE
    dlsched compare INSTANCE --methods A,B,... [--reference exact] [--bound] [--json]
    dlsched sweep FAMILY --count N --jobs S --gpus K --methods A,B [--param K=V] [--processes P |
                  --scheduler ADDRESS] -o FILE.jsonl
    dlsched verify [THEOREM ...] --count N [--processes P | --scheduler ADDRESS] -o DIR
    dlsched verify THEOREM ... --search --budget SECONDS [--processes P] -o DIR
    dlsched search FAMILY --method METHOD --budget SECONDS [--guarantee X] [--processes P |
                   --scheduler ADDRESS] [--seed S] -o DIR
    dlsched demo

``--gpus`` is the size of the family's cluster (GPUs, servers) in ``generate``, ``sweep`` and
``verify``, and ``--processes`` the number of Dask worker processes of ``sweep`` and ``verify``
(default: the machine's cores; 0: in this process); ``solve``, ``compare`` and ``demo`` run in
this process on the instance's cluster. The old ``--workers`` is refused in every command with
a line saying what it is now there.

INSTANCE is a path to a JSON file (full or compact), a Parquet file, a trace (ddlwmp: PAI's
``pai_job_table.csv``, Gavel's ``.trace``; docs/traces.md) or a bundled name such as
``placement/liu2024-motivating``.
Bad instances and impossible options exit with status 2 and a one-line message; output paths
(``-o``, ``--plot``) are checked before any solving. Limits: ``--time-limit`` at most
:data:`MAX_TIME_LIMIT` seconds, ``--threads`` at most :data:`MAX_THREADS`, seeds in
[0, :data:`MAX_SEED`].
"""

from __future__ import annotations

import argparse
import errno
import json
import os
import shutil
import sys
import tempfile
import warnings
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import Any, NoReturn

from dlsched.arguments import MAX_PROCESSES, MAX_SEED, MAX_THREADS, MAX_TIME_LIMIT, category
from dlsched.arguments import check_folder as _check_folder
from dlsched.arguments import check_lengths as _check_lengths
from dlsched.arguments import short as _short
from dlsched.errors import DlschedError, InternalError, OptionError
from dlsched.solvers.base import DEFAULT_TIME_LIMIT

#: Errors of a write to a full (or failing) disk or device, reported on one line.
WRITE_ERRORS = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO)


def _parse_value(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def _category(text: str) -> tuple[int, ...]:
    try:
        return category(text)
    except OptionError as e:
        raise argparse.ArgumentTypeError(f"--category {text!r}: {e.reason}") from None


def _seconds(name: str, high: float, zero: bool = False) -> Callable[[str], float]:
    """argparse type: seconds in (0, high], or [0, high] with ``zero``."""
    span = f"{'[' if zero else '('}0, {high:g}]"

    def parse(text: str) -> float:
        try:
            x = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} {text!r}: expected a number") from None
        low_ok = x >= 0 if zero else x > 0
        if not (low_ok and x <= high):
            raise argparse.ArgumentTypeError(
                f"{name} {text!r}: must be a number of seconds in {span}"
            )
        return x

    return parse


def _time_limit(name: str) -> Callable[[str], float]:
    """argparse type: seconds in (0, MAX_TIME_LIMIT]."""
    return _seconds(name, MAX_TIME_LIMIT)


def _integer(name: str, low: int, high: int | None = None) -> Callable[[str], int]:
    """argparse type: an integer in [low, high]."""

    def parse(text: str) -> int:
        try:
            x = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} {text!r}: expected an integer") from None
        if x < low or (high is not None and x > high):
            span = f"at least {low}" if high is None else f"in [{low}, {high}]"
            raise argparse.ArgumentTypeError(f"{name} {text!r}: must be {span}")
        return x

    return parse


def _check_output(
    option: str, path: str, formats: Collection[str] = (), *, special: bool = True
) -> Path:
    """Check, before any work, that ``path`` can be written (and has one of ``formats``): a
    scratch file is created and removed beside it, so a folder no one can write to (``/proc``)
    is refused whoever runs the command. A symbolic link is checked at the file it names (the
    writers write through it); a device or pipe (``/dev/null``) is written in place, and
    refused unless ``special``."""
    from dlsched.instances import is_special, output_target

    if not path:
        raise OptionError(option, path, "empty file name")
    _check_lengths(option, path)
    given = Path(path)
    try:
        given.stat()
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise OptionError(option, _short(path), "a loop of symbolic links") from None
    p = output_target(given)
    ext = given.suffix[1:].lower()
    if formats and ext not in formats:
        known = ", ".join(sorted(formats))
        raise OptionError(option, _short(path), f"unknown format {ext!r} (supported: {known})")
    if is_special(p):
        if not special:
            raise OptionError(option, _short(path), "not a regular file (a device or a pipe)")
        if not os.access(p, os.W_OK):
            raise OptionError(option, _short(path), "the file is not writable")
        return given
    if not p.parent.is_dir():
        raise OptionError(option, _short(path), f"folder {_short(str(p.parent))!r} does not exist")
    if p.is_dir():
        raise OptionError(option, _short(path), "is a folder, expected a file name")
    if not os.access(p.parent, os.W_OK):
        raise OptionError(option, _short(path), "its folder is not writable")
    if p.exists() and not os.access(p, os.W_OK):
        raise OptionError(option, _short(path), "the file is not writable")
    try:
        fd, scratch = tempfile.mkstemp(dir=p.parent, prefix=f".{p.name[:200]}.", suffix=".probe")
    except OSError as e:
        raise OptionError(option, _short(path), f"cannot write there: {e.strerror}") from None
    os.close(fd)
    os.unlink(scratch)
    return given


def _picture_formats() -> set[str]:
    """File extensions matplotlib can save to without a missing program (``pgf`` needs the
    TeX engine of ``rcParams["pgf.texsystem"]``, xelatex by default)."""
    import matplotlib
    from matplotlib.backend_bases import FigureCanvasBase

    formats = set(FigureCanvasBase.get_supported_filetypes())
    if shutil.which(str(matplotlib.rcParams["pgf.texsystem"])) is None:
        formats.discard("pgf")
    return formats


def _check_plottable(family: Any, path: Path) -> None:
    """OptionError now, before solving, when ``family`` has no plot."""
    if not family.plots:
        raise OptionError("--plot", _short(str(path)), f"the {family.name} family has no plot")


def _save_plot(family: Any, inst: Any, outcome: Any, path: Path, shown: str) -> None:
    """The picture of a solution (:func:`_save_picture`)."""
    _save_picture(lambda: family.plot(inst, outcome, path), shown)


def _save_picture(draw: Callable[[], Any], shown: str) -> None:
    """``draw()`` saves a picture; a failure (disk full, a broken picture format) is one line."""
    try:
        draw()
    except OSError as e:
        raise OptionError("--plot", _short(shown), e.strerror or str(e)) from None
    except (RuntimeError, ValueError) as e:  # matplotlib's, e.g. a missing TeX engine
        if isinstance(e, DlschedError):
            raise
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise OptionError("--plot", _short(shown), f"cannot draw: {_short(first, 120)}") from None


def _load(ref: str) -> Any:
    from dlsched.instances import load

    _check_lengths("INSTANCE", ref)
    return load(ref)


SEED = _integer("--seed", 0, MAX_SEED)
COUNT = _integer("--count", 1)
JOBS = _integer("--jobs", 1)
GPUS = _integer("--gpus", 1)
PROCESSES = _integer("--processes", 0, MAX_PROCESSES)
#: What the old ``--workers`` (the cluster size of ``generate`` and ``sweep``, but the Dask
#: processes of ``verify``) is now: in ``sweep`` and ``verify``, in ``generate``, and in the
#: commands that take neither ``--gpus`` nor ``--processes``.
RENAMED_WORKERS = (
    "--workers is now --gpus (the cluster size); --processes is the number of Dask processes"
)
WORKERS_TO_GPUS = "--workers is now --gpus (the cluster size)"
WORKERS_GONE = (
    "--workers is no more: the instance gives the cluster size (--gpus is an option of "
    "generate, sweep and verify) and this command runs in this process (--processes is one of "
    "sweep and verify)"
)
TIME_LIMIT_HELP = (
    f"seconds per method, model building included (default {DEFAULT_TIME_LIMIT:g}, "
    f"at most {MAX_TIME_LIMIT:g})"
)


def _add_time_limit(parser: Any, default: float = DEFAULT_TIME_LIMIT) -> None:
    parser.add_argument(
        "--time-limit", type=_time_limit("--time-limit"), default=default, help=TIME_LIMIT_HELP
    )


class _Renamed(argparse.Action):
    """An old option: its use ends the command with one line naming the new spelling."""

    def __init__(
        self, option_strings: Sequence[str], dest: str, const: str = "", **kwargs: Any
    ) -> None:
        super().__init__(option_strings, dest, nargs="?", const=const, help=argparse.SUPPRESS)

    def __call__(self, parser: argparse.ArgumentParser, *_: Any) -> NoReturn:
        parser.exit(2, f"{parser.prog}: error: {self.const}\n")


def _refuse_workers(parser: Any, message: str = WORKERS_GONE) -> None:
    """The old ``--workers``, refused with ``message`` (what it is now in this command)."""
    parser.add_argument("--workers", action=_Renamed, const=message)


#: What ``--processes`` says in a command that runs in this process.
IN_THIS_PROCESS = "--processes is an option of sweep and verify; this command runs in this process"


def _refuse_processes(parser: Any) -> None:
    """``--processes`` in a command that runs in this process: one line saying so."""
    parser.add_argument("--processes", action=_Renamed, const=IN_THIS_PROCESS)


def _add_gpus(parser: Any, renamed: str = RENAMED_WORKERS, **kwargs: Any) -> None:
    """``--gpus``, the cluster size (GPUs / servers), and the old ``--workers`` refused."""
    parser.add_argument("--gpus", type=GPUS, help="the cluster's GPUs / servers", **kwargs)
    _refuse_workers(parser, renamed)


def _add_runner(parser: Any) -> None:
    """Where the tasks of a many-instance command run (:class:`dlsched.runner.RunnerOptions`)."""
    parser.add_argument(
        "--processes",
        type=PROCESSES,
        default=None,
        help="Dask worker processes (default: the machine's cores; 0: in this process)",
    )
    parser.add_argument(
        "--scheduler", default=None, metavar="ADDRESS", help="an existing Dask scheduler"
    )
    parser.add_argument(
        "--task-seconds",
        type=_seconds("--task-seconds", 600, zero=True),
        default=None,
        help="Dask: consecutive instances grouped into tasks of about this many seconds "
        "(default 0.3; 0: one task per instance)",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bar")


def _runner_options(args: argparse.Namespace) -> dict[str, Any]:
    """The :class:`dlsched.runner.RunnerOptions` fields given by :func:`_add_runner`."""
    out = {"processes": args.processes, "scheduler": args.scheduler, "progress": not args.quiet}
    return out if args.task_seconds is None else {**out, "task_seconds": args.task_seconds}


def _add_param(parser: Any, what: str) -> None:
    parser.add_argument("--param", action="append", default=[], metavar="KEY=VALUE", help=what)


#: What names a method: a family's own, or a user's (docs/user-methods.md).
METHOD_HELP = (
    "a method name (see `dlsched methods FAMILY`), or your own: path/to/file.py:function or "
    "package.module:function"
)
METHODS_HELP = "comma-separated method names, or your own (path/to/file.py:function, ...)"


def _add_solve(sub: Any) -> None:
    s = sub.add_parser("solve", help="solve an instance with a method")
    s.add_argument("instance", help="an instance file (JSON, Parquet), a trace or a bundled name")
    s.add_argument("--method", required=True, help=METHOD_HELP)
    _add_time_limit(s)
    s.add_argument("--seed", type=SEED, default=0)
    s.add_argument(
        "--threads", type=_integer("--threads", 1, MAX_THREADS), default=1, help="solver threads"
    )
    s.add_argument("--route", default=None, help="the exact method's route (see dlsched methods)")
    s.add_argument("--backend", default=None, help="the solver of a method that takes one")
    s.add_argument("--category", type=_category, default=None, help="K_1,...,K_S (placement)")
    s.add_argument("--alpha", type=float, default=None)
    s.add_argument("--beta", type=float, default=None)
    s.add_argument("--samples", type=int, default=None, help="N, samples drawn by jps")
    _add_param(s, "extra method parameter (value parsed as JSON when possible)")
    s.add_argument("--json", action="store_true", help="print one JSON object")
    s.add_argument("--plot", default=None, metavar="FILE", help="save a picture of the solution")
    _refuse_workers(s)
    _refuse_processes(s)
    _add_bound(s)


#: What ``--bound`` asks of a heuristic (:attr:`dlsched.models.MethodOptions.bound`).
BOUND_HELP = (
    "a heuristic of an online family also computes the certified flow-time bound and its gap "
    "(its seconds reported as bound_time, apart from the wall time); without it, the "
    "heuristic's own run"
)


def _add_bound(parser: Any, what: str = BOUND_HELP) -> None:
    parser.add_argument("--bound", action="store_true", help=what)


def _add_generate(sub: Any) -> None:
    g = sub.add_parser("generate", help="generate a random instance")
    g.add_argument("family")
    g.add_argument("--jobs", type=JOBS, required=True)
    _add_gpus(g, WORKERS_TO_GPUS, required=True)
    _refuse_processes(g)
    g.add_argument("--seed", type=SEED, default=0)
    _add_param(g, "generator parameter (see the family's generate())")
    g.add_argument("-o", "--output", required=True)


def _add_compare(sub: Any) -> None:
    c = sub.add_parser("compare", help="methods beside the certified optimum and guarantees")
    c.add_argument("instance")
    c.add_argument("--methods", required=True, help=METHODS_HELP)
    c.add_argument("--reference", default="exact")
    _add_time_limit(c)
    c.add_argument("--seed", type=SEED, default=0)
    c.add_argument("--json", action="store_true")
    c.add_argument(
        "--plot", default=None, metavar="FILE", help="save each method's ratio as a bar chart"
    )
    _refuse_workers(c)
    _refuse_processes(c)
    _add_bound(c, BOUND_HELP + " (computed once for the instance, shared by the methods)")


def _add_sweep(sub: Any) -> None:
    w = sub.add_parser("sweep", help="compare over generated instances (resumable)")
    w.add_argument("family")
    w.add_argument("--count", type=COUNT, required=True)
    w.add_argument("--jobs", type=JOBS, required=True)
    _add_gpus(w, required=True)
    w.add_argument("--first-seed", type=_integer("--first-seed", 0, MAX_SEED), default=0)
    w.add_argument("--methods", required=True, help=METHODS_HELP)
    w.add_argument("--reference", default="exact")
    _add_time_limit(w)
    w.add_argument("--counterexamples", default="counterexamples")
    _add_runner(w)
    _add_param(w, "generator parameter, as for generate (ddlwmp: trace=FILE reads a trace)")
    w.add_argument("-o", "--output", required=True, help="JSON-lines file (appended)")
    w.add_argument(
        "--plot",
        default=None,
        metavar="FILE",
        help="save the ratios of every record in the file against the instances' jobs",
    )
    _add_bound(w, BOUND_HELP + " (computed once per instance, shared by its methods)")


def _add_verify(sub: Any) -> None:
    v = sub.add_parser(
        "verify",
        help="check the papers' theorems on seeded instances (Dask, resumable, with a report)",
    )
    v.add_argument(
        "theorem",
        nargs="*",
        help="theorems, all if none: an exact id selects that theorem only; otherwise a family "
        "name, or a prefix ending before a dash (002, 001-thm1 when no theorem is called "
        "that) selects every theorem it begins",
    )
    v.add_argument("--list", action="store_true", help="list the theorems and exit")
    v.add_argument("--count", type=COUNT, default=10, help="instances per theorem (default 10)")
    v.add_argument("--jobs", type=JOBS, default=None, help="jobs per instance")
    _add_gpus(v, default=None)
    v.add_argument("--first-seed", type=_integer("--first-seed", 0, MAX_SEED), default=0)
    v.add_argument("--seed", type=SEED, default=0, help="solver seed")
    _add_time_limit(v, default=60.0)
    _add_runner(v)
    v.add_argument(
        "--shrink", type=_integer("--shrink", 0), default=3, help="violations shrunk per method"
    )
    v.add_argument(
        "--search",
        action="store_true",
        help="search each (theorem, method) for its worst case instead of sampling it "
        "(--jobs/--gpus: the size of its seeded draws; it grows them up to 3x the jobs and 2x "
        "the GPUs), a seeded sample with as many solves beside it",
    )
    v.add_argument(
        "--budget",
        type=_seconds("--budget", MAX_TIME_LIMIT),
        default=None,
        help="seconds of the whole --search (default 60): shared by its (theorem, method) "
        "pairs, each pair's search, shrinking and sample",
    )
    v.add_argument(
        "-o", "--output", default=None, help="folder of the log, counterexamples, report"
    )


def _positive(name: str) -> Callable[[str], float]:
    """A finite positive number (``--guarantee``)."""

    def parse(text: str) -> float:
        try:
            x = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} {text!r}: not a number") from None
        if not 0 < x < float("inf"):  # NaN too
            raise argparse.ArgumentTypeError(f"{name} {text!r}: must be a positive number")
        return x

    return parse


def _add_search(sub: Any) -> None:
    s = sub.add_parser("search", help="search for the worst case of any method (resumable)")
    s.add_argument("family")
    s.add_argument("--method", required=True, help="a method: its name, or a spec file.py:function")
    s.add_argument(
        "--budget",
        type=_seconds("--budget", MAX_TIME_LIMIT),
        default=60.0,
        help="seconds of the whole search (default 60): its search, shrinking and sample",
    )
    s.add_argument(
        "--guarantee",
        type=_positive("--guarantee"),
        default=None,
        help="the ratio to the optimum the method claims; above it is a violation, shrunk "
        "and saved (none: the worst ratio per instance size)",
    )
    s.add_argument("--jobs", type=JOBS, default=None, help="jobs of the seeded draws")
    _add_gpus(s, default=None)
    s.add_argument("--seed", type=SEED, default=0, help="the search's seed")
    _add_time_limit(s, default=60.0)
    _add_runner(s)
    s.add_argument("-o", "--output", required=True, help="folder of the log and instances")


class _Parser(argparse.ArgumentParser):
    """argparse with its error on one line (``--help`` shows the usage); subcommands too."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="dlsched", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    _add_solve(sub)
    i = sub.add_parser("instances", help="bundled instances")
    isub = i.add_subparsers(dest="action", required=True)
    _refuse_workers(isub.add_parser("list", help="list bundled instances"))
    show = isub.add_parser("show", help="print an instance as JSON")
    show.add_argument("instance")
    _refuse_workers(show)
    m = sub.add_parser("methods", help="list the methods of a family")
    m.add_argument("family")
    _refuse_workers(m)
    _add_generate(sub)
    _add_compare(sub)
    _add_sweep(sub)
    _add_verify(sub)
    _add_search(sub)
    d = sub.add_parser("demo", help="run the main job on the bundled instances")
    d.add_argument("--quick", action="store_true", help="smallest instances only")
    _refuse_workers(d)
    _refuse_processes(d)
    return p


def _params(args: argparse.Namespace, call: Callable[..., Any] | None = None) -> dict[str, Any]:
    """The method's or generator's parameters; a name the API ``call`` takes itself (seed,
    time_limit, ...) is refused, as it is set by its own option."""
    out: dict[str, Any] = {}
    for key in ("route", "backend", "category", "alpha", "beta", "samples"):
        v = getattr(args, key, None)
        if v is not None:
            out[key] = v
    for item in args.param:
        if "=" not in item:
            raise OptionError("--param", item, "expected KEY=VALUE")
        k, v = item.split("=", 1)
        if call is not None and k.strip() in _own_arguments(call):
            raise OptionError("--param", item, f"{k.strip()} is not a parameter of the method")
        out[k.strip()] = _parse_value(v)
    return out


def _own_arguments(call: Callable[..., Any]) -> set[str]:
    """The named arguments of ``call`` (not its ``**params``)."""
    from inspect import Parameter, signature

    return {n for n, p in signature(call).parameters.items() if p.kind != Parameter.VAR_KEYWORD}


def _number(x: float | None, missing: str = "-") -> str:
    return missing if x is None else f"{x:.8g}"


def _outcome_lines(outcome: Any, inst: Any) -> list[str]:
    """The human-readable report of ``dlsched solve``: the objective with its bound and gap,
    the flow time with its own when the method gives one (each labelled under its number),
    missing numbers as "-", gaps in %, then the solution one line per job."""
    status = str(outcome.status)
    if status == "bound":
        status += " (a proven lower bound; this method gives no schedule)"
    lines = [
        f"instance   {outcome.instance}  ({inst.family})",
        f"method     {outcome.method}",
        f"status     {status}",
        *_measure_lines("objective", outcome.objective, outcome.bound, outcome.gap),
        *_flow_lines(outcome.details),
        f"wall time  {outcome.wall_time:.3f} s",
    ]
    if outcome.details.get("reason"):
        lines.append(f"reason     {outcome.details['reason']}")
    return lines + _solution_lines(outcome.to_json(inst).get("solution"))


def _measure_lines(
    label: str, value: float | None, bound: float | None, gap: float | None, unit: str = ""
) -> list[str]:
    """A number, and under it its own certified lower bound and gap."""
    shown = "-" if gap is None else f"{gap:.2%}"
    return [
        f"{label:<11}{_number(value)}{unit if value is not None else ''}",
        f"  bound    {_number(bound, 'none proved')}{unit if bound is not None else ''}",
        f"  gap      {shown}",
    ]


def _flow_lines(details: Any) -> list[str]:
    """The total flow time of an online schedule, with its certified lower bound and gap when
    the method gives them (the objective, a sum of completion times, is dominated by the
    releases on a long trace): a number apart from the objective and its bound."""
    if details.get("flow_time_s") is None:
        return []
    return _measure_lines(
        "flow time",
        details["flow_time_s"],
        details.get("flow_time_bound_s"),
        details.get("flow_time_gap"),
        " s",
    )


def _solution_lines(solution: Any) -> list[str]:
    """A solution's jobs, one line each: its name, then its fields as ``key value`` pairs
    (never a Python repr)."""
    if not isinstance(solution, dict) or not isinstance(solution.get("jobs"), dict):
        return []
    jobs = solution["jobs"]
    width = max((len(str(name)) for name in jobs), default=0) + 2
    lines = [f"solution   {len(jobs)} job{'s' if len(jobs) != 1 else ''}"]
    for name, value in jobs.items():
        if isinstance(value, dict):
            value = {k: v for k, v in value.items() if not (k == "job" and v == name)}
        lines.append(f"  {str(name):<{width}}{_readable(value, top=True)}")
    return lines


def _readable(value: Any, top: bool = False) -> str:
    """A JSON value without quotes: ``key value, ...`` (``{key: value, ...}`` nested), lists
    as ``a, b`` (``[a, b]`` nested), numbers to eight digits."""
    if isinstance(value, dict):
        sep = " " if top else ": "
        inner = ", ".join(f"{k}{sep}{_readable(v)}" for k, v in value.items())
        return inner if top else f"{{{inner}}}"
    if isinstance(value, list | tuple):
        inner = ", ".join(_readable(v) for v in value)
        return inner if top else f"[{inner}]"
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, float | int):
        return _number(value)
    return str(value)


def cmd_solve(args: argparse.Namespace) -> int:
    from dlsched import api, families
    from dlsched.result import write_json
    from dlsched.solvers.deadline import process_start
    from dlsched.solvers.progress import heartbeat

    start = process_start() if args.whole_process else args.start
    inst = _load(args.instance)
    family = families.of(inst)
    plot = None
    if args.plot is not None:
        plot = _check_output("--plot", args.plot, _picture_formats())
        _check_plottable(family, plot)
    params = _params(args, api.solve)
    with heartbeat(f"{args.method} on {_short(args.instance)}", args.time_limit):
        outcome = api.solve(inst, args.method, time_limit=args.time_limit, seed=args.seed,
                            threads=args.threads, bound=args.bound, start=start,
                            **params)  # fmt: skip
    if args.json:  # written as it goes: a schedule of many jobs is never one string
        write_json(outcome.to_json(inst), sys.stdout)
        sys.stdout.write("\n")
    else:
        print("\n".join(_outcome_lines(outcome, inst)))
    if plot is not None:  # after printing: a failing picture never loses the result
        sys.stdout.flush()
        _save_plot(family, inst, outcome, plot, args.plot)
    return 0


def cmd_instances(args: argparse.Namespace) -> int:
    from dlsched.api import list_instances
    from dlsched.instances import dumps

    if args.action == "list":
        for name in list_instances():
            print(name)
    else:
        sys.stdout.write(dumps(_load(args.instance)))
    return 0


def cmd_methods(args: argparse.Namespace) -> int:
    from dlsched.api import methods

    for m in methods(args.family).itertuples():
        tag = " [exact]" if m.exact else ""
        rounds = f" (rounds {m.rounds})" if m.rounds else ""
        print(f"{m.name:<18}{m.summary}{tag}{rounds}")
        if m.guarantee:
            print(f"{'':<18}guarantee: {m.guarantee}")
    return 0


def cmd_generate(args: argparse.Namespace) -> int:
    from dlsched.api import generate
    from dlsched.instances import save

    _check_output("-o", args.output)
    inst = generate(args.family, args.jobs, args.gpus, args.seed, **_params(args, generate))
    try:
        path = save(inst, args.output)
    except OSError as e:
        raise OptionError("-o", _short(args.output), e.strerror or str(e)) from None
    print(f"wrote {path}")
    return 0


def _methods_arg(text: str) -> list[str]:
    names = [m.strip() for m in text.split(",") if m.strip()]
    if not names:
        raise OptionError("--methods", text, "give at least one method name")
    twice = next((m for k, m in enumerate(names) if m in names[:k]), None)
    if twice is not None:
        raise OptionError("--methods", text, f"method '{twice}' is named twice")
    return names


def cmd_compare(args: argparse.Namespace) -> int:
    from dlsched.api import compare
    from dlsched.bounds import TABLE_COLUMNS, check_methods, format_table
    from dlsched.bounds.comparisons import BOUND_FIELDS
    from dlsched.result import json_safe
    from dlsched.solvers.progress import heartbeat

    plot = None if args.plot is None else _check_output("--plot", args.plot, _picture_formats())
    inst = _load(args.instance)
    names = _methods_arg(args.methods)
    check_methods(inst.family, names, args.reference)  # before any solving
    with heartbeat(f"compare on {_short(args.instance)}"):
        rows = compare(inst, names, args.reference, time_limit=args.time_limit, seed=args.seed,
                       as_frame=False, bound=args.bound)  # fmt: skip
    if args.json:
        print(json.dumps([json_safe(r.to_json()) for r in rows], indent=1))
    else:
        print(format_table(rows, TABLE_COLUMNS + (BOUND_FIELDS if args.bound else ())))
        for r in rows:
            if r.error is not None:
                print(f"  {r.method}: {r.error}")
    _user_tracebacks(rows)
    if plot is not None:
        _save_ratios([r.to_json() for r in rows], plot, args.plot)
    return 0


def _user_tracebacks(rows: Sequence[Any], most: int = 1) -> None:
    """The tracebacks of the first ``most`` failed user methods among ``rows``, on stderr (the
    user's own frames: a failed method is a result, the command goes on)."""
    for r in [r for r in rows if getattr(r, "traceback", None)][:most]:
        sys.stdout.flush()
        print(f"{r.method} on {r.instance}:\n{r.traceback.rstrip()}", file=sys.stderr)


def _save_ratios(records: list[dict[str, Any]], path: Path, shown: str) -> None:
    """Comparison records' ratios drawn (:func:`dlsched.plotting.plot_ratios`) to ``path``."""
    import pandas as pd

    from dlsched.plotting import plot_ratios, save

    _save_picture(lambda: save(plot_ratios(pd.DataFrame(records)), path), shown)


def _check_seed_range(args: argparse.Namespace) -> None:
    """Every seed of ``--first-seed`` .. + ``--count`` - 1 must be one ``--seed`` accepts, so
    each generated instance can be made again alone."""
    last = args.first_seed + args.count - 1
    if last > MAX_SEED:
        raise OptionError("--count", args.count, f"seeds would reach {last} > {MAX_SEED}")


def cmd_sweep(args: argparse.Namespace) -> int:
    from dlsched import families
    from dlsched.api import generate
    from dlsched.bounds import check_methods, sweep
    from dlsched.models import MethodOptions
    from dlsched.runner import RunnerOptions

    _check_output("-o", args.output, special=False)  # read, locked and appended to
    plot = None if args.plot is None else _check_output("--plot", args.plot, _picture_formats())
    _check_lengths("--counterexamples", args.counterexamples)
    _check_seed_range(args)
    family = families.get(args.family)
    check_methods(args.family, _methods_arg(args.methods), args.reference)
    params = _params(args, generate)
    instances = (
        family.generate(args.jobs, args.gpus, seed, **params)
        for seed in range(args.first_seed, args.first_seed + args.count)
    )
    opts = MethodOptions(time_limit=args.time_limit, bound=args.bound)
    rows = sweep(
        instances,
        _methods_arg(args.methods),
        args.output,
        args.reference,
        opts,
        counterexamples=args.counterexamples,
        runner=RunnerOptions(**_runner_options(args)),
    )
    bad = [r for r in rows if r.holds is False]
    failed = [r for r in rows if r.error is not None]
    print(f"{len(rows)} new records appended to {args.output}; guarantee violations: {len(bad)}"
          + (f"; errors of your methods: {len(failed)}" if failed else ""))  # fmt: skip
    for r in failed[:5]:
        print(f"  {r.instance} {r.method}: {r.error}")
    _user_tracebacks(failed)
    for r in bad:
        print(
            f"  {r.instance} {r.method}: ratio {r.ratio:.4f} > {r.guarantee_name} = "
            f"{r.guarantee:.4f} (saved under {args.counterexamples}/)"
        )
    if plot is not None:
        from dlsched.bounds.log import read_records

        _save_ratios(read_records(Path(args.output)), plot, args.plot)
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    """The options first, then the theorems (each family's list, imported without Pyomo or a
    solver), then the runner and the report, so a bad option or ``--list`` answers at once."""
    from dlsched.verify import select

    if args.list:
        for t in select(args.theorem):
            print(f"{t.id:<18}{t.family:<11}{t.statement[:90]}")
        return 0
    _check_seed_range(args)
    out = _check_folder("-o", args.output)
    if args.budget is not None and not args.search:
        raise OptionError("--budget", args.budget, "is the budget of --search; add --search")
    theorems = select(args.theorem)
    from dlsched.solvers.base import SolveOptions
    from dlsched.verify.report import write_report
    from dlsched.verify.runner import VerifyOptions, run

    opts = VerifyOptions(
        count=args.count,
        first_seed=args.first_seed,
        jobs=args.jobs,
        gpus=args.gpus,
        solve=SolveOptions(time_limit=args.time_limit, seed=args.seed, threads=1),
        shrink=args.shrink,
        **_runner_options(args),
    )
    if args.search or args.budget is not None:  # the worst-case search
        from dlsched.verify.search import command

        print(command(theorems, out, opts, args.search, args.budget))
        return 0
    s = run(theorems, out, opts)
    md, _ = write_report(out)
    print(
        f"{s.tasks} instances run ({s.skipped} already in the log), {s.rows} rows appended to "
        f"{out / 'verify.jsonl'}; violations: {len(s.violations)}; minimal counterexamples: "
        f"{len(s.minimal)}; report: {md}"
    )
    for r in s.violations[:20]:
        ratio = "inf" if r["ratio_infinite"] else f"{r['ratio']:.4g}"
        print(
            f"  {r['theorem']} {r['method']} on {r['instance']}: ratio {ratio} > {r['bound']:.4g}"
        )
    return 0


def cmd_search(args: argparse.Namespace) -> int:
    """The options first (the folder, the family, the method), then the search, its row of
    ``search.json`` and the report."""
    from dlsched import families

    out = _check_folder("-o", args.output)
    families.get(args.family)
    from dlsched.solvers.base import SolveOptions
    from dlsched.verify.report import write_report
    from dlsched.verify.runner import VerifyOptions
    from dlsched.verify.search import SearchOptions
    from dlsched.verify.user_search import prepare, run, summary_lines

    theorem = prepare(args.family, args.method, args.guarantee)
    opts = VerifyOptions(
        jobs=args.jobs,
        gpus=args.gpus,
        solve=SolveOptions(time_limit=args.time_limit, seed=0, threads=1),
        **_runner_options(args),
    )
    row = run(theorem, out, opts, SearchOptions(args.budget, seed=args.seed))
    md, _ = write_report(out)
    print("\n".join([*summary_lines(row, out, args.budget), f"report: {md}"]))
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from dlsched.demo import run_demo

    return run_demo(quick=args.quick)


HANDLERS: dict[str, Callable[[argparse.Namespace], int]] = {
    "solve": cmd_solve,
    "instances": cmd_instances,
    "methods": cmd_methods,
    "generate": cmd_generate,
    "compare": cmd_compare,
    "sweep": cmd_sweep,
    "verify": cmd_verify,
    "search": cmd_search,
    "demo": cmd_demo,
}


def _one_line_warning(message: Any, category: type, *_: Any, **__: Any) -> None:
    """A warning on the command line: one line naming it, no source line."""
    print(f"dlsched: {category.__name__}: {message}", file=sys.stderr)


def end_process(code: int) -> None:
    """End this process now with ``code``, its output written and its exit handlers run, but
    without tearing its modules down: ``solve``'s time limit counts the whole process, and
    unloading Pyomo, SciPy and the solvers took about a second after the answer was printed
    (placement LAS at 8 jobs x 200 GPUs)."""
    import atexit

    sys.stdout.flush()
    atexit._run_exitfuncs()
    sys.stderr.flush()
    os._exit(code)


def main(argv: Sequence[str] | None = None, start: float | None = None) -> int:
    """The command line: ``argv`` (None: this process's arguments). ``solve``'s time limit
    counts from ``start`` (a ``time.perf_counter()`` reading); by default from this process's
    start when the arguments are the process's own (start-up, imports and loading count, so
    the whole process keeps the limit), else from when the method starts."""
    warnings.showwarning = _one_line_warning
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # argparse printed the usage and its error (or the help)
        return e.code if isinstance(e.code, int) else 0 if e.code is None else 2
    args.start, args.whole_process = start, start is None and argv is None
    try:
        code = HANDLERS[args.command](args)
        sys.stdout.flush()  # a full device (``> /dev/full``) fails here, not at exit
        if args.whole_process and args.command == "solve":
            end_process(code)
        return code
    except DlschedError as e:
        if getattr(e, "user_traceback", ""):  # a user's method failed: its own traceback
            print(e.user_traceback.rstrip(), file=sys.stderr)  # type: ignore[attr-defined]
        print(f"dlsched: error: {e}", file=sys.stderr)
        return 2
    except InternalError as e:
        print(f"dlsched: {e} (please report this)", file=sys.stderr)
        return 3
    except BrokenPipeError:  # the reader went away (``dlsched ... | head``): stop quietly
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # so the exit-time flush cannot fail again
        return 141  # 128 + SIGPIPE, what a shell reports for a command killed by the pipe
    except OSError as e:  # a full disk or device under the standard output or a log
        if e.filename is not None or e.errno not in WRITE_ERRORS:
            raise
        print(f"dlsched: error: cannot write the output: {e.strerror}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # pragma: no cover
        print("dlsched: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
