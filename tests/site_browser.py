"""A headless Chromium to open built pages as a reader sees them (the documentation site, the
report of ``dlsched verify``), and what it counts on a page. Without a browser the tests that
need one skip, except where ``DLSCHED_REQUIRE_SITE=1`` (there a skip is a failure)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

#: what the browser counts on a page: images decoded and drawn with a size
COUNT_IMAGES = """return [
    document.images.length,
    Array.from(document.images).filter(
        i => i.complete && i.naturalWidth > 0 && i.getBoundingClientRect().width > 0).length]"""


def missing(why: str) -> None:
    if os.environ.get("DLSCHED_REQUIRE_SITE") == "1":
        pytest.fail(why)
    pytest.skip(why)


def chrome(tmp: Path) -> Any:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(shutil.which("chromium"))
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--window-size=1280,2000",  # a desktop reader's: the page's three columns
        f"--user-data-dir={tmp}",
    ):
        options.add_argument(flag)
    return webdriver.Chrome(options=options, service=Service(str(shutil.which("chromedriver"))))
