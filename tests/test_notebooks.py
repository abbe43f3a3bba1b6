"""Every teaching notebook runs top to bottom (small instances, a time limit per cell)."""

from __future__ import annotations

from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).parent.parent / "notebooks").glob("*.ipynb"))


def test_there_are_notebooks() -> None:
    assert {p.name for p in NOTEBOOKS} >= {"placement.ipynb", "hare.ipynb"}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_executes(path: Path, tmp_path: Path) -> None:
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:  # committed notebooks carry no outputs
        if cell.cell_type == "code":
            assert not cell.get("outputs"), f"{path.name}: strip outputs before committing"
    client = nbclient.NotebookClient(
        nb, timeout=180, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()
