"""``report.html`` of ``dlsched verify`` (with ``--search``) as a reader sees it: opened in
headless Chromium, every section is HTML (no raw Markdown: no ``## `` heading, no ``> Theorem``
quote, no backticks), the tables are tables and every picture (the histograms, the search's
plots) is decoded and drawn. Without a browser the test skips, except where
``DLSCHED_REQUIRE_SITE=1`` (CI, where a skip is a failure)."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path
from typing import Any

import pytest
from fake_clock import FakeClock
from site_browser import COUNT_IMAGES, chrome, missing

from dlsched.solvers import SolveOptions
from dlsched.verify import registry
from dlsched.verify.report import write_report
from dlsched.verify.runner import VerifyOptions, run
from dlsched.verify.search import SearchOptions, search

#: the page's text, line by line, and what its elements are
READ_PAGE = """return {
    lines: document.body.innerText.split('\\n'),
    h2: Array.from(document.querySelectorAll('h2')).map(h => h.innerText),
    quotes: document.querySelectorAll('blockquote').length,
    tables: document.querySelectorAll('table').length,
    code: document.querySelectorAll('code').length}"""


@pytest.fixture
def browser(tmp_path: Path) -> Any:
    if shutil.which("chromium") is None or shutil.which("chromedriver") is None:
        missing("no chromium and chromedriver (Debian packages chromium, chromium-driver)")
    try:
        import selenium  # noqa: F401
    except ImportError:
        missing("selenium is not installed (pip install '.[docs]')")
    driver = chrome(tmp_path / "chromium")
    try:
        yield driver
    finally:
        driver.quit()


def test_the_whole_report_renders_as_html_with_its_pictures(tmp_path: Path, browser) -> None:
    from selenium.webdriver.support.ui import WebDriverWait

    options = VerifyOptions(count=3, solve=SolveOptions(time_limit=30), processes=0,
                            progress=False)  # fmt: skip
    theorems = [registry()["000-has"], registry()["002-lemma2"]]
    run(theorems, tmp_path, options)
    jps = dataclasses.replace(registry()["000-jps"], methods=("jps",))
    search([jps], tmp_path, options, SearchOptions(12.0, clock=FakeClock(step=0.1)))
    _, page = write_report(tmp_path)

    browser.get(page.as_uri())
    WebDriverWait(browser, 60).until(
        lambda b: b.execute_script("return document.readyState") == "complete"
    )
    seen = browser.execute_script(READ_PAGE)
    assert seen["h2"][0] == "Worst-case search"
    assert {"000-has", "002-lemma2", "000-jps"} <= set(seen["h2"])
    assert seen["quotes"] >= 3 and seen["tables"] >= 2 and seen["code"] > 0
    for line in seen["lines"]:
        assert not line.startswith(("#", "> ", "- `")), line
        assert "`" not in line and "> Theorem" not in line and "> Lemma" not in line, line
    images, drawn = browser.execute_script(COUNT_IMAGES)
    assert images >= 4 and drawn == images  # 3 histograms and the search's plot, all drawn
