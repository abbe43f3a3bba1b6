"""The ``dlsched`` command line.

    dlsched solve INSTANCE --method METHOD [--time-limit S] [--json] [--plot FILE] ...
    dlsched instances list
    dlsched methods FAMILY
    dlsched generate FAMILY --jobs S --workers K --seed N -o FILE
    dlsched compare INSTANCE --methods A,B,... [--reference exact] [--json]
    dlsched sweep FAMILY --count N --jobs S --workers K --methods A,B -o FILE.jsonl
    dlsched demo

INSTANCE is a path to a JSON file or a bundled name such as ``placement/liu2024-motivating``.
Bad instances and impossible options exit with status 2 and a one-line message.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from dlsched.errors import DlschedError, InternalError, OptionError


def _parse_value(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def _category(text: str) -> tuple[int, ...]:
    try:
        parts = tuple(int(x) for x in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"--category {text!r}: expected comma-separated positive integers, e.g. 3,1"
        ) from None
    return parts


def _positive_float(name: str):  # type: ignore[no-untyped-def]
    def parse(text: str) -> float:
        try:
            x = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} {text!r}: expected a number") from None
        if not (x > 0 and math.isfinite(x)):
            raise argparse.ArgumentTypeError(f"{name} {text!r}: must be a positive number")
        return x

    return parse


def _json_safe(x: Any) -> Any:
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, dict):
        return {str(k): _json_safe(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_json_safe(v) for v in x]
    if hasattr(x, "item") and callable(x.item):  # numpy scalars
        return x.item()
    return x


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="dlsched", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="command", required=True)

    s = sub.add_parser("solve", help="solve an instance with a method")
    s.add_argument("instance", help="path to a JSON instance or a bundled name")
    s.add_argument("--method", required=True, help="method name (see `dlsched methods FAMILY`)")
    s.add_argument("--time-limit", type=_positive_float("--time-limit"), default=None)
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--threads", type=int, default=1)
    s.add_argument("--backend", default=None, help="solver backend for exact methods")
    s.add_argument("--category", type=_category, default=None, help="K_1,...,K_S (placement)")
    s.add_argument("--alpha", type=float, default=None)
    s.add_argument("--beta", type=float, default=None)
    s.add_argument("--samples", type=int, default=None, help="N, samples drawn by jps")
    s.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="extra method parameter (value parsed as JSON when possible)",
    )
    s.add_argument("--json", action="store_true", help="print one JSON object")
    s.add_argument("--plot", default=None, metavar="FILE", help="save a picture of the solution")

    i = sub.add_parser("instances", help="bundled instances")
    isub = i.add_subparsers(dest="action", required=True)
    isub.add_parser("list", help="list bundled instances")
    show = isub.add_parser("show", help="print an instance as JSON")
    show.add_argument("instance")

    m = sub.add_parser("methods", help="list the methods of a family")
    m.add_argument("family")

    g = sub.add_parser("generate", help="generate a random instance")
    g.add_argument("family")
    g.add_argument("--jobs", type=int, required=True)
    g.add_argument("--workers", type=int, required=True, help="workers / GPUs")
    g.add_argument("--seed", type=int, default=0)
    g.add_argument("--param", action="append", default=[], metavar="KEY=VALUE")
    g.add_argument("-o", "--output", required=True)

    c = sub.add_parser("compare", help="methods beside the certified optimum and guarantees")
    c.add_argument("instance")
    c.add_argument("--methods", required=True, help="comma-separated method names")
    c.add_argument("--reference", default="exact")
    c.add_argument("--time-limit", type=_positive_float("--time-limit"), default=None)
    c.add_argument("--seed", type=int, default=0)
    c.add_argument("--json", action="store_true")

    w = sub.add_parser("sweep", help="compare over generated instances (resumable)")
    w.add_argument("family")
    w.add_argument("--count", type=int, required=True)
    w.add_argument("--jobs", type=int, required=True)
    w.add_argument("--workers", type=int, required=True)
    w.add_argument("--first-seed", type=int, default=0)
    w.add_argument("--methods", required=True)
    w.add_argument("--reference", default="exact")
    w.add_argument("--time-limit", type=_positive_float("--time-limit"), default=None)
    w.add_argument("--counterexamples", default="counterexamples")
    w.add_argument("-o", "--output", required=True, help="JSON-lines file (appended)")

    d = sub.add_parser("demo", help="run the main job on the bundled instances")
    d.add_argument("--quick", action="store_true", help="smallest instances only")
    return p


def _params(args: argparse.Namespace) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in ("backend", "category", "alpha", "beta", "samples"):
        v = getattr(args, key, None)
        if v is not None:
            out[key] = v
    for item in args.param:
        if "=" not in item:
            raise OptionError("--param", item, "expected KEY=VALUE")
        k, v = item.split("=", 1)
        out[k.strip()] = _parse_value(v)
    return out


def cmd_solve(args: argparse.Namespace) -> int:
    from dlsched import families
    from dlsched.instances import load
    from dlsched.models import MethodOptions, run_method
    from dlsched.solvers.base import SolveOptions

    inst = load(args.instance)
    opts = MethodOptions(
        solve=SolveOptions(time_limit=args.time_limit, seed=args.seed, threads=args.threads),
        params=_params(args),
    )
    outcome = run_method(inst, args.method, opts)
    if args.plot:
        families.of(inst).plot(inst, outcome, Path(args.plot))
    if args.json:
        print(json.dumps(_json_safe(outcome.to_json(inst)), indent=1))
    else:
        print(f"instance   {outcome.instance}  ({inst.family})")
        print(f"method     {outcome.method}")
        print(f"status     {outcome.status}")
        print(f"objective  {outcome.objective}")
        print(f"bound      {outcome.bound}")
        print(f"gap        {outcome.gap}")
        print(f"wall time  {outcome.wall_time:.3f} s")
        sol = outcome.to_json(inst).get("solution")
        if isinstance(sol, dict) and "jobs" in sol:
            for name, ws in sol["jobs"].items():
                print(f"  {name}: {ws}")
    return 0


def cmd_instances(args: argparse.Namespace) -> int:
    from dlsched.instances import bundled, dumps, load

    if args.action == "list":
        for name in bundled():
            print(name)
    else:
        sys.stdout.write(dumps(load(args.instance)))
    return 0


def cmd_methods(args: argparse.Namespace) -> int:
    from dlsched.models import methods

    for name, m in methods(args.family).items():
        tag = " [exact]" if m.exact else ""
        print(f"{name:<18}{m.summary}{tag}")
    return 0


def cmd_generate(args: argparse.Namespace) -> int:
    from dlsched import families
    from dlsched.instances import save

    inst = families.get(args.family).generate(args.jobs, args.workers, args.seed, **_params(args))
    path = save(inst, args.output)
    print(f"wrote {path}")
    return 0


def _methods_arg(text: str) -> list[str]:
    names = [m.strip() for m in text.split(",") if m.strip()]
    if not names:
        raise OptionError("--methods", text, "give at least one method name")
    return names


def cmd_compare(args: argparse.Namespace) -> int:
    from dlsched.bounds import compare, format_table
    from dlsched.instances import load
    from dlsched.models import MethodOptions
    from dlsched.solvers.base import SolveOptions

    inst = load(args.instance)
    opts = MethodOptions(solve=SolveOptions(time_limit=args.time_limit, seed=args.seed))
    rows = compare(inst, _methods_arg(args.methods), args.reference, opts)
    if args.json:
        print(json.dumps([_json_safe(r.to_json()) for r in rows], indent=1))
    else:
        print(format_table(rows))
    return 0


def cmd_sweep(args: argparse.Namespace) -> int:
    from dlsched import families
    from dlsched.bounds import sweep
    from dlsched.models import MethodOptions
    from dlsched.solvers.base import SolveOptions

    if args.count < 1:
        raise OptionError("--count", args.count, "must be at least 1")
    family = families.get(args.family)
    instances = (
        family.generate(args.jobs, args.workers, seed)
        for seed in range(args.first_seed, args.first_seed + args.count)
    )
    opts = MethodOptions(solve=SolveOptions(time_limit=args.time_limit))
    rows = sweep(
        instances,
        _methods_arg(args.methods),
        args.output,
        args.reference,
        opts,
        counterexamples=args.counterexamples,
    )
    bad = [r for r in rows if r.holds is False]
    print(f"{len(rows)} new records appended to {args.output}; guarantee violations: {len(bad)}")
    for r in bad:
        print(
            f"  {r.instance} {r.method}: ratio {r.ratio:.4f} > {r.guarantee_name} = "
            f"{r.guarantee:.4f} (saved under {args.counterexamples}/)"
        )
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from dlsched.demo import run_demo

    return run_demo(quick=args.quick)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler = {
        "solve": cmd_solve,
        "instances": cmd_instances,
        "methods": cmd_methods,
        "generate": cmd_generate,
        "compare": cmd_compare,
        "sweep": cmd_sweep,
        "demo": cmd_demo,
    }[args.command]
    try:
        return handler(args)
    except DlschedError as e:
        print(f"dlsched: error: {e}", file=sys.stderr)
        return 2
    except InternalError as e:
        print(f"dlsched: {e} (please report this)", file=sys.stderr)
        return 3
    except KeyboardInterrupt:  # pragma: no cover
        print("dlsched: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
