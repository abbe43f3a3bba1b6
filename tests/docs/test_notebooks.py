"""Every teaching notebook runs top to bottom (small instances, a time limit per call) and shows
at least one picture inline."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).parents[2] / "notebooks").glob("*.ipynb"))


def test_there_are_notebooks() -> None:
    assert {p.name for p in NOTEBOOKS} >= {"placement.ipynb", "hare.ipynb"}


def images(nb) -> int:
    """The outputs of ``nb``'s code cells that carry a PNG picture."""
    return sum(
        "image/png" in output.get("data", {})
        for cell in nb.cells
        if cell.cell_type == "code"
        for output in cell.get("outputs", [])
    )


def test_no_notebook_switches_the_backend_or_reads_pictures_back() -> None:
    """Pictures come inline from the axes the toolkit returns: no backend chosen, no PNG
    written and read back."""
    for path in NOTEBOOKS:
        text = path.read_text()
        for banned in ("matplotlib.use", "%matplotlib", "imread", "savefig", "display(Image"):
            assert banned not in text, f"{path.name}: {banned}"


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
    # the kernel's own default backend (ipykernel's inline one), not one set for this process
    env = {k: v for k, v in os.environ.items() if k != "MPLBACKEND"}
    client.execute(env=env)
    assert images(nb) >= 1, f"{path.name}: no picture shown inline"


def test_the_quick_start_needs_only_import_dlsched() -> None:
    """Every family solved, compared, plotted and its Pyomo model changed and solved again,
    with no import but ``import dlsched``."""
    import json

    cells = json.loads((NOTEBOOKS[0].parent / "quickstart.ipynb").read_text())["cells"]
    code = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
    imports = [line.strip() for line in code.splitlines() if "import " in line]
    assert imports == ["import dlsched"]
    sections = code.split("dlsched.load(")[1:]
    families = {s.split("/")[0].strip('"') for s in sections}
    assert families == {"placement", "hare", "ddlwmp", "elastic"}
    assert any('"hlas"' in s for s in sections)  # hare's online part too
    for s in sections:
        for call in ("dlsched.solve(", "dlsched.compare(", ".plot()", "dlsched.model("):
            assert call in s, f"{s[:40]}: no {call}"
        assert "dlsched.solve_model(" in s and ".deactivate()" in s
