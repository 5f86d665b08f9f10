"""``verifier page``: write the subject's page, one HTML file that checks a record in her own browser."""

from __future__ import annotations

import argparse
import hashlib

from verifier.data.tables import write_atomic
from verifier.frontend import ExitCode, add_command
from verifier.frontend.output_paths import check_output
from verifier.page import page_html

__all__ = ["register"]


def register(sub, common) -> None:
    p = add_command(
        sub, common, "page", run=run, help="write the subject's page: her check in her own browser",
        description="Write one self-contained HTML file (all code inline, nothing fetched) that verifies a "
        "release with the publisher's key and measures a subject's record, in her browser: its "
        "Content-Security-Policy forbids every network request. Host it anywhere, or open it from disk; it "
        "must not come from the publisher it checks. Exit codes: 0 written, 2 usage error, 4 cannot write.",
    )
    p.add_argument("--out", required=True, metavar="check.html", help="where to write the page (a new file)")
    p.add_argument("--force", action="store_true", help="replace an existing --out file")


def run(args: argparse.Namespace) -> int:
    check_output(args.out, force=args.force)
    html = page_html()
    write_atomic(args.out, lambda handle: handle.write(html))
    data = html.encode("utf-8")
    print(f"wrote {args.out} ({len(data):,} bytes): open it in a browser; it makes no network request")
    print(f"sha256 {hashlib.sha256(data).hexdigest()}: the same for every copy this version writes; publish it "
          "beside the page, so that anyone can check the copy they got")
    return ExitCode.OK
