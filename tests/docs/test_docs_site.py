"""The documentation site (``make docs``) as a reader sees it: opened in headless Chromium, every
notebook page shows its pictures and its math typeset, the API reference renders its docstrings
and their math, no code line is cut at a block's edge and the tour page is the README. Without
a built site or a browser these tests skip, except where ``DLSCHED_REQUIRE_SITE=1`` (CI builds
the site first, and a skip there is a failure)."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from site_browser import COUNT_IMAGES, chrome, missing

ROOT = Path(__file__).parents[2]
SITE = ROOT / "site"
NOTEBOOKS = sorted(p.stem for p in (ROOT / "notebooks").glob("*.ipynb"))
#: MathJax done with the page: its version, where it came from and how many formulas it typeset
TYPESET = """const done = arguments[arguments.length - 1];
    const script = Array.from(document.scripts).find(s => s.src.endsWith("tex-chtml-full.js"));
    if (!window.MathJax || !MathJax.startup) return done([null, null, 0, 0]);
    MathJax.startup.promise.then(() => done([
        MathJax.version, script ? script.src : null,
        document.querySelectorAll("mjx-container").length,
        document.querySelectorAll('script[src=""]').length]));"""
#: the text a reader sees in the page's Markdown (notebook cells, docstrings), code left out
PROSE = """return Array.from(document.querySelectorAll(".jp-RenderedMarkdown, .doc-contents"))
    .map(e => { const c = e.cloneNode(true);
                c.querySelectorAll("code, pre, mjx-container").forEach(x => x.remove());
                return c.textContent; }).join("\\n");"""
#: the code blocks of the page (notebook cells and outputs, Markdown and docstring blocks) whose
#: lines pass their right edge and are cut there: the block neither wraps them nor scrolls
CUT_CODE = """return Array.from(document.querySelectorAll(".md-content pre, .md-content pre>code"))
    .filter(e => e.scrollWidth > e.clientWidth
                 && !["auto", "scroll"].includes(getComputedStyle(e).overflowX))
    .map(e => e.textContent.slice(0, 60));"""
#: the first code cell of the placement notebook: its width needed unwrapped, shown, and its box
FIRST_CELL = """const pre = Array.from(document.querySelectorAll(".jupyter-wrapper pre"))
        .find(p => p.textContent.includes("import matplotlib"));
    const shown = pre.scrollWidth;
    pre.style.whiteSpace = "pre";
    const unwrapped = pre.scrollWidth;
    pre.style.whiteSpace = "";
    return [unwrapped, shown, pre.clientWidth];"""


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    if not (SITE / "index.html").is_file():
        missing("the documentation site is not built (make docs)")
    if shutil.which("chromium") is None or shutil.which("chromedriver") is None:
        missing("no chromium and chromedriver (Debian packages chromium, chromium-driver)")
    try:
        import selenium  # noqa: F401
    except ImportError:
        missing("selenium is not installed (pip install '.[docs]')")
    driver = chrome(tmp_path_factory.mktemp("chromium"))
    try:
        yield driver
    finally:
        driver.quit()


def _open(browser: Any, page: Path) -> None:
    from selenium.webdriver.support.ui import WebDriverWait

    assert page.is_file(), f"{page.relative_to(ROOT)} was not built"
    browser.get(page.as_uri())
    WebDriverWait(browser, 60).until(
        lambda b: b.execute_script("return document.readyState") == "complete"
    )


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_every_notebook_page_shows_its_pictures(browser: Any, name: str) -> None:
    _open(browser, SITE / "notebooks" / name / "index.html")
    total, shown = browser.execute_script(COUNT_IMAGES)
    assert shown >= 1, f"notebook {name}: no picture shown"
    assert shown == total, f"notebook {name}: {total - shown} of {total} images not shown"
    text = browser.find_element("tag name", "body").text
    assert "Traceback" not in text and "Error" not in text.split("\n")[0]


def _math_in(notebook: str) -> int:
    """How many ``$...$`` and ``$$...$$`` the notebook's Markdown cells hold."""
    cells = json.loads((ROOT / "notebooks" / f"{notebook}.ipynb").read_text())["cells"]
    text = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    return len(re.findall(r"\$\$.+?\$\$|\$[^$\n]+?\$", re.sub(r"`[^`]*`", "", text), re.DOTALL))


def _typeset(browser: Any) -> tuple[int, str]:
    """How many formulas the page's MathJax typeset; the page's prose as then shown."""
    browser.set_script_timeout(60)
    version, src, formulas, empty = browser.execute_async_script(TYPESET)
    assert str(version).startswith("3."), f"no MathJax 3 on the page: {version}"
    assert str(src).startswith("file:") and src.endswith("/assets/mathjax/tex-chtml-full.js"), (
        f"MathJax not served with the site: {src}"
    )
    assert empty == 0, 'a <script src=""> left on the page'
    return formulas, browser.execute_script(PROSE)


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_every_notebook_page_typesets_its_math(browser: Any, name: str) -> None:
    _open(browser, SITE / "notebooks" / name / "index.html")
    formulas, prose = _typeset(browser)
    assert formulas == _math_in(name), f"notebook {name}: {formulas} formulas typeset"
    assert "$" not in prose, f"notebook {name}: raw TeX shown"


def test_a_notebook_formula_is_typeset_where_it_stands(browser: Any) -> None:
    """placement: "$S$ jobs share $K$ ..." and the displayed objective (14) of P1."""
    _open(browser, SITE / "notebooks" / "placement" / "index.html")
    formulas, prose = _typeset(browser)
    assert formulas > 2
    assert "jobs share" in prose and "$S$" not in prose and "\\min_\\sigma" not in prose
    display = browser.find_elements(
        "css selector", '.jp-RenderedMarkdown mjx-container[display="true"]'
    )
    assert len(display) == 1 and display[0].size["height"] > 30  # a fraction, typeset as one


@pytest.mark.parametrize("page", ["notebooks/placement", "notebooks/tour", "architecture", "api"])
def test_no_code_line_is_cut_at_the_edge(browser: Any, page: str) -> None:
    _open(browser, SITE / page / "index.html")
    assert browser.execute_script(CUT_CODE) == [], f"{page}: code cut at the block's edge"


def test_a_notebook_code_cell_wraps_its_long_lines(browser: Any) -> None:
    _open(browser, SITE / "notebooks" / "placement" / "index.html")
    unwrapped, shown, box = browser.execute_script(FIRST_CELL)
    assert unwrapped > box, "the cell's longest line fits: nothing to wrap"
    assert shown <= box, f"a line {shown} px wide in a cell of {box} px"


def test_the_api_reference_renders_its_docstrings(browser: Any) -> None:
    _open(browser, SITE / "api" / "index.html")
    text = browser.find_element("tag name", "body").text
    for name in ("solve", "compare", "load", "model", "solve_model", "Outcome"):
        assert name in text
    assert "time_limit" in text  # a signature, rendered
    assert ":func:" not in text and ":class:" not in text  # roles shown as names
    formulas, prose = _typeset(browser)  # :math:`\Gamma_j` of dlsched.api_models
    assert formulas >= 1 and ":math:" not in prose and "\\Gamma" not in prose


def test_the_tour_page_is_the_readme(browser: Any) -> None:
    _open(browser, SITE / "index.html")
    heading = browser.find_element("tag name", "h1").text
    assert heading.startswith("dlsched")
    readme_line = next(
        line for line in (ROOT / "README.md").read_text().splitlines() if line.startswith("## ")
    )
    assert readme_line[3:] in browser.find_element("tag name", "body").text
