"""Methods declared by an installed package (tests/userpkg, installed by make's venv step; here
installed into a folder of the test's own when it is not): listed and run like shipped ones,
with the same rows as the same function named by its file or called from Python."""

from __future__ import annotations

import importlib
import sys
import tomllib
from collections.abc import Iterator
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path
from typing import Any

import pytest
from cli_run import run

import dlsched
from dlsched import usercode

PACKAGE = Path(__file__).resolve().parents[1] / "userpkg"
TOY = "hare/toy-2gpu"
PLACEMENT = "placement/liu2024-motivating"


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The package installed (by make), else made importable here with the metadata an
    install writes (its METADATA and the entry_points.txt of its pyproject.toml)."""
    try:
        distribution("dlsched-userpkg")
        added: list[str] = []
    except PackageNotFoundError:
        added = [str(_metadata(tmp_path_factory.mktemp("site"))), str(PACKAGE)]
        sys.path[:0] = added
        importlib.invalidate_caches()
    usercode.forget_entry_points()
    yield
    for path in added:
        sys.path.remove(path)
    usercode.forget_entry_points()


def _metadata(site: Path) -> Path:
    project = tomllib.loads((PACKAGE / "pyproject.toml").read_text())["project"]
    info = site / f"dlsched_userpkg-{project['version']}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {project['version']}\n"
    )
    lines = []
    for group, entries in project["entry-points"].items():
        lines.append(f"[{group}]")
        lines += [f"{name} = {value}" for name, value in entries.items()]
    (info / "entry_points.txt").write_text("\n".join(lines) + "\n")
    return site


def rows(records: list[Any]) -> list[tuple[Any, ...]]:
    return [(r.status, r.objective, r.ratio, r.reference) for r in records]


def test_entry_points_are_listed(installed: None, capsys: Any) -> None:
    code, out, _ = run(capsys, "methods", "hare")
    assert code == 0 and "userpkg-gpu0" in out and "every task on GPU 0 (userpkg)" in out
    assert "guarantee: 100 (registered with the method)" in out
    assert "userpkg-fastest" in dlsched.methods("placement").name.tolist()


def test_an_entry_point_gives_the_rows_of_its_function_by_file_and_from_python(
    installed: None,
) -> None:
    from dlsched_userpkg.rules import hare_all_on_gpu0, placement_all_on_fastest

    by_entry = dlsched.compare(TOY, ["userpkg-gpu0"], as_frame=False)
    by_file = dlsched.compare(TOY, [f"{PACKAGE}/dlsched_userpkg/rules.py:hare_all_on_gpu0"],
                              as_frame=False)  # fmt: skip
    by_call = dlsched.compare(TOY, [hare_all_on_gpu0], as_frame=False)
    assert rows(by_entry) == rows(by_file) == rows(by_call)
    assert by_entry[1].ratio == pytest.approx(32 / 13.5)
    assert by_entry[1].guarantee == 100 and by_entry[1].holds is True
    placed = dlsched.compare(PLACEMENT, ["userpkg-fastest"], as_frame=False)
    by_module = dlsched.compare(PLACEMENT, ["dlsched_userpkg.rules:placement_all_on_fastest"],
                                as_frame=False)  # fmt: skip
    assert rows(placed) == rows(by_module)
    assert rows(placed)[1][0] == "feasible"
    assert rows(dlsched.compare(PLACEMENT, [placement_all_on_fastest], as_frame=False)) == rows(
        placed
    )
