"""The report page in a real headless Chromium (Debian's `chromium`, driven by Playwright): it loads
with no console errors, its charts, maps (with a legend) and screens render within the page, and the
filters, the search, the sort and a link to one question change the rows shown."""

from __future__ import annotations

import contextlib
import io
import shutil
from pathlib import Path

import pytest

from qtc.runtime.view.maps import MATERIAL_COLOURS

CHROMIUM = Path("/usr/bin/chromium")


@pytest.fixture(scope="module")
def browser():
    playwright = pytest.importorskip(
        "playwright.sync_api", reason="the browser test needs Playwright: pip install -e '.[test]'")
    if not CHROMIUM.is_file() and not shutil.which("chromium"):
        pytest.skip("the browser test needs Chromium: apt-get install -y chromium")
    executable = str(CHROMIUM) if CHROMIUM.is_file() else shutil.which("chromium")
    with playwright.sync_playwright() as driver:
        launched = driver.chromium.launch(executable_path=executable)  # never a downloaded browser
        yield launched
        launched.close()


@contextlib.contextmanager
def tab_on(browser, page: Path):
    """A tab showing the page, and the errors it reports (a console error, a script error, a fetch)."""
    tab = browser.new_page(viewport={"width": 1280, "height": 900})
    errors = []
    tab.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    tab.on("pageerror", lambda error: errors.append(str(error)))
    tab.on("request", lambda request: errors.append(f"fetched {request.url}")
           if not request.url.startswith(("file:", "data:", "about:")) else None)
    tab.goto(page.as_uri())
    yield tab, errors
    tab.close()


@pytest.fixture
def opened(browser, page):
    with tab_on(browser, page) as opened:
        yield opened


def not_blank(png: bytes) -> bool:
    """Whether a screenshot shows something: more than a handful of colours (Pillow comes with Crafter)."""
    from PIL import Image

    colours = Image.open(io.BytesIO(png)).convert("RGB").getcolors(maxcolors=1 << 16)
    return colours is None or len(colours) > 4


def visible_rows(tab) -> int:
    return tab.locator("#question-table tr.question:not([hidden])").count()


def test_the_page_loads_without_errors_and_its_charts_render(opened):
    tab, errors = opened
    charts = tab.locator("svg.chart")
    assert charts.count() == 8
    assert tab.locator("svg.chart rect.bar").count() > 0
    box = charts.first.bounding_box()
    assert box and box["width"] > 100 and box["height"] > 100
    assert not_blank(charts.first.screenshot())
    assert errors == []


def visible_ids(tab) -> list[str]:
    return [row.get_attribute("id") for row in tab.locator("#question-table tr.question:not([hidden])").all()]


def test_filters_change_the_rows(opened):
    tab, errors = opened
    every = visible_rows(tab)
    assert every > 0 and tab.locator("#shown").inner_text() == f"{every} of {every} questions"
    assert tab.locator("#question-table thead th[data-run]:not([hidden])").count() == 4  # two models side by side
    tab.select_option("select[data-filter=model]", label="model-a")
    assert visible_rows(tab) == every  # one row per question: choosing a model hides the other's columns
    assert tab.locator("#question-table thead th[data-run]:not([hidden])").count() == 2
    tab.select_option("select[data-filter=result]", "right")
    right = visible_rows(tab)
    assert 0 < right < every
    assert all(row.get_attribute("data-results").split("|")[0] == "right"
               for row in tab.locator("#question-table tr.question:not([hidden])").all())
    tab.select_option("select[data-filter=category]", "spatial")
    assert visible_rows(tab) < right
    tab.select_option("select[data-filter=model]", "")
    tab.select_option("select[data-filter=result]", "not asked")  # model-b leaves some questions out
    assert 0 < visible_rows(tab) and all("not asked" in row.get_attribute("data-results")
                                         for row in tab.locator("#question-table tr.question:not([hidden])").all())
    tab.select_option("select[data-filter=result]", "")
    tab.select_option("select[data-filter=category]", "")
    assert visible_rows(tab) == every
    assert errors == []


def test_search_sort_and_a_link_to_one_question(opened, page):
    tab, errors = opened
    every = visible_rows(tab)
    tab.fill("#search", "route_to_nearest")
    found = visible_rows(tab)
    assert 0 < found < every
    assert all(row.get_attribute("data-template") == "crafter.route_to_nearest"
               for row in tab.locator("#question-table tr.question:not([hidden])").all())
    tab.fill("#search", "")
    assert visible_rows(tab) == every
    heading = tab.locator("#question-table thead th", has_text="id")
    heading.click()
    ids = [i.removeprefix("q-") for i in visible_ids(tab)]
    assert ids == sorted(ids, key=str.lower)
    heading.click()
    assert [i.removeprefix("q-") for i in visible_ids(tab)] == sorted(ids, key=str.lower, reverse=True)
    score = tab.locator("#question-table thead th", has_text="score").first
    score.click()
    scores = [float(row.locator("td.num").first.inner_text())
              for row in tab.locator("#question-table tr.question").all()]
    assert scores == sorted(scores)
    target = visible_ids(tab)[-1]
    linked = browser_page(tab, page, target)
    assert linked.locator(f'tr.question[id="{target}"] button.open').get_attribute("aria-expanded") == "true"
    assert linked.locator("tr.details").count() == 1
    assert errors == []


def browser_page(tab, page, anchor: str):
    """The page opened anew at the link to one question."""
    tab.goto(page.as_uri() + "#" + anchor)
    tab.wait_for_selector("tr.details")
    return tab


def test_a_crafter_map_renders_with_player_target_and_route(opened):
    tab, errors = opened
    tab.select_option("select[data-filter=template]", "crafter.route_to_nearest")
    tab.select_option("select[data-filter=category]", "spatial")  # not a false premise: it has a route
    tab.select_option("select[data-filter=model]", "model-a")
    row = tab.locator("#question-table tr.question:not([hidden])").first
    row.locator("button.open").click()
    details = tab.locator("tr.details").first
    figure = details.locator("svg.map.crafter")
    assert figure.count() == 1
    for part in ("circle.player", "polyline.route", "rect.target"):
        assert figure.locator(part).count() >= 1, part
    assert not_blank(figure.screenshot())
    assert details.locator(".map-legend span").count() >= len(MATERIAL_COLOURS)  # the map has its legend
    assert details.locator("pre.block.evidence").count() >= 1
    assert details.locator("details.sent").count() == 2  # what each model was sent
    for pre in details.locator("pre").all():  # log lines wrap: nothing runs past its box
        assert pre.evaluate("element => element.scrollWidth <= element.clientWidth + 1")
    row.locator("button.open").click()
    assert tab.locator("tr.details").count() == 0
    assert errors == []


def test_a_room_graph_renders_with_its_path(opened):
    tab, errors = opened
    if tab.locator('select[data-filter=game] option[value="zork1"]').count() == 0:
        pytest.skip("no Jericho questions: the story file zork1.z5 is not in ../shared/roms")
    tab.select_option("select[data-filter=game]", "zork1")
    tab.select_option("select[data-filter=category]", "spatial")
    rows = tab.locator("#question-table tr.question:not([hidden])")
    for i in range(rows.count()):
        rows.nth(i).locator("button.open").click()
    graphs = tab.locator("tr.details svg.map.rooms")
    assert graphs.count() > 0
    assert tab.locator("tr.details svg.map.rooms g.room.here").count() == graphs.count()
    assert tab.locator("tr.details svg.map.rooms line.path").count() > 0
    assert not_blank(graphs.first.screenshot())
    width = tab.evaluate("document.documentElement.clientWidth")
    for scroll in tab.locator("tr.details .figure-scroll").all():  # a wide graph scrolls in its box
        box = scroll.bounding_box()
        assert box["x"] + box["width"] <= width
    assert tab.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
    assert errors == []


def test_a_questions_screens_render(browser, screens_page):
    with tab_on(browser, screens_page.html) as (tab, errors):
        tab.select_option("select[data-filter=template]", "crafter.event_interval")
        row = tab.locator("#question-table tr.question:not([hidden])").first
        row.locator("button.open").click()
        images = tab.locator("tr.details figure.screen img")
        assert images.count() >= 2  # the two events' steps
        for i in range(images.count()):
            size = images.nth(i).evaluate("image => [image.complete, image.naturalWidth, image.naturalHeight]")
            assert size == [True, 128, 128]
        assert not_blank(images.first.screenshot())
        assert errors == []
