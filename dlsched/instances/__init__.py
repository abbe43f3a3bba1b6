"""Instances: typed, immutable, loaded from JSON (by path or bundled name) with validation.

A family with a compact form (its ``columnar`` module: profiles written once, jobs as
columns) is also read from compact JSON and from Parquet (:mod:`.parquet`), and a trace file
(:data:`TRACES`) is read as an instance of the family that reads it (``FAMILY:PATH`` as
one of another family that reads traces, :data:`TRACE_READERS`). :func:`save` writes
large instances in the compact form; :func:`instance_hash` is the same for every form of the
same jobs.

>>> from dlsched.instances import load
>>> inst = load("placement/liu2024-motivating")
>>> inst.num_jobs, inst.num_workers
(2, 4)
"""

from __future__ import annotations

import difflib
import functools
import hashlib
import importlib
import json
import os
import re
import stat
import tempfile
import weakref
from pathlib import Path
from typing import Any

from dlsched import families
from dlsched.errors import DlschedError, InstanceError, OptionError
from dlsched.instances import parquet

#: A bundled name is ``family/stem``; the stem may not leave the family's data folder.
_BUNDLED_NAME = re.compile(r"^([a-z][a-z0-9_]*)/([A-Za-z0-9][A-Za-z0-9._-]{0,120})$")


def from_dict(data: Any, source: str = "<dict>") -> Any:
    """Build and validate an instance from a JSON-like dict."""
    if not isinstance(data, dict):
        raise InstanceError(source, "", data, "expected a JSON object at the top level")
    fam = data.get("family")
    if fam is None:
        raise InstanceError(source, "family", None, "required field is missing")
    try:
        family = families.get(fam)
        reader = _trace_reader(fam) if "trace" in data else None
    except DlschedError:
        close = (
            difflib.get_close_matches(fam, families.names(), n=1) if isinstance(fam, str) else []
        )
        hint = f"; did you mean '{close[0]}'?" if close else ""
        raise InstanceError(
            source, "family", fam, f"unknown family (known: {', '.join(families.names())}){hint}"
        ) from None
    if reader is not None and hasattr(reader, "read_manifest"):
        return reader.read_manifest(data, source)
    return family.from_dict(data, source)


def to_dict(instance: Any) -> dict[str, Any]:
    return families.of(instance).to_dict(instance)


#: JSON tokens that open, close or separate values, and object keys (strings before a colon).
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"(\s*:)?|[][{},]')
#: Nesting reported as too deep; real instances nest four levels.
MAX_DEPTH = 100


def _parse_int(text: str) -> int | float:
    """Integers of more than 20 digits are far beyond every field's range: read them as
    floats, so that no conversion fails (Python refuses to read ints of over 4300 digits) and
    the error shows a readable 1e+25 (or inf)."""
    return int(text) if len(text) <= 20 else float(text)


def _too_deep(text: str) -> tuple[str, int] | None:
    """The field path (first steps) and offset where ``text`` first nests beyond MAX_DEPTH."""
    stack: list[str | int] = []
    for m in _TOKEN.finditer(text):
        t = m.group()
        if t in ("[", "{"):
            stack.append(0 if t == "[" else "")
            if len(stack) > MAX_DEPTH:
                steps = [f"[{s}]" if isinstance(s, int) else f".{s}" for s in stack[:8]]
                return "".join(steps).lstrip(".") + "...", m.start()
        elif t in ("]", "}"):
            if stack:
                stack.pop()
        elif t == ",":
            if stack and isinstance(stack[-1], int):
                stack[-1] += 1
        elif m.group(1) and stack:
            stack[-1] = json.loads(t[: t.rindex('"') + 1])
    return None


def loads(text: str, source: str = "<string>") -> Any:
    try:
        return from_dict(_parse(text, source), source)
    except RecursionError:  # from the parser or from printing a value in an error message
        deep = _too_deep(text)
        if deep is None:
            raise
        field, pos = deep
        raise InstanceError(
            source, field, text[pos : pos + 20], f"JSON nested more than {MAX_DEPTH} levels deep"
        ) from None


def _parse(text: str, source: str) -> Any:
    try:
        return json.loads(text, parse_int=_parse_int)
    except json.JSONDecodeError as e:
        raise InstanceError(
            source,
            "",
            text[max(0, e.pos - 20) : e.pos + 20],
            f"broken JSON: {e.msg} at line {e.lineno} column {e.colno}",
        ) from None


def bundled() -> list[str]:
    """Names of the bundled instances, e.g. ``placement/liu2024-motivating``."""
    names: list[str] = []
    for fam in families.names():
        data = families.get(fam).data
        if data.is_dir():
            names.extend(f"{fam}/{f.name[:-5]}" for f in data.iterdir() if f.name.endswith(".json"))
    return sorted(names)


def _bundled(name: str) -> Any:
    """The bundled file called ``name``, or None. Only ``family/stem`` names are looked up,
    so a name can never reach a file outside the families' data folders."""
    m = _BUNDLED_NAME.match(name)
    if m is None or ".." in name or m.group(1) not in families.REGISTRY:
        return None
    res = families.get(m.group(1)).data.joinpath(m.group(2) + ".json")
    return res if res.is_file() else None


#: Trace files read in place of an instance (by suffix), and the family whose trace reader
#: (:data:`TRACE_READERS`) reads them (``load_trace``); ``FAMILY:PATH`` reads a trace as an
#: instance of another family that reads traces (``hare:cluster.trace``).
TRACES = {".csv": "ddlwmp", ".trace": "ddlwmp"}
#: The module of each family that reads traces (relative to the family's package), whose
#: ``READER`` (a :class:`~dlsched.online.params.GavelReader`; else the module itself) has
#: ``load_trace(path)``, and ``read_manifest(data, source)`` for an instance file whose
#: ``trace`` object names one (ddlwmp has no ``READER`` and reads its own in its ``from_dict``).
TRACE_READERS = {"ddlwmp": "traces", "hare": "online.traces", "elastic": "traces"}
#: ``FAMILY:PATH``, a trace read as an instance of that family.
_FAMILY_TRACE = re.compile(r"^([a-z][a-z0-9_]*):(.+)$")
#: The forms :func:`save` writes.
FORMS = ("full", "compact", "parquet")


@functools.cache
def _family_module(family: str, name: str) -> Any:
    """The family's module ``name`` (``columnar``, ``traces``), or None if it has none (looked
    up once: a failed import costs more than a small instance's hash)."""
    full = f"{families.REGISTRY[family]}.{name}"
    try:
        return importlib.import_module(full)
    except ModuleNotFoundError as e:
        if e.name == full:
            return None
        raise


def _trace_reader(family: str) -> Any:
    """The family's trace reader (:data:`TRACE_READERS`), or None."""
    name = TRACE_READERS.get(family)
    module = None if name is None else _family_module(family, name)
    return getattr(module, "READER", module)


def load(ref: str | os.PathLike[str]) -> Any:
    """Load an instance from a file path (JSON in the full or compact form, Parquet, or a
    trace file of :data:`TRACES`), ``FAMILY:PATH`` (a trace read by that family) or a
    bundled name."""
    path = Path(ref)
    other = _load_other(path)
    if other is not None:
        return other
    traced = _FAMILY_TRACE.match(str(ref))
    if traced is not None and traced.group(1) in families.REGISTRY and not path.exists():
        return _load_family_trace(traced.group(1), Path(traced.group(2)), str(ref))
    try:
        text = path.read_text(encoding="utf-8") if path.is_file() else None
    except (OSError, UnicodeDecodeError, ValueError) as e:  # ValueError: NUL in the path
        raise InstanceError(str(path), "", str(path), f"cannot read file: {e}") from None
    if text is not None:
        return loads(text, str(path))
    name = str(ref)
    res = None if name.endswith(".json") else _bundled(name)
    if res is not None:
        return loads(res.read_text(encoding="utf-8"), name)
    raise InstanceError(
        name, "", name, "no such file or bundled instance (see `dlsched instances list`)"
    )


def _load_other(path: Path) -> Any:
    """A Parquet instance or a trace file at ``path``, else None."""
    try:
        if not path.is_file():
            return None
    except (OSError, ValueError):
        return None
    if parquet.is_parquet(path) or path.suffix.lower() == ".parquet":
        return from_dict(parquet.read(path), str(path))
    family = TRACES.get(path.suffix.lower())
    if family is None:
        return None
    return _trace_reader(family).load_trace(path)


def _load_family_trace(family: str, path: Path, ref: str) -> Any:
    """``FAMILY:PATH``: the trace at ``path`` read by ``family``'s trace reader."""
    reader = _trace_reader(family)
    if reader is None:
        known = ", ".join(f"{f}:" for f in TRACE_READERS)
        raise InstanceError(ref, "", family, f"the {family} family reads no trace ({known})")
    try:
        if not path.is_file():
            raise InstanceError(ref, "", str(path), "no such trace file")
    except (OSError, ValueError):
        raise InstanceError(ref, "", str(path), "no such trace file") from None
    return reader.load_trace(path)


def _columnar(instance: Any, form: str) -> Any:
    module = _family_module(families.of(instance).name, "columnar")
    if module is None:
        raise OptionError("form", form, f"the {instance.family} family has no compact form")
    return module


def dumps(instance: Any, form: str = "full") -> str:
    """The instance as JSON text, in the ``full`` or the ``compact`` form."""
    if form == "compact":
        module = _columnar(instance, form)
        return str(module.compact_dumps(module.to_compact(instance)))
    if form != "full":
        raise OptionError("form", form, "expected 'full' or 'compact'")
    return json.dumps(to_dict(instance), indent=1) + "\n"


def form_for(instance: Any, path: str | os.PathLike[str]) -> str:
    """The form :func:`save` writes by default: Parquet for a ``.parquet`` path, else the
    compact form from the family's ``COMPACT_FROM`` jobs, else the full one (small instances
    stay easy to read)."""
    if Path(path).suffix.lower() == ".parquet":
        return "parquet"
    module = _family_module(families.of(instance).name, "columnar")
    big = module is not None and instance.num_jobs >= module.COMPACT_FROM
    return "compact" if big else "full"


def save(instance: Any, path: str | os.PathLike[str], form: str | None = None) -> Path:
    """Write atomically (a crash or error never leaves a half-written file behind) in
    ``form`` (one of :data:`FORMS`; by default :func:`form_for`'s)."""
    form = form_for(instance, path) if form is None else form
    if form == "parquet":
        module = _columnar(instance, form)
        return write_bytes_atomic(Path(path), parquet.to_bytes(module.to_compact(instance)))
    if form not in FORMS:
        raise OptionError("form", form, f"expected one of {', '.join(FORMS)}")
    return write_text_atomic(Path(path), dumps(instance, form))


def _mode_for(path: Path) -> int:
    """The permission bits a replacement of ``path`` gets: those of the file it replaces, else
    what a plain ``open()`` would give (0o666 less the umask)."""
    try:
        return path.stat().st_mode & 0o7777
    except OSError:
        return 0o666 & ~_umask()


def _umask() -> int:
    """The process's umask: read from /proc on Linux, where setting it to read it (the only
    portable way) could give a file made meanwhile by another thread the wrong mode."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    umask = os.umask(0o022)
    os.umask(umask)
    return umask


def output_target(path: str | os.PathLike[str]) -> Path:
    """What writing to ``path`` writes: the file a symbolic link names (followed to its end),
    else ``path`` itself."""
    path = Path(path)
    return Path(os.path.realpath(path)) if path.is_symlink() else path


def is_special(path: Path) -> bool:
    """Whether ``path`` exists and is neither a regular file nor a folder (a device such as
    /dev/null, a named pipe, a socket): it is written in place, never replaced."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def write_text_atomic(path: Path, text: str) -> Path:
    """Write ``text`` to ``path`` through a temporary file renamed over it, keeping an existing
    file's permission bits (a new file honours the umask). A symbolic link is written through:
    the file it names is replaced and the link kept. A device or pipe (``/dev/null``) is
    written directly, never replaced by a file; its errors (``/dev/full``: no space left) are
    raised as OSError. Returns ``path``."""
    return write_bytes_atomic(path, text.encode("utf-8"))


def write_bytes_atomic(path: Path, data: bytes) -> Path:
    """:func:`write_text_atomic` for bytes."""
    given, path = Path(path), output_target(path)
    if is_special(path):
        with open(path, "wb") as fh:
            fh.write(data)
        return given
    if path.parent and not path.parent.exists():
        raise InstanceError(str(path), "", str(path.parent), "directory does not exist")
    mode = _mode_for(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent or ".", prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, mode)  # mkstemp makes 0600
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return given


#: id(instance) -> (weak reference to it, its hash); instances are frozen, so the hash of one
#: object never changes, and at 80,000 tasks the JSON dump behind it costs seconds.
_HASHES: dict[int, tuple[weakref.ref[Any], str]] = {}


def _digest(instance: Any) -> str:
    """SHA-256 of the canonical JSON (sorted keys, no spaces) of the full form: from the
    family's ``columnar.canonical_chunks`` piece by piece when it has them (no full dump in
    memory), else from ``to_dict``."""
    family = families.of(instance).name
    module = _family_module(family, "columnar") if family in families.REGISTRY else None
    h = hashlib.sha256()
    if module is None:
        h.update(json.dumps(to_dict(instance), sort_keys=True, separators=(",", ":")).encode())
        return h.hexdigest()
    batch: list[str] = []
    for piece in module.canonical_chunks(instance):
        batch.append(piece)
        if len(batch) >= 4096:
            h.update("".join(batch).encode())
            batch.clear()
    h.update("".join(batch).encode())
    return h.hexdigest()


def instance_hash(instance: Any) -> str:
    """Content hash of the canonical JSON form (first 16 hex digits of SHA-256), computed once
    per instance object."""
    key = id(instance)
    hit = _HASHES.get(key)
    if hit is not None and hit[0]() is instance:
        return hit[1]
    digest = _digest(instance)[:16]

    def forget(_ref: weakref.ref[Any]) -> None:
        _HASHES.pop(key, None)

    try:
        ref = weakref.ref(instance, forget)
    except TypeError:  # an object that takes no weak reference: not cached
        return digest
    _HASHES[key] = (ref, digest)
    return digest


__all__ = [
    "FORMS",
    "TRACES",
    "TRACE_READERS",
    "bundled",
    "dumps",
    "form_for",
    "from_dict",
    "instance_hash",
    "is_special",
    "load",
    "loads",
    "output_target",
    "save",
    "to_dict",
    "write_bytes_atomic",
    "write_text_atomic",
]
