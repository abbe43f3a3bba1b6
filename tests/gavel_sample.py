"""A small Gavel trace in the trace's own format, with the throughputs of Gavel's three GPU
types, for the tests of the families that read Gavel's traces (hare online, elastic); and the
command line run in-process."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

LINES = [
    "ResNet-18 (batch size 32)\tcd x && python3 main.py\t--num_steps\t1\t4000\t10.0\t1",
    "ResNet-18 (batch size 32)\tcd x && python3 main.py\t--num_steps\t1\t8000\t40.5\t2",
    "A3C\tcd y && python3 main.py\t--max-steps\t1\t600\t70\t3",
]
_RN = "('ResNet-18 (batch size 32)', 1)"
_RN2 = "('ResNet-18 (batch size 32)', 2)"
#: Steps per second: ResNet-18 scales sublinearly on V100s, perfectly on P100s, and the K80's
#: figure for 2 GPUs is 0 (as Gavel's file has for some jobs); A3C has no figure for 3 GPUs.
TPUT = {
    "v100": {_RN: 10.0, _RN2: 16.0, "('A3C', 1)": 2.0},
    "p100": {_RN: 5.0, _RN2: 10.0, "('A3C', 1)": 4.0},
    "k80": {_RN: 2.0, _RN2: 0.0, "('A3C', 1)": 1.0},
}


def write_trace(folder: Path, lines: list[str] = LINES) -> Path:
    """``folder/t.trace`` of these lines, Gavel's throughputs beside it."""
    trace = folder / "t.trace"
    trace.write_text("\n".join(lines) + "\n")
    (folder / "isolated_throughputs.json").write_text(json.dumps(TPUT))
    return trace


def cli(capsys: Any, *argv: str) -> tuple[int, str, str]:
    """``dlsched ARGV``: (exit status, stdout, stderr)."""
    from dlsched.cli import main

    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def solve_each(capsys: Any, trace: str, methods: tuple[str, ...]) -> list[dict[str, Any]]:
    """The details of ``dlsched solve TRACE --method M --bound --json`` for each method (each
    must succeed), after checking that the text report of the first prints the flow time
    with its bound and gap under it."""
    code, out, err = cli(capsys, "solve", trace, "--method", methods[0], "--bound")
    assert code == 0, err
    lines = out.splitlines()
    at = next(k for k, ln in enumerate(lines) if ln.startswith("flow time"))
    bound, gap = lines[at + 1 : at + 3]
    assert bound.startswith("  bound") and bound.endswith(" s"), bound
    assert gap.startswith("  gap") and gap.endswith("%"), gap
    got = []
    for method in methods:
        code, out, err = cli(capsys, "solve", trace, "--method", method, "--bound", "--json")
        assert code == 0, err
        got.append(json.loads(out)["details"])
    return got


def sweep_trace(
    capsys: Any, log: Path, family: str, trace: Path, gpus: int, method: str, reference: str
) -> list[dict[str, Any]]:
    """The records ``dlsched sweep FAMILY --param trace=TRACE`` appends to ``log`` (one
    instance, in this process)."""
    argv = ["sweep", family, "--count", "1", "--jobs", "1", "--gpus", str(gpus)]
    argv += ["--processes", "0", "--methods", method, "--reference", reference, "-o", str(log)]
    code, _, err = cli(capsys, *argv, "--param", f"trace={trace}", "--quiet")
    assert code == 0, err
    return [json.loads(ln) for ln in log.read_text().splitlines()]


def check_below_optimum(inst: Any, bound: Any, limit: float) -> None:
    """``bound(instance)`` (a FlowBound) is below the certified optimum: with weights 1 (the
    optimum of sum C is that of the flow time too) and with the instance's own weights."""
    from dataclasses import replace

    from dlsched.models import MethodOptions, run_method
    from dlsched.solvers import SolveOptions, Status

    opts = MethodOptions(solve=SolveOptions(time_limit=limit))
    unit = replace(inst, jobs=tuple(replace(j, weight=1.0) for j in inst.jobs))
    for case in (unit, inst):
        exact = run_method(case, "exact", opts)
        assert exact.status == Status.OPTIMAL
        b = bound(case)
        assert b.weighted_completion <= exact.objective * (1 + 1e-9)
        if case is unit:
            assert 0 < b.flow <= exact.objective - sum(j.arrival for j in case.jobs) + 1e-6
