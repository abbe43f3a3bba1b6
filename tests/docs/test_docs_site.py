"""The documentation site (``make docs``) as a reader sees it: opened in headless Chromium, every
notebook page shows its pictures, the API reference renders its docstrings and the tour page is
the README. Without a built site or a browser these tests skip, except where
``DLSCHED_REQUIRE_SITE=1`` (CI builds the site first, and a skip there is a failure)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from site_browser import COUNT_IMAGES, chrome, missing

ROOT = Path(__file__).parents[2]
SITE = ROOT / "site"
NOTEBOOKS = sorted(p.stem for p in (ROOT / "notebooks").glob("*.ipynb"))


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


def test_the_api_reference_renders_its_docstrings(browser: Any) -> None:
    _open(browser, SITE / "api" / "index.html")
    text = browser.find_element("tag name", "body").text
    for name in ("solve", "compare", "load", "model", "solve_model", "Outcome"):
        assert name in text
    assert "time_limit" in text  # a signature, rendered
    assert ":func:" not in text and ":class:" not in text  # roles shown as names


def test_the_tour_page_is_the_readme(browser: Any) -> None:
    _open(browser, SITE / "index.html")
    heading = browser.find_element("tag name", "h1").text
    assert heading.startswith("dlsched")
    readme_line = next(
        line for line in (ROOT / "README.md").read_text().splitlines() if line.startswith("## ")
    )
    assert readme_line[3:] in browser.find_element("tag name", "body").text
