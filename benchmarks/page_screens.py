"""The page's screens for docs/subject.md, taken in headless Chromium at 1280 and 360 pixels.

    python -m benchmarks.page_screens docs/img

It writes ``page-1280.png`` and ``page-360.png``: the paper example's release
checked for its first record, the result shown (her level, her words, the
random-match distribution with her distance marked); and ``page-ward-1280.png``
and ``page-ward-360.png``: a k-anonymous ward signed with a contact, checked for
a patient at risk (her guess beside the base rate, her group, what she can do).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path


def _small(png: bytes) -> bytes:
    """The screen in 128 colours (a page of text and flat pictures loses nothing a reader sees): a third of the
    bytes in the repository."""
    import io

    from PIL import Image

    out = io.BytesIO()
    Image.open(io.BytesIO(png)).convert("RGB").quantize(colors=128).save(out, format="PNG", optimize=True)
    return out.getvalue()


def ward_release(root: Path) -> tuple[Path, dict[str, str]]:
    """A ward of 200 made-up patients (age and sex quasi-identifiers, disease sensitive), k-anonymized by SD at
    k = 5 and signed with a contact, in ``root / "ward"`` (with the key pair already in ``root / "keys"``); and the first patient's
    record of the first patient her check puts at risk."""
    import numpy as np

    rng = np.random.default_rng(53)
    diseases = ["HIV", "cancer", "flu", "none"]
    rows = [(int(rng.integers(20, 80)), str(rng.choice(["F", "M"])), str(rng.choice(diseases, p=[.1, .2, .3, .4])))
            for _ in range(200)]
    (root / "ward.csv").write_text("age,sex,disease\n" + "".join(f"{a},{s},{d}\n" for a, s, d in rows))
    (root / "ward.json").write_text(json.dumps({"attributes": [
        {"name": "age", "kind": "numeric", "role": "quasi_identifier"},
        {"name": "sex", "kind": "nominal", "role": "quasi_identifier", "categories": ["F", "M"]},
        {"name": "disease", "kind": "nominal", "role": "sensitive", "categories": diseases}]}))
    subprocess.run([sys.executable, "-m", "publisher", "release", "--input", str(root / "ward.csv"), "--schema",
                    str(root / "ward.json"), "--method", "sd_k_anonymity", "--param", "k=5", "--seed", "2026",
                    "--key", str(root / "keys" / "private.pem"), "--dataset-id", "ward", "--contact",
                    "privacy@ward.example", "--out", str(root / "ward")], check=True, capture_output=True)
    import verifier

    release = verifier.open_release(str(root / "ward"), str(root / "keys" / "public.pem"))
    for age, sex, disease in rows:  # the first patient her check puts at risk
        record = {"age": age, "sex": sex, "disease": disease}
        if verifier.check_record(release, record=record, random_match_test=False).level != "protected":
            return root / "ward", {k: str(v) for k, v in record.items()}
    raise AssertionError("no patient of the ward is at risk")


def make_keys(root: Path) -> None:
    """An unencrypted key pair in ``root / "keys"``."""
    subprocess.run([sys.executable, "-m", "publisher", "keygen", "--out", str(root / "keys"), "--unencrypted"],
                   check=True, capture_output=True)


def paper_release(root: Path, paper: Path) -> tuple[Path, dict[str, str]]:
    """The paper's example released with noise then reverse mapping in ``root / "paper"`` (with the key pair
    already in ``root / "keys"``); and the record of its first subject."""
    run = {"check": True, "capture_output": True}
    subprocess.run([sys.executable, "-m", "publisher", "release", "--input", str(paper / "original.csv"),
                    "--method", "additive_noise", "--param", "relative_sd=0.8", "--then", "reverse_mapping",
                    "--seed", "2026", "--key", str(root / "keys" / "private.pem"), "--dataset-id",
                    "paper-example", "--out", str(root / "paper")], **run)
    header, first = (paper / "original.csv").read_text().splitlines()[:2]
    return root / "paper", dict(zip(header.split(","), first.split(",")))


def check_in_page(driver, page: Path, release: Path, key: Path, record: dict[str, str], *,
                  keyboard: bool = False, before_check=None) -> None:
    """Open the page, give it the release folder, the key file and her values, and press *Check my record* (with
    ``keyboard``, Tab from the last field to the button, then Enter); ``before_check(driver)`` runs just before
    (another release of her, a policy); returns when her result is shown."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import Select, WebDriverWait

    driver.get(page.as_uri())
    driver.find_element(By.ID, "folder").send_keys(str(release))
    driver.find_element(By.ID, "key-file").send_keys(str(key))
    wait = WebDriverWait(driver, 60)
    wait.until(lambda d: d.find_element(By.ID, "verify-status").text.startswith("OK"))
    for field, value in record.items():
        element = driver.find_element(By.CSS_SELECTOR, f'[data-name="{field}"]')
        if element.tag_name == "select":
            Select(element).select_by_value(value)
        else:
            element.send_keys(value)
    if before_check is not None:
        before_check(driver)
    button = driver.find_element(By.ID, "check")
    if keyboard:
        for _ in range(40):
            if driver.switch_to.active_element == button:
                break
            ActionChains(driver).send_keys(Keys.TAB).perform()
        assert driver.switch_to.active_element == button, "Tab never reached the Check button"
        ActionChains(driver).send_keys(Keys.ENTER).perform()
    else:
        button.click()
    wait.until(lambda d: d.find_element(By.ID, "result").text not in ("", "Checking ..."))


def main(argv: list[str] | None = None) -> int:
    out = Path((argv or sys.argv[1:] or ["docs/img"])[0])
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    from verifier.data.paper import example_folder
    from verifier.page import page_html

    with tempfile.TemporaryDirectory() as folder, example_folder() as paper:
        root = Path(folder)
        make_keys(root)
        cases = {"page": paper_release(root, Path(paper)), "page-ward": ward_release(root)}
        (root / "check.html").write_text(page_html())
        options = Options()
        options.binary_location = "/usr/bin/chromium"
        for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--hide-scrollbars"):
            options.add_argument(arg)
        driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
        try:
            for (name, (release, record)), width in ((c, w) for c in cases.items() for w in (1280, 360)):
                driver.set_window_size(width, 1000)
                check_in_page(driver, root / "check.html", release, root / "keys" / "public.pem", record)
                # the whole page at that width: the window as tall as what it shows
                driver.set_window_size(width, driver.execute_script("return document.documentElement.scrollHeight") + 140)
                target = out / f"{name}-{width}.png"
                target.write_bytes(_small(driver.get_screenshot_as_png()))
                print(json.dumps({"wrote": str(target), "width": width}))
        finally:
            driver.quit()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
