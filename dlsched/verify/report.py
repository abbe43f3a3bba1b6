"""The report of a verify run: ``report.md`` and ``report.html``, from the log alone (and from
``search.json`` when ``--search`` ran): the table, each theorem's section with a histogram of
its ratios against the guarantee, and the worst-case search beside sampling with a plot of the
worst ratio against the certified solves per theorem. One Markdown text makes both files:
``report.md`` links the pictures (PNG files beside it), ``report.html`` is that Markdown
rendered by the ``markdown`` package with the pictures inline as data URIs."""

from __future__ import annotations

import base64
import io
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dlsched.instances import write_text_atomic
from dlsched.verify.runner import COUNTEREXAMPLES, LOG, counterexample_stem, read_log, read_rows
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
            stem = counterexample_stem(r)
            saved, small = cx / f"{stem}.json", cx / f"{stem}-min.json"
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
    return _png(histogram, t)


def _escaped(text: str) -> str:
    """``text`` with Markdown's inline marks escaped (a statement's ``y~_{pi(k),m}`` is no
    emphasis)."""
    for mark in ("\\", "`", "*", "_", "[", "]"):
        text = text.replace(mark, "\\" + mark)
    return text


def _theorem_md(t: TheoremLine) -> list[str]:
    th = t.theorem
    out = [f"## {t.id}", ""]
    if th is not None:
        out += [f"*{_escaped(th.paper)}* — family `{th.family}`, reference: "
                f"{_escaped(th.reference)}", "", f"> {_escaped(th.statement)}", "",
                f"Ratio: {_escaped(th.ratio)}."]  # fmt: skip
    out += ["", f"Instances tried: {t.instances}; assumptions met: {t.applies}.", ""]
    for m in t.methods.values():
        out.append(
            f"- `{m.method}`: {m.rows} comparisons, worst ratio {_num(m.worst)} on "
            f"{_escaped(m.worst_instance) or '-'}, guarantee {_bound_text(m)}, "
            f"violations {m.violations}"
        )
    if t.counterexamples:
        out += ["", "Violations (instance file -> minimal counterexample):", ""]
        for saved, small in t.counterexamples[:20]:
            out.append(f"- `{COUNTEREXAMPLES}/{saved}` -> "
                       + (f"`{COUNTEREXAMPLES}/{small}`" if small else "not shrunk"))  # fmt: skip
        if len(t.counterexamples) > 20:
            out.append(f"- ... and {len(t.counterexamples) - 20} more")
    if t.errors:
        out += ["", f"Errors ({len(t.errors)}):", ""]
        out += [f"- {_escaped(e)}" for e in t.errors[:10]]
    return out + [""]


# --- the worst-case search ----------------------------------------------------------------------


def _ratio(row: dict[str, Any], prefix: str) -> str:
    if row.get(f"{prefix}_infinite"):
        return "inf"
    return _num(row.get(f"{prefix}_ratio"))


def _over(row: dict[str, Any], prefix: str) -> str:
    if row.get(f"{prefix}_infinite"):
        return "inf"
    return _num(row.get(f"{prefix}_over_bound"))


def search_table(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """One record per (theorem, method) searched: the search's worst beside the sample's."""
    return [
        {
            "theorem": r["theorem"],
            "method": r["method"],
            "worst ratio": _ratio(r, "worst"),
            "sample's worst": _ratio(r, "sample_worst"),
            "worst / guarantee": _over(r, "worst"),
            "sample's / guarantee": _over(r, "sample_worst"),
            "solves": r["solves"],
            "sample's solves": r["sample_solves"],
            "seconds": f"{r['seconds']:.0f}",
            "violated": "yes" if r["violated"] else "no",
            "minimal counterexample": f"`{r['minimal']}`" if r.get("minimal") else "-",
        }
        for r in rows
    ]


def _curve(points: Sequence[Sequence[Any]], top: float) -> tuple[list[float], list[float]]:
    """(solves, best so far) of a history, an infinite best drawn at ``top``."""
    xs = [float(n) for n, _ in points]
    ys = [top if s is None else float(s) for _, s in points]
    return xs, ys


def search_plot(rows: Sequence[dict[str, Any]], ax: Any = None) -> Any:
    """The worst score found against the certified solves, search (solid) beside the seeded
    sample (dashed), one color per method of one theorem's ``rows`` (of ``search.json``), on
    ``ax`` (a new figure if None), returned; None without a finite point. The score is the
    ratio over the guarantee (the ratio itself for an empirical claim); an infinite one is
    drawn at the top, marked inf."""
    finite = [s for r in rows for key in ("history", "sample_history")
              for _, s in r.get(key) or [] if s is not None]  # fmt: skip
    if not finite and not any(r.get(k) for r in rows for k in ("history", "sample_history")):
        return None
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=(6.4, 3.2))
    top = 1.25 * max([*finite, 1.0])
    colors = [f"C{k}" for k in range(10)]
    for k, r in enumerate(rows):
        color = colors[k % len(colors)]
        last = max(r.get("solves") or 1, r.get("sample_solves") or 1)
        for key, style, who in (("history", "-", "search"), ("sample_history", "--", "sample")):
            pts = list(r.get(key) or [])
            if not pts:
                continue
            xs, ys = _curve(pts, top)
            ax.step([*xs, last], [*ys, ys[-1]], where="post", linestyle=style, color=color,
                    label=f"{r['method']} ({who})")  # fmt: skip
            if any(s is None for _, s in pts):
                ax.annotate("inf", (xs[-1], top), color=color, fontsize="small")
    if any(r.get("bound") is not None for r in rows):
        ax.axhline(1.0, color="red", linestyle=":", label="guarantee")
    ax.set_xscale("log")
    ax.set_xlabel("certified solves")
    ax.set_ylabel("worst ratio / guarantee")
    ax.set_title(f"{rows[0]['theorem']}: search beside sampling")
    ax.legend(fontsize="x-small")
    return ax


def _png(draw: Any, *args: Any) -> bytes | None:
    """``draw(*args, ax)`` on a bare Figure as PNG bytes (no pyplot: the caller's backend is
    left as it is); None when it draws nothing."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.4, 3.2))
    if draw(*args, fig.subplots()) is None:
        return None
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90)
    return buf.getvalue()


def search_png(rows: Sequence[dict[str, Any]]) -> bytes | None:
    """:func:`search_plot` as PNG bytes."""
    return _png(search_plot, rows)


def _exact_md(rows: Sequence[dict[str, Any]]) -> list[str]:
    out: list[str] = []
    for r in rows:
        for e in r.get("exact_worst") or []:
            if not out:
                out += ["", "Exact worst cases (the heuristic and the optimum in one model, "
                        "solved by Dinkelbach's method; the family's `metaopt` part):", "",
                        "| theorem | method | jobs | worst ratio | proven upper bound | status "
                        "| over |", "|---|---|---|---|---|---|---|"]  # fmt: skip
            out.append(f"| {r['theorem']} | {r['method']} | {e['jobs']} | {_num(e['ratio'])} | "
                       f"{_num(e['upper'])} | {e['status']} | {e['box']} |")  # fmt: skip
    return out


def _sizes_md(rows: Sequence[dict[str, Any]]) -> list[str]:
    out = []
    for r in rows:
        if r.get("bound") is None and r.get("by_jobs"):
            sizes = ", ".join(f"{n} jobs: {_num(x)}" for n, x in r["by_jobs"].items())
            out.append(f"- `{r['method']}` on {r['theorem']}: {sizes}")
    if out:
        out = ["", "Worst ratio found at each number of jobs (claims with no guarantee):", "",
               *out]  # fmt: skip
    return out


def _search_md(rows: Sequence[dict[str, Any]], picture: Any) -> list[str]:
    """The search's section; ``picture(name, png)`` gives the Markdown of one picture."""
    out = ["## Worst-case search", "",
           "Each (theorem, method) searched for the instance maximizing the ratio over the "
           "guarantee (moves on the raw instance, simulated annealing with restarts, CMA-ES "
           "over the numbers, every candidate certified by the theorem's exact routes), "
           "beside a plain seeded sample with at least as many certified solves "
           f"(`search.json`, `search.jsonl`, `{LOG}`).", ""]  # fmt: skip
    out += _markdown_table(search_table(rows))
    out += _exact_md(rows) + _sizes_md(rows) + [""]
    by_theorem: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        by_theorem.setdefault(r["theorem"], []).append(r)
    for tid, rs in by_theorem.items():
        png = search_png(rs)
        if png is not None:
            out += [picture(f"search-{tid}.png", png, f"{tid}: search beside sampling"), ""]
    return out


# --- the files ----------------------------------------------------------------------------------


def report_markdown(directory: Path, picture: Any) -> str:
    """The report as Markdown; ``picture(name, png, alt)`` gives each picture's Markdown."""
    lines = summarize(read_log(directory / LOG), directory)
    md = ["# dlsched verify", "", f"Log: `{LOG}`; counterexamples: `{COUNTEREXAMPLES}/`.", ""]
    md += _markdown_table(table(lines)) + [""]
    searched = read_rows(directory)
    if searched:
        md += _search_md(searched, picture)
    for t in lines:
        part = _theorem_md(t)
        png = histogram_png(t)
        if png is not None:
            part.insert(len(part) - 1, picture(f"hist-{t.id}.png", png, t.id))
        md += part
    return "\n".join(md) + "\n"


#: The page around the rendered Markdown.
PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>dlsched verify</title>
<style>
body {{ font-family: sans-serif; max-width: 72em; margin: auto; padding: 0 1em; }}
table {{ border-collapse: collapse; margin: 0.5em 0; }}
td, th {{ border: 1px solid #ccc; padding: 2px 6px; }}
blockquote {{ border-left: 3px solid #ccc; margin-left: 0; padding-left: 1em; color: #333; }}
img {{ max-width: 100%; }}
</style></head>
<body>
{body}
</body></html>
"""


def write_report(directory: str | Path) -> tuple[Path, Path]:
    """``report.md`` (its pictures written beside it) and ``report.html`` (the same Markdown
    rendered, the pictures inline) of the log in ``directory``."""
    import markdown

    d = Path(directory)
    files: dict[str, bytes] = {}

    def linked(name: str, png: bytes, alt: str) -> str:
        files[name] = png
        return f"![{alt}]({name})"

    def inline(name: str, png: bytes, alt: str) -> str:
        return f"![{alt}](data:image/png;base64,{base64.b64encode(png).decode()})"

    text = report_markdown(d, linked)
    for name, png in files.items():
        (d / name).write_bytes(png)
    body = markdown.markdown(report_markdown(d, inline), extensions=["tables"])
    return (
        write_text_atomic(d / "report.md", text),
        write_text_atomic(d / "report.html", PAGE.format(body=body)),
    )


__all__ = [
    "histogram",
    "histogram_png",
    "report_markdown",
    "search_plot",
    "search_png",
    "search_table",
    "summarize",
    "table",
    "write_report",
]
