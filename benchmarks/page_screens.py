"""The page's screens for docs/subject.md, taken in headless Chromium at 1280 and 360 pixels.

    python -m benchmarks.page_screens docs/img

It writes ``page-1280.png`` and ``page-360.png``: the paper example's release
checked for its first record, the result shown.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    out = Path((argv or sys.argv[1:] or ["docs/img"])[0])
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    from verifier.data.paper import example_folder
    from verifier.page import page_html

    with tempfile.TemporaryDirectory() as folder, example_folder() as paper:
        root = Path(folder)
        run = {"check": True, "capture_output": True}
        subprocess.run([sys.executable, "-m", "publisher", "keygen", "--out", str(root / "keys"), "--unencrypted"], **run)
        subprocess.run([sys.executable, "-m", "publisher", "release", "--input", str(Path(paper) / "original.csv"),
                        "--method", "additive_noise", "--param", "relative_sd=0.8", "--then", "reverse_mapping",
                        "--seed", "2026", "--key", str(root / "keys" / "private.pem"), "--dataset-id",
                        "paper-example", "--out", str(root / "release")], **run)
        header, first = (Path(paper) / "original.csv").read_text().splitlines()[:2]
        record = dict(zip(header.split(","), first.split(",")))
        (root / "check.html").write_text(page_html())
        options = Options()
        options.binary_location = "/usr/bin/chromium"
        for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--hide-scrollbars"):
            options.add_argument(arg)
        driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
        try:
            for width, height in ((1280, 1900), (360, 3300)):
                driver.set_window_size(width, height)
                driver.get((root / "check.html").as_uri())
                driver.find_element(By.ID, "folder").send_keys(str(root / "release"))
                driver.find_element(By.ID, "key-file").send_keys(str(root / "keys" / "public.pem"))
                wait = WebDriverWait(driver, 30)
                wait.until(lambda d: d.find_element(By.ID, "verify-status").text.startswith("OK"))
                for name, value in record.items():
                    driver.find_element(By.CSS_SELECTOR, f'[data-name="{name}"]').send_keys(value)
                driver.find_element(By.ID, "check").click()
                wait.until(lambda d: d.find_element(By.ID, "result").text not in ("", "Checking ..."))
                target = out / f"page-{width}.png"
                target.write_bytes(driver.get_screenshot_as_png())  # the whole window: the page at that width
                print(json.dumps({"wrote": str(target), "width": width}))
        finally:
            driver.quit()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
