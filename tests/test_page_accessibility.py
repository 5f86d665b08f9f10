"""Her first minute in the page (issue 53, items 2 to 5), in Chromium: her verdict first, in plain words and inline
SVG pictures, then what she can do and the details; no WCAG 2.1 AA violation that axe-core finds, before and after
a check; usable with the keyboard alone; every colour said in words too.

axe-core is the pinned, unchanged npm build in tests/vendor/axe-core (its README says where it comes from)."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from test_page import CHROMIUM, DRIVER
from verifier.page import page_html

AXE = Path(__file__).resolve().parent / "vendor" / "axe-core" / "axe.min.js"
AXE_SHA256 = "29348999450cdf2849a8e70b7912fc2da85a849da39c0d0d5394f51d4a9ed95c"
RUN_AXE = """
const done = arguments[0];
axe.run(document, {runOnly: {type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]}})
  .then(r => done({passes: r.passes.length, violations: r.violations.map(v => ({id: v.id, help: v.help,
    nodes: v.nodes.map(n => n.target.join(" ")).slice(0, 5)})),
    incomplete: r.incomplete.map(i => ({id: i.id, nodes: i.nodes.map(n => n.html.slice(0, 12))}))}),
    e => done({error: String(e)}));
"""


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    """Chromium on the page, a ward release signed with a contact and a patient it exposes or puts at risk, and
    the paper's example with her first record."""
    if not (CHROMIUM and DRIVER):
        pytest.skip("needs Debian's chromium and chromium-driver (apt-get install -y chromium chromium-driver)")
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    from benchmarks.page_screens import make_keys, paper_release, ward_release
    from verifier.data.paper import example_folder

    root = tmp_path_factory.mktemp("first-minute")
    make_keys(root)
    ward, patient = ward_release(root)
    with example_folder() as paper:
        paper_case = paper_release(root, Path(paper))
    (root / "check.html").write_text(page_html())
    options = Options()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage"):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(DRIVER), options=options)
    driver.set_script_timeout(120)
    driver.set_window_size(1280, 1000)
    yield driver, root, ward, patient, paper_case
    driver.quit()


def _check(driver, root: Path, release: Path, record: dict[str, str], *, keyboard: bool = False) -> None:
    from benchmarks.page_screens import check_in_page

    check_in_page(driver, root / "check.html", release, root / "keys" / "public.pem", record, keyboard=keyboard)


def _axe(driver) -> dict:
    source = AXE.read_text(encoding="utf-8")
    driver.execute_script(source)
    found = driver.execute_async_script(RUN_AXE)
    assert "error" not in found, found
    return found


def test_the_vendored_axe_is_the_pinned_npm_build():
    assert hashlib.sha256(AXE.read_bytes()).hexdigest() == AXE_SHA256
    assert "Mozilla Public License" in (AXE.parent / "LICENSE").read_text()


def test_her_verdict_comes_first_in_plain_words_and_pictures(page):
    from selenium.webdriver.common.by import By

    driver, root, ward, patient, _ = page
    _check(driver, root, ward, patient)
    verdict = driver.find_element(By.ID, "verdict")
    badge = verdict.find_element(By.CSS_SELECTOR, ".badge")
    level = badge.text
    assert level in ("AT RISK", "EXPOSED")
    assert "badge-" + level.lower().replace(" ", "_") in badge.get_attribute("class")
    summary = verdict.find_element(By.CSS_SELECTOR, ".summary").text
    assert summary.startswith(f"Your record is {level.lower()}.") and "Someone" in summary
    headings = [h.text for h in verdict.find_elements(By.TAG_NAME, "h3")]
    assert headings == ["What you can do", "Details", "The full report"]
    steps = [li.text for li in verdict.find_elements(By.CSS_SELECTOR, "ul")[0].find_elements(By.TAG_NAME, "li")]
    assert steps[0].startswith("Write to the publisher at privacy@ward.example")
    assert "Article 15" in steps[1] and "Article 21" in steps[1] and "Article 17" in steps[1]
    # the pictures: her guess beside the base rate, her group; each says in words what it shows
    pictures = verdict.find_elements(By.TAG_NAME, "svg")
    labels = [p.get_attribute("aria-label") for p in pictures]
    assert [p.get_attribute("role") for p in pictures] == ["img", "img"]
    assert labels[0].startswith("Your disease: guessed right ") and "without it" in labels[0]
    assert labels[1].endswith("records in your group share your disease.")
    # the colours repeat what the text says: the percentages are written beside the bars
    texts = [t.text for t in pictures[0].find_elements(By.TAG_NAME, "text")]
    assert "from this release" in texts and "without it" in texts and any(t.endswith("%") for t in texts)


@pytest.mark.parametrize("width", [1280, 360])
def test_her_verdict_is_brought_into_view_focused_and_announced(page, width):
    """Issue 60, item 3: after "Check my record" the view still showed the form and the button, at 1280 and at 360
    pixels. Her verdict now comes into view with the focus on it, and its first sentence is said in a live region."""
    from selenium.webdriver.common.by import By

    driver, root, ward, patient, _ = page
    driver.set_window_size(width, 800)
    try:
        _check(driver, root, ward, patient)
        verdict = driver.find_element(By.ID, "verdict")
        assert driver.switch_to.active_element == verdict
        top = driver.execute_script("return arguments[0].getBoundingClientRect().top", verdict)
        assert -1 <= top < driver.execute_script("return window.innerHeight") / 2, top  # to the subpixel
        announce = driver.find_element(By.ID, "announce")
        level = verdict.find_element(By.CSS_SELECTOR, ".badge").text.lower()
        assert announce.get_attribute("role") == "status" and announce.get_attribute("aria-live") == "polite"
        assert driver.execute_script("return arguments[0].textContent", announce) == f"Your record is {level}."
    finally:
        driver.set_window_size(1280, 1000)


def test_a_ranked_release_draws_where_her_match_falls(page):
    """The paper's example, checked with the keyboard alone: her match among random records, drawn."""
    from selenium.webdriver.common.by import By

    driver, root, _, _, (release, record) = page
    _check(driver, root, release, record, keyboard=True)
    verdict = driver.find_element(By.ID, "verdict")
    picture = verdict.find_element(By.TAG_NAME, "svg")
    label = picture.get_attribute("aria-label")
    assert label.startswith("How far random records fall from your values; yours is at distance ")
    distance = int(label.rsplit("distance ", 1)[1].split(",")[0])
    assert any(t.text == f"you: {distance}" for t in picture.find_elements(By.TAG_NAME, "text"))
    assert verdict.find_element(By.CSS_SELECTOR, ".badge").text == "PROTECTED"
    assert [h.text for h in verdict.find_elements(By.TAG_NAME, "h3")] == ["Details", "The full report"]


def test_the_page_has_no_wcag_aa_violation_before_and_after_a_check(page):
    """axe-core finds no WCAG 2.1 A or AA violation on the page as it opens and with her verdict shown; the SVG
    texts it cannot rate are ink (#111) on the page's white; an image without a text alternative is caught, so the
    run is real."""
    from selenium.webdriver.common.by import By

    driver, root, ward, patient, _ = page
    driver.get((root / "check.html").as_uri())
    opening = _axe(driver)
    assert opening["violations"] == [] and opening["passes"] >= 10, opening
    _check(driver, root, ward, patient)
    checked = _axe(driver)
    assert checked["violations"] == [], json.dumps(checked["violations"], indent=1)
    assert all(i["id"] == "color-contrast" and all(n.startswith("<text") for n in i["nodes"])
               for i in checked["incomplete"]), checked["incomplete"]
    fills = {t.get_attribute("fill") for t in driver.find_element(By.ID, "verdict").find_elements(By.TAG_NAME, "text")}
    assert fills == {"#111111"}
    driver.execute_script("const i = document.createElement('img'); i.src = 'data:,'; document.body.append(i);")
    broken = _axe(driver)
    assert [v["id"] for v in broken["violations"]] == ["image-alt"], broken["violations"]


def test_her_joint_check_in_the_page_opens_with_its_plain_words(page):
    """With another release of her, the page's verdict is her joint one, in plain words first; its picture says
    the guess is from these releases together."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    from benchmarks.page_screens import check_in_page

    driver, root, ward, patient, _ = page
    other = root / "ward-k3"
    if not other.exists():
        subprocess.run([sys.executable, "-m", "publisher", "release", "--input", str(root / "ward.csv"), "--schema",
                        str(root / "ward.json"), "--method", "sd_k_anonymity", "--param", "k=3", "--seed", "1",
                        "--key", str(root / "keys" / "private.pem"), "--dataset-id", "ward-k3", "--out", str(other)],
                       check=True, capture_output=True)

    def with_other(d) -> None:  # the second release, once the first verified
        d.find_element(By.ID, "other-folder").send_keys(str(other))
        WebDriverWait(d, 30).until(lambda x: x.find_element(By.ID, "others-status").text.startswith("Checked together"))

    driver.get((root / "check.html").as_uri())
    check_in_page(driver, root / "check.html", ward, root / "keys" / "public.pem", patient, before_check=with_other)
    verdict = driver.find_element(By.ID, "verdict")
    level = verdict.find_element(By.CSS_SELECTOR, ".badge").text
    summary = verdict.find_element(By.CSS_SELECTOR, ".summary").text
    assert summary.startswith(f"Your record is {level.lower()}.") and "these releases together" in summary
    label = verdict.find_element(By.TAG_NAME, "svg").get_attribute("aria-label")
    assert "from these releases" in label and label.endswith("without them.")
    assert driver.find_element(By.ID, "result").text.startswith(level + ": ")
