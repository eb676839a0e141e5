"""The HTML report in a real headless browser: Debian's chromium driven by Playwright (no browser download).

Chromium comes from ``apt-get install chromium`` (``make test`` installs it when run as root, as CI is);
elsewhere without it these tests skip, except under ``CI`` where they fail. A screenshot of each page is
written to the test's tmp folder, and also to ``$PROMPTCACHE_SCREENSHOTS`` when that names a folder.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from promptcache.cli import main

CHROMIUM = next(filter(None, map(shutil.which, ("chromium", "chromium-browser"))), None)
if CHROMIUM is None and not os.environ.get("CI"):
    pytest.skip("no chromium on PATH (apt-get install chromium); `make test` installs it as root",
                allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api") if not os.environ.get("CI") else \
    __import__("playwright.sync_api", fromlist=["sync_playwright"])


@pytest.fixture(scope="module")
def browser():
    assert CHROMIUM is not None, "CI needs chromium on PATH: apt-get install chromium (make test does it as root)"
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield launched
        launched.close()


def open_report(browser, traces_dir: Path, tmp_path: Path, name: str):
    """``promptcache report`` on the shared trace ``name``, opened in a 1400x900 page; (page, errors)."""
    out = tmp_path / f"{Path(name).stem}.html"
    result = CliRunner().invoke(main, ["report", str(traces_dir / name), "-o", str(out)])
    assert result.exit_code == 0, result.output
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    errors: list[str] = []
    page.on("console", lambda message: errors.append(message.text) if message.type in ("error", "warning") else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("request", lambda request: errors.append(f"request: {request.url}")
            if not request.url.startswith("file://") else None)
    page.goto(out.as_uri())
    return page, errors


def requests_in(traces_dir: Path, name: str) -> int:
    """The trace's request lines, counted from the file (one bar each)."""
    return sum(1 for line in (traces_dir / name).read_text(encoding="utf-8").splitlines() if line.strip())


def screenshot(page, tmp_path: Path, name: str) -> Path:
    path = tmp_path / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    assert path.stat().st_size > 10_000
    keep = os.environ.get("PROMPTCACHE_SCREENSHOTS")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(path, Path(keep) / path.name)
    return path


def test_bad_trace_renders_and_a_click_shows_the_divergence(browser, traces_dir, tmp_path):
    page, errors = open_report(browser, traces_dir, tmp_path, "bad_timestamp_system.jsonl")
    assert page.locator("svg.bar").count() == page.locator(".request").count() == requests_in(traces_dir, "bad_timestamp_system.jsonl") == 17
    assert page.locator(".request.unexpected").count() == 16
    assert page.locator("body.bad .verdict").inner_text().startswith("\u2718 bad: volatile_value on 16 of 17 requests")
    assert page.locator(".kpi .value").first.inner_text() == "0.0%"
    assert "volatile_value" in page.locator(".causes").inner_text()
    page.locator('.request[data-index="7"] svg.bar').click()
    detail = page.locator("#detail")
    assert page.locator(".request.selected").get_attribute("data-index") == "7"
    text = detail.inner_text()
    assert "Request 7 \u00b7 sup-001" in text and "volatile_value (unexpected)" in text
    assert "system[0].text" in text and "layer\nsystem" in text.replace("\t", "\n")
    assert detail.locator("#diff del").first.inner_text() and detail.locator("#diff ins").first.inner_text()
    assert "Fix: drop the value" in text
    screenshot(page, tmp_path, "report_bad_timestamp_system")
    assert errors == []


def test_good_trace_is_green_and_a_hit_has_no_fix(browser, traces_dir, tmp_path):
    page, errors = open_report(browser, traces_dir, tmp_path, "good_support_chat.jsonl")
    assert page.locator("svg.bar").count() == requests_in(traces_dir, "good_support_chat.jsonl") == 17
    assert page.locator(".request.unexpected").count() == 0
    assert page.locator("body.good .verdict").is_visible()
    assert page.locator(".kpi .value").first.inner_text() == "91.4%"
    assert page.locator(".causes").count() == 0 and "no unexpected miss" in page.locator(".kpis").inner_text()
    assert page.locator("#detail .placeholder").is_visible()  # nothing to point at on a good trace
    # green (cached) is most of the ink in the bars
    widths = page.evaluate("""() => {
        const sum = cls => [...document.querySelectorAll('svg.bar rect.' + cls)]
            .reduce((s, r) => s + Number(r.getAttribute('width')), 0);
        return {cached: sum('cached'), written: sum('written'), uncached: sum('uncached')};
    }""")
    assert widths["cached"] > 5 * (widths["written"] + widths["uncached"])
    page.locator('.request[data-index="5"]').click()
    text = page.locator("#detail").inner_text()
    assert "Request 5 \u00b7 sup-002" in text and "miss cause" in text and "Fix:" not in text
    assert "none: a prefix hit (new_turn)" in text
    screenshot(page, tmp_path, "report_good_support_chat")
    assert errors == []
