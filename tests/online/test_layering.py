"""The package's layering, read from the source (every module of dlsched/ parsed, nothing
imported): the families stand side by side, what the online families share lies below them in
dlsched/online/, and the core reaches a family only through the registry (dlsched.families),
never by importing it by name."""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "dlsched"
MODELS = PACKAGE / "models"
ONLINE = PACKAGE / "online"
#: The families: the packages of dlsched/models/.
FAMILIES = tuple(sorted(p.name for p in MODELS.iterdir() if (p / "__init__.py").is_file()))


def _name(path: Path) -> str:
    """The dotted name of a module file (a package's ``__init__.py`` is the package)."""
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(text: str, path: Path) -> list[tuple[int, str]]:
    """(line, module) of every import of the source ``text`` of the module file ``path``, at
    any depth (in a function too), relative ones resolved; ``from A import B`` counts as
    importing ``A.B`` as well, so that ``from dlsched.models import hare`` is seen."""
    here = _name(path).split(".")
    package = here if path.name == "__init__.py" else here[:-1]
    out: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(text, str(path))):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            out.append((node.lineno, module))
            out += [(node.lineno, f"{module}.{a.name}") for a in node.names if a.name != "*"]
    return out


def family_of(module: str) -> str | None:
    """The family a dotted module name lies in, or None."""
    parts = module.split(".")
    if parts[:2] == ["dlsched", "models"] and len(parts) > 2 and parts[2] in FAMILIES:
        return parts[2]
    return None


@cache
def _modules() -> tuple[tuple[Path, tuple[tuple[int, str], ...]], ...]:
    """Every module file of dlsched/ with its imports."""
    found = sorted(PACKAGE.rglob("*.py"))
    return tuple((p, tuple(imports_of(p.read_text(encoding="utf-8"), p))) for p in found)


def _where(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def test_the_source_is_all_found() -> None:
    assert {"placement", "hare", "ddlwmp", "elastic"} <= set(FAMILIES)
    files = {_where(p) for p, _ in _modules()}
    assert len(files) > 100
    assert {"dlsched/online/traces.py", "dlsched/online/bounds.py"} <= files


def test_imports_are_seen_however_they_are_written() -> None:
    """The checks below can fail: another family imported at the top, inside a function, by
    ``from dlsched.models import`` or relatively, is seen."""
    path = MODELS / "hare" / "online" / "x.py"
    text = (
        "from ..instance import HareInstance\n"
        "from ... import ddlwmp\n"
        "import dlsched.online.bounds\n"
        "def f():\n"
        "    from dlsched.models import elastic\n"
        "    import dlsched.models.placement.model\n"
    )
    found = imports_of(text, path)
    assert (1, "dlsched.models.hare.instance") in found
    assert (2, "dlsched.models.ddlwmp") in found
    assert (5, "dlsched.models.elastic") in found
    assert {family_of(m) for _, m in found} == {None, "hare", "ddlwmp", "elastic", "placement"}


@pytest.mark.parametrize("family", FAMILIES)
def test_no_family_imports_another(family: str) -> None:
    wrong = [
        f"{_where(p)}:{line} imports {m}"
        for p, found in _modules()
        if p.is_relative_to(MODELS / family)
        for line, m in found
        if family_of(m) not in (None, family)
    ]
    assert not wrong, "\n".join(wrong)


def test_the_core_imports_no_family_by_name() -> None:
    wrong = [
        f"{_where(p)}:{line} imports {m}"
        for p, found in _modules()
        if family_of(_name(p)) is None
        for line, m in found
        if family_of(m) is not None
    ]
    assert not wrong, "\n".join(wrong)


def test_the_online_core_imports_no_family() -> None:
    """dlsched/online/ lies below the families: it imports none of them (nor anything of
    dlsched.models, which sits above it)."""
    wrong = [
        f"{_where(p)}:{line} imports {m}"
        for p, found in _modules()
        if p.is_relative_to(ONLINE)
        for line, m in found
        if m == "dlsched.models" or m.startswith("dlsched.models.")
    ]
    assert not wrong, "\n".join(wrong)
