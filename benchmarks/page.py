"""The subject's page in headless Chromium beside the command line: load, and a whole check of one record.

    python -m benchmarks.page                 # 1e5 x 8
    python -m benchmarks.page --rows 20000 --columns 5 --json

The release is made by ``publisher release`` (noise then reverse mapping);
the page runs ``permutedPrivacy.checkRecord`` (verification, her distance,
spreads, disclosure, verdict and a 10,000-record random-match test) on the
folder's bytes; ``verifier check`` runs the same check as a process.
"""

from __future__ import annotations

import argparse
import base64
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

CHECK = """
const [files, pem, record, done] = arguments;
const bytes = {};
for (const [k, v] of Object.entries(files)) bytes[k] = Uint8Array.from(atob(v), c => c.charCodeAt(0));
const pp = window.permutedPrivacy;
const t0 = performance.now();
pp.verifyRelease(bytes, pem).then(async release => {
  const verify = (performance.now() - t0) / 1000;
  const t1 = performance.now();
  await pp.checkRecord({files: bytes, publicKeyPem: pem, record, options: {randomMatch: false}});
  const untested = (performance.now() - t1) / 1000;
  const t = performance.now();
  const out = await pp.checkRecord({files: bytes, publicKeyPem: pem, record});
  return {out, verify, untested, t};
}).then(({out, verify, untested, t}) => done({seconds: (performance.now() - t) / 1000, verify, untested,
  verified: out.verified, distance: out.distance, p_value: out.p_value, level: out.verdict && out.verdict.level}),
  e => done({error: String(e)}));
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.page", description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--columns", type=int, default=8)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    from verifier.page import page_html

    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        names = [f"a{j}" for j in range(args.columns)]
        x = np.random.default_rng(11).normal(size=(args.rows, args.columns)) * 100
        np.savetxt(root / "x.csv", x, delimiter=",", header=",".join(names), comments="", fmt="%.3f")
        run = {"check": True, "capture_output": True}
        subprocess.run([sys.executable, "-m", "publisher", "keygen", "--out", str(root / "keys"), "--unencrypted"], **run)
        subprocess.run([sys.executable, "-m", "publisher", "release", "--input", str(root / "x.csv"), "--method",
                        "additive_noise", "--param", "relative_sd=0.5", "--then", "reverse_mapping", "--seed", "2",
                        "--key", str(root / "keys" / "private.pem"), "--dataset-id", "b", "--out", str(root / "rel")],
                       **run)
        first = (root / "x.csv").read_text().splitlines()[1].split(",")
        record = dict(zip(names, map(float, first)))
        (root / "me.json").write_text(json.dumps(record))
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "verifier", "check", str(root / "rel"), "--key",
                        str(root / "keys" / "public.pem"), "--record", str(root / "me.json"), "--json"], **run)
        cli = time.perf_counter() - start
        (root / "check.html").write_text(page_html())
        options = Options()
        options.binary_location = "/usr/bin/chromium"
        for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage"):
            options.add_argument(arg)
        driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
        driver.set_script_timeout(3600)
        try:
            start = time.perf_counter()
            driver.get((root / "check.html").as_uri())
            load = time.perf_counter() - start
            files = {p.name: base64.b64encode(p.read_bytes()).decode() for p in (root / "rel").iterdir()}
            page = driver.execute_async_script(CHECK, files, (root / "keys" / "public.pem").read_text(), record)
        finally:
            driver.quit()
    if "error" in page:
        print(f"{args.rows:.0e} x {args.columns}: the page failed: {page['error']}")
        return 1
    out = {"rows": args.rows, "columns": args.columns, "page_load_s": round(load, 2),
           "page_check_s": round(page["seconds"], 2), "cli_check_s": round(cli, 2), "page": page}
    print(json.dumps(out, indent=2) if args.json else
          f"{args.rows:.0e} x {args.columns}: page loads in {load:.2f} s, checks in {page['seconds']:.2f} s "
          f"(verification {page['verify']:.2f} s, all but the random-match test {page['untested']:.2f} s; verifier "
          f"check: {cli:.2f} s, whole process); level {page.get('level')}, p {page.get('p_value')}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
