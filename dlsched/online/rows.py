"""The rows of a trace file as the readers of :mod:`dlsched.online.traces` take them: the
file's lines, each checked before it is split (UTF-8, no control character, a newline after
the last), and what a reader does with a bad row (:class:`BadRows`): refuse it with one line
naming the file, the line and the column, or, when the trace parameter ``skip_bad_rows`` asks,
skip it and count it by file and reason, the counts then reported (:meth:`BadRows.noted`).
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from dlsched.errors import InstanceError, OptionError

#: What no line of a trace holds: control characters (a tab only between fields, a carriage
#: return only before the newline), the replacement character a broken conversion leaves,
#: and a byte order mark.
JUNK = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\ufffd\ufeff]")
BOM = b"\xef\xbb\xbf"

# Reasons a row is bad, as the counts of skipped rows name them.
NOT_UTF8 = "not UTF-8"
CONTROL = "control characters"
CUT = "cut short"
FIELDS = "wrong number of fields"
NUMBER = "bad number"
TIMES = "inconsistent times"
DUPLICATE = "duplicate"
UNKNOWN = "unknown job"
TAINTED = "of a bad task row"
RANGE = "out of range"


class BadRows:
    """What to do with the bad rows of a trace: refuse the first (its
    :class:`~dlsched.errors.InstanceError` raised), or, with ``skip`` (``skip_bad_rows=true``),
    skip each and count it by file and reason."""

    def __init__(self, skip: bool = False) -> None:
        self.skip = skip
        self.counts: Counter[tuple[str, str]] = Counter()

    def row(self, reason: str, error: InstanceError) -> None:
        """A bad row: ``error`` raised, or counted under ``reason`` when skipping."""
        if not self.skip:
            raise error
        self.counts[Path(error.source).name, reason] += 1

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def summary(self) -> str:
        """``skipped 3 bad rows (skip_bad_rows=true): t.trace: 2 bad number, 1 duplicate``,
        or "" when none was skipped."""
        if not self.total:
            return ""
        files: dict[str, list[str]] = {}
        for (name, reason), k in sorted(self.counts.items()):
            files.setdefault(name, []).append(f"{k} {reason}")
        each = "; ".join(f"{name}: {', '.join(parts)}" for name, parts in files.items())
        rows = "row" if self.total == 1 else "rows"
        return f"skipped {self.total} bad {rows} (skip_bad_rows=true): {each}"

    def aside(self) -> str:
        """`` (summary)`` when rows were skipped, else "" (for a message)."""
        summary = self.summary()
        return f" ({summary})" if summary else ""

    def noted(self, description: str) -> str:
        """``description`` with :meth:`summary` after it when rows were skipped, which is then
        printed on the standard error too (one line)."""
        summary = self.summary()
        if not summary:
            return description
        print(f"dlsched: {summary}", file=sys.stderr)
        return f"{description}; {summary}" if description else summary


def _column(raw: bytes, at: int, sep: bytes, cols: tuple[str, ...]) -> str:
    """The column that byte ``at`` of a line lies in."""
    k = raw[:at].count(sep)
    return cols[k] if k < len(cols) else f"{k + 1}"


def _line(
    raw: bytes, n: int, src: str, sep: bytes, cols: tuple[str, ...]
) -> str | tuple[str, InstanceError]:
    """Line ``n`` of a trace as text, or why it is a bad row (a reason and its error)."""
    body = raw.rstrip(b"\r\n")
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as e:
        where = f"line {n}, column {_column(body, e.start, sep, cols)}"
        return NOT_UTF8, InstanceError(src, where, body[e.start : e.start + 4], "not UTF-8 text")
    junk = JUNK.search(text)
    if junk is not None:
        at = len(text[: junk.start()].encode("utf-8"))
        where = f"line {n}, column {_column(body, at, sep, cols)}"
        return CONTROL, InstanceError(src, where, junk.group(), "a control character")
    return text


def text_lines(
    path: Path, option: str, sep: str, cols: tuple[str, ...], bad: BadRows
) -> Iterator[tuple[int, str]]:
    """(line number, text) of each line of a trace that is not blank, read as it streams:
    a line that is not UTF-8 text, holds a control character, or ends the file without a
    newline (a file cut short: refused once the reader has found nothing else wrong with it)
    is a bad row; a byte order mark is an error. ``cols`` name the
    columns (separated by ``sep``) in messages; a file that cannot be read is an
    :class:`~dlsched.errors.OptionError` naming the parameter ``option`` that gave it."""
    src = str(path)
    try:
        fh = open(path, "rb")  # noqa: SIM115 (closed below)
    except OSError as e:
        raise OptionError(option, src, e.strerror or str(e)) from None
    with fh:
        for n, raw in enumerate(fh, 1):
            if n == 1 and raw.startswith(BOM):
                raise InstanceError(
                    src,
                    f"line 1, column {cols[0]}",
                    "\ufeff",
                    "a byte order mark: save the file as UTF-8 without it",
                )
            text = _line(raw, n, src, sep.encode(), cols)
            if isinstance(text, tuple):
                bad.row(*text)
                continue
            if not text.strip(" \t"):
                continue
            if raw.endswith(b"\n"):
                yield n, text
                continue
            why = "no newline after the last row: the file is cut short (end it with one)"
            cut = InstanceError(src, f"line {n}", text, why)
            if not bad.skip:
                yield n, text  # what is wrong with the row itself is said first
            bad.row(CUT, cut)


__all__ = [
    "CONTROL",
    "CUT",
    "DUPLICATE",
    "FIELDS",
    "NOT_UTF8",
    "NUMBER",
    "RANGE",
    "TAINTED",
    "TIMES",
    "UNKNOWN",
    "BadRows",
    "text_lines",
]
