"""The report of a verify run: ``report.md`` and ``report.html`` (with a histogram of the
ratios against the guarantee per theorem, embedded as PNG), from the log alone."""

from __future__ import annotations

import base64
import html
import io
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dlsched.instances import write_text_atomic
from dlsched.verify.runner import COUNTEREXAMPLES, LOG, _stem, read_log
from dlsched.verify.theorem import Theorem, registry


@dataclass
class MethodLine:
    method: str
    rows: int = 0
    worst: float | None = None
    worst_instance: str = ""
    worst_infinite: bool = False
    violations: int = 0
    errors: int = 0
    ratios: list[float] = field(default_factory=list)  # finite ratios
    bounds: list[float | None] = field(default_factory=list)  # the bound beside each ratio
    all_bounds: set[float] = field(default_factory=set)


@dataclass
class TheoremLine:
    id: str
    theorem: Theorem | None
    instances: int = 0
    applies: int = 0
    methods: dict[str, MethodLine] = field(default_factory=dict)
    counterexamples: list[tuple[str, str]] = field(default_factory=list)  # (saved, minimal)
    errors: list[str] = field(default_factory=list)


def summarize(rows: Sequence[dict[str, Any]], directory: Path) -> list[TheoremLine]:
    """Per theorem: instances, assumptions met, per method its worst ratio and violations."""
    known = registry()
    out: dict[str, TheoremLine] = {}
    seen: dict[str, dict[str, bool]] = {}
    measured = {(r["theorem"], r["instance_hash"]) for r in rows if r["status"] != "error"}
    for r in rows:
        if r["status"] == "error" and (r["theorem"], r["instance_hash"]) in measured:
            continue  # failed once, measured on a later run
        line = out.setdefault(r["theorem"], TheoremLine(r["theorem"], known.get(r["theorem"])))
        seen.setdefault(r["theorem"], {})[r["instance_hash"]] = bool(r["applies"])
        if r["status"] == "error":
            line.errors.append(f"{r['instance']}: {r['note']}")
            continue
        if r["ratio"] is None and not r.get("ratio_infinite"):
            continue
        m = line.methods.setdefault(r["method"], MethodLine(r["method"]))
        m.rows += 1
        ratio = math.inf if r.get("ratio_infinite") else float(r["ratio"])
        if m.worst is None or ratio > m.worst:
            m.worst, m.worst_instance = ratio, f"{r['instance']} ({r['instance_hash']})"
        if r["bound"] is not None:
            m.all_bounds.add(float(r["bound"]))
        if math.isfinite(ratio):
            m.ratios.append(ratio)
            m.bounds.append(None if r["bound"] is None else float(r["bound"]))
        if r["holds"] is False:
            m.violations += 1
            cx = directory / COUNTEREXAMPLES
            saved, small = cx / f"{_stem(r)}.json", cx / f"{_stem(r)}-min.json"
            line.counterexamples.append((saved.name, small.name if small.exists() else ""))
    for tid, inst in seen.items():
        out[tid].instances = len(inst)
        out[tid].applies = sum(inst.values())
    order = list(known)
    return sorted(out.values(), key=lambda x: order.index(x.id) if x.id in order else len(order))


def _num(x: float | None) -> str:
    if x is None:
        return "-"
    return "inf" if math.isinf(x) else f"{x:.4g}"


def _bound_text(m: MethodLine) -> str:
    if not m.all_bounds:
        return "none (empirical)"
    lo, hi = min(m.all_bounds), max(m.all_bounds)
    return _num(lo) if lo == hi else f"{_num(lo)} .. {_num(hi)}"


def table(lines: Sequence[TheoremLine]) -> list[dict[str, Any]]:
    """One row per (theorem, method): the report's table as records."""
    out = []
    for t in lines:
        for m in t.methods.values():
            out.append(
                {
                    "theorem": t.id,
                    "method": m.method,
                    "instances": t.instances,
                    "assumptions met": t.applies,
                    "compared": m.rows,
                    "worst ratio": _num(m.worst),
                    "guarantee": _bound_text(m),
                    "violations": m.violations,
                    "worst instance": m.worst_instance,
                }
            )
    return out


def _markdown_table(records: Sequence[dict[str, Any]]) -> list[str]:
    if not records:
        return ["(no comparisons yet)"]
    cols = list(records[0])
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(str(r[c]) for c in cols) + " |" for r in records]
    return lines


def histogram(t: TheoremLine, ax: Any = None) -> Any:
    """Ratios per method on ``ax`` (a new figure if None), returned (None without a finite
    ratio); against a constant guarantee a line at it, against a guarantee that depends on the
    instance the ratio over the guarantee with a line at 1. In Jupyter it shows inline."""
    ms = [m for m in t.methods.values() if m.ratios]
    if not ms:
        return None
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=(6.4, 3.2))
    bounds = {b for m in ms for b in m.bounds if b is not None and math.isfinite(b)}
    relative = len(bounds) > 1  # the guarantee depends on the instance
    for m in ms:
        xs = m.ratios
        if relative:
            pairs = zip(m.ratios, m.bounds, strict=True)
            xs = [r / b for r, b in pairs if b is not None and math.isfinite(b) and b > 0]
        ax.hist(xs, bins=20, alpha=0.6, label=m.method)
    if relative:
        ax.axvline(1.0, color="red", linestyle="--", label="guarantee")
        ax.set_xlabel("ratio / guarantee of the instance")
    else:
        if bounds:
            ax.axvline(next(iter(bounds)), color="red", linestyle="--", label="guarantee")
        ax.set_xlabel(t.theorem.ratio if t.theorem else "ratio")
    ax.set_ylabel("comparisons")
    ax.set_title(t.id)
    ax.legend(fontsize="small")
    return ax


def histogram_png(t: TheoremLine) -> bytes | None:
    """:func:`histogram` as PNG bytes, drawn on a figure of its own (no pyplot, so the
    caller's matplotlib backend is left as it is)."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.4, 3.2))
    if histogram(t, fig.subplots()) is None:
        return None
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90)
    return buf.getvalue()


def _theorem_md(t: TheoremLine) -> list[str]:
    th = t.theorem
    out = [f"## {t.id}", ""]
    if th is not None:
        out += [f"*{th.paper}* — family `{th.family}`, reference: {th.reference}", "",
                f"> {th.statement}", "", f"Ratio: {th.ratio}."]  # fmt: skip
    out += ["", f"Instances tried: {t.instances}; assumptions met: {t.applies}.", ""]
    for m in t.methods.values():
        out.append(
            f"- `{m.method}`: {m.rows} comparisons, worst ratio {_num(m.worst)} on "
            f"{m.worst_instance or '-'}, guarantee {_bound_text(m)}, violations {m.violations}"
        )
    if t.counterexamples:
        out += ["", "Violations (instance file -> minimal counterexample):", ""]
        for saved, small in t.counterexamples[:20]:
            out.append(f"- `{COUNTEREXAMPLES}/{saved}` -> "
                       + (f"`{COUNTEREXAMPLES}/{small}`" if small else "not shrunk"))  # fmt: skip
        if len(t.counterexamples) > 20:
            out.append(f"- ... and {len(t.counterexamples) - 20} more")
    if t.errors:
        out += ["", f"Errors ({len(t.errors)}):", ""] + [f"- {e}" for e in t.errors[:10]]
    return out + [""]


def write_report(directory: str | Path) -> tuple[Path, Path]:
    """``report.md`` and ``report.html`` of the log in ``directory``."""
    d = Path(directory)
    lines = summarize(read_log(d / LOG), d)
    md = ["# dlsched verify", "", f"Log: `{LOG}`; counterexamples: `{COUNTEREXAMPLES}/`.", ""]
    md += _markdown_table(table(lines)) + [""]
    body = []
    for t in lines:
        part = _theorem_md(t)
        md += part
        png = histogram_png(t)
        img = ""
        if png is not None:
            name = f"hist-{t.id}.png"
            (d / name).write_bytes(png)
            md.insert(len(md) - 1, f"![{t.id}]({name})")
            img = f'<img alt="{t.id}" src="data:image/png;base64,{base64.b64encode(png).decode()}">'
        body.append(f"<section><pre>{html.escape(chr(10).join(part))}</pre>{img}</section>")
    rows = table(lines)
    head = "".join(f"<th>{html.escape(c)}</th>" for c in (rows[0] if rows else {}))
    cells = "".join(
        "<tr>" + "".join(f"<td>{html.escape(str(v))}</td>" for v in r.values()) + "</tr>"
        for r in rows
    )
    page = (
        "<!doctype html><html><head><meta charset='utf-8'><title>dlsched verify</title>"
        "<style>body{font-family:sans-serif;max-width:60em;margin:auto}"
        "td,th{border:1px solid #ccc;padding:2px 6px}table{border-collapse:collapse}"
        "pre{white-space:pre-wrap}</style></head><body><h1>dlsched verify</h1>"
        f"<table><tr>{head}</tr>{cells}</table>{''.join(body)}</body></html>\n"
    )
    return (
        write_text_atomic(d / "report.md", "\n".join(md) + "\n"),
        write_text_atomic(d / "report.html", page),
    )


__all__ = ["histogram", "histogram_png", "summarize", "table", "write_report"]
